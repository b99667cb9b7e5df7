/* xpos.c: xPos (Sun et al. 2023, "A Length-Extrapolatable Transformer"): RoPE plus a per-pair
 * exponential scale. The query at position n is multiplied by zeta_j^(n/gamma) and the key at m
 * by zeta_j^(-m/gamma), zeta_j = (2j/d + 0.4)/1.4 (d = rotary dim, j = pair), gamma = scale_base,
 * so pair j of q(n).k(m) carries zeta_j^((n-m)/gamma): a decay with distance that stays relative.
 * torchscale centres positions per sequence to keep the powers in range; we keep ONE origin
 * (position 0) for q and k so cached keys stay exact, and report the largest position whose
 * scales are still safe in float32 through computable_position.
 * Each map is M = s R(phi), so the backward M^T = s R(-phi) is the kernel with the sine negated.
 * base=, layout=, fraction=, scale=, orig_len= are the shared rotary options; scaling rules change the angle
 * (and YaRN's attention factor), never the decay, which always uses the raw position. */
#include <math.h>
#include <stdlib.h>

#include "../../core/mem.h"
#include "pos.h"
#include "rotary.h"

/* amplitudes are kept within 2^(+-64): half of float32's exponent range, leaving 2^62 of headroom
 * on each side for the activations and gradients they multiply before values leave the normals */
#define XPOS_MAX_LOG2_SCALE 64.0

typedef struct Xpos Xpos;
typedef struct {
    const Xpos *s;
    double sign; /* +1 queries (zeta^(+n/gamma)), -1 keys (zeta^(-m/gamma)) */
} XposSide;

struct Xpos {
    RotaryCore core;
    double scale_base; /* gamma */
    double *log_zeta;  /* [rot_pairs] ln zeta_j (all < 0) */
    long last_safe;    /* largest position whose scales stay within 2^(+-64) */
    XposSide q_side, k_side;
    SinCosTable q_table, k_table; /* [pos][pair]: scale * attn_factor * (cos, sin) */
};

static const PosOption xpos_options[] = {
    ROTARY_OPTIONS(Xpos),
    POS_DOUBLE("scale_base", Xpos, scale_base, 512, 1e-3, 1e12, "gamma: pair j decays as zeta_j^(distance/gamma)"),
};

static void xpos_row(const void *ctx, long pos, int n, double *angle, double *amp) {
    const XposSide *side = ctx;
    const Xpos *s = side->s;
    /* rows past the safe range are only ever computed because the table grows by doubling; saturate
     * them so the table never holds inf (callers reject those positions via computable_position) */
    double p = (double)(pos < s->last_safe ? pos : s->last_safe);
    for (int j = 0; j < n; j++) {
        angle[j] = rotary_core_angle(&s->core, j, pos);
        amp[j] = s->core.attn_factor * exp(side->sign * p / s->scale_base * s->log_zeta[j]);
    }
}

static int xpos_prepare(PosCtx *pc) {
    Xpos *s = pc->state;
    if (rotary_core_prepare(&s->core, "xpos", pc->head_dim, pc->seq_len) != 0) return -1;
    int np = s->core.layout.rot_pairs, d = 2 * np;
    s->log_zeta = xmalloc(sizeof(double) * np);
    for (int j = 0; j < np; j++) s->log_zeta[j] = log((2.0 * j / d + 0.4) / 1.4);
    /* zeta_0 = 0.4/1.4 is the smallest zeta, so it bounds both the growing key scale and the
     * shrinking query scale: |pos/gamma * ln zeta_0| <= 64 ln 2 */
    double limit = XPOS_MAX_LOG2_SCALE * log(2.0) * s->scale_base / -s->log_zeta[0];
    s->last_safe = limit >= 2e9 ? 2000000000L : (long)floor(limit);
    s->q_side = (XposSide){s, 1.0};
    s->k_side = (XposSide){s, -1.0};
    sincos_table_init_fn(&s->q_table, np, xpos_row, &s->q_side);
    sincos_table_init_fn(&s->k_table, np, xpos_row, &s->k_side);
    return 0;
}

static int xpos_reserve(PosCtx *pc, long n_positions) {
    Xpos *s = pc->state;
    if (rotary_core_set_length(&s->core, n_positions)) {
        sincos_table_invalidate(&s->q_table);
        sincos_table_invalidate(&s->k_table);
    }
    if (sincos_table_reserve(&s->q_table, n_positions) != 0) return -1;
    return sincos_table_reserve(&s->k_table, n_positions);
}

static long xpos_dynamic_from(const PosCtx *pc) { return rotary_core_dynamic_from(&((const Xpos *)pc->state)->core); }

static int xpos_changes(const PosCtx *pc, long from_len, long to_len) {
    return rotary_core_changes(&((const Xpos *)pc->state)->core, from_len, to_len);
}

static long xpos_computable_position(const PosCtx *pc) { return ((const Xpos *)pc->state)->last_safe + 1; }

static void xpos_qk_forward(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer) {
    (void)layer;
    const Xpos *s = pc->state;
    rotary_apply(&s->core.layout, &(RotaryTable){is_key ? &s->k_table : &s->q_table, 0, 1}, v, pos, n, n_heads, 1.0f);
}

static void xpos_qk_backward(const PosCtx *pc, float *dv, const int *pos, int n, int n_heads, int is_key,
                             int layer) {
    (void)layer;
    const Xpos *s = pc->state;
    rotary_apply(&s->core.layout, &(RotaryTable){is_key ? &s->k_table : &s->q_table, 0, 1}, dv, pos, n, n_heads,
                 -1.0f);
}

static void xpos_release(PosCtx *pc) {
    Xpos *s = pc->state;
    sincos_table_free(&s->q_table);
    sincos_table_free(&s->k_table);
    rotary_core_free(&s->core);
    free(s->log_zeta);
}

const PosScheme pos_xpos = {
    .name = "xpos",
    .caps = POS_CAP_ROTARY | POS_CAP_RULES | POS_CAP_DYNAMIC,
    POS_OPTIONS(xpos_options),
    .state_size = sizeof(Xpos),
    .test_specs = {"xpos:layout=half,scale_base=64", "xpos+nope@0+temp:floor=2,layers=nope"},
    .prepare = xpos_prepare,
    .reserve = xpos_reserve,
    .qk_dynamic_from = xpos_dynamic_from,
    .qk_transform_changes = xpos_changes,
    .computable_position = xpos_computable_position,
    .qk_forward = xpos_qk_forward,
    .qk_backward = xpos_qk_backward,
    .release = xpos_release,
};
