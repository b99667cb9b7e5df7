/* pope.c: Polar Coordinate Position Embeddings (Gopalakrishnan, Csordas, Schmidhuber, Mozer 2025,
 * arXiv 2509.10534). Each component c of a query or key is a complex number whose magnitude is
 * the content alone and whose phase is the position alone:
 *     q~_c = softplus(q_c) e^{i (t theta_c - delta_c)},   k~_c = softplus(k_c) e^{i s theta_c}
 *     score = Re[sum_c conj(q~_c) k~_c] = sum_c softplus(q_c) softplus(k_c) cos((s - t) theta_c + delta_c)
 * theta_c = base^(-c/d) for the d components, delta_c a learned phase bias per layer, head and
 * component (the paper's delta, on the key's phase: written here on the query's with the opposite
 * sign, the same score, so keys shared by grouped query heads stay one per kv head), zero at
 * initialisation. The complex d-vector is 2d real numbers, the (Re, Im) of each component one pair
 * of the head's dims; so a head of head_dim dims carries d = head_dim / 2 components, each taking its
 * magnitude from the first dim of its pair: pelab's PoPE is the paper's PoPE with q and k of
 * head_dim / 2 components (the second dim of each pair of the projection is unused, its gradient 0),
 * at the score cost of RoPE of head_dim. theta_c = base^(-2c/head_dim), RoPE's frequencies.
 * Its backward reads the map's own output (the magnitude softplus(x) = |y|, softplus' = 1 - e^-|y|,
 * and the phase), through qk_backward_mapped. */
#include <math.h>
#include <stdlib.h>

#include "../../core/mem.h"
#include "pos.h"
#include "sincos_table.h"

typedef struct {
    double base;
    double *freq;      /* [head_dim / 2] */
    SinCosTable table; /* cos, sin of pos theta_c */
} Pope;

static const PosOption pope_options[] = {
    POS_DOUBLE("base", Pope, base, 10000, 1.0001, 1e12, "component c turns by base^(-2c/head_dim) per position"),
};

static int pope_prepare(PosCtx *pc) {
    Pope *s = pc->state;
    int d = pc->head_dim / 2;
    s->freq = xmalloc((size_t)d * sizeof(double));
    for (int c = 0; c < d; c++) s->freq[c] = pow(s->base, -2.0 * c / pc->head_dim);
    sincos_table_init(&s->table, s->freq, d);
    return sincos_table_reserve(&s->table, pc->seq_len);
}

static void pope_release(PosCtx *pc) {
    Pope *s = pc->state;
    sincos_table_free(&s->table);
    free(s->freq);
}

static int pope_reserve(PosCtx *pc, long n) { return sincos_table_reserve(&((Pope *)pc->state)->table, n); }

static void pope_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    *ndim = 3, shape[0] = pc->n_layers, shape[1] = pc->n_heads, shape[2] = pc->head_dim / 2;
}

static void pope_init_params(const PosCtx *pc, float *params, Rng *rng) {
    (void)rng;
    for (size_t i = 0; i < (size_t)pc->n_layers * pc->n_heads * (pc->head_dim / 2); i++) params[i] = 0.0f;
}

static float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

/* cos, sin of component c's phase: pos theta_c, minus delta_c for a query */
static void phase(const Pope *s, const float *delta, int pos, int c, float *co, float *si) {
    float ct = s->table.cos_t[(size_t)pos * s->table.n_freq + c], st = s->table.sin_t[(size_t)pos * s->table.n_freq + c];
    if (!delta) {
        *co = ct, *si = st;
        return;
    }
    float cd = cosf(delta[c]), sd = sinf(delta[c]); /* e^{i(a - d)} = e^{ia} e^{-id} */
    *co = ct * cd + st * sd, *si = st * cd - ct * sd;
}

static const float *head_delta(const PosCtx *pc, int layer, int head, int is_key) {
    /* no parameter block (a context outside a model, as the fuzz harness builds): delta as initialised, 0 */
    if (is_key || !pc->params) return NULL;
    return pc->params + ((size_t)layer * pc->n_heads + head) * (pc->head_dim / 2);
}

static void pope_qk_forward(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer) {
    const Pope *s = pc->state;
    int hd = pc->head_dim, d = hd / 2;
    for (int t = 0; t < n; t++)
        for (int h = 0; h < n_heads; h++) {
            float *x = v + ((size_t)t * n_heads + h) * hd;
            const float *delta = head_delta(pc, layer, h, is_key);
            for (int c = 0; c < d; c++) {
                float mu = softplus(x[2 * c]), co, si;
                phase(s, delta, pos[t], c, &co, &si);
                x[2 * c] = mu * co, x[2 * c + 1] = mu * si;
            }
        }
}

/* y = mu (cos p, sin p), mu = softplus(x_a): dx_a = (dy . (cos p, sin p)) (1 - e^-mu), dx_b = 0;
 * a query's p = pos theta - delta: d delta = -(dy . mu (-sin p, cos p)) */
static void pope_qk_backward_mapped(const PosCtx *pc, float *dv, const float *mapped, const int *pos, int n,
                                    int n_heads, int is_key, int layer, float *dparams) {
    const Pope *s = pc->state;
    int hd = pc->head_dim, d = hd / 2;
    for (int t = 0; t < n; t++)
        for (int h = 0; h < n_heads; h++) {
            size_t at = ((size_t)t * n_heads + h) * hd;
            float *dy = dv + at;
            const float *y = mapped + at, *delta = head_delta(pc, layer, h, is_key);
            float *ddelta = dparams && !is_key ? dparams + (delta - pc->params) : NULL;
            for (int c = 0; c < d; c++) {
                float co, si, ya = y[2 * c], yb = y[2 * c + 1], mu = sqrtf(ya * ya + yb * yb);
                phase(s, delta, pos[t], c, &co, &si);
                float dmu = dy[2 * c] * co + dy[2 * c + 1] * si;
                if (ddelta) ddelta[c] -= dy[2 * c + 1] * ya - dy[2 * c] * yb;
                dy[2 * c] = dmu * -expm1f(-mu), dy[2 * c + 1] = 0.0f;
            }
        }
}

const PosScheme pos_pope = {
    .name = "pope",
    .caps = POS_CAP_ROTARY | POS_CAP_LEARNED,
    POS_OPTIONS(pope_options),
    .state_size = sizeof(Pope),
    .test_specs = {"pope:base=100", "pope+nope@1", "pope+sinks"},
    .prepare = pope_prepare,
    .release = pope_release,
    .reserve = pope_reserve,
    .param_shape = pope_param_shape,
    .init_params = pope_init_params,
    .qk_forward = pope_qk_forward,
    .qk_backward_mapped = pope_qk_backward_mapped,
};
