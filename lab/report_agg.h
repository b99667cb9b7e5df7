/* report_agg.h: a compare report's figures as read back from the runs' CSVs (report.c fills them),
 * shared with the verdict sections (report_verdict.c), generation rows (report_gen.c) and claims;
 * the lookups and seed statistics over them are report_agg.c. One Series per (scheme, rule or
 * fine-tune); every figure is kept per seed, with its bootstrap interval, so that means, spreads and
 * tests are taken over the runs that passed the gate only. */
#ifndef PELAB_REPORT_AGG_H
#define PELAB_REPORT_AGG_H

#include "../infer/eval.h"
#include "compare_plan.h"

enum { MAX_SERIES = CMP_MAX_SCHEMES * (2 + CMP_MAX_RULES) }; /* + none and the fine-tune */
enum { REPORT_METRICS = EVAL_N_PROTOCOLS + 1 };               /* nonoverlap, sliding, passkey */
/* a --task report's metrics, in the protocol slots of a Series: exact match, byte accuracy and, for
 * RULER's tasks (listed: rows of protocol recall), their score */
enum { TASK_EXACT, TASK_BYTES, TASK_RECALL };
_Static_assert((int)TASK_RECALL < (int)REPORT_METRICS, "a task metric past a Series' slots");
enum { RUN_MISSING, RUN_PASS, RUN_FAIL, RUN_UNGATED };        /* a run's gate */
enum { CONV_UNKNOWN, CONV_DONE, CONV_IMPROVING };             /* a run's loss curve */

typedef struct {
    int scheme;
    char rule[64], label[200];
    double val[REPORT_METRICS][CMP_MAX_LENGTHS][CMP_MAX_SEEDS];
    double ci_lo[REPORT_METRICS][CMP_MAX_LENGTHS][CMP_MAX_SEEDS], ci_hi[REPORT_METRICS][CMP_MAX_LENGTHS][CMP_MAX_SEEDS];
    unsigned char has[REPORT_METRICS][CMP_MAX_LENGTHS][CMP_MAX_SEEDS];
    ResStatus status[CMP_MAX_LENGTHS]; /* why a length was not computed (RES_OK if it was) */
    long limit[CMP_MAX_LENGTHS];        /* ... and where, for the RES_PAST_* */
    long accepted, computable;
    double bval[CMP_BUCKETS][CMP_MAX_SEEDS]; /* loss by position at the largest length, per seed */
    unsigned char bhas[CMP_BUCKETS][CMP_MAX_SEEDS];
    int blo[CMP_BUCKETS], bhi[CMP_BUCKETS];  /* each bucket's positions */
} Series;

typedef struct {
    int status;                 /* CONV_* */
    double v_early, v_end;      /* validation loss at 80% of the steps and at the end: of the steps before the
                                 * cooldown, for a run trained with --converge */
    long step_early, step_end;
    double v_final;             /* the last validation (--converge: after the cooldown) */
    long step_final;
} RunCurve;

typedef struct {
    int n_series, has_passkey, lmax;
    int has_recall;              /* --task: rows of protocol recall (a RULER task's score) were read */
    int grid_open[CMP_MAX_SCHEMES]; /* --task-depths: grid rows of the scheme read (its cells below cleared) */
    long reach[CMP_MAX_LENGTHS]; /* --task: the positions each task length reached (the most over runs) */
    int n_found[1 + FT_KINDS], n_expected[1 + FT_KINDS]; /* runs, then fine-tunes by recipe (1 + FT_PI, ...) */
    Series s[MAX_SERIES];
    /* --task-depths: per scheme as trained, the grid's figure by depth, length and seed; not cleared
     * with the rest (a scheme's when its first grid row comes: report_grid.c) */
    double grid[CMP_MAX_SCHEMES][CMP_MAX_DEPTHS][CMP_MAX_LENGTHS][CMP_MAX_SEEDS];
    unsigned char has_grid[CMP_MAX_SCHEMES][CMP_MAX_DEPTHS][CMP_MAX_LENGTHS][CMP_MAX_SEEDS];
    char missing[2048];
    /* per run (scheme, seed): the gate */
    int gate[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];           /* RUN_* */
    double gate_sum[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];    /* --task: exact match summed over the gate rows */
    int gate_rows[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];
    double gate_val[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];    /* the gate figure (exact match, or loss at L) */
    RunCurve curve[CMP_MAX_SCHEMES][CMP_MAX_SEEDS][1 + FT_KINDS]; /* the run, then its fine-tunes */
} Agg;

/* the index of length len in c->lens, or -1 */
int report_length_index(const Compare *c, int len);
/* the indices of c->lens by increasing length into order[c->n_lengths] */
void report_length_order(const Compare *c, int *order);
/* the series of scheme s under rule ("none": as trained), or NULL */
const Series *report_series(const Agg *a, int scheme, const char *rule);
/* 1 if seed k of series s counts (it has the figure and its run passed the gate or had none) */
int report_counts(const Agg *a, const Series *s, int p, int l, int k);
/* the counted values of metric p at length l into v[] and their seed indices into seed[]; the count */
int report_values(const Agg *a, const Series *s, int p, int l, double *v, int *seed);
/* their mean (NAN: none) and sample std (0 for one) */
double report_mean(const Agg *a, const Series *s, int p, int l);
double report_std(const Agg *a, const Series *s, int p, int l);

#endif
