/* curve.h: a training run's loss curve, CSV beside its checkpoint (CKPT minus its extension, plus
 * ".curve.csv"): one row per logging interval and per validation, columns
 *   step,tokens,lr,train_loss,val_loss
 * train_loss is the mean of the steps since the previous row; val_loss is empty where no
 * validation ran. Rows are flushed as written; a resumed run keeps the rows up to the step it
 * resumes from (the file is rewritten through a temporary and renamed), so a killed and resumed
 * run has one curve with no repeated steps. Read by compare's report (convergence). */
#ifndef PELAB_CURVE_H
#define PELAB_CURVE_H

#include <stddef.h>
#include <stdio.h>

#define CURVE_CSV_COLUMNS "step,tokens,lr,train_loss,val_loss"

typedef struct {
    FILE *f;
    double loss_sum; /* training losses since the last row */
    long loss_n;
} LossCurve;

/* the curve's path for checkpoint path ckpt */
void curve_path(const char *ckpt, char *buf, size_t n);
/* opens the curve of ckpt: new (resume_step 0), or kept up to resume_step. -1 with pelab_errmsg */
int curve_open(LossCurve *c, const char *ckpt, long resume_step);
/* one training step's loss into the running mean */
void curve_add_loss(LossCurve *c, float loss);
/* a row at step (val_loss NaN: none); -1 with pelab_errmsg on a write error */
int curve_row(LossCurve *c, long step, long tokens, float lr, float val_loss);
void curve_close(LossCurve *c);

#endif
