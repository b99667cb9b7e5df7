/* claim_stat.h: the one figure a pre-registered claim's test stands on (suite_claims.h computes it
 * from a protocol's runs, claim_family.h decides a family of claims from it). Every relation
 * (better, learns, flat, degrades, ...) reduces to an effect in the claim's stated direction with
 * a t-distributed standard error, so that one sequential rule and one multiple-testing family
 * serve them all. */
#ifndef PELAB_CLAIM_STAT_H
#define PELAB_CLAIM_STAT_H

#include "../io/claims.h" /* CLAIM_MAX_SEEDS: the seeds per series a look may reach */

enum { CSTAT_NONE, CSTAT_TEST, CSTAT_FLOOR };
/* how the p values are taken: Student's t from effect, se and df (loss figures: runs that passed
 * the divergence gate spread unimodally); or, for task accuracies, whose seeds are often bimodal
 * ("learned / did not learn") and where a t-test at a few seeds is far from its nominal level,
 * an exact randomization test of the values themselves (core/stats.h); two samples take the larger p
 * of it and the conservative Welch t, valid for a common bimodal distribution and for unequal spreads */
enum { CTEST_T, CTEST_PERMUTE, CTEST_SIGNFLIP };

typedef struct {
    int status;     /* CSTAT_TEST; CSTAT_NONE: no test possible (the caller's why says why); CSTAT_FLOOR:
                     * every figure of both series sits at the same bound of the metric (0% or 100%), so
                     * no number of seeds can move the comparison */
    double effect;  /* in the claim's unit (nats, points), > 0 in the claimed direction; flat / degrades:
                     * by how much the change clears the tolerance (TOL - worse, worse - TOL) */
    double se, df;  /* the effect's standard error and degrees of freedom (Student's t); se 0: exact */
    double margin;  /* equivalence margin in the unit: |true effect| < margin is "no effect" (0: the
                     * relation has no such outcome) */
    int n_a, n_b;   /* seeds behind it (paired: n_a = n_b, the common seeds) */
    int paired;     /* 1: paired over seeds, 0: two independent samples */
    int method;     /* CTEST_T: effect, se, df; CTEST_PERMUTE: x[n_a] against y[n_b], both signed so that
                     * effect = mean(x) - mean(y); CTEST_SIGNFLIP: the per-seed effects x[n_a] */
    double x[CLAIM_MAX_SEEDS], y[CLAIM_MAX_SEEDS];
} ClaimStat;

/* the one-sided p values of the effect against shift (upper: H0 effect <= shift; lower: H0 effect
 * >= shift) by the statistic's method; NAN when status is not CSTAT_TEST */
void claim_stat_onesided(const ClaimStat *st, double shift, double *upper, double *lower);

#endif
