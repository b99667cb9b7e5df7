/* report_show.h: the "Pictures of the schemes" section of compare's report.md (report_show.c). */
#ifndef PELAB_REPORT_SHOW_H
#define PELAB_REPORT_SHOW_H

#include <stdio.h>

#include "compare_plan.h"

/* For each compared scheme that takes scaling rules, the wavelength of every rotary pair under
 * none and the compared rules; for each score-bias scheme its bias map (the first seed's
 * checkpoint when there is one, else the scheme's initial values): drawn through show_plots.h
 * into DIR/plots/show_TAG/ and linked (or, without gnuplot, their CSVs named) in f. -1 with one
 * line on an I/O error or a checkpoint that is there but does not load. */
int report_show_write(FILE *f, const Compare *c);

#endif
