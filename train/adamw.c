#include "adamw.h"
#include "../core/sys.h"

#include <math.h>

void adamw_update(Model *model, float *m, float *v, const AdamWConfig *c, long step) {
    float bc1 = 1.0f - powf(c->beta1, (float)step), bc2 = 1.0f - powf(c->beta2, (float)step);
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        const TensorInfo *ti = &model->tensors[t];
        float wd = ti->decay ? c->weight_decay : 0.0f;
        float *p = model->params_mem + ti->offset, *g = model->grads_mem + ti->offset;
        float *mt = m + ti->offset, *vt = v + ti->offset;
        long n = (long)ti->numel;
        PAR_FOR(n >= PAR_MIN_WORK, long, i, n,
            mt[i] = c->beta1 * mt[i] + (1.0f - c->beta1) * g[i];
            vt[i] = c->beta2 * vt[i] + (1.0f - c->beta2) * g[i] * g[i];
            float mhat = mt[i] / bc1, vhat = vt[i] / bc2;
            p[i] -= c->lr * (mhat / (sqrtf(vhat) + c->eps) + wd * p[i]);
        );
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
