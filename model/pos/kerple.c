/* kerple.c: KERPLE, log variant (Chi et al., NeurIPS 2022): every head adds
 *     B_h(i, n) = -p_h * ln(1 + a_h * |i - n|)
 * to the logit after the 1/sqrt(d) scaling, with two learned scalars per head, p_h, a_h > 0.
 * The authors' gpt-neox code initialises p ~ U(0,2), a ~ U(0,1) and clamps both to >= 0.01.
 *
 * Layout of "pos.weight": layers=shared (default) keeps one [2, n_heads] block, p then a, used by
 * every layer, as the authors' code does (one ParallelKerpleLog module handed to all layers); its
 * gradient sums over layers because every layer accumulates into the same dparams.
 * layers=separate gives each layer its own pair of rows: [n_layers, 2, n_heads].
 *
 * Domain: the trainer calls after_update, which projects p and a back to >= 0.01 after every
 * optimizer step (and init_params starts inside the domain), so during training the forward sees
 * the stored values unchanged. The forward still evaluates max(v, 0.01): values set from outside
 * (a hand-edited checkpoint, the tests' random weights) must not turn ln(1 + a D) into NaN for
 * a < 0. That is also what the reference forward computes (it clamps .data before every use).
 * Below 0.01 the derivative of the clamp is 0, and the backward says so. */
#include <math.h>

#include "../../core/rng.h"
#include "pos.h"

#define KERPLE_MIN 0.01f

typedef struct {
    int shared; /* 1: one [2, H] block for all layers */
} Kerple;

static const PosOption kerple_options[] = {
    POS_WORD("layers", Kerple, shared, 1, "one (p, a) block per layer, or one for all (the authors' code)",
             "separate", "shared"),
};

static int kerple_n_blocks(const PosCtx *pc) { return ((const Kerple *)pc->state)->shared ? 1 : pc->n_layers; }

static void kerple_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    if (((const Kerple *)pc->state)->shared) {
        *ndim = 2, shape[0] = 2, shape[1] = pc->n_heads;
    } else {
        *ndim = 3, shape[0] = pc->n_layers, shape[1] = 2, shape[2] = pc->n_heads;
    }
}

/* the [2, H] block of one layer: p at [0 .. H), a at [H .. 2H) */
static size_t kerple_block(const PosCtx *pc, int layer) {
    return ((const Kerple *)pc->state)->shared ? 0 : (size_t)layer * 2 * pc->n_heads;
}

static void kerple_init_params(const PosCtx *pc, float *params, Rng *rng) {
    int H = pc->n_heads;
    for (int l = 0; l < kerple_n_blocks(pc); l++) {
        float *p = params + (size_t)l * 2 * H, *a = p + H;
        for (int h = 0; h < H; h++) p[h] = fmaxf(2.0f * rng_f32(rng), KERPLE_MIN);
        for (int h = 0; h < H; h++) a[h] = fmaxf(rng_f32(rng), KERPLE_MIN);
    }
}

static void kerple_after_update(const PosCtx *pc, float *params) {
    size_t n = (size_t)kerple_n_blocks(pc) * 2 * pc->n_heads;
    for (size_t i = 0; i < n; i++)
        if (!(params[i] >= KERPLE_MIN)) params[i] = KERPLE_MIN; /* NaN also lands on the floor */
}

static void kerple_bias_row(const PosCtx *pc, float *row, int qpos, const int *kpos, int nk, int head, int layer) {
    const float *blk = pc->params + kerple_block(pc, layer);
    float p = fmaxf(blk[head], KERPLE_MIN), a = fmaxf(blk[pc->n_heads + head], KERPLE_MIN);
    for (int j = 0; j < nk; j++) {
        float dist = fabsf((float)(qpos - kpos[j]));
        row[j] -= p * log1pf(a * dist);
    }
}

/* dB/dp = -ln(1 + a D), dB/da = -p D / (1 + a D); zero through the clamp when v < 0.01 */
static void kerple_bias_backward(const PosCtx *pc, const float *drow, int qpos, const int *kpos, int nk, int head,
                                 int layer, float *dparams) {
    const float *blk = pc->params + kerple_block(pc, layer);
    float p_raw = blk[head], a_raw = blk[pc->n_heads + head];
    float p = fmaxf(p_raw, KERPLE_MIN), a = fmaxf(a_raw, KERPLE_MIN);
    float dp = 0.0f, da = 0.0f;
    for (int j = 0; j < nk; j++) {
        float dist = fabsf((float)(qpos - kpos[j]));
        dp -= drow[j] * log1pf(a * dist);
        da -= drow[j] * p * dist / (1.0f + a * dist);
    }
    float *dblk = dparams + kerple_block(pc, layer);
    if (p_raw >= KERPLE_MIN) dblk[head] += dp;
    if (a_raw >= KERPLE_MIN) dblk[pc->n_heads + head] += da;
}

const PosScheme pos_kerple = {
    .name = "kerple",
    .caps = POS_CAP_LEARNED,
    POS_OPTIONS(kerple_options),
    .state_size = sizeof(Kerple),
    .test_specs = {"kerple:layers=separate", "kerple:layers=separate+nope@0"},
    .param_shape = kerple_param_shape,
    .init_params = kerple_init_params,
    .after_update = kerple_after_update,
    .bias_row = kerple_bias_row,
    .bias_backward = kerple_bias_backward,
};
