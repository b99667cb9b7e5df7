/* fire.c: FIRE, functional interpolation for relative positions (Li et al., ICLR 2024,
 * arXiv 2310.04418). Every head adds a learned function of the *normalised* distance,
 *     b_h(i, j) = f_h( psi(i - j) / psi(max(L_thr, i)) ),   psi(x) = ln(1 + c x),
 * to the logit of query position i against key position j (after the 1/sqrt(d) scaling), with
 * f: R -> R^H a one-hidden-layer ReLU MLP (1 -> width -> n_heads). Dividing by psi(i) maps every
 * causal distance into [0, 1] ("progressive interpolation"): a longer sequence brings no input f
 * has not seen. Below the threshold L_thr the normaliser is constant and the bias depends on
 * i - j only.
 *
 * We follow the paper's reference code (its appendix, PyTorch) rather than the formula alone:
 *     threshold  = |L_multiplier * init_L|          init_L fixed (option L), L_multiplier learned, init 1
 *     normaliser = ln(|c * max(i, threshold)| + 1) + 1e-6
 *     x          = ln(|c * (i - j)| + 1) / normaliser     c learned, init 0.1 (option c)
 *     bias[h]    = mlp(x)[h]
 * The absolute values make both c and the threshold usable at any sign (no clamp, no
 * after_update hook: a step that takes c below 0 acts as |c|), and the epsilon keeps x finite at
 * i = 0 or c = 0 (x is then 0/eps = 0). Where |.| or max() has a kink, the backward takes the
 * derivative of one side: |.| at 0 has derivative 0 (as torch.abs), ReLU at 0 has derivative 0
 * (as torch.relu), and the L multiplier gets a gradient only when the threshold is strictly
 * larger than i (the normaliser then depends on it).
 *
 * Layout of "pos.weight": [n_sets, n_per_set], one set per layer (layers=separate, the default: a
 * FIRE module per attention layer, as in the paper's experiments) or one for every layer
 * (layers=shared: its gradient sums over layers, every layer accumulating into the same dparams,
 * as t5.c). A set is
 *     w1[width] | b1[width] | w2[n_heads][width] | b2[n_heads] | c | L_multiplier
 * where learn=mlp drops the last two (c and the multiplier then stay at their initial values,
 * kept in the state; no parameter the optimizer could move, weight decay or not).
 *
 * Init: PyTorch's nn.Linear default, which is what the reference code gets: weight and bias
 * ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), so U(-1, 1) for the first layer (fan_in 1) and
 * U(-1/sqrt(width), 1/sqrt(width)) for the second. For inputs in [0, 1] this puts a good share
 * of the ReLU kinks -b1/w1 inside [0, 1] (f starts as a genuinely piecewise-linear function
 * there, not a constant or linear one) and starts every bias at O(0.5): a mild, random position
 * preference that the content scores dominate.
 *
 * Cost: per query row and head, nk keys times (one log1p + 3 flops per hidden unit). The hot
 * loop runs over 64-key blocks on the stack, hidden unit outside and key inside, so the compiler
 * vectorises it across keys (ReLU as a compare, not fmaxf, which is a libm call here; the
 * backward's sums over keys are omp simd reductions); nothing is allocated. The log1p of a key is
 * recomputed for every head (the hook is per head): about 12% of a tiny model's training time. */
#include <math.h>

#include "../../core/rng.h"
#include "pos.h"

#define FIRE_EPS 1e-6f /* the reference's eps on the normaliser */
enum { FIRE_BLOCK = 64 };

typedef struct {
    int width;     /* hidden units of f */
    double c0;     /* initial c (and c itself under learn=mlp) */
    int L0;        /* init_L: the threshold before its multiplier */
    int shared;    /* 1: one set for all layers */
    int mlp_only;  /* 1 (learn=mlp): c and the L multiplier fixed at their initial values */
} Fire;

static const PosOption fire_options[] = {
    POS_INT("width", Fire, width, 32, 1, 4096, "hidden units of the MLP f (1 -> width -> heads, ReLU)"),
    POS_DOUBLE("c", Fire, c0, 0.1, 1e-6, 1e6, "c of psi(x) = ln(1 + c x) at init (fixed under learn=mlp)", .flags = POS_OPT_SHORTEST),
    POS_INT("L", Fire, L0, 0, 1, 1 << 30, "threshold L_thr = |multiplier * L|: psi(max(L_thr, i)) normalises",
            .flags = POS_OPT_TRAIN_LEN),
    POS_WORD("layers", Fire, shared, 0, "one MLP, c and L multiplier per layer, or one for all", "separate",
             "shared"),
    POS_WORD("learn", Fire, mlp_only, 0, "learn c and the L multiplier too, or the MLP only", "all", "mlp"),
};

static int fire_n_sets(const PosCtx *pc) { return ((const Fire *)pc->state)->shared ? 1 : pc->n_layers; }

static size_t fire_per_set(const PosCtx *pc) {
    const Fire *s = pc->state;
    return (size_t)s->width * (2 + pc->n_heads) + pc->n_heads + (s->mlp_only ? 0 : 2);
}

static void fire_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    *ndim = 2, shape[0] = fire_n_sets(pc), shape[1] = (int)fire_per_set(pc);
}

static size_t fire_set_offset(const PosCtx *pc, int layer) {
    return ((const Fire *)pc->state)->shared ? 0 : (size_t)layer * fire_per_set(pc);
}

static void fire_init_params(const PosCtx *pc, float *params, Rng *rng) {
    const Fire *s = pc->state;
    int W = s->width, H = pc->n_heads;
    float bound2 = 1.0f / sqrtf((float)W);
    for (int l = 0; l < fire_n_sets(pc); l++) {
        float *p = params + (size_t)l * fire_per_set(pc);
        for (int k = 0; k < 2 * W; k++) p[k] = 2.0f * rng_f32(rng) - 1.0f;                        /* w1, b1 */
        for (int k = 0; k < H * W + H; k++) p[2 * W + k] = bound2 * (2.0f * rng_f32(rng) - 1.0f); /* w2, b2 */
        if (!s->mlp_only) p[2 * W + H * W + H] = (float)s->c0, p[2 * W + H * W + H + 1] = 1.0f;
    }
}

/* One set's parameters for a row, and the row's normaliser. */
typedef struct {
    const float *w1, *b1, *w2, *b2; /* w2, b2: of the head */
    float c, lmul;                  /* as stored (signed) */
    float ac;                       /* |c| */
    double T;                       /* max(i, threshold) */
    int threshold_wins;             /* threshold > i: the L multiplier reaches the normaliser */
    float inv_norm;                 /* 1 / (ln(1 + |c| T) + eps) */
    float norm;
} FireRow;

static void fire_row(const PosCtx *pc, const float *params, int qpos, int head, int layer, FireRow *r) {
    const Fire *s = pc->state;
    int W = s->width, H = pc->n_heads;
    const float *p = params + fire_set_offset(pc, layer);
    r->w1 = p, r->b1 = p + W, r->w2 = p + 2 * W + (size_t)head * W, r->b2 = p + 2 * W + (size_t)H * W + head;
    if (s->mlp_only) r->c = (float)s->c0, r->lmul = 1.0f;
    else r->c = p[2 * W + H * W + H], r->lmul = p[2 * W + H * W + H + 1];
    r->ac = fabsf(r->c);
    double threshold = fabs((double)r->lmul * s->L0);
    r->threshold_wins = threshold > (double)qpos;
    r->T = r->threshold_wins ? threshold : (double)qpos;
    r->norm = (float)log1p((double)r->ac * r->T) + FIRE_EPS;
    r->inv_norm = 1.0f / r->norm;
}

/* x[j] of keys kpos[0 .. n): ln(1 + |c (i - j)|) / normaliser; dist[j] = |i - j| */
static void fire_inputs(const FireRow *r, int qpos, const int *kpos, int n, float *x, float *dist) {
    for (int j = 0; j < n; j++) {
        dist[j] = fabsf((float)((long)qpos - kpos[j]));
        x[j] = log1pf(r->ac * dist[j]) * r->inv_norm;
    }
}

static void fire_bias_row(const PosCtx *pc, float *row, int qpos, const int *kpos, int nk, int head, int layer) {
    FireRow r;
    fire_row(pc, pc->params, qpos, head, layer, &r);
    int W = ((const Fire *)pc->state)->width;
    for (int j0 = 0; j0 < nk; j0 += FIRE_BLOCK) {
        int n = nk - j0 < FIRE_BLOCK ? nk - j0 : FIRE_BLOCK;
        float x[FIRE_BLOCK], dist[FIRE_BLOCK], acc[FIRE_BLOCK];
        fire_inputs(&r, qpos, kpos + j0, n, x, dist);
        for (int j = 0; j < n; j++) acc[j] = *r.b2;
        for (int k = 0; k < W; k++) {
            float a = r.w1[k], b = r.b1[k], w = r.w2[k];
            for (int j = 0; j < n; j++) {
                float pre = a * x[j] + b;
                acc[j] += w * (pre > 0.0f ? pre : 0.0f); /* not fmaxf: a libm call that blocks vectorisation */
            }
        }
        for (int j = 0; j < n; j++) row[j0 + j] += acc[j];
    }
}

/* Backward of one row: through the MLP to every weight, then through x = r / n:
 *   dx/dc = sign(c) D / (1 + |c| D) / n - x / n * sign(c) T / (1 + |c| T)
 *   dx/dm = -x / n * |c| / (1 + |c| T) * sign(m) L      (only when the threshold |m L| > i)
 * with D = |i - j|, n the normaliser, m the L multiplier. */
static void fire_bias_backward(const PosCtx *pc, const float *drow, int qpos, const int *kpos, int nk, int head,
                               int layer, float *dparams) {
    const Fire *s = pc->state;
    int W = s->width, H = pc->n_heads;
    FireRow r;
    fire_row(pc, pc->params, qpos, head, layer, &r);
    float *dp = dparams + fire_set_offset(pc, layer);
    float *dw1 = dp, *db1 = dp + W, *dw2 = dp + 2 * W + (size_t)head * W, *db2 = dp + 2 * W + (size_t)H * W + head;
    double sum_dx_x = 0.0, sum_dx_dr = 0.0, sum_g = 0.0; /* for c and the multiplier; db2 */
    for (int j0 = 0; j0 < nk; j0 += FIRE_BLOCK) {
        int n = nk - j0 < FIRE_BLOCK ? nk - j0 : FIRE_BLOCK;
        float x[FIRE_BLOCK], dist[FIRE_BLOCK], dx[FIRE_BLOCK];
        const float *g = drow + j0;
        fire_inputs(&r, qpos, kpos + j0, n, x, dist);
        for (int j = 0; j < n; j++) dx[j] = 0.0f, sum_g += g[j];
        for (int k = 0; k < W; k++) {
            float a = r.w1[k], b = r.b1[k], w = r.w2[k], sw2 = 0.0f, sw1 = 0.0f, sb1 = 0.0f;
#pragma omp simd reduction(+ : sw2, sw1, sb1)
            for (int j = 0; j < n; j++) {
                float pre = a * x[j] + b;
                float dpre = pre > 0.0f ? g[j] * w : 0.0f; /* ReLU: derivative 0 at 0 */
                sw2 += pre > 0.0f ? g[j] * pre : 0.0f;
                sw1 += dpre * x[j];
                sb1 += dpre;
                dx[j] += dpre * a;
            }
            dw2[k] += sw2, dw1[k] += sw1, db1[k] += sb1;
        }
        if (!s->mlp_only)
            for (int j = 0; j < n; j++) {
                sum_dx_x += (double)dx[j] * x[j];
                sum_dx_dr += (double)dx[j] * dist[j] / (1.0 + (double)r.ac * dist[j]); /* d r / d|c| */
            }
    }
    *db2 += (float)sum_g;
    if (s->mlp_only) return;
    double sc = r.c > 0 ? 1.0 : r.c < 0 ? -1.0 : 0.0, norm = r.norm;
    double dn_dac = r.T / (1.0 + r.ac * r.T); /* d normaliser / d|c| */
    float *dc = dp + 2 * W + (size_t)H * W + H, *dm = dc + 1;
    *dc += (float)(sc * (sum_dx_dr - sum_dx_x * dn_dac) / norm);
    if (r.threshold_wins) {
        double sm = r.lmul > 0 ? 1.0 : -1.0; /* the threshold wins only if it is > i >= 0, so m != 0 */
        *dm += (float)(-sum_dx_x / norm * r.ac / (1.0 + r.ac * r.T) * sm * ((const Fire *)pc->state)->L0);
    }
}

const PosScheme pos_fire = {
    .name = "fire",
    .caps = POS_CAP_LEARNED | POS_CAP_KINKED, /* the MLP's ReLU */
    POS_OPTIONS(fire_options),
    .state_size = sizeof(Fire),
    /* a threshold the tiny model's positions (up to 11) cross, one shared set, c and L fixed */
    .test_specs = {"fire:layers=shared,L=4", "fire:learn=mlp,width=8,c=0.5"},
    .param_shape = fire_param_shape,
    .init_params = fire_init_params,
    .bias_row = fire_bias_row,
    .bias_backward = fire_bias_backward,
};
