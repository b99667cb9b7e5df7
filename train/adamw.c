#include "adamw.h"
#include "../core/sys.h"

#include <math.h>
#include <omp.h>

/* one tensor's update: elementwise, so it vectorizes (the pointers do not overlap, the constants
 * are locals) and gives the same bits as one element at a time */
static void adamw_span(float *restrict p, const float *restrict g, float *restrict mt, float *restrict vt, long n,
                       float beta1, float beta2, float bc1, float bc2, float lr, float eps, float wd) {
    for (long i = 0; i < n; i++) {
        mt[i] = beta1 * mt[i] + (1.0f - beta1) * g[i];
        vt[i] = beta2 * vt[i] + (1.0f - beta2) * g[i] * g[i];
        float mhat = mt[i] / bc1, vhat = vt[i] / bc2;
        p[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p[i]);
    }
}

void adamw_update(Model *model, float *m, float *v, const AdamWConfig *c, long step) {
    float bc1 = 1.0f - powf(c->beta1, (float)step), bc2 = 1.0f - powf(c->beta2, (float)step);
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        const TensorInfo *ti = &model->tensors[t];
        float wd = ti->decay ? c->weight_decay : 0.0f;
        float *p = model->params_mem + ti->offset, *g = model->grads_mem + ti->offset;
        float *mt = m + ti->offset, *vt = v + ti->offset;
        long n = (long)ti->numel;
        if (n >= 4 * PAR_MIN_WORK && !omp_in_parallel()) { /* vectorized: a region pays only for large tensors */
#pragma omp parallel
            { /* each thread a contiguous share */
                int share = omp_get_thread_num(), n_shares = omp_get_num_threads();
                long lo = n * share / n_shares, hi = n * (share + 1) / n_shares;
                adamw_span(p + lo, g + lo, mt + lo, vt + lo, hi - lo, c->beta1, c->beta2, bc1, bc2, c->lr, c->eps, wd);
            }
        } else
            adamw_span(p, g, mt, vt, n, c->beta1, c->beta2, bc1, bc2, c->lr, c->eps, wd);
    }
}

float clip_grad_norm(float *grads, size_t n, float max_norm) {
    /* fixed chunks summed in order: the norm does not depend on how OpenMP splits the loop */
    enum { CHUNKS = 64 };
    double partial[CHUNKS];
    /* a small model's gradients: no region (a fork and a barrier cost more than the sum) */
    PAR_FOR(n >= 8 * PAR_MIN_WORK, int, c, CHUNKS,
        size_t lo = n * c / CHUNKS, hi = n * (c + 1) / CHUNKS;
        double ss = 0.0;
        for (size_t i = lo; i < hi; i++) ss += (double)grads[i] * grads[i];
        partial[c] = ss;
    );
    double ss = 0.0;
    for (int c = 0; c < CHUNKS; c++) ss += partial[c];
    float norm = (float)sqrt(ss);
    if (max_norm > 0.0f && norm > max_norm) {
        float scale = max_norm / norm;
        PAR_FOR(n >= 8 * PAR_MIN_WORK, size_t, i, n, grads[i] *= scale;);
    }
    return norm;
}

float lr_schedule(long step, long total, long warmup, float lr, float min_frac) {
    if (step < warmup) return lr * (float)(step + 1) / (float)warmup;
    if (total <= warmup) return lr;
    double progress = (double)(step - warmup) / (double)(total - warmup);
    if (progress > 1.0) progress = 1.0;
    double cosine = 0.5 * (1.0 + cos(M_PI * progress));
    return lr * (float)(min_frac + (1.0 - min_frac) * cosine);
}

float lr_wsd(long step, long warmup, long cooldown_start, long cooldown_end, float lr, float min_frac) {
    if (step < warmup) return lr * (float)(step + 1) / (float)warmup;
    if (cooldown_start < 0 || step < cooldown_start || cooldown_end <= cooldown_start) return lr;
    double done = (double)(step - cooldown_start + 1) / (double)(cooldown_end - cooldown_start);
    if (done > 1.0) done = 1.0;
    return lr * (float)(1.0 - (1.0 - min_frac) * done);
}
