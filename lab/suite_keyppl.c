/* suite_keyppl.c: a keygap claim's statistic from the key-token rows (suite_keyppl.h). */
#include "suite_keyppl.h"

#include <math.h>
#include <string.h>

#include "../core/stats.h"

/* the key-token figures of the series labelled as the report labels them ("rope", "rope+pi:4+ft") */
static const GenSeries *key_series(const Compare *c, const GenAgg *g, const char *label) {
    for (int i = 0; i < g->n; i++) {
        const GenSeries *s = &g->s[i];
        const char *scheme = c->scheme[s->scheme];
        size_t n = strlen(scheme);
        if (strncmp(label, scheme, n) != 0) continue;
        if (strcmp(s->rule, "none") == 0 ? label[n] == 0 : label[n] == '+' && strcmp(label + n + 1, s->rule) == 0)
            return s;
    }
    return NULL;
}

static int no_test(StrBuf *why, const char *what) {
    sb_puts(why, what);
    return -1;
}

/* 1 when seed k of scheme s counts: its run did not fail the gate (a NULL: no gate) */
static int seed_counts(const Agg *a, int s, int k) { return !a || a->gate[s][k] != RUN_FAIL; }

int suite_keyppl_stat(const Claim *cl, const Compare *c, const Agg *a, const GenAgg *g, int seeds, ClaimStat *st,
                      StrBuf *why) {
    memset(st, 0, sizeof *st);
    st->status = CSTAT_NONE, st->paired = 1, st->margin = SUITE_KEYPPL_MARGIN;
    if (cl->relation != CLAIM_KEYGAP) return no_test(why, "not a keygap claim");
    if (!c || !g) {
        sb_printf(why, "protocol %s did not run (suite --protocols)", cl->protocol);
        return -1;
    }
    if (c->task || !cl->at_is_mult)
        return no_test(why, "keygap: needs a language-modelling protocol and a multiple of L (\"4L\"): key tokens "
                            "are rows of compare --keyppl-tokens");
    int len = (int)lround(cl->at * c->base.seq_len), l = report_length_index(c, len);
    if (l < 0) {
        sb_printf(why, "length %gL is not among the protocol's lengths", cl->at);
        return -1;
    }
    if (!g->has_key) return no_test(why, "no key-token rows (compare --keyppl-tokens N)");
    const GenSeries *sa = key_series(c, g, cl->a), *sb = key_series(c, g, cl->b);
    if (!sa || !sb) {
        sb_printf(why, "series %s has no key-token rows here (add its scheme to --schemes)", sa ? cl->b : cl->a);
        return -1;
    }
    double d[CMP_MAX_SEEDS], sum[4] = {0}; /* key A, key B, all A, all B */
    int n = 0;
    for (int k = 0; k < c->n_seeds && (seeds <= 0 || k < seeds); k++) {
        if (!seed_counts(a, sa->scheme, k) || !seed_counts(a, sb->scheme, k)) continue;
        double v[4] = {report_gen_seed(&sa->key[GEN_KEY][l], k), report_gen_seed(&sb->key[GEN_KEY][l], k),
                       report_gen_seed(&sa->key[GEN_ALL][l], k), report_gen_seed(&sb->key[GEN_ALL][l], k)};
        if (!isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]) || !isfinite(v[3])) continue;
        d[n++] = (v[1] - v[0]) - (v[3] - v[2]);
        for (int i = 0; i < 4; i++) sum[i] += v[i];
    }
    st->n_a = st->n_b = n;
    if (n == 0) {
        sb_printf(why, "%s and %s at %d: no seed with both series' key-token figures", cl->a, cl->b, len);
        return -1;
    }
    sb_printf(why, "%s vs %s at %d over %d paired seed%s: key tokens %.4g vs %.4g nats (gap %+.3g), all tokens %.4g vs "
                   "%.4g (gap %+.3g)", cl->a, cl->b, len, n, n == 1 ? "" : "s", sum[0] / n, sum[1] / n,
              (sum[1] - sum[0]) / n, sum[2] / n, sum[3] / n, (sum[3] - sum[2]) / n);
    if (n < 2) return no_test(why, "; too few seeds for a test (2 needed)");
    StatSummary s = stats_summary(d, n);
    st->status = CSTAT_TEST, st->effect = s.mean, st->se = s.sd / sqrt((double)n), st->df = n - 1;
    sb_printf(why, "; key gap - all gap %+.3g ± %.2g nats (paired se)", st->effect, st->se);
    return 0;
}
