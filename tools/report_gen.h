/* report_gen.h: the report sections of the rows gen, jump and keyppl (compare_plan.h): long
 * generation by position, the loss jump at L and the key-token perplexity, mean ± std over seeds.
 * report.c hands every CSV row here first and calls the writer once. */
#ifndef PELAB_REPORT_GEN_H
#define PELAB_REPORT_GEN_H

#include <stdio.h>

#include "compare_plan.h"

/* one CSV row's fields */
typedef struct {
    const char *kind, *rule, *protocol, *loss;
    int length, bucket, lo, hi;
} GenCsvRow;

/* clears the aggregate (before reading the runs) */
void report_gen_reset(void);
/* 1 if the row is a gen, jump or keyppl row (then taken in, for scheme index s), else 0 */
int report_gen_row(const Compare *c, int s, const GenCsvRow *r);
/* the sections, or nothing when no run had such rows */
void report_gen_write(FILE *f, const Compare *c);

#endif
