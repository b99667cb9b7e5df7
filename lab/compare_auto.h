/* compare_auto.h: `compare --seeds auto`: seeds added in looks until the comparisons are decided.
 * The comparisons are every pair of series (schemes as trained, rules, fine-tunes) at every length
 * of the primary metric: an exploratory family, each pair a two-sided hypothesis with an
 * equivalence margin (suite_claims.h's statistic of better:B, so losses by t and accuracies by
 * exact randomization tests), decided by claim_family.h's rule: Holm over the whole family of
 * sequential p values, alpha spent per look. After each look the schemes of the pairs still
 * undecided train more seeds, side by side, up to the last look or the time budget. DIR/sequential.md
 * has every pair's outcome; DIR/report.md is compare's usual report of the runs there are. */
#ifndef PELAB_COMPARE_AUTO_H
#define PELAB_COMPARE_AUTO_H

#include "compare_plan.h"

/* the default looks of --seeds auto (seeds per series) */
#define COMPARE_AUTO_LOOKS "3,5,8"

/* trains the runs of c not yet finished, skipping c->skip_scheme[] (compare.c's compare_run_all,
 * passed in: the driver calls this file, not the other way round); -1 with pelab_errmsg */
typedef int (*CompareTrainFn)(const Compare *c, const char *only);

/* the looks' runs of c (c->n_seeds and c->seed[] are set here, per look) through train, the
 * decisions into DIR/sequential.md and a summary on stdout; budget_min 0: none. -1 with one line
 * (pelab_errmsg) on a failure. */
int compare_auto_run(Compare *c, const char *looks, double budget_min, CompareTrainFn train);

#endif
