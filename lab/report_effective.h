/* report_effective.h: RULER's effective length in a --task report (Hsieh et al. 2024): the longest
 * evaluated task length whose score, and the score of every shorter length evaluated, is at or
 * above a threshold. The score is RULER's (protocol recall) for its tasks, exact match for the
 * others. The threshold: an absolute score (--effective-threshold, default RULER's 85.6%, the
 * Llama-2-7B score at 4K its paper uses), or --effective-relative F, F times the series' own mean
 * score at the longest length whose examples fit in L. */
#ifndef PELAB_REPORT_EFFECTIVE_H
#define PELAB_REPORT_EFFECTIVE_H

#include <stdio.h>

#include "compare_plan.h"
#include "report_agg.h"

#define RULER_THRESHOLD 85.6 /* %: RULER's bar */

/* the metric slot the effective length reads: TASK_RECALL when the rows have it, else TASK_EXACT */
int report_effective_metric(const Agg *a);
/* the threshold for series s as a fraction (0.856); NAN when relative and s has no score inside L */
double report_effective_threshold(const Compare *c, const Agg *a, const Series *s);
/* the effective length of series s, metric p, threshold thr: of the seed means (k = -1) or of seed k
 * alone. The evaluated lengths are taken in increasing order; a length without a figure (a learned
 * table's n/a) ends the run as a failing one does. 0: the shortest is already below; -1: no figure at
 * all, or thr is NAN */
int report_effective_length(const Compare *c, const Agg *a, const Series *s, int p, double thr, int k);
/* the report's section: per series the seed means' effective length, each seed's, their mean and range */
void report_effective_write(FILE *f, const Compare *c, const Agg *a);
/* one line per series for the printed table */
void report_effective_print(FILE *out, const Compare *c, const Agg *a);

#endif
