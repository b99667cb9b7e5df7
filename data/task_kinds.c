/* task_kinds.c: the task table: one generator and one oracle per task (formats in task.h). The
 * oracles parse what they are given rather than trusting the generator, so hand-made prompts
 * test them. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "passkey.h"
#include "task.h"
#include "task_ruler.h"

static const char SYMBOLS[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
enum { N_SYMBOLS = sizeof SYMBOLS - 1, MAX_LEN = 1 << 16 };

static void put_char(StrBuf *b, char c) { sb_put(b, &c, 1); }
static char draw_symbol(Rng *rng, double vocab) { return SYMBOLS[rng_below(rng, (uint64_t)vocab)]; }
static char draw_bit(Rng *rng) { return (char)('0' + rng_below(rng, 2)); }

static int malformed(const char *task, const char *expected) {
    return pelab_fail("task %s: malformed prompt: expected %s", task, expected);
}

/* ---- generators: val[] holds the example's option values in table order ---- */

/* copy, reverse, sort, count's string: len symbols of the first vocab */
static int gen_symbols(const double *val, Rng *rng, StrBuf *out) {
    for (int i = 0; i < (int)val[0]; i++) put_char(out, draw_symbol(rng, val[1]));
    return 0;
}

static int gen_add(const double *val, Rng *rng, StrBuf *out) {
    int digits = (int)val[0];
    for (int k = 0; k < 2; k++) {
        if (k) put_char(out, '+');
        for (int i = 0; i < digits; i++) /* no leading zero, so the length is the digit count */
            put_char(out, (char)(i == 0 && digits > 1 ? '1' + rng_below(rng, 9) : '0' + rng_below(rng, 10)));
    }
    return 0;
}

static int gen_parity(const double *val, Rng *rng, StrBuf *out) {
    for (int i = 0; i < (int)val[0]; i++) put_char(out, draw_bit(rng));
    return 0;
}

/* exactly max(1, keep% of len) symbols among '.' noise, their places uniform (selection sampling) */
static int gen_selective(const double *val, Rng *rng, StrBuf *out) {
    int len = (int)val[0], keep = (int)(len * val[2] / 100.0 + 0.5);
    if (keep < 1) keep = 1;
    for (int i = 0; i < len; i++) {
        int take = (int)rng_below(rng, (uint64_t)(len - i)) < keep;
        put_char(out, take ? draw_symbol(rng, val[1]) : '.');
        keep -= take;
    }
    return 0;
}

static int gen_count(const double *val, Rng *rng, StrBuf *out) {
    put_char(out, draw_symbol(rng, val[1]));
    put_char(out, ' ');
    return gen_symbols(val, rng, out);
}

/* a write first (so every read has an answer), len - 2 writes or ignores, a read last */
static int gen_flipflop(const double *val, Rng *rng, StrBuf *out) {
    int len = (int)val[0];
    for (int i = 0; i < len - 1; i++) {
        put_char(out, i == 0 || (double)rng_below(rng, 100) < val[1] ? 'w' : 'i');
        put_char(out, draw_bit(rng));
    }
    put_char(out, 'r');
    return 0;
}

/* the first k entries of a uniform shuffle of idx[0..n) (partial Fisher-Yates) */
static void draw_distinct(Rng *rng, int *idx, int n, int k) {
    for (int i = 0; i < k; i++) {
        int j = i + (int)rng_below(rng, (uint64_t)(n - i));
        int tmp = idx[i];
        idx[i] = idx[j], idx[j] = tmp;
    }
}

/* mqar's pairs: distinct keys (their indices into SYMBOLS in keys[0..pairs)), each with a digit */
static void put_pairs(Rng *rng, int pairs, int *keys, StrBuf *out) {
    for (int i = 0; i < N_SYMBOLS; i++) keys[i] = i;
    draw_distinct(rng, keys, N_SYMBOLS, pairs);
    for (int i = 0; i < pairs; i++) {
        put_char(out, SYMBOLS[keys[i]]);
        put_char(out, (char)('0' + rng_below(rng, 10)));
    }
}

static int gen_mqar(const double *val, Rng *rng, StrBuf *out) {
    int pairs = (int)val[0], queries = (int)val[1] < pairs ? (int)val[1] : pairs;
    int keys[N_SYMBOLS];
    put_pairs(rng, pairs, keys, out);
    put_char(out, ',');
    draw_distinct(rng, keys, pairs, queries); /* distinct keys among the pairs, in a random order */
    for (int i = 0; i < queries; i++) put_char(out, SYMBOLS[keys[i]]);
    return 0;
}

/* Zoology's MQAR: the pairs, '|', then every query (gap '.' bytes, the key) and a slot for its value */
static int gen_mqar_dense(const double *val, Rng *rng, StrBuf *out) {
    int pairs = (int)val[0], queries = (int)val[1] < pairs ? (int)val[1] : pairs, gap = (int)val[2];
    int keys[N_SYMBOLS];
    put_pairs(rng, pairs, keys, out);
    put_char(out, '|');
    draw_distinct(rng, keys, pairs, queries);
    for (int i = 0; i < queries; i++) {
        for (int g = 0; g < gap; g++) put_char(out, '.');
        put_char(out, SYMBOLS[keys[i]]);
        put_char(out, TASK_SLOT);
    }
    return 0;
}

/* passkey.h's document of len - 1 bytes (the '\n' end marker is the last), up to its question */
static int gen_passkey(const double *val, Rng *rng, StrBuf *out) {
    int total = (int)val[0] - 1;
    char *doc_text = xmalloc((size_t)total + 1);
    PasskeyDoc doc;
    int rc = passkey_document(doc_text, total, val[1], passkey_random_key(rng), &doc);
    if (rc == 0) sb_put(out, doc_text, (size_t)doc.prompt_len);
    free(doc_text);
    return rc;
}

/* ---- oracles ---- */

static int solve_copy(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    sb_put(ans, body, n);
    return 0;
}

static int solve_reverse(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    for (size_t i = n; i-- > 0;) put_char(ans, body[i]);
    return 0;
}

static int solve_sort(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    size_t counts[256] = {0};
    for (size_t i = 0; i < n; i++) counts[(unsigned char)body[i]]++;
    for (int c = 0; c < 256; c++)
        for (size_t k = 0; k < counts[c]; k++) put_char(ans, (char)c);
    return 0;
}

static int all_digits(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return n > 0;
}

/* schoolbook addition of any length, least significant digit first */
static int solve_add(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    const char *plus = memchr(body, '+', n);
    size_t na = plus ? (size_t)(plus - body) : 0, nb = plus ? n - na - 1 : 0;
    if (!plus || !all_digits(body, na) || !all_digits(plus + 1, nb)) return malformed("add", "DIGITS+DIGITS");
    size_t width = (na > nb ? na : nb) + 1, used = 0;
    char *rev = xmalloc(width);
    int carry = 0;
    for (size_t i = 0; i < width; i++) {
        int s = carry + (i < na ? body[na - 1 - i] - '0' : 0) + (i < nb ? plus[nb - i] - '0' : 0);
        rev[i] = (char)('0' + s % 10), carry = s / 10;
        if (s) used = i + 1;
    }
    if (used == 0) used = 1; /* 0+0 */
    for (size_t i = 0; i < used; i++) put_char(ans, t->lo[1] ? rev[i] : rev[used - 1 - i]);
    free(rev);
    return 0;
}

static int solve_parity(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    int ones = 0;
    for (size_t i = 0; i < n; i++) {
        if (body[i] != '0' && body[i] != '1') return malformed("parity", "a string of 0 and 1");
        ones ^= body[i] == '1';
    }
    put_char(ans, (char)('0' + ones));
    return 0;
}

static int solve_selective(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    for (size_t i = 0; i < n; i++)
        if (body[i] != '.') put_char(ans, body[i]);
    return 0;
}

static int solve_count(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    if (n < 2 || body[1] != ' ') return malformed("count", "a symbol, a space, the string");
    size_t hits = 0;
    for (size_t i = 2; i < n; i++) hits += body[i] == body[0];
    sb_printf(ans, "%zu", hits);
    return 0;
}

static int solve_flipflop(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    char bit = 0;
    if (n % 2 == 0 || body[n - 1] != 'r') return malformed("flipflop", "(w|i)(0|1) pairs then r");
    for (size_t i = 0; i + 1 < n; i += 2) {
        if ((body[i] != 'w' && body[i] != 'i') || (body[i + 1] != '0' && body[i + 1] != '1'))
            return malformed("flipflop", "(w|i)(0|1) pairs then r");
        if (body[i] == 'w') bit = body[i + 1];
    }
    if (!bit) return malformed("flipflop", "at least one write before the read");
    put_char(ans, bit);
    return 0;
}

static int solve_mqar(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    const char *comma = memchr(body, ',', n);
    size_t np = comma ? (size_t)(comma - body) : 1;
    if (np % 2) return malformed("mqar", "key-digit pairs, ',', keys");
    char value[256] = {0};
    for (size_t i = 0; i < np; i += 2) {
        unsigned char key = (unsigned char)body[i];
        if (value[key] || !all_digits(body + i + 1, 1)) return malformed("mqar", "distinct keys, each with a digit");
        value[key] = body[i + 1];
    }
    for (size_t i = np + 1; i < n; i++) {
        if (!value[(unsigned char)body[i]]) return malformed("mqar", "queries among the keys");
        put_char(ans, value[(unsigned char)body[i]]);
    }
    return 0;
}

/* the text before one value: pairs, '|', then queries so far ('.' gaps, keys each followed by its
 * value), ending with the key asked */
static int solve_mqar_dense(const TaskSpec *t, const char *body, size_t n, StrBuf *ans) {
    (void)t;
    static const char WANT[] = "key-digit pairs, '|', then '.' gaps and keys each followed by its value, a key last";
    const char *bar = memchr(body, '|', n);
    size_t np = bar ? (size_t)(bar - body) : 1;
    if (np % 2) return malformed("mqar_dense", WANT);
    char value[256] = {0};
    for (size_t i = 0; i < np; i += 2) {
        unsigned char key = (unsigned char)body[i];
        if (value[key] || key == '.' || !all_digits(body + i + 1, 1)) return malformed("mqar_dense", WANT);
        value[key] = body[i + 1];
    }
    char last = 0; /* the key waiting for its value */
    for (size_t i = np + 1; i < n; i++) {
        char c = body[i];
        if (last && c == value[(unsigned char)last]) last = 0;
        else if (!last && c == '.') continue;
        else if (!last && value[(unsigned char)c]) last = c;
        else return malformed("mqar_dense", WANT);
    }
    if (!last) return malformed("mqar_dense", WANT);
    put_char(ans, value[(unsigned char)last]);
    return 0;
}

/* the prompt ends with the question "\nKey:"; the key is the first "Key: " followed by 5 digits */
static int solve_passkey(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans) {
    (void)t;
    static const char QUESTION[] = "\nKey:", LEAD[] = "Key: ";
    size_t nq = sizeof QUESTION - 1, nl = sizeof LEAD - 1;
    if (n < nq || memcmp(prompt + n - nq, QUESTION, nq) != 0) return malformed("passkey", "a prompt ending with \\nKey:");
    for (size_t i = 0; i + nl + PASSKEY_DIGITS <= n - nq; i++)
        if (memcmp(prompt + i, LEAD, nl) == 0 && all_digits(prompt + i + nl, PASSKEY_DIGITS)) {
            put_char(ans, ' ');
            sb_put(ans, prompt + i + nl, PASSKEY_DIGITS);
            return 0;
        }
    return malformed("passkey", "a key sentence \"Key: DDDDD\" before the question");
}

/* ---- the table ---- */

#define LEN_ROW(lo, dlo, dhi, help) {"len", lo, MAX_LEN, dlo, dhi, 1, 0, help, NULL}
#define VOCAB_ROW {"vocab", 2, N_SYMBOLS, 26, 26, 1, 0, "symbols drawn from (a..z, then A..Z)", NULL}
#define RULER_LEN(lo, dlo, dhi) {"len", lo, MAX_LEN, dlo, dhi, 1, 0, "bytes, answer and end marker included", NULL}
#define RULER_DEPTH(what) {"depth", 0, 1, 0, 1, 0, 0, "where " what " sits in the haystack, 0 (first) .. 1 (last); a range: random", NULL}
#define RULER_HAY(def, n, names) {"hay", 0, n - 1, def, def, 1, 1, n == 3 ? "the haystack: passkey's noise sentences, an essay, or other keys' needles" : "the haystack: passkey's noise sentences or an essay", names}
#define RULER_VALUE {"value", 0, 1, 0, 0, 1, 1, "the values: 5-digit numbers or 8-digit hex uuids", RULER_VALUES}

static const TaskDef TASKS[] = {
    {"copy", "repeat the string", 1, 0, 2, {LEN_ROW(1, 4, 16, "symbols"), VOCAB_ROW}, gen_symbols, solve_copy, 0, 0},
    {"reverse", "the string backwards", 1, 0, 2, {LEN_ROW(1, 4, 16, "symbols"), VOCAB_ROW}, gen_symbols,
     solve_reverse, 0, 0},
    {"sort", "the string's symbols in increasing order", 1, 0, 2, {LEN_ROW(1, 4, 16, "symbols"), VOCAB_ROW},
     gen_symbols, solve_sort, 0, 0},
    {"add", "the sum of two numbers, digits as tokens", 1, 0, 2,
     {LEN_ROW(1, 1, 8, "digits per number"),
      {"rev", 0, 1, 1, 1, 1, 1, "1: answer least significant digit first (as carries flow); 0: as written", NULL}},
     gen_add, solve_add, 0, 0},
    {"parity", "1 if the bit string has an odd number of ones", 1, 0, 1, {LEN_ROW(1, 4, 16, "bits")}, gen_parity,
     solve_parity, 0, 0},
    {"selective_copy", "copy the symbols, skipping the '.' noise", 1, 0, 3,
     {LEN_ROW(1, 8, 32, "symbols and noise"), VOCAB_ROW,
      {"keep", 1, 100, 25, 25, 1, 0, "percent of the positions that hold a symbol", NULL}},
     gen_selective, solve_selective, 0, 0},
    {"count", "how often the first symbol occurs in the string, in decimal", 1, 0, 2,
     {LEN_ROW(1, 4, 16, "symbols counted in"), VOCAB_ROW}, gen_count, solve_count, 0, 0},
    {"flipflop", "write/ignore instructions then a read: the last written bit", 1, 0, 2,
     {LEN_ROW(2, 8, 32, "instructions, the first write and the final read included"),
      {"write", 0, 100, 20, 20, 1, 0, "percent of the middle instructions that write", NULL}},
     gen_flipflop, solve_flipflop, 0, 0},
    {"mqar", "key-value pairs, then keys: their values (multi-query associative recall)", 1, 0, 2,
     {{"pairs", 1, N_SYMBOLS, 2, 8, 1, 0, "key-value pairs (the length)", NULL},
      {"queries", 1, N_SYMBOLS, 1, 4, 1, 0, "keys asked (at most pairs)", NULL}},
     gen_mqar, solve_mqar, 0, 0},
    {"mqar_dense", "Zoology's MQAR: key-value pairs, then queries each answered in place, every value supervised",
     1, 0, 3,
     {{"pairs", 1, N_SYMBOLS, 4, 16, 1, 0, "key-value pairs (the length)", NULL},
      {"queries", 1, N_SYMBOLS, N_SYMBOLS, N_SYMBOLS, 1, 0, "keys asked, each once (at most pairs: 52 asks them all)", NULL},
      {"gap", 0, MAX_LEN, 0, 0, 1, 0, "'.' bytes before each query", NULL}},
     gen_mqar_dense, solve_mqar_dense, 1, 0},
    {"passkey", "a 5-digit key in filler at a chosen depth, then the question", 0, 0, 2,
     {LEN_ROW(PASSKEY_MIN_LEN + 1, 64, 128, "bytes, answer and end marker included"),
      {"depth", 0, 1, 0, 1, 0, 0, "where the key sits in the filler, 0 (first) .. 1 (last); a range: random", NULL}},
     gen_passkey, solve_passkey, 0, 0},
    /* RULER's synthetic tasks (task_ruler.c); every len counts each byte, answer included */
    {"niah_single", "RULER's needle in a haystack: one key and its value hidden in a haystack, then the key", 0, 0, 4,
     {RULER_LEN(24, 32, 64), RULER_DEPTH("the needle"), RULER_HAY(RULER_NOISE, 3, RULER_HAYS), RULER_VALUE},
     ruler_gen_niah_single, ruler_solve_niah, 0, 1},
    {"niah_multikey", "RULER's multi-key needles: the key asked among needles of other keys", 0, 0, 5,
     {RULER_LEN(24, 64, 128), RULER_DEPTH("the needle asked"),
      {"keys", 1, 32, 4, 4, 1, 0, "needles, each with its own key; one is asked (hay=needle: the haystack is more)", NULL},
      RULER_HAY(RULER_ESSAY, 3, RULER_HAYS), RULER_VALUE},
     ruler_gen_niah_multikey, ruler_solve_niah, 0, 1},
    {"niah_multivalue", "RULER's multi-value needles: one key with several values, all of them asked", 0, 0, 4,
     {RULER_LEN(24, 96, 192), {"values", 1, 16, 4, 4, 1, 0, "needles of the one key, each with a value: the answer", NULL},
      RULER_HAY(RULER_ESSAY, 3, RULER_HAYS), RULER_VALUE},
     ruler_gen_niah_multivalue, ruler_solve_niah, 0, 1},
    {"niah_multiquery", "RULER's multi-query needles: several keys asked, the values of all of them", 0, 0, 4,
     {RULER_LEN(24, 96, 192), {"queries", 1, 16, 4, 4, 1, 0, "needles with distinct keys, all asked", NULL},
      RULER_HAY(RULER_ESSAY, 3, RULER_HAYS), RULER_VALUE},
     ruler_gen_niah_multiquery, ruler_solve_niah, 0, 1},
    {"vt", "RULER's variable tracking: chains of assignments in a haystack, every name bound to the value", 0, 0, 4,
     {RULER_LEN(20, 96, 192), {"hops", 1, 32, 4, 4, 1, 0, "assignments of a name to a name after the first, per chain", NULL},
      {"chains", 1, 16, 1, 1, 1, 0, "chains, each with its own value; the first's is asked", NULL},
      RULER_HAY(RULER_NOISE, 2, RULER_TEXT_HAYS)},
     ruler_gen_vt, ruler_solve_vt, 0, 1},
    {"cwe", "RULER's common words extraction: a list of words, the top ones repeated more: name them", 0, 0, 4,
     {RULER_LEN(24, 96, 192), {"top", 1, 10, 3, 3, 1, 0, "common words to name, in order of first appearance", NULL},
      {"freq", 2, 64, 4, 4, 1, 0, "occurrences of each common word", NULL},
      {"rare", 1, 32, 1, 1, 1, 0, "occurrences of each uncommon word (below freq)", NULL}},
     ruler_gen_cwe, ruler_solve_top_words, 0, 1},
    {"fwe", "RULER's frequent words extraction: Zipf-distributed coded words, the most frequent after the noise", 0, 0, 3,
     {RULER_LEN(24, 160, 256), {"alpha", 1.1, 4, 2, 2, 0, 0, "the Zipf exponent: rank k appears n k^-alpha / zeta(alpha) times", NULL},
      {"top", 1, 10, 3, 3, 1, 0, "words to name, most frequent first (the noise \"...\" excluded)", NULL}},
     ruler_gen_fwe, ruler_solve_top_words, 0, 1},
};
enum { N_TASKS = sizeof TASKS / sizeof TASKS[0] };

int task_count(void) { return N_TASKS; }
const TaskDef *task_def(int i) { return i >= 0 && i < N_TASKS ? &TASKS[i] : NULL; }
