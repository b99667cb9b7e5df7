/* report.h: the report of a compare or demo (report.c): reads DIR/runs/ back, aggregates over
 * seeds, writes DIR/report.md and DIR/plots/. */
#ifndef PELAB_REPORT_H
#define PELAB_REPORT_H

#include <stdio.h>

#include "compare_plan.h"
#include "report_agg.h"
#include "report_gen.h"

/* Reads every finished CSV, writes DIR/report.md and DIR/plots/; runs gnuplot when present.
 * -1 with pelab_errmsg on I/O failure. */
int compare_report(const Compare *c);
/* the mean non-overlapping loss per series and length as an aligned text table; -1 with
 * pelab_errmsg when a CSV does not read */
int compare_print_table(const Compare *c, FILE *out);

/* every finished run's CSV (and fine-tunes') of c into a and g (zeroed first; the gen, jump and
 * keyppl rows into g), gates judged; -1 with the message of a CSV that does not read */
int compare_aggregate(const Compare *c, Agg *a, GenAgg *g);
/* the same from rows in hand (the verdicts' simulation, lab/claim_sim.h): an empty aggregate
 * for c, then each row of run (scheme si, seed k) as if read from its CSV (the run found: mark
 * a->gate[si][k] = RUN_UNGATED), then report_gates (report_verdict.h) */
void report_agg_begin(const Compare *c, Agg *a);
void report_take_row(const Compare *c, Agg *a, GenAgg *g, int si, int k, const ResultRow *r);

#endif
