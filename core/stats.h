/* stats.h: the statistics behind a verdict: summaries over seeds, Welch's and the paired t-test
 * (Student's t distribution from GSL), Holm's step-down correction, a percentile bootstrap of a
 * mean over blocks (evaluation windows or examples), and the seeds a two-sample t-test would need.
 * Pure functions of their inputs: the bootstrap draws from its own seeded generator. */
#ifndef PELAB_STATS_H
#define PELAB_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int n;
    double mean, sd; /* sd: the sample standard deviation (n - 1), 0 for n < 2 */
} StatSummary;

StatSummary stats_summary(const double *x, int n);
/* the median of x[n] (sorted in place; NAN for n < 1) */
double stats_median(double *x, int n);

typedef struct {
    double diff;     /* mean(a) - mean(b) (paired: the mean of a_i - b_i) */
    double t, df, p; /* two-sided p; NAN when the test cannot be computed (n < 2) */
    double ci_lo, ci_hi; /* the 95% interval of diff (t-based) */
} StatTest;

/* Welch's unequal-variance t-test of mean(a) = mean(b); needs na, nb >= 2. Zero spread in both:
 * p = 1 if the means are equal, else 0 (two constant groups that differ). */
StatTest stats_welch(const double *a, int na, const double *b, int nb);
/* the paired t-test of mean(a_i - b_i) = 0 over n pairs; needs n >= 2. Constant differences:
 * p = 1 if they are all 0, else 0. */
StatTest stats_paired(const double *a, const double *b, int n);
/* Welch from summaries alone (a published "mean ± sd, n seeds"); the same rules */
StatTest stats_welch_summary(StatSummary a, StatSummary b);

/* Holm's step-down adjustment of m p values (NAN entries stay NAN and do not count in m):
 * adj[i] = max over the sorted prefix of min(1, (m - rank) p), as R's p.adjust(p, "holm") */
void stats_holm(const double *p, int m, double *adj);

/* resamples behind every interval of a run's figure (eval.h, task_eval.h) */
#define STATS_BOOTSTRAP_REPS 1000

/* Percentile bootstrap of the ratio sum(value) / sum(weight) over n blocks (block i contributes
 * value[i] and weight[i], e.g. a window's NLL sum and token count, or an example's 0/1 and 1):
 * reps resamples of n blocks with replacement from seed; [lo, hi] the central `level` interval.
 * Returns 0, or -1 when n < 1 or the weights sum to 0. */
int stats_bootstrap_ratio(const double *value, const double *weight, size_t n, int reps, uint64_t seed, double level,
                          double *lo, double *hi);

/* The seeds per scheme a two-sided two-sample t-test at level alpha would need to detect a true
 * difference `diff` between two schemes whose seeds spread with standard deviation sd, with power
 * `power`: the smallest n with n >= 2 ((t_{1-alpha/2, 2n-2} + t_{power, 2n-2}) sd / diff)^2.
 * -1 when diff is 0 (or not finite), 2 at least; capped at 100000. */
int stats_seeds_needed(double diff, double sd, double alpha, double power);

/* One-sided p values of the claim that a location exceeds `shift` (upper: H0 location <= shift)
 * and that it falls below it (lower: H0 location >= shift); each is a valid p value on its own, so
 * a two-sided test is 2 min(upper, lower) and an equivalence test (TOST) takes one of each.
 *   stats_t_onesided: from an estimate, its standard error and df (Student's t); se 0: exact.
 *   stats_perm_onesided: exact randomization test of mean(a) - mean(b) against shift by Welch's
 *     statistic over every split of the pooled values (a - shift, b) into groups of na and nb,
 *     Monte Carlo (PERM_DRAWS draws from a fixed seed, p = (1 + hits) / (1 + draws)) when there are
 *     more splits than that; valid for any common distribution (bimodal "learned / did not learn"
 *     figures included), robust to unequal spreads at equal group sizes. na, nb >= 1.
 *   stats_signflip_onesided: exact sign-flip test of mean(d) against shift over all 2^n signs of
 *     d - shift (valid when the differences are symmetric about shift under H0); n <= 64, Monte
 *     Carlo as above (PERM_DRAWS sign patterns) past SIGNFLIP_EXACT values.
 * Both permutation tests count ties as hits: p is never below 1 / (number of arrangements). */
enum { STATS_PERM_DRAWS = 20000, STATS_SIGNFLIP_EXACT = 20 };
void stats_t_onesided(double est, double se, double df, double shift, double *upper, double *lower);
void stats_perm_onesided(const double *a, int na, const double *b, int nb, double shift, double *upper, double *lower);
void stats_signflip_onesided(const double *d, int n, double shift, double *upper, double *lower);
/* the q-quantile of Student's t with df degrees of freedom */
double stats_t_quantile(double q, double df);
/* the smallest two-sided p a two-sample randomization test can give with na and nb values, and a
 * sign-flip test with n: 2 / C(na + nb, na), 2 / 2^n (both capped at 1; 2 / (1 + PERM_DRAWS) at
 * the least where the test is Monte Carlo) */
double stats_perm_min_p(int na, int nb);
double stats_signflip_min_p(int n);

#endif
