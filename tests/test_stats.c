/* test_stats.c: core/stats.h against textbook cases. Student's sleep data (Cushny and Peebles,
 * as R ships it): R's t.test gives Welch t = -1.8608, df = 17.776, p = 0.07939, 95% CI
 * [-3.3654832, 0.2054832]; paired t = -4.0621, df = 9, p = 0.002833, CI [-2.4598858, -0.7001142].
 * Holm against R's p.adjust; the bootstrap against the normal interval of a proportion and a
 * constant; the seeds needed against the normal-approximation formula. */
#include <math.h>

#include "../core/stats.h"
#include "test.h"

static const double sleep1[10] = {0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
static const double sleep2[10] = {1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};

static void t_tests(void) {
    StatTest w = stats_welch(sleep1, 10, sleep2, 10);
    CHECK(fabs(w.t - -1.8608) < 5e-5 && fabs(w.df - 17.776) < 5e-4 && fabs(w.p - 0.07939) < 5e-6,
          "Welch on the sleep data: t %.5f df %.4f p %.6f (R: -1.8608, 17.776, 0.07939)", w.t, w.df, w.p);
    CHECK(fabs(w.ci_lo - -3.3654832) < 1e-6 && fabs(w.ci_hi - 0.2054832) < 1e-6 && fabs(w.diff - -1.58) < 1e-12,
          "Welch 95%% interval [%.7f, %.7f] (R: -3.3654832, 0.2054832)", w.ci_lo, w.ci_hi);
    StatTest p = stats_paired(sleep1, sleep2, 10);
    CHECK(fabs(p.t - -4.0621) < 5e-5 && p.df == 9 && fabs(p.p - 0.002833) < 5e-7,
          "paired on the sleep data: t %.5f df %g p %.7f (R: -4.0621, 9, 0.002833)", p.t, p.df, p.p);
    CHECK(fabs(p.ci_lo - -2.4598858) < 1e-6 && fabs(p.ci_hi - -0.7001142) < 1e-6,
          "paired 95%% interval [%.7f, %.7f] (R: -2.4598858, -0.7001142)", p.ci_lo, p.ci_hi);
    StatTest s = stats_welch_summary(stats_summary(sleep1, 10), stats_summary(sleep2, 10));
    CHECK(s.p == w.p, "Welch from summaries equals Welch from the values");
    /* degenerate cases: one seed, no spread */
    CHECK(isnan(stats_welch(sleep1, 1, sleep2, 10).p), "one seed: no test");
    const double zeros[3] = {0, 0, 0}, ones[3] = {1, 1, 1};
    CHECK(stats_welch(zeros, 3, zeros, 3).p == 1, "identical constant groups: p = 1");
    CHECK(stats_welch(zeros, 3, ones, 3).p == 0, "different constant groups: p = 0");
    CHECK(stats_paired(ones, ones, 3).p == 1, "paired, no differences: p = 1");
    StatSummary su = stats_summary(sleep1, 10);
    double odd[3] = {3, 1, 2}, even[4] = {4, 1, 3, 2};
    CHECK(stats_median(odd, 3) == 2 && stats_median(even, 4) == 2.5 && isnan(stats_median(odd, 0)),
          "median of 3 1 2 is 2, of 4 1 3 2 is 2.5, of nothing NaN");
    CHECK(fabs(su.mean - 0.75) < 1e-12 && fabs(su.sd - 1.7890096) < 1e-6, "summary mean %g sd %.7f", su.mean, su.sd);
}

static void holm(void) {
    const double p[5] = {0.01, 0.04, 0.03, 0.005, NAN}, want[4] = {0.03, 0.06, 0.06, 0.02};
    double adj[5];
    stats_holm(p, 5, adj);
    int ok = isnan(adj[4]);
    for (int i = 0; i < 4; i++) ok &= fabs(adj[i] - want[i]) < 1e-12;
    CHECK(ok, "Holm: %g %g %g %g (R p.adjust: 0.03 0.06 0.06 0.02), NaN kept", adj[0], adj[1], adj[2], adj[3]);
    const double big[2] = {0.6, 0.9};
    stats_holm(big, 2, adj);
    CHECK(adj[0] == 1 && adj[1] == 1, "Holm caps at 1");
}

static void bootstrap(void) {
    /* 400 examples, 200 right: the interval of a proportion, 0.5 +- 1.96 sqrt(0.25 / 400) */
    double v[400], w[400];
    for (int i = 0; i < 400; i++) v[i] = i % 2, w[i] = 1;
    double lo, hi;
    CHECK(stats_bootstrap_ratio(v, w, 400, 4000, 7, 0.95, &lo, &hi) == 0, "bootstrap runs");
    CHECK(fabs(lo - (0.5 - 0.049)) < 0.006 && fabs(hi - (0.5 + 0.049)) < 0.006,
          "bootstrap of 200/400: [%.4f, %.4f] (normal interval [0.451, 0.549])", lo, hi);
    double lo2, hi2;
    stats_bootstrap_ratio(v, w, 400, 4000, 7, 0.95, &lo2, &hi2);
    CHECK(lo2 == lo && hi2 == hi, "the same seed gives the same interval");
    for (int i = 0; i < 10; i++) v[i] = 3 * (i + 1), w[i] = i + 1; /* ratio 3 in every block */
    CHECK(stats_bootstrap_ratio(v, w, 10, 500, 1, 0.95, &lo, &hi) == 0 && fabs(lo - 3) < 1e-12 && fabs(hi - 3) < 1e-12,
          "a constant ratio has a zero-width interval [%g, %g]", lo, hi);
    CHECK(stats_bootstrap_ratio(v, w, 0, 500, 1, 0.95, &lo, &hi) == -1, "no blocks: -1");
}

static void seeds_needed(void) {
    /* normal approximation: n = 2 (1.96 + 0.8416)^2 (sd / diff)^2 = 15.7 at sd / diff = 1; the t
     * quantiles add about one seed (the textbook answer is 17) */
    int n = stats_seeds_needed(0.5, 0.5, 0.05, 0.8);
    CHECK(n == 17, "seeds for diff = sd at 80%% power: %d (textbook 17)", n);
    CHECK(stats_seeds_needed(0, 1, 0.05, 0.8) == -1, "no difference: -1");
    CHECK(stats_seeds_needed(1, 0, 0.05, 0.8) == 2, "no spread: 2");
    int big = stats_seeds_needed(0.01, 1, 0.05, 0.8);
    CHECK(big > 150000 / 2 || big == 100000, "a tiny difference needs very many seeds: %d", big);
}

void test_stats(void) {
    t_tests();
    holm();
    bootstrap();
    seeds_needed();
}
