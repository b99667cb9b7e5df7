/* fox.c: the Forgetting Transformer (Lin et al., ICLR 2025, arXiv 2503.02130), FoX without RoPE:
 * no position embedding; every head of every layer has a forget gate computed from the token
 *     f_t = sigmoid(w_h . x_t + b_h)
 * (x_t the layer's input after its attention norm, what q, k, v are projected from) and query i's
 * score against key j gets the log forget gates between them:
 *     s_ij += sum_{l in (j, i]} log f_l = c_i - c_j,   c_t = sum_{l <= t} log f_l
 * a data-dependent, learned ALiBi (the pipeline keeps the running sums c, pipeline.h; a KV cache
 * stores each key's). Parameters "pos.weight" [n_layers, n_heads, dim + 1]: each head's w, then
 * its b. Initialisation: w ~ N(0, 0.02^2) as pelab's projections, b = bias (default 0: torch's
 * Linear starts near 0 too, f ~ 1/2; a larger bias starts with a longer memory). */
#include <math.h>
#include <stdlib.h>

#include "../../core/blas.h"
#include "../../core/mem.h"
#include "../../core/rng.h"
#include "pos.h"

typedef struct {
    double bias; /* b at initialisation */
} Fox;

static const PosOption fox_options[] = {
    POS_DOUBLE("bias", Fox, bias, 0, -20, 20, "every forget gate's bias b at initialisation (f = sigmoid(w.x + b))",
               .flags = POS_OPT_SHORTEST),
};

static void fox_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    *ndim = 3, shape[0] = pc->n_layers, shape[1] = pc->n_heads, shape[2] = pc->dim + 1;
}

static void fox_init_params(const PosCtx *pc, float *params, Rng *rng) {
    int D = pc->dim;
    float b = (float)((const Fox *)pc->state)->bias;
    for (size_t g = 0; g < (size_t)pc->n_layers * pc->n_heads; g++) {
        float *w = params + g * (D + 1);
        for (int d = 0; d < D; d++) w[d] = 0.02f * rng_normal(rng);
        w[D] = b;
    }
}

/* z[n, H] = x W^T + b for one layer's [H, D + 1] block */
static void gate_logits(const PosCtx *pc, const float *blk, const float *x, int n, float *z) {
    int D = pc->dim, H = pc->n_heads;
    // (n, D) x (H, D)^T -> (n, H), the weights' row stride D + 1 (the bias last)
    blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, H, D, 1.0f, x, D, blk, D + 1, 0.0f, z, H);
    for (int t = 0; t < n; t++)
        for (int h = 0; h < H; h++) z[(size_t)t * H + h] += blk[(size_t)h * (D + 1) + D];
}

static const float *layer_block(const PosCtx *pc, int layer) {
    return pc->params + (size_t)layer * pc->n_heads * (pc->dim + 1);
}

/* log sigmoid(z) = -log(1 + e^-z), without overflow either way */
static float log_sigmoid(float z) { return z >= 0 ? -log1pf(expf(-z)) : z - log1pf(expf(z)); }

static void fox_gate_forward(const PosCtx *pc, int layer, const float *x, int n, float *logf) {
    gate_logits(pc, layer_block(pc, layer), x, n, logf);
    for (size_t i = 0; i < (size_t)n * pc->n_heads; i++) logf[i] = log_sigmoid(logf[i]);
}

/* d log sigmoid(z) / dz = 1 - sigmoid(z) = sigmoid(-z) */
static void fox_gate_backward(const PosCtx *pc, int layer, const float *x, const float *dlogf, int n, float *dx,
                              float *dparams) {
    int D = pc->dim, H = pc->n_heads;
    const float *blk = layer_block(pc, layer);
    float *dz = xmalloc((size_t)n * H * sizeof(float)), *dblk = dparams ? dparams + (blk - pc->params) : NULL;
    gate_logits(pc, blk, x, n, dz);
    for (size_t i = 0; i < (size_t)n * H; i++) dz[i] = dlogf[i] / (1.0f + expf(dz[i]));
    // dx += dz W: (n, H) x (H, D) -> (n, D)
    if (dx) blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, D, H, 1.0f, dz, H, blk, D + 1, 1.0f, dx, D);
    if (dblk) {
        // dW += dz^T x: (H, n) x (n, D) -> (H, D), into the rows of stride D + 1
        blas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, D, n, 1.0f, dz, H, x, D, 1.0f, dblk, D + 1);
        for (int t = 0; t < n; t++)
            for (int h = 0; h < H; h++) dblk[(size_t)h * (D + 1) + D] += dz[(size_t)t * H + h];
    }
    free(dz);
}

const PosScheme pos_fox = {
    .name = "fox",
    .caps = POS_CAP_LEARNED,
    POS_OPTIONS(fox_options),
    .state_size = sizeof(Fox),
    .test_specs = {"fox:bias=2", "fox+nope@1", "fox+sinks:init=0.5"},
    .param_shape = fox_param_shape,
    .init_params = fox_init_params,
    .gate_forward = fox_gate_forward,
    .gate_backward = fox_gate_backward,
};
