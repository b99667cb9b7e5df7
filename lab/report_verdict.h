/* report_verdict.h: the verdict parts of a compare report (report.c reads the runs, this file
 * judges them): each run's gate (did it learn the task / did its loss at L beat the unigram bound)
 * and convergence (its loss curve), then per metric and length a ranking in which series
 * not significantly different share a rank, one sentence per length, the paired rule and
 * fine-tune comparisons, the runs with their bootstrap intervals, DIR/verdicts.csv (every pair)
 * and the loss-curve plots. Tests and methods: lab/verdict.h. */
#ifndef PELAB_REPORT_VERDICT_H
#define PELAB_REPORT_VERDICT_H

#include <stdio.h>

#include "report_agg.h"
#include "verdict.h"

/* a metric of a report: its slot in a Series, heading, unit */
typedef struct {
    int p;              /* the metric's slot in a Series */
    const char *name;   /* its heading */
    const char *unit;   /* "nats" or "points" */
    double scale;       /* value -> unit */
    int higher_better;
} Metric;

/* one length's verdict and the per-seed values its series point into */
typedef struct {
    double vals[MAX_SERIES][CMP_MAX_SEEDS];
    int seeds[MAX_SERIES][CMP_MAX_SEEDS];
    VerdictSeries vs[MAX_SERIES];
    Verdict v;
} LengthVerdict;

/* the report's metrics (at most 4: the primary first) into m; their count */
int report_metrics(const Compare *c, const Agg *a, Metric *m);
/* the verdict of metric m at length l over every series, into lv (free lv->v with verdict_free) */
void report_verdict_at(const Agg *a, const Metric *m, int l, double alpha, LengthVerdict *lv);

/* the rank of every series on the report's primary metric at length l, as its verdict table gives
 * it (ties shared; 0: no value there), into rank[a->n_series] (the plots' legends) */
void report_ranks_at(const Compare *c, const Agg *a, int l, int *rank);

/* the loss curve beside a run's CSV (DIR/runs/NAME.curve.csv) into rc (CONV_UNKNOWN without one),
 * judged by the convergence rule (curve_judge) at its end, or with converge (a run trained with
 * --converge) where its cooldown began: its last validation at the peak learning rate, the point
 * at which training judged it */
void report_read_curve(const Compare *c, const char *csv, int converge, RunCurve *rc);
/* every found run's gate (a->gate), from its gate rows (--task) or its loss at L against its unigram
 * row (language modelling: not finite, or no better than the unigram loss, fails) */
void report_gates(const Compare *c, Agg *a);
/* "## Verdict": rankings and sentences of every metric, the paired rules, the gate and the
 * flags; writes DIR/verdicts.csv. -1 with pelab_errmsg when that file cannot be written */
int report_verdict_write(FILE *f, const Compare *c, const Agg *a);
/* "## Runs": each run's gate figure, convergence and primary figure with its interval, and the
 * loss curves (plots/curves_TAG.*, drawn by gnuplot when present) */
int report_runs_write(FILE *f, const Compare *c, const Agg *a, int have_gp);
/* the verdict sentences of the primary metric, for the terminal */
void report_verdict_print(FILE *out, const Compare *c, const Agg *a);

#endif
