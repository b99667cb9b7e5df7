/* test_suite_keyppl.c: the keygap:B relation of the claims file (io/claims.h) and its statistic
 * (lab/suite_keyppl.h) on constructed key-token rows: known per-seed figures give a known effect,
 * standard error and df; the figures pair by seed whatever order the rows come in; a seed whose run
 * failed the gate, or that misses a figure, is left out; the seed cap; and every case without a
 * test says why. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../io/claims.h"
#include "../lab/suite_keyppl.h"
#include "test.h"

static void keygap_parser(void) {
    ClaimList l;
    const char *text = "k | Fang et al. 2024 | w | lm | 4L | rope+pi:4+ft | keygap:rope |\n";
    int rc = claims_parse(text, strlen(text), "c.txt", &l);
    CHECK(rc == 0 && l.n == 1 && l.c[0].relation == CLAIM_KEYGAP && strcmp(l.c[0].a, "rope+pi:4+ft") == 0 &&
              strcmp(l.c[0].b, "rope") == 0 && l.c[0].at == 4 && l.c[0].at_is_mult,
          "keygap:rope parses: %s", rc ? pelab_errmsg : "");
    if (rc == 0) {
        char rel[64];
        claim_relation_str(&l.c[0], rel, sizeof rel);
        CHECK(strcmp(rel, "keygap:rope") == 0, "keygap writes back as keygap:rope (%s)", rel);
        claims_free(&l);
    }
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"k | P | w | lm | 4L | rope | keygap:rope |\n", "c.txt:1: relation: keygap:rope: a series against itself"},
        {"k | P | w | lm | 4L | rope | keygap:r o |\n", "c.txt:1: relation: keygap:'r o': expected a series"},
        {"k | P | w | lm | 4L | rope | keygap: |\n", "c.txt:1: relation: keygap:'': expected a series"},
        {"k | P | w | lm | 4L | rope | keygaps:alibi |\n", "c.txt:1: relation: 'keygaps': expected better:SERIES, "
                                                           "learns:SCHEME, keygap:SERIES"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = claims_parse(bad[i].text, strlen(bad[i].text), "c.txt", &l);
        CHECK(rc == -1 && strncmp(pelab_errmsg, bad[i].want, strlen(bad[i].want)) == 0 && l.n == 0,
              "'%.45s' refused as '%s': got '%s'", bad[i].text, bad[i].want, rc ? pelab_errmsg : "(accepted)");
    }
}

static Compare c;
static Agg a;
static GenAgg g;

/* one keyppl row of seed index k into g: series (rule), protocol key or all, at length len */
static void key_row(int k, const char *rule, const char *protocol, int len, double value) {
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", c.seed[k]);
    ResultRow r = result_row();
    r.kind = "keyppl", r.scheme = c.scheme[0], r.seed = seed, r.rule = rule, r.protocol = protocol;
    r.train_len = c.base.seq_len, r.length = len, r.value = value;
    CHECK(report_gen_row(&g, &c, 0, k, &r) == 1, "a keyppl row is the key-token section's");
}

/* rope (B) and its fine-tune (A) at 256 over 4 seeds: all tokens 2.0 against 1.5 (gap 0.5), key
 * tokens 3.0 + d_k against 2.0 (gap 1 + d_k), so each seed's key gap - all gap is 0.5 + d_k, d_k =
 * -0.1, 0.1, 0, 0.2; A's key rows arrive in reverse seed order. A figure at L = 64 that must not count. */
static void constructed(void) {
    memset(&c, 0, sizeof c), memset(&a, 0, sizeof a), memset(&g, 0, sizeof g);
    c.n_schemes = 1, c.n_seeds = 4, c.n_lengths = 2, c.lens[0] = 64, c.lens[1] = 256, c.base.seq_len = 64;
    snprintf(c.scheme[0], sizeof c.scheme[0], "rope");
    static const double dk[4] = {-0.1, 0.1, 0, 0.2};
    for (int k = 0; k < 4; k++) c.seed[k] = 11 + (unsigned long long)k, a.gate[0][k] = RUN_PASS;
    for (int k = 0; k < 4; k++) {
        key_row(k, "none", "key", 256, 3.0 + dk[k]);
        key_row(k, "none", "all", 256, 2.0);
        key_row(k, "pi:4+ft", "all", 256, 1.5);
        key_row(k, "none", "key", 64, 9.0);
    }
    for (int k = 3; k >= 0; k--) key_row(k, "pi:4+ft", "key", 256, 2.0);
}

static Claim keygap_claim(const char *a_series, const char *b_series, double at) {
    Claim cl;
    memset(&cl, 0, sizeof cl);
    snprintf(cl.id, sizeof cl.id, "k"), snprintf(cl.protocol, sizeof cl.protocol, "lm");
    snprintf(cl.a, sizeof cl.a, "%s", a_series), snprintf(cl.b, sizeof cl.b, "%s", b_series);
    cl.at = at, cl.at_is_mult = 1, cl.relation = CLAIM_KEYGAP;
    return cl;
}

/* the statistic at seeds, checked against mean, sd and n */
static void expect_stat(const Claim *cl, int seeds, double mean, double sd, int n, const char *what) {
    ClaimStat st;
    StrBuf why = {0};
    int rc = suite_keyppl_stat(cl, &c, &a, &g, seeds, &st, &why);
    CHECK(rc == 0 && st.status == CSTAT_TEST && fabs(st.effect - mean) < 1e-12 &&
              fabs(st.se - sd / sqrt((double)n)) < 1e-12 && st.df == n - 1 && st.n_a == n && st.n_b == n && st.paired &&
              st.margin == SUITE_KEYPPL_MARGIN,
          "%s: effect %g (want %g), se %g (want %g), df %g, n %d: %s", what, st.effect, mean, st.se,
          sd / sqrt((double)n), st.df, st.n_a, sb_str(&why));
    sb_free(&why);
}

/* no test: -1, CSTAT_NONE, a reason containing needle */
static void expect_none(const Claim *cl, const Compare *cc, const GenAgg *gg, int seeds, const char *needle) {
    ClaimStat st;
    StrBuf why = {0};
    int rc = suite_keyppl_stat(cl, cc, &a, gg, seeds, &st, &why);
    CHECK(rc == -1 && st.status == CSTAT_NONE && strstr(sb_str(&why), needle), "no test (%s): %s", needle,
          sb_str(&why));
    sb_free(&why);
}

static void keygap_stat(void) {
    constructed();
    Claim cl = keygap_claim("rope+pi:4+ft", "rope", 4);
    /* d = 0.4, 0.6, 0.5, 0.7: mean 0.55, sd sqrt(0.05 / 3) */
    expect_stat(&cl, 0, 0.55, sqrt(0.05 / 3), 4, "four seeds");
    expect_stat(&cl, 2, 0.5, sqrt(0.02), 2, "the first two seeds");
    a.gate[0][3] = RUN_FAIL; /* seed 4 failed the gate: 0.4, 0.6, 0.5 */
    expect_stat(&cl, 0, 0.5, 0.1, 3, "a failed run left out");
    a.gate[0][3] = RUN_PASS;
    Claim rev = keygap_claim("rope", "rope+pi:4+ft", 4); /* the other direction: the effect's sign turns */
    expect_stat(&rev, 0, -0.55, sqrt(0.05 / 3), 4, "B against A");
    /* a missing figure: seed 2's all-token row of the fine-tune not there, d = 0.4, 0.5, 0.7 */
    for (int i = 0; i < g.n; i++)
        if (strcmp(g.s[i].rule, "pi:4+ft") == 0) g.s[i].key[GEN_ALL][1].seed[1] = -1;
    double m3 = 1.6 / 3, v3 = ((0.4 - m3) * (0.4 - m3) + (0.5 - m3) * (0.5 - m3) + (0.7 - m3) * (0.7 - m3)) / 2;
    expect_stat(&cl, 0, m3, sqrt(v3), 3, "a missing figure");
    constructed();
    expect_none(&cl, &c, &g, 1, "too few seeds");
    Claim absent = keygap_claim("alibi", "rope", 4);
    expect_none(&absent, &c, &g, 0, "series alibi has no key-token rows");
    Claim far = keygap_claim("rope+pi:4+ft", "rope", 8);
    expect_none(&far, &c, &g, 0, "length 8L is not among");
    expect_none(&cl, NULL, NULL, 0, "protocol lm did not run");
    c.task = "copy";
    expect_none(&cl, &c, &g, 0, "needs a language-modelling protocol");
    c.task = NULL;
    g.has_key = 0;
    expect_none(&cl, &c, &g, 0, "compare --keyppl-tokens");
    Claim better = cl;
    better.relation = CLAIM_BETTER;
    expect_none(&better, &c, &g, 0, "not a keygap claim");
}

void test_suite_keyppl(void) {
    keygap_parser();
    keygap_stat();
}
