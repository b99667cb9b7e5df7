/* verdict.h: which differences between series (schemes, rules, fine-tunes) at one length and
 * metric are real, with seeds as the unit. Every pair is tested: two series of the same group (one
 * scheme's checkpoints as trained, under a rule, fine-tuned) by the paired t-test over the seeds
 * both have, since they share the checkpoints and so most of their seed-to-seed variation; series
 * of different groups (independently trained schemes) by Welch's t-test, which assumes neither
 * equal spreads nor a pairing that training does not give. The p values of all pairs at one length
 * and metric are adjusted together by Holm's method. Series are ranked by mean; a series shares
 * the rank of the best series of the group above it unless the two differ at the adjusted level
 * alpha (competition ranking: 1, 1, 3). */
#ifndef PELAB_VERDICT_H
#define PELAB_VERDICT_H

#include "../core/stats.h"
#include "../core/strbuf.h"

typedef struct {
    const char *label;  /* "rope", "rope+yarn:4" */
    int group;          /* series of one group with the same seed are paired */
    int n;              /* values (the runs that passed the gate) */
    const double *v;    /* [n] one per seed */
    const int *seed;    /* [n] the seeds' indices, to pair */
} VerdictSeries;

typedef struct {
    int a, b;           /* series indices; diff = mean(a) - mean(b) */
    int paired;
    int na, nb;         /* values used (paired: the common seeds, na = nb) */
    StatTest t;
    double p_holm;      /* NAN when the pair cannot be tested */
} VerdictPair;

typedef struct {
    int n;              /* series with at least one value */
    int *order;         /* [n] series indices, best mean first */
    int *rank;          /* [n] rank of order[i] (1-based, ties share) */
    double *mean, *sd;  /* [series] over the values (NAN without values) */
    VerdictPair *pairs; /* [n_pairs] every pair of series with values */
    int n_pairs;
    int higher_better;
    double alpha;
} Verdict;

/* the tests, the Holm adjustment and the ranking over series[n_series]; free with verdict_free */
void verdict_compute(const VerdictSeries *series, int n_series, int higher_better, double alpha, Verdict *out);
void verdict_free(Verdict *v);
/* the pair (a, b) in either order, or NULL */
const VerdictPair *verdict_pair(const Verdict *v, int a, int b);
/* one sentence for this length: the winner, its margin over the runner-up with the 95% interval and
 * p value, or that they are tied and how many seeds the observed spread would need, or that the
 * seeds are too few for any test. where: "at 4L (256)"; unit: "nats" or "points"; scale: the factor
 * from a value to the unit (100 for accuracies in points) */
void verdict_sentence(const Verdict *v, const VerdictSeries *series, const char *where, const char *unit, double scale,
                      StrBuf *out);

#endif
