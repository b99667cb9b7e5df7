/* curve.h: a training run's loss curve, CSV beside its checkpoint (CKPT minus its extension, plus
 * ".curve.csv"): one row per logging interval and per validation, columns
 *   step,tokens,lr,train_loss,val_loss
 * train_loss is the mean of the steps since the previous row; val_loss is empty where no
 * validation ran. Rows are flushed as written; a resumed run keeps the rows up to the step it
 * resumes from (the file is rewritten through a temporary and renamed), so a killed and resumed
 * run has one curve with no repeated steps. A new run over an earlier run's checkpoint keeps the
 * earlier curve in place until its own first checkpoint, then as PATH.1 (.2, ...): curve and
 * checkpoint stay a pair. Read by compare's report (convergence). */
#ifndef PELAB_CURVE_H
#define PELAB_CURVE_H

#include <stddef.h>
#include <stdio.h>

#include "../core/files.h"

#define CURVE_CSV_COLUMNS "step,tokens,lr,train_loss,val_loss"

typedef struct {
    FILE *f;
    double loss_sum; /* training losses since the last row */
    long loss_n;
    /* every validation so far, its loss as the file holds it (6 decimals): what the convergence rule
     * reads during training, after a resume (the kept rows) and in the report alike */
    long *val_step;
    double *val;
    int n_val, cap_val;
    char *pending; /* the curve's path while its rows go to a temporary file (curve_open keep_earlier), else NULL */
    AtomicFile pending_file; /* that file, PATH.tmp. and 6 random characters, renamed over the path by curve_commit */
} LossCurve;

/* The convergence rule, judged at the last of n validations (step[] increasing): the run is still
 * improving when its validation loss fell, since the last validation at or before 80% of that
 * step, by more than frac of the earlier value and by more than abs nats (a loss near 0 falls by
 * large fractions of almost nothing); else it has converged. CURVE_UNKNOWN with no such earlier
 * validation. *early: that validation's index (-1 when unknown). */
enum { CURVE_UNKNOWN = -1, CURVE_CONVERGED, CURVE_IMPROVING };
int curve_judge(const long *step, const double *val, int n, double frac, double abs_nats, int *early);

/* the curve's path for checkpoint path ckpt */
void curve_path(const char *ckpt, char *buf, size_t n);
/* opens the curve of ckpt: new (resume_step 0), or kept up to resume_step, its validations read
 * back into val_step[], val[] (a row that does not read is refused, naming the file and line).
 * keep_earlier (a new run that will replace an earlier run's checkpoint at ckpt): an earlier curve
 * stays in place, the rows going to a temporary file beside it, until curve_commit. -1 with pelab_errmsg */
int curve_open(LossCurve *c, const char *ckpt, long resume_step, int keep_earlier);
/* after the run's first checkpoint replaced the earlier one: the earlier curve kept as PATH.N (the
 * first N free), its name into kept ("" when none was kept), and this run's rows renamed to PATH.
 * Once; later calls do nothing. A run that ends before (curve_close) leaves the earlier curve as it
 * was. -1 with pelab_errmsg */
int curve_commit(LossCurve *c, char *kept, size_t cap);
/* one training step's loss into the running mean */
void curve_add_loss(LossCurve *c, float loss);
/* a row at step (val_loss NaN: none); -1 with pelab_errmsg on a write error */
int curve_row(LossCurve *c, long step, long tokens, float lr, float val_loss);
/* closes the file and frees the validations */
void curve_close(LossCurve *c);

#endif
