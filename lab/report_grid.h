/* report_grid.h: compare --task-depths: the needle's depth x length grid of each scheme (rows of
 * kind grid, rule none), the mean over the seeds that passed the gate: a table per scheme in the
 * report, plots/grid_TAG.dat and plots/grid.gp (a heatmap each). */
#ifndef PELAB_REPORT_GRID_H
#define PELAB_REPORT_GRID_H

#include <stdio.h>

#include "compare_plan.h"
#include "report_agg.h"

/* one grid row of run (scheme si, seed k) into a; a depth or length not in c's lists is left out */
void report_grid_take(const Compare *c, Agg *a, int si, int k, const ResultRow *r);
/* the mean of scheme s's cell (depth d, length l) over its counted seeds; NAN if none */
double report_grid_mean(const Agg *a, int s, int d, int l);
/* the section, the data and the script (run by gnuplot when present) into c->out/plots; nothing
 * without grid rows; -1 with pelab_errmsg when a file cannot be written */
int report_grid_write(FILE *f, const Compare *c, const Agg *a);

#endif
