/* test_ruler.c: RULER's synthetic tasks (data/task_ruler.c): exact instances for a seed, every
 * example exactly len bytes with its answer determined (keys, names and words distinct, the values
 * asked distinct, counts told apart; read back here by a parser of the test's own), the stated
 * shortest lengths, the depth of a needle, the oracles on hand-made prompts, RULER's score
 * (task_recall), task eval's figures for it and training streams masked to the answers. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../data/task.h"
#include "../infer/task_eval.h"
#include "../model/model.h"
#include "test.h"

static int parse_ok(TaskSpec *t, const char *spec) {
    int rc = task_parse(t, spec);
    CHECK(rc == 0, "task_parse(%s): %s", spec, pelab_errmsg);
    return rc == 0;
}

/* one example of spec at len from seed (0 and a message on failure) */
static int example(const char *spec, int len, unsigned long long seed, TaskSpec *t, TaskExample *ex) {
    if (!parse_ok(t, spec)) return 0;
    Rng rng;
    rng_seed(&rng, seed);
    int rc = task_example(t, &rng, len, ex);
    CHECK(rc == 0, "%s len %d seed %llu: %s", spec, len, seed, pelab_errmsg);
    return rc == 0;
}

/* the text with '\n' written as \n, the answer after "|" (the form below) */
static void shown(const TaskExample *ex, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < ex->n && k + 4 < cap; i++) {
        if (i == ex->answer_start) out[k++] = '|';
        if (ex->text[i] == '\n') out[k++] = '\\', out[k++] = 'n';
        else out[k++] = ex->text[i];
    }
    out[k] = 0;
}

/* seed 1, the text exactly as written when the tasks were made: a change of a generator shows here */
static void test_instances(void) {
    static const struct {
        const char *spec;
        int len;
        const char *text;
    } CASES[] = {
        {"niah_single", 40, "The qvf: 60859. grass is gre\\nqvf:| 60859\\n"},
        {"niah_single:hay=essay,value=uuid", 48, "qvf: 0821-1846. quiet, and the m\\nqvf:| 0821-1846\\n"},
        {"niah_multikey:hay=needle", 72, "yzi: 84439. qvf: 89284. qoh: 95614. oqa: 94436. rvs: 79743. \\nqvf:| 89284\\n"},
        {"niah_multivalue:values=2", 64, "on the ygm: 21201. ygm: 89015. rocks for fish.\\nygm:| 21201 89015\\n"},
        {"niah_multiquery:queries=2", 64, "ygm: 52018. on it fau: 60154. like a coin.\\nygm fau:| 52018 60154\\n"},
        {"vt:hops=2,chains=2", 80, "YGM=89015. FAU=YGM. OAQ=75270. VUU=OAQ. FZN=FAU. LPV=VUU. Th\\n89015:| YGM FAU FZN\\n"},
        {"cwe:top=2,freq=3", 64, "fau oaq wjb lpv ygm bga ygm fau fzn fau vuu ygm \\ntop 2:| fau ygm\\n"},
        {"fwe", 150, "... ... ... ... ... ... ... ... ... ygm ... ... ... fau ... ... ... fau ... ygm ... fzn ... ... ... "
                     "... ... ygm ... ... ygm ... ..\\ntop 3:| ygm fau fzn\\n"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        TaskSpec t;
        TaskExample ex;
        if (!example(CASES[i].spec, CASES[i].len, 1, &t, &ex)) continue;
        char got[1024];
        shown(&ex, got, sizeof got);
        CHECK(strcmp(got, CASES[i].text) == 0 && ex.n == (size_t)CASES[i].len && ex.mask == NULL,
              "%s len %d seed 1:\n  got  %s\n  want %s", CASES[i].spec, CASES[i].len, got, CASES[i].text);
        task_example_free(&ex);
    }
}

/* ---- the test's own reading of an example ---- */

typedef struct {
    const char *s;
    size_t n;
} Word;

/* the words of text[0, n) between spaces (empty ones skipped), at most cap */
static int words_of(const char *text, size_t n, Word *w, int cap) {
    int k = 0;
    for (size_t i = 0; i < n && k < cap;) {
        size_t j = i;
        while (j < n && text[j] != ' ') j++;
        if (j > i) w[k++] = (Word){text + i, j - i};
        i = j + 1;
    }
    return k;
}

static int same(Word a, Word b) { return a.n == b.n && memcmp(a.s, b.s, a.n) == 0; }

enum { MAXW = 20000 };
static Word ctx[MAXW], ans[MAXW], qw[64];

/* an example split: context words (before the last line), the question's words (the last line
 * without its ':'), the answer's words; 0 if the shape is wrong */
static int split(const TaskExample *ex, int *nc, int *nq, int *na) {
    const char *nl = NULL;
    for (size_t i = 0; i < ex->answer_start; i++)
        if (ex->text[i] == '\n') nl = ex->text + i;
    if (!nl || ex->text[ex->answer_start - 1] != ':' || ex->text[ex->answer_start] != ' ' || ex->text[ex->n - 1] != '\n')
        return 0;
    *nc = words_of(ex->text, (size_t)(nl - ex->text), ctx, MAXW);
    *nq = words_of(nl + 1, (size_t)(ex->text + ex->answer_start - 1 - (nl + 1)), qw, 64);
    *na = words_of(ex->text + ex->answer_start, ex->answer_len - 1, ans, MAXW);
    return 1;
}

/* a needle task: every key distinct but the asked key's own needles; the answer: the asked keys'
 * values in the question's order, each key's in text order; no other needle has a value asked */
static int check_niah(const TaskExample *ex, int want_refs, char *why, size_t cap) {
    int nc, nq, na;
    if (!split(ex, &nc, &nq, &na)) return snprintf(why, cap, "shape"), 0;
    static Word key[MAXW], val[MAXW];
    int nn = 0;
    for (int i = 0; i + 1 < nc; i++)
        if (ctx[i].n == 4 && ctx[i].s[3] == ':' && ctx[i + 1].n > 1 && ctx[i + 1].s[ctx[i + 1].n - 1] == '.')
            key[nn] = (Word){ctx[i].s, 3}, val[nn] = (Word){ctx[i + 1].s, ctx[i + 1].n - 1}, nn++;
    Word want[64];
    int nw = 0;
    for (int q = 0; q < nq; q++)
        for (int i = 0; i < nn && nw < 64; i++)
            if (same(key[i], qw[q])) want[nw++] = val[i];
    if (nw != na || na != want_refs) return snprintf(why, cap, "%d values of the keys asked, %d in the answer", nw, na), 0;
    for (int i = 0; i < na; i++)
        if (!same(ans[i], want[i])) return snprintf(why, cap, "answer word %d", i), 0;
    for (int i = 0; i < nn; i++) {
        int asked = 0;
        for (int q = 0; q < nq; q++) asked |= same(key[i], qw[q]);
        for (int j = i + 1; j < nn; j++)
            if (same(key[i], key[j]) && !asked) return snprintf(why, cap, "key %.3s twice", key[i].s), 0;
        for (int a = 0; a < na && !asked; a++)
            if (same(val[i], ans[a])) return snprintf(why, cap, "a distractor with a value asked"), 0;
    }
    for (int a = 0; a < na; a++)
        for (int b = a + 1; b < na; b++)
            if (same(ans[a], ans[b])) return snprintf(why, cap, "a value asked twice"), 0;
    return 1;
}

/* variable tracking: names assigned once each, chain values distinct; the answer: the names whose
 * value resolves to the one asked, in text order */
static int check_vt(const TaskExample *ex, int want_refs, char *why, size_t cap) {
    int nc, nq, na;
    if (!split(ex, &nc, &nq, &na) || nq != 1) return snprintf(why, cap, "shape"), 0;
    static Word lhs[MAXW], rhs[MAXW];
    int ns = 0;
    for (int i = 0; i < nc; i++) {
        const char *eq = memchr(ctx[i].s, '=', ctx[i].n);
        if (!eq) continue;
        lhs[ns] = (Word){ctx[i].s, (size_t)(eq - ctx[i].s)};
        rhs[ns] = (Word){eq + 1, ctx[i].n - lhs[ns].n - 2};
        for (int j = 0; j < ns; j++)
            if (same(lhs[j], lhs[ns])) return snprintf(why, cap, "a name assigned twice"), 0;
        ns++;
    }
    int k = 0, numbers = 0;
    for (int i = 0; i < ns; i++) {
        Word v = rhs[i];
        for (int hop = 0; hop < ns && !(v.s[0] >= '0' && v.s[0] <= '9'); hop++) /* follow the names back */
            for (int j = 0; j < i; j++)
                if (same(lhs[j], v)) {
                    v = rhs[j];
                    break;
                }
        numbers += rhs[i].s[0] >= '0' && rhs[i].s[0] <= '9';
        for (int j = 0; j < i && rhs[i].s[0] <= '9'; j++)
            if (same(rhs[i], rhs[j])) return snprintf(why, cap, "two chains with one value"), 0;
        if (same(v, qw[0]) && !(k < na && same(ans[k++], lhs[i]))) return snprintf(why, cap, "answer name %d", k), 0;
    }
    if (k != na || na != want_refs || numbers < 1) return snprintf(why, cap, "%d names of %d", k, na), 0;
    return 1;
}

/* common and frequent words: the answer is the K most frequent words (dots are noise), most
 * frequent first, ties in order of first appearance, the K-th more frequent than the next */
static int check_top(const TaskExample *ex, int want_refs, char *why, size_t cap) {
    int nc, nq, na;
    if (!split(ex, &nc, &nq, &na) || nq != 2) return snprintf(why, cap, "shape"), 0;
    static Word w[MAXW];
    static int count[MAXW];
    int nd = 0;
    for (int i = 0; i < nc; i++) {
        if (ctx[i].s[0] == '.') continue;
        int j = 0;
        while (j < nd && !same(w[j], ctx[i])) j++;
        if (j == nd) w[nd] = ctx[i], count[nd++] = 0;
        count[j]++;
    }
    int top = atoi(qw[1].s);
    for (int r = 0; r < na; r++) { /* ans[r] is the r-th: nothing above it but the ones before it */
        int c = -1, above = 0;
        for (int j = 0; j < nd; j++)
            if (same(w[j], ans[r])) c = count[j];
        for (int j = 0; j < nd; j++) above += count[j] > c;
        if (c < 0 || above > r) return snprintf(why, cap, "answer word %d", r), 0;
    }
    int kth = 1 << 30, rest = 0;
    for (int j = 0; j < nd; j++) {
        int in = 0;
        for (int r = 0; r < na; r++) in |= same(w[j], ans[r]);
        if (in) kth = count[j] < kth ? count[j] : kth;
        else rest = count[j] > rest ? count[j] : rest;
    }
    if (na != top || na != want_refs || !(kth > rest)) return snprintf(why, cap, "top %d: %d vs %d", top, kth, rest), 0;
    return 1;
}

/* many seeds and lengths of each task: exactly len bytes, printable, the answer determined */
static void test_unique_answers(void) {
    static const struct {
        const char *spec;
        int refs;
        int (*check)(const TaskExample *, int, char *, size_t);
    } CASES[] = {
        {"niah_single", 1, check_niah},
        {"niah_single:hay=needle,value=uuid", 1, check_niah},
        {"niah_multikey:keys=6,len=96-160", 1, check_niah},
        {"niah_multikey:hay=needle", 1, check_niah},
        {"niah_multivalue:values=5,hay=noise", 5, check_niah},
        {"niah_multivalue:hay=needle", 4, check_niah},
        {"niah_multiquery:queries=3,hay=needle,value=uuid", 3, check_niah},
        {"vt", 5, check_vt},
        {"vt:hops=2,chains=3,hay=essay,len=120-200", 3, check_vt},
        {"vt:hops=8,chains=3,len=400-600", 9, check_vt}, /* more bindings than the oracle's first array holds */
        {"cwe", 3, check_top},
        {"cwe:top=5,freq=3,rare=2,len=140-200", 5, check_top},
        {"fwe", 3, check_top},
        {"fwe:alpha=1.5,top=4,len=200-300", 4, check_top},
    };
    static const int lens[] = {-1, 300, 512, 2048};
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        int bad = 0;
        char why[160] = "";
        for (int seed = 1; seed <= 12; seed++)
            for (int l = 0; l < 4; l++) {
                TaskSpec t;
                TaskExample ex;
                if (!example(CASES[c].spec, lens[l], (unsigned long long)seed, &t, &ex)) continue;
                int printable = 1;
                for (size_t i = 0; i < ex.n; i++) printable &= (ex.text[i] >= 32 && ex.text[i] < 127) || ex.text[i] == '\n';
                int ok = printable && (lens[l] < 0 || ex.n == (size_t)lens[l]) && ex.n == (size_t)ex.len &&
                         CASES[c].check(&ex, CASES[c].refs, why, sizeof why);
                if (!ok && !bad) fprintf(stderr, "  %s seed %d len %d: %s\n  %s\n", CASES[c].spec, seed, lens[l], why, ex.text);
                bad += !ok;
                task_example_free(&ex);
            }
        CHECK(bad == 0, "%s: %d of 48 examples not of the length asked or without a determined answer (%s)",
              CASES[c].spec, bad, why);
    }
}

/* the shortest length a refusal names is accepted, one byte less refused with that message */
static void test_shortest(void) {
    static const char *SPECS[] = {"niah_single",       "niah_single:value=uuid", "niah_multikey:keys=7",
                                  "niah_multivalue",   "niah_multiquery:queries=6", "vt:hops=1",
                                  "vt:hops=6,chains=3", "cwe:top=1,freq=2",     "cwe:top=4,freq=9,rare=3",
                                  "fwe",               "fwe:alpha=3,top=2",     "niah_multikey:keys=3,hay=needle"};
    for (size_t i = 0; i < sizeof SPECS / sizeof SPECS[0]; i++) {
        TaskSpec t;
        if (!parse_ok(&t, SPECS[i])) continue;
        Rng rng;
        rng_seed(&rng, 2);
        TaskExample ex;
        int len = (int)t.def->opts[t.def->len_opt].lo, rc = task_example(&t, &rng, len, &ex);
        if (rc == 0) task_example_free(&ex);
        const char *at = rc ? strstr(pelab_errmsg, "expected at least ") : NULL;
        int shortest = at ? atoi(at + 18) : len, refused = rc != 0 && strstr(pelab_errmsg, "too short") != NULL;
        char msg[512];
        snprintf(msg, sizeof msg, "%s", pelab_errmsg);
        int ok = 1;
        if (shortest > len) { /* one less is refused, naming the same minimum */
            rc = task_example(&t, &rng, shortest - 1, &ex);
            ok = rc != 0 && strstr(pelab_errmsg, msg + (at - pelab_errmsg)) != NULL;
            if (rc == 0) task_example_free(&ex);
        }
        rc = task_example(&t, &rng, shortest, &ex);
        ok = ok && rc == 0 && ex.n == (size_t)shortest;
        if (rc == 0) task_example_free(&ex);
        CHECK(ok && (refused || shortest == len), "%s: the shortest length %d (%s)", SPECS[i], shortest, msg);
    }
}

/* depth 0: the needle opens the haystack (a multi-key example: only needles before it, the others
 * placed there too); depth 1: no word of the haystack follows it; hay=needle, depth 0.5: at the
 * needle boundary at or before half of the haystack */
static void test_depth(void) {
    const char *specs[] = {"niah_single:depth=0", "niah_single:depth=1", "niah_multikey:depth=0,keys=5",
                           "niah_single:depth=0.5,hay=needle"};
    for (int s = 0; s < 4; s++) {
        int bad = 0;
        for (int seed = 1; seed <= 10; seed++) {
            TaskSpec t;
            TaskExample ex;
            if (!example(specs[s], 100 + 7 * seed, (unsigned long long)seed, &t, &ex)) continue;
            char key[8] = ""; /* the key asked, as its needle starts: "abc: " */
            const char *last = strrchr(ex.text, '\n'), *q = last;
            while (q > ex.text && q[-1] != '\n') q--;
            if (q > ex.text) snprintf(key, sizeof key, "%.3s: ", q);
            const char *needle = key[0] ? strstr(ex.text, key) : NULL;
            (void)last;
            size_t at = needle ? (size_t)(needle - ex.text) : 0, end = needle ? at + 12 : 0; /* "abc: 12345. " */
            const char *nl = memchr(ex.text, '\n', ex.n);
            int only_needles = at % 12 == 0; /* "abc: 12345. " each */
            for (size_t o = 0; o < at && only_needles; o += 12)
                only_needles = ex.text[o + 3] == ':' && ex.text[o + 10] == '.' && ex.text[o + 11] == ' ';
            if (s == 0) bad += at != 0;
            else if (s == 2) bad += !only_needles;
            else if (s == 1) bad += !(nl && (size_t)(nl - ex.text) >= end && !memchr(ex.text + end, ' ', (size_t)(nl - ex.text) - end));
            else { /* needle haystack: at half of it, to the needle (12 bytes) */
                size_t hay = (size_t)(nl - ex.text) - 12;
                bad += !(at <= hay / 2 && at + 12 > hay / 2 && at % 12 == 0);
            }
            task_example_free(&ex);
        }
        CHECK(bad == 0, "%s: the needle asked not where its depth puts it in %d of 10", specs[s], bad);
    }
}

/* the oracle's answer to a hand-made prompt (NULL: refused as malformed) */
static void expect_answer(const char *spec, const char *prompt, const char *want) {
    TaskSpec t;
    if (!parse_ok(&t, spec)) return;
    StrBuf a = {0};
    int rc = task_solve(&t, prompt, strlen(prompt), &a);
    if (want)
        CHECK(rc == 0 && strcmp(sb_str(&a), want) == 0, "%s on '%s': rc %d '%s', want '%s' (%s)", spec, prompt, rc,
              sb_str(&a), want, pelab_errmsg);
    else CHECK(rc == -1 && strstr(pelab_errmsg, "malformed"), "%s accepted '%s'", spec, prompt);
    sb_free(&a);
}

static void test_oracles(void) {
    expect_answer("niah_single", "Sky abc: 12345. is blue\nabc:", " 12345\n");
    expect_answer("niah_multikey", "xyz: 11111. abc: 22222. the end\nabc:", " 22222\n");
    expect_answer("niah_multikey", "xabc: 11111. abc: 22222.\nabc:", " 22222\n"); /* a key at a word start only */
    expect_answer("niah_multivalue", "abc: 3. x abc: 1. abc: 2.\nabc:", " 3 1 2\n");
    expect_answer("niah_multiquery", "abc: 1. def: 2. ghi: 3.\nghi abc:", " 3 1\n");
    expect_answer("niah_single", "abc: 0821-184f. rest\nabc:", " 0821-184f\n");
    expect_answer("vt", "AB=12345. The CD=AB. grass EF=CD. XY=54321. GH=XY.\n12345:", " AB CD EF\n");
    expect_answer("cwe", "aa bb aa cc bb aa dd\ntop 2:", " aa bb\n");
    expect_answer("cwe", "bb aa aa bb cc\ntop 2:", " bb aa\n"); /* a tie in the top: first appearance */
    expect_answer("fwe", "... x ... y ... x .... z x y\ntop 2:", " x y\n");
    expect_answer("fwe", "a b c d e f g h i j k l a\ntop 1:", " a\n");

    expect_answer("niah_single", "abc: 12345. rest\nxyz:", NULL);     /* no needle for the key */
    expect_answer("niah_single", "abc: 12345 rest\nabc:", NULL);      /* a value without its '.' */
    expect_answer("niah_single", "abc: 12345.\nabc", NULL);           /* no ':' */
    expect_answer("niah_single", "abc: 12345.\nabc :", NULL);         /* an empty key */
    expect_answer("niah_single", "abc: 12345.\nABC:", NULL);          /* keys are lowercase */
    expect_answer("niah_single", "abc: 12345.", NULL);                /* no question line */
    expect_answer("vt", "AB=12345. AB=54321.\n12345:", NULL);         /* assigned twice */
    expect_answer("vt", "AB=CD. CD=1.\n1:", NULL);                    /* from a name not assigned yet */
    expect_answer("vt", "AB=12345.\n54321:", NULL);                   /* nobody has the value */
    expect_answer("vt", "AB=12345\n12345:", NULL);                    /* no '.' */
    expect_answer("vt", "AB=12345.\nAB:", NULL);                      /* the question is a value */
    expect_answer("vt", "AB=1. CD=AB. AB2=CD.\n1:", NULL);
    expect_answer("cwe", "aa bb aa bb cc\ntop 1:", NULL);             /* the 1st and 2nd tie */
    expect_answer("cwe", "aa bb\ntop 3:", NULL);                      /* fewer words than asked */
    expect_answer("cwe", "aa Bb\ntop 1:", NULL);                      /* a word not of a..z */
    expect_answer("cwe", "aa aa\ntop 0:", NULL);
    expect_answer("cwe", "aa aa\ntop 01:", NULL);
    expect_answer("cwe", "aa aa\ntop1:", NULL);
}

/* RULER's string_match_all on one example of each kind */
static void expect_recall(const char *spec, int len, const char *pred, int want_found, int want_total) {
    TaskSpec t;
    TaskExample ex;
    if (!example(spec, len, 3, &t, &ex)) return;
    int found = -1, total = -1;
    double r = task_recall(&t, &ex, pred, strlen(pred), &found, &total);
    CHECK(found == want_found && total == want_total && r == (double)want_found / want_total,
          "%s: recall of '%s' against '%s': %d of %d (%g), want %d of %d", spec, pred, ex.text + ex.answer_start, found,
          total, r, want_found, want_total);
    task_example_free(&ex);
}

static void test_recall(void) {
    /* niah_multivalue:values=3 at seed 3, len 80: its answer, then variations of it */
    TaskSpec t;
    TaskExample ex;
    if (!example("niah_multivalue:values=3", 80, 3, &t, &ex)) return;
    char a[64], b[64], c[64], buf[256];
    CHECK(sscanf(ex.text + ex.answer_start, " %63s %63s %63s", a, b, c) == 3, "three values: %s", ex.text);
    task_example_free(&ex);
    const char *spec = "niah_multivalue:values=3";
    snprintf(buf, sizeof buf, " %s %s %s\n", a, b, c);
    expect_recall(spec, 80, buf, 3, 3); /* all recalled */
    snprintf(buf, sizeof buf, " %s %s\n", a, c);
    expect_recall(spec, 80, buf, 2, 3); /* one missing */
    snprintf(buf, sizeof buf, "the values are %s, %s and %s, I think\n", c, a, b);
    expect_recall(spec, 80, buf, 3, 3); /* extra text and another order cost nothing */
    snprintf(buf, sizeof buf, " %s %s\n%s", a, b, c);
    expect_recall(spec, 80, buf, 2, 3); /* after the model's '\n' nothing counts */
    snprintf(buf, sizeof buf, " %s%s %s %s", a, b, b, b);
    expect_recall(spec, 80, buf, 1, 3); /* glued: not a whole word; a repeat counts once */
    snprintf(buf, sizeof buf, " x%s %.4s", a, b);
    expect_recall(spec, 80, buf, 0, 3); /* inside a longer word, or cut short: not recalled */
    expect_recall(spec, 80, "", 0, 3);
    /* letters in either case (vt's names), and words (cwe) */
    if (example("vt:hops=1", 60, 3, &t, &ex)) {
        char n1[8], n2[8];
        sscanf(ex.text + ex.answer_start, " %7s %7s", n1, n2);
        for (char *p = n2; *p; p++) *p = (char)(*p - 'A' + 'a');
        snprintf(buf, sizeof buf, "%s,%s", n2, n1);
        task_example_free(&ex);
        expect_recall("vt:hops=1", 60, buf, 2, 2);
    }
    if (parse_ok(&t, "copy")) { /* a task without references has no recall */
        Rng rng;
        rng_seed(&rng, 1);
        if (task_example(&t, &rng, 4, &ex) == 0) {
            CHECK(task_recall(&t, &ex, "abcd", 4, NULL, NULL) == -1 && strstr(pelab_errmsg, "no recall"),
                  "copy has no recall score: %s", pelab_errmsg);
            task_example_free(&ex);
        }
    }
    int listed = 0;
    for (int i = 0; i < task_count(); i++) listed += task_def(i)->listed;
    CHECK(listed == 7 && task_find("niah_single")->listed && !task_find("passkey")->listed,
          "the 7 RULER tasks are listed, the others not (%d)", listed);
}

/* task eval on an untrained byte model: RULER's score is consistent with exact match (an exact
 * answer recalls everything), in [0, 1], deterministic, with an interval around it */
static void test_eval_recall(void) {
    ModelConfig c = {.vocab_size = 256, .dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .hidden_dim = 24,
                     .seq_len = 64, .norm_eps = 1e-5f, .tied = 1};
    Model m;
    if (model_create(&m, &c, "rope") != 0) {
        CHECK(0, "model: %s", pelab_errmsg);
        return;
    }
    model_init_weights(&m, 5);
    TaskSpec t;
    TaskScore s, again, plain;
    task_parse(&t, "niah_multiquery:queries=2");
    int rc = task_eval_length(&m, NULL, &t, 64, 16, 3, 0, &s);
    task_eval_length(&m, NULL, &t, 64, 16, 3, 0, &again);
    CHECK(rc == 0 && s.listed && s.n == 16 && s.recall >= (double)s.exact / s.n && s.recall <= 1 &&
              s.recall_all >= s.exact && s.recall_all <= s.n && s.recall_ci[0] <= s.recall && s.recall <= s.recall_ci[1] &&
              memcmp(&s, &again, sizeof s) == 0,
          "task eval of a RULER task: recall %g (all %d), exact %d of %d: %s", s.recall, s.recall_all, s.exact, s.n,
          rc ? pelab_errmsg : "");
    task_parse(&t, "copy");
    rc = task_eval_length(&m, NULL, &t, 4, 4, 3, 0, &plain);
    CHECK(rc == 0 && !plain.listed && plain.recall != plain.recall, "a task without references: no recall (NaN)");
    /* a learned table: the longer answer stays within it (an example that fits is scored, not refused) */
    model_free(&m);
    if (model_create(&m, &c, "learned") == 0) {
        model_init_weights(&m, 5);
        task_parse(&t, "niah_single");
        rc = task_eval_length(&m, NULL, &t, 64, 4, 3, 0, &s);
        CHECK(rc == 0 && s.n == 4, "a 64-byte example on a 64-position table is scored: %s", rc ? pelab_errmsg : "");
        model_free(&m);
    }
}

/* a training stream of each task: the loss mask is exactly every example's answer (its leading
 * space to its '\n'), the examples those of the same seed */
static void test_stream(void) {
    const char *specs[] = {"niah_single", "niah_multivalue:values=2,len=60-90", "vt:hops=1,len=40-80", "cwe", "fwe"};
    for (int s = 0; s < 5; s++) {
        TaskSpec t;
        if (!parse_ok(&t, specs[s])) continue;
        Rng rng, again;
        rng_seed(&rng, 5), rng_seed(&again, 5);
        char *text;
        unsigned char *mask;
        if (task_stream(&t, &rng, 4000, &text, &mask, NULL) != 0) {
            CHECK(0, "%s stream: %s", specs[s], pelab_errmsg);
            continue;
        }
        int bad = 0, answers = 0;
        for (size_t used = 0; used < 4000;) {
            TaskExample ex;
            if (task_example(&t, &again, -1, &ex) != 0) break;
            for (size_t k = 0; k < ex.n && used < 4000; k++, used++)
                bad += text[used] != ex.text[k] || mask[used] != (k >= ex.answer_start);
            answers++;
            task_example_free(&ex);
        }
        CHECK(bad == 0 && answers > 10, "%s stream: %d bytes disagree with its %d examples", specs[s], bad, answers);
        free(text), free(mask);
    }
}

static void test_ruler_cli(void) {
    static char out[1 << 14];
    int rc = run_pelab("./pelab task show niah_single --seed 1 --len 40 --n 1", out, sizeof out);
    CHECK(rc == 0 && strstr(out, "The qvf: 60859. grass is gre\\nqvf:[[ 60859\\n]]") &&
              strstr(out, "# niah_single:len=32-64,depth=0-1,hay=noise,value=number"),
          "task show niah_single (exit %d): %s", rc, out);
    rc = run_pelab("./pelab task list", out, sizeof out);
    CHECK(rc == 0 && strstr(out, "hay           default essay, one of noise|essay|needle") &&
              strstr(out, "alpha         default 2, accepts 1.1..4"),
          "task list names the haystacks (exit %d)", rc);
    expect_pelab_error("./pelab task show niah_single:hay=forest", "hay=forest: expected one of noise|essay|needle");
    expect_pelab_error("./pelab task show vt:hay=needle", "hay=needle: expected one of noise|essay");
    expect_pelab_error("./pelab task show niah_single:value=1", "value=1: expected one of number|uuid");
    expect_pelab_error("./pelab task show cwe:freq=2,rare=2", "freq 2 must exceed rare 2");
    expect_pelab_error("./pelab task show vt --len 30", "len 30 is too short for 1 chain of 4 hops");
    expect_pelab_error("./pelab task show niah_multiquery:queries=3 --len 40", "expected at least 68");
}

void test_ruler(void) {
    test_instances();
    test_unique_answers();
    test_shortest();
    test_depth();
    test_oracles();
    test_recall();
    test_eval_recall();
    test_stream();
    test_ruler_cli();
}
