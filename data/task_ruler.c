/* task_ruler.c: RULER's synthetic tasks (Hsieh et al. 2024, arXiv 2404.06654) at toy scale, in
 * bytes (formats in task.h): needles in a haystack, variable tracking, common and frequent words.
 * Every example is exactly len bytes: the task's own items (needles, statements, words), the
 * question and the answer are laid out first and the haystack fills what is left. Keys, names and
 * words are distinct 3-letter strings and the values a question asks for are distinct, so the
 * answer is determined by the prompt; the oracles parse the prompt and never trust the generator. */
#include "task_ruler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "passkey.h"

enum { WORD_LEN = 3, N_CODES = 26 * 26 * 26, DIGITS = 5, UUID_LEN = 9 };
enum { VAL_NUMBER, VAL_UUID };
enum { MAX_ITEMS = 1024 }; /* needles or statements of one example (the options keep far below) */

/* the essay haystack: plain prose without digits, ':' or '=', cycled from a random word (RULER
 * uses Paul Graham's essays; any natural text serves, this one is the lab's own) */
static const char ESSAY[] =
    "A river starts as rain on a hill, runs down through stones and grass, and finds the low ground. "
    "In spring the water is fast and cold, and it carries sand and leaves down to the sea. Farmers dig "
    "small ditches to lead some of it to their fields, and the fields turn green. In summer the river is "
    "slow and warm, and children swim where the banks are low. Birds wait on the rocks for fish. At "
    "night the water is dark and quiet, and the moon lies on it like a coin. In autumn the rain comes "
    "back, the river rises, and the old ditches fill again. Nobody owns a river, but every town along it "
    "has a story about the year the water came over the bridge. People build walls, then higher walls, "
    "and the river goes on as it always has. ";
enum { ESSAY_LEN = sizeof ESSAY - 1 };

static int malformed(const char *task, const char *expected) {
    return pelab_fail("task %s: malformed prompt: expected %s", task, expected);
}

/* ---- drawing: distinct words, values, shuffles ---- */

typedef struct {
    unsigned char *used; /* [N_CODES] */
} Codes;

/* a fresh word of WORD_LEN letters from base ('a' or 'A'), distinct from every one drawn before
 * (the callers keep under N_CODES / 2 of them, so the rejection loop stays short) */
static void draw_word(Codes *c, Rng *rng, char base, char *out) {
    uint64_t k;
    do k = rng_below(rng, N_CODES);
    while (c->used[k]);
    c->used[k] = 1;
    for (int i = WORD_LEN - 1; i >= 0; i--) out[i] = (char)(base + k % 26), k /= 26;
}

static int too_many_words(const char *task, long n) {
    return pelab_fail("task %s: %ld distinct 3-letter words asked for; at most %d (a shorter len)", task, n,
                      N_CODES / 2);
}

static int value_len(int kind) { return kind == VAL_UUID ? UUID_LEN : DIGITS; }

/* a value: DIGITS digits, the first non-zero, or a uuid-like "9f3a-07c2" (lowercase hex) */
static void draw_value(Rng *rng, int kind, char *out) {
    static const char HEX[] = "0123456789abcdef";
    if (kind == VAL_NUMBER)
        for (int i = 0; i < DIGITS; i++) out[i] = (char)(i == 0 ? '1' + rng_below(rng, 9) : '0' + rng_below(rng, 10));
    else
        for (int i = 0; i < UUID_LEN; i++) out[i] = i == 4 ? '-' : HEX[rng_below(rng, 16)];
}

/* 1 if v (vl bytes) equals one of the n values in vals (vl bytes apart) */
static int value_taken(const char *vals, int n, int vl, const char *v) {
    for (int i = 0; i < n; i++)
        if (memcmp(vals + (size_t)i * vl, v, (size_t)vl) == 0) return 1;
    return 0;
}

static void shuffle(Rng *rng, int *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(rng, (uint64_t)i + 1), t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

/* ---- the haystack and where the task's items go in it ---- */

typedef struct {
    StrBuf text;  /* the haystack alone */
    size_t *cand; /* offsets in text where an item may go (word starts), increasing, 0 first */
    int n_cand;
} Hay;

/* fill bytes of noise (the passkey filler from its start, as RULER repeats one paragraph) or of
 * the essay from a random word; an item goes at any word start, or at the end after a space */
static void hay_text(Hay *h, int kind, size_t fill, Rng *rng) {
    size_t off = 0;
    if (kind == RULER_ESSAY) {
        off = (size_t)rng_below(rng, ESSAY_LEN);
        while (ESSAY[(off + ESSAY_LEN - 1) % ESSAY_LEN] != ' ') off = (off + 1) % ESSAY_LEN;
    }
    h->cand = xmalloc(sizeof(size_t) * (fill + 1));
    h->n_cand = 0;
    for (size_t i = 0; i < fill; i++) {
        char c = kind == RULER_ESSAY ? ESSAY[(off + i) % ESSAY_LEN] : passkey_filler_at(i);
        if (i == 0 || h->text.s[i - 1] == ' ') h->cand[h->n_cand++] = i;
        sb_put(&h->text, &c, 1);
    }
    if (fill == 0 || h->text.s[fill - 1] == ' ') h->cand[h->n_cand++] = fill;
}

/* items[i] (NUL-terminated) into the haystack at offsets at[i] (non-decreasing; equal ones in
 * order), then the haystack's rest */
static void weave(StrBuf *out, const Hay *h, char **items, const size_t *at, int n) {
    size_t done = 0;
    for (int i = 0; i < n; i++) {
        if (at[i] > done) sb_put(out, h->text.s + done, at[i] - done);
        sb_puts(out, items[i]);
        done = at[i];
    }
    if (h->text.len > done) sb_put(out, h->text.s + done, h->text.len - done);
}

/* the offset for depth d in [0, 1]: the last item place at or before d of the haystack, as the
 * passkey document places its key */
static size_t depth_offset(const Hay *h, double d) {
    size_t want = (size_t)(d * (double)h->text.len), at = 0;
    for (int i = 0; i < h->n_cand && h->cand[i] <= want; i++) at = h->cand[i];
    return at;
}

/* at[0..n) sorted, items (NULL: none) with them; stable: equal offsets keep their order */
static void sort_items(char **items, size_t *at, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && at[j - 1] > at[j]; j--) {
            size_t a = at[j];
            at[j] = at[j - 1], at[j - 1] = a;
            if (items) {
                char *s = items[j];
                items[j] = items[j - 1], items[j - 1] = s;
            }
        }
}

static void hay_free(Hay *h) {
    sb_free(&h->text);
    free(h->cand);
}

/* ---- needles in a haystack ---- */

typedef struct {
    int len, hay, vkind;
    int keys, values, queries; /* keys with `values` needles each; the first `queries` keys asked */
    double depth;              /* where the first key's first needle goes; < 0: at random, as the rest */
} Niah;

/* "key: value. ": the needle, RULER's "One of the special magic numbers for KEY is: VALUE." cut
 * down to what 64 bytes can hold; the question "\nKEY:" is its own lead-in (the passkey lesson) */
static int needle_len(int vkind) { return WORD_LEN + 2 + value_len(vkind) + 2; }

static void put_needle(StrBuf *b, const char *key, const char *value, int vl) {
    sb_put(b, key, WORD_LEN);
    sb_put(b, ": ", 2);
    sb_put(b, value, (size_t)vl);
    sb_put(b, ". ", 2);
}

static int niah_generate(const char *task, const Niah *p, Rng *rng, StrBuf *out) {
    int vl = value_len(p->vkind), nl = needle_len(p->vkind), n_real = p->keys * p->values;
    long fixed = (long)n_real * nl + (1 + 4L * p->queries) + ((long)p->queries * p->values * (vl + 1) + 1);
    if (p->queries > p->keys) return pelab_fail("task %s: %d keys asked of %d", task, p->queries, p->keys);
    if (n_real > MAX_ITEMS) return pelab_fail("task %s: %d needles; at most %d", task, n_real, MAX_ITEMS);
    if (p->len < fixed)
        return pelab_fail("task %s: len %d is too short for %d needle%s, the question and the answer: expected at "
                          "least %ld", task, p->len, n_real, n_real == 1 ? "" : "s", fixed);
    size_t fill = (size_t)(p->len - fixed);
    long n_dist = p->hay == RULER_NEEDLE ? (long)(fill / (size_t)nl) : 0;
    if (p->keys + n_dist > N_CODES / 2) return too_many_words(task, p->keys + n_dist);
    Codes codes = {xcalloc(N_CODES, 1)};
    char *keys = xmalloc((size_t)WORD_LEN * p->keys), *vals = xmalloc((size_t)vl * n_real);
    for (int k = 0; k < p->keys; k++) draw_word(&codes, rng, 'a', keys + (size_t)k * WORD_LEN);
    for (int i = 0; i < n_real; i++) /* distinct: each reference of an answer counts once */
        do draw_value(rng, p->vkind, vals + (size_t)i * vl);
        while (value_taken(vals, i, vl, vals + (size_t)i * vl));
    Hay h = {0};
    if (p->hay == RULER_NEEDLE) { /* other keys' needles, none with a value of the real ones, the rest noise */
        h.cand = xmalloc(sizeof(size_t) * ((size_t)n_dist + 1));
        char key[WORD_LEN], v[UUID_LEN];
        for (long d = 0; d < n_dist; d++) {
            h.cand[h.n_cand++] = h.text.len;
            draw_word(&codes, rng, 'a', key);
            do draw_value(rng, p->vkind, v);
            while (value_taken(vals, n_real, vl, v));
            put_needle(&h.text, key, v, vl);
        }
        h.cand[h.n_cand++] = h.text.len;
        for (size_t i = 0; h.text.len < fill; i++) {
            char c = passkey_filler_at(i);
            sb_put(&h.text, &c, 1);
        }
    } else hay_text(&h, p->hay, fill, rng);
    /* the needles in a random order, each at a random place (the first key's first at its depth);
     * needles at one place stay in that order, the one at its depth not first among them: a short
     * haystack has few places, and "the first needle" must not be the answer there */
    int order[MAX_ITEMS];
    char **items = xmalloc(sizeof(char *) * n_real);
    size_t *at = xmalloc(sizeof(size_t) * n_real);
    for (int i = 0; i < n_real; i++) order[i] = i;
    shuffle(rng, order, n_real);
    for (int i = 0; i < n_real; i++) {
        int id = order[i]; /* key id / values, its value id % values */
        StrBuf b = {0};
        put_needle(&b, keys + (size_t)(id / p->values) * WORD_LEN, vals + (size_t)id * vl, vl);
        items[i] = b.s;
        at[i] = id == 0 && p->depth >= 0 ? depth_offset(&h, p->depth) : h.cand[rng_below(rng, (uint64_t)h.n_cand)];
    }
    sort_items(items, at, n_real);
    weave(out, &h, items, at, n_real);
    /* the question: the keys asked, in a random order */
    int ask[MAX_ITEMS];
    for (int q = 0; q < p->queries; q++) ask[q] = q;
    shuffle(rng, ask, p->queries);
    sb_put(out, "\n", 1);
    for (int q = 0; q < p->queries; q++) {
        if (q) sb_put(out, " ", 1);
        sb_put(out, keys + (size_t)ask[q] * WORD_LEN, WORD_LEN);
    }
    sb_put(out, ":", 1);
    for (int i = 0; i < n_real; i++) free(items[i]);
    free(items), free(at), free(keys), free(vals), free(codes.used);
    hay_free(&h);
    return 0;
}

int ruler_gen_niah_single(const double *val, Rng *rng, StrBuf *out) {
    Niah p = {(int)val[0], (int)val[2], (int)val[3], 1, 1, 1, val[1]};
    return niah_generate("niah_single", &p, rng, out);
}

int ruler_gen_niah_multikey(const double *val, Rng *rng, StrBuf *out) {
    Niah p = {(int)val[0], (int)val[3], (int)val[4], (int)val[2], 1, 1, val[1]};
    return niah_generate("niah_multikey", &p, rng, out);
}

int ruler_gen_niah_multivalue(const double *val, Rng *rng, StrBuf *out) {
    Niah p = {(int)val[0], (int)val[2], (int)val[3], 1, (int)val[1], 1, -1};
    return niah_generate("niah_multivalue", &p, rng, out);
}

int ruler_gen_niah_multiquery(const double *val, Rng *rng, StrBuf *out) {
    Niah p = {(int)val[0], (int)val[2], (int)val[3], (int)val[1], 1, (int)val[1], -1};
    return niah_generate("niah_multiquery", &p, rng, out);
}

static int lower_word(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] < 'a' || s[i] > 'z') return 0;
    return n > 0;
}

static int value_byte(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-'; }

/* the last line's start (after the prompt's last '\n'), or NULL */
static const char *last_line(const char *prompt, size_t n) {
    for (size_t i = n; i-- > 0;)
        if (prompt[i] == '\n') return prompt + i + 1;
    return NULL;
}

int ruler_solve_niah(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans) {
    static const char WANT[] = "a haystack with needles \"key: value.\", then a line of keys and ':'";
    const char *name = t->def->name, *q = last_line(prompt, n);
    if (!q || prompt[n - 1] != ':') return malformed(name, WANT);
    size_t nc = (size_t)(q - 1 - prompt), nq = (size_t)(prompt + n - 1 - q);
    for (size_t i = 0; i <= nq;) { /* each key asked: a word before ' ' or the ':' */
        size_t j = i;
        while (j < nq && q[j] != ' ') j++;
        if (!lower_word(q + i, j - i)) return malformed(name, WANT);
        size_t kl = j - i;
        int hits = 0;
        for (size_t c = 0; c + kl + 2 < nc; c++) { /* its needles: "key: " at a word start, a value, '.' */
            if ((c && prompt[c - 1] != ' ') || memcmp(prompt + c, q + i, kl) != 0 || prompt[c + kl] != ':' ||
                prompt[c + kl + 1] != ' ')
                continue;
            size_t v = c + kl + 2, e = v;
            while (e < nc && value_byte(prompt[e])) e++;
            if (e == v || e == nc || prompt[e] != '.') return malformed(name, WANT);
            sb_put(ans, " ", 1);
            sb_put(ans, prompt + v, e - v);
            hits++;
        }
        if (!hits) return malformed(name, "a needle \"key: value.\" for every key asked");
        i = j + 1;
    }
    return 0;
}

/* ---- variable tracking ---- */

int ruler_gen_vt(const double *val, Rng *rng, StrBuf *out) {
    int len = (int)val[0], hops = (int)val[1], chains = (int)val[2], hay = (int)val[3];
    int per = hops + 1, n_items = chains * per;
    /* "ABC=12345. " heads a chain, "XYZ=ABC. " each hop; the question "\n12345:", the answer its names */
    long fixed = chains * (long)(WORD_LEN + 1 + DIGITS + 2 + hops * (2 * WORD_LEN + 3)) + (DIGITS + 2) +
                 ((long)per * (WORD_LEN + 1) + 1);
    if (n_items > MAX_ITEMS) return pelab_fail("task vt: %d statements; at most %d", n_items, MAX_ITEMS);
    if (len < fixed)
        return pelab_fail("task vt: len %d is too short for %d chain%s of %d hops, the question and the answer: "
                          "expected at least %ld", len, chains, chains == 1 ? "" : "s", hops, fixed);
    Codes codes = {xcalloc(N_CODES, 1)};
    char *names = xmalloc((size_t)WORD_LEN * n_items), *vals = xmalloc((size_t)DIGITS * chains);
    for (int i = 0; i < n_items; i++) draw_word(&codes, rng, 'A', names + (size_t)i * WORD_LEN);
    for (int c = 0; c < chains; c++) /* a value per chain, distinct: the question picks one chain */
        do draw_value(rng, VAL_NUMBER, vals + (size_t)c * DIGITS);
        while (value_taken(vals, c, DIGITS, vals + (size_t)c * DIGITS));
    Hay h = {0};
    hay_text(&h, hay, (size_t)(len - fixed), rng);
    /* places drawn at random and sorted; the chains interleaved at random, each in its own order */
    int seq[MAX_ITEMS], next[MAX_ITEMS] = {0};
    char **items = xmalloc(sizeof(char *) * n_items);
    size_t *at = xmalloc(sizeof(size_t) * n_items);
    for (int i = 0; i < n_items; i++) seq[i] = i / per, at[i] = h.cand[rng_below(rng, (uint64_t)h.n_cand)];
    shuffle(rng, seq, n_items);
    sort_items(NULL, at, n_items); /* the offsets alone: which statement goes where is seq's */
    for (int i = 0; i < n_items; i++) {
        int c = seq[i], j = next[c]++;
        const char *name = names + (size_t)(c * per + j) * WORD_LEN;
        StrBuf b = {0};
        sb_put(&b, name, WORD_LEN);
        sb_put(&b, "=", 1);
        if (j == 0) sb_put(&b, vals + (size_t)c * DIGITS, DIGITS);
        else sb_put(&b, name - WORD_LEN, WORD_LEN);
        sb_put(&b, ". ", 2);
        items[i] = b.s;
    }
    weave(out, &h, items, at, n_items);
    sb_put(out, "\n", 1);
    sb_put(out, vals, DIGITS);
    sb_put(out, ":", 1);
    for (int i = 0; i < n_items; i++) free(items[i]);
    free(items), free(at), free(names), free(vals), free(codes.used);
    hay_free(&h);
    return 0;
}

static int upper_word(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] < 'A' || s[i] > 'Z') return 0;
    return n > 0;
}

static int digits_only(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return n > 0;
}

typedef struct {
    const char *name, *value; /* into the prompt */
    size_t nn, nv;
} Binding;

static const Binding *bound(const Binding *b, int n, const char *name, size_t nn) {
    for (int i = 0; i < n; i++)
        if (b[i].nn == nn && memcmp(b[i].name, name, nn) == 0) return &b[i];
    return NULL;
}

int ruler_solve_vt(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans) {
    (void)t;
    static const char WANT[] = "statements NAME=12345. and NAME=NAME. in a text, then a line \"12345:\"";
    const char *q = last_line(prompt, n);
    if (!q || prompt[n - 1] != ':' || !digits_only(q, (size_t)(prompt + n - 1 - q))) return malformed("vt", WANT);
    size_t nc = (size_t)(q - 1 - prompt), nq = (size_t)(prompt + n - 1 - q);
    Binding *b = NULL;
    int nb = 0, cap = 0, rc = 0;
    for (size_t i = 0; i < nc && rc == 0;) { /* the words between spaces; a statement holds '=' */
        size_t j = i;
        while (j < nc && prompt[j] != ' ') j++;
        const char *w = prompt + i, *eq = memchr(w, '=', j - i);
        if (eq) {
            size_t nn = (size_t)(eq - w), nr = (size_t)(prompt + j - eq) - 2; /* RHS before the '.' */
            const char *rhs = eq + 1;
            const Binding *from = NULL;
            if (j - i < 4 || prompt[j - 1] != '.' || !upper_word(w, nn) || bound(b, nb, w, nn) ||
                !(digits_only(rhs, nr) || (upper_word(rhs, nr) && (from = bound(b, nb, rhs, nr)))))
                rc = malformed("vt", "each name assigned once, from a number or a name assigned before");
            else {
                Binding add = {w, from ? from->value : rhs, nn, from ? from->nv : nr}; /* before b moves */
                if (nb == cap) b = xrealloc(b, sizeof *b * (size_t)(cap = cap ? 2 * cap : 16));
                b[nb++] = add;
            }
        }
        i = j + 1;
    }
    int hits = 0;
    for (int i = 0; rc == 0 && i < nb; i++)
        if (b[i].nv == nq && memcmp(b[i].value, q, nq) == 0) {
            sb_put(ans, " ", 1);
            sb_put(ans, b[i].name, b[i].nn);
            hits++;
        }
    free(b);
    if (rc == 0 && !hits) return malformed("vt", "a name assigned the value asked");
    return rc;
}

/* ---- common and frequent words ---- */

/* "\ntop K:" */
static int question_len(int top) { return 7 + (top >= 10) + (top >= 100); }

/* the list: each of n_words words (index into words) written "abc ", index -1 as RULER's noise
 * "..."; pad '.' bytes; then the question */
static void put_list(StrBuf *out, const int *occ, int n, const char *words, int pad, int top) {
    for (int i = 0; i < n; i++) {
        if (occ[i] < 0) sb_put(out, "...", 3);
        else sb_put(out, words + (size_t)occ[i] * WORD_LEN, WORD_LEN);
        sb_put(out, " ", 1);
    }
    for (int i = 0; i < pad; i++) sb_put(out, ".", 1);
    sb_printf(out, "\ntop %d:", top);
}

int ruler_gen_cwe(const double *val, Rng *rng, StrBuf *out) {
    int len = (int)val[0], top = (int)val[1], freq = (int)val[2], rare = (int)val[3], wb = WORD_LEN + 1;
    if (freq <= rare) return pelab_fail("task cwe: freq %d must exceed rare %d (the common words must be told apart)",
                                        freq, rare);
    /* top common words freq times each, at least top uncommon ones rare times each */
    long fixed = question_len(top) + ((long)top * wb + 1) + (long)top * freq * wb;
    long room = len - fixed, uncommon = room / ((long)rare * wb);
    if (uncommon < top)
        return pelab_fail("task cwe: len %d is too short for %d words %d times, %d more %d time%s, the question and "
                          "the answer: expected at least %ld", len, top, freq, top, rare, rare == 1 ? "" : "s",
                          fixed + (long)top * rare * wb);
    if (top + uncommon > N_CODES / 2) return too_many_words("cwe", top + uncommon);
    int n_words = top + (int)uncommon, n_occ = top * freq + (int)uncommon * rare;
    Codes codes = {xcalloc(N_CODES, 1)};
    char *words = xmalloc((size_t)WORD_LEN * n_words);
    int *occ = xmalloc(sizeof(int) * n_occ), k = 0;
    for (int w = 0; w < n_words; w++) {
        draw_word(&codes, rng, 'a', words + (size_t)w * WORD_LEN);
        for (int r = 0; r < (w < top ? freq : rare); r++) occ[k++] = w;
    }
    shuffle(rng, occ, n_occ);
    put_list(out, occ, n_occ, words, (int)(room - uncommon * rare * wb), top);
    free(words), free(occ), free(codes.used);
    return 0;
}

/* zeta(a), a > 1: the first terms and the Euler-Maclaurin tail */
static double zeta(double a) {
    enum { M = 64 };
    double s = 0;
    for (int k = 1; k < M; k++) s += pow(k, -a);
    return s + pow(M, 1 - a) / (a - 1) + 0.5 * pow(M, -a) + a * pow(M, -a - 1) / 12;
}

/* RULER's counts: rank k of n words appears floor(n k^-alpha / z) times, z = zeta(alpha), rank 1 being
 * the noise "..."; then each of ranks 2..top+1 strictly below the one before and every later rank
 * below rank top+1 (RULER leaves ties, harmless to its order-free score, but an answer in order
 * must be told apart). counts[0..*n_ranks) for ranks 2..; 0 when rank top+1 falls to 0. */
static int fwe_counts(long n, double alpha, double z, int top, int *counts, int cap, int *n_ranks) {
    int r = 0;
    for (int k = 2; r < cap; k++) {
        long c = (long)floor((double)n * pow(k, -alpha) / z);
        if (r >= 1 && r <= top && c > counts[r - 1] - 1) c = counts[r - 1] - 1;
        if (r > top && c > counts[top - 1] - 1) c = counts[top - 1] - 1;
        if (c <= 0) break;
        counts[r++] = (int)c;
    }
    *n_ranks = r;
    return r >= top;
}

int ruler_gen_fwe(const double *val, Rng *rng, StrBuf *out) {
    int len = (int)val[0], top = (int)val[2], wb = WORD_LEN + 1, counts[MAX_ITEMS], n_ranks;
    double alpha = val[1], z = zeta(alpha);
    long fixed = question_len(top) + ((long)top * wb + 1), n = (len - fixed) / wb;
    if (n < 0 || !fwe_counts(n, alpha, z, top, counts, MAX_ITEMS, &n_ranks)) {
        long need = 1; /* the shortest list that tells the top words apart, for the message */
        while (need < 1 << 20 && !fwe_counts(need, alpha, z, top, counts, MAX_ITEMS, &n_ranks)) need++;
        return pelab_fail("task fwe: len %d is too short to tell %d words apart with alpha %g: expected at least %ld",
                          len, top, alpha, fixed + need * wb);
    }
    Codes codes = {xcalloc(N_CODES, 1)};
    char *words = xmalloc((size_t)WORD_LEN * n_ranks);
    int *occ = xmalloc(sizeof(int) * (size_t)n), k = 0;
    for (int r = 0; r < n_ranks; r++) {
        draw_word(&codes, rng, 'a', words + (size_t)r * WORD_LEN);
        for (int c = 0; c < counts[r]; c++) occ[k++] = r;
    }
    while (k < n) occ[k++] = -1; /* the rest is noise, the most frequent "word" (rank 1 and the remainder) */
    shuffle(rng, occ, (int)n);
    put_list(out, occ, (int)n, words, (int)((len - fixed) % wb), top);
    free(words), free(occ), free(codes.used);
    return 0;
}

typedef struct {
    const char *s;
    int len, first, count; /* first: the index of its first occurrence */
} Word;

static int by_text(const void *a, const void *b) {
    const Word *x = a, *y = b;
    int n = x->len < y->len ? x->len : y->len, c = memcmp(x->s, y->s, (size_t)n);
    return c ? c : x->len != y->len ? x->len - y->len : x->first - y->first;
}

static int by_count(const void *a, const void *b) {
    const Word *x = a, *y = b;
    return x->count != y->count ? y->count - x->count : x->first - y->first;
}

int ruler_solve_top_words(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans) {
    const char *name = t->def->name, *q = last_line(prompt, n);
    static const char WANT[] = "words of a..z (and '.' noise) separated by spaces, then a line \"top K:\"";
    size_t nq = q ? (size_t)(prompt + n - q) : 0;
    if (!q || nq < 6 || nq > 8 || memcmp(q, "top ", 4) != 0 || prompt[n - 1] != ':' || !digits_only(q + 4, nq - 5) ||
        q[4] == '0')
        return malformed(name, WANT);
    int top = atoi(q + 4); /* 1..999, digits checked */
    size_t nc = (size_t)(q - 1 - prompt);
    Word *w = NULL;
    int nw = 0, cap = 0;
    for (size_t i = 0; i < nc;) {
        size_t j = i, dots = 0;
        while (j < nc && prompt[j] != ' ') dots += prompt[j++] == '.';
        if (j > i && dots != j - i) {
            if (!lower_word(prompt + i, j - i)) {
                free(w);
                return malformed(name, WANT);
            }
            if (nw == cap) w = xrealloc(w, sizeof *w * (size_t)(cap = cap ? 2 * cap : 64));
            w[nw] = (Word){prompt + i, (int)(j - i), nw, 1};
            nw++;
        }
        i = j + 1;
    }
    /* the distinct words with their counts and first occurrences, most frequent first */
    if (nw > 1) qsort(w, (size_t)nw, sizeof *w, by_text); /* (no words: w is NULL, which qsort may not get) */
    int nd = 0;
    for (int i = 0; i < nw; i++) {
        if (nd && w[nd - 1].len == w[i].len && memcmp(w[nd - 1].s, w[i].s, (size_t)w[i].len) == 0) w[nd - 1].count++;
        else w[nd++] = w[i];
    }
    if (nd > 1) qsort(w, (size_t)nd, sizeof *w, by_count);
    int rc = 0;
    if (nd < top || (nd > top && w[top - 1].count == w[top].count))
        rc = malformed(name, "the K most frequent words told apart (the K-th more frequent than the next)");
    for (int i = 0; rc == 0 && i < top; i++) {
        sb_put(ans, " ", 1);
        sb_put(ans, w[i].s, (size_t)w[i].len);
    }
    free(w);
    return rc;
}
