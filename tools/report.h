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

#endif
