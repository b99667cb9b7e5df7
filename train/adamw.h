/* adamw.h: AdamW with decoupled weight decay (Loshchilov & Hutter), global-norm gradient
 * clipping, and the learning-rate schedules (linear warmup, then cosine decay to a floor over a known
 * number of steps, or warmup-stable-decay for a run whose end is decided as it trains). */
#ifndef PELAB_ADAMW_H
#define PELAB_ADAMW_H

#include <stddef.h>

#include "../model/model.h"

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} AdamWConfig;

/* One update of every parameter tensor; decay only where the tensor says so (not norm gains,
 * not position parameters). step is 1-based (bias correction). m, v: n_params floats. */
void adamw_update(Model *model, float *m, float *v, const AdamWConfig *c, long step);

/* Scales the gradients so their global L2 norm is at most max_norm (<= 0: no clipping).
 * Returns the norm before clipping. */
float clip_grad_norm(float *grads, size_t n, float max_norm);

/* lr at 0-based step: linear warmup over warmup steps, then cosine from lr to lr*min_frac at total */
float lr_schedule(long step, long total, long warmup, float lr, float min_frac);

/* Warmup-stable-decay (Hu et al. 2024, MiniCPM; Hagele et al. 2024): lr at 0-based step after a
 * linear warmup, constant until cooldown_start (-1: not begun), then linear down to lr*min_frac at
 * the last step before cooldown_end. The end need not be known when training starts: --converge. */
float lr_wsd(long step, long warmup, long cooldown_start, long cooldown_end, float lr, float min_frac);

#endif
