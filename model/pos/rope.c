/* rope.c: rotary position embedding (Su et al. 2021). Pair j of every q and k head is rotated by
 * pos * theta_j, theta_j = base^(-2j/rot_dim), so q(m).k(n) depends only on m - n.
 * layout=interleaved pairs dims (2j, 2j+1) (llama2.c, Meta); layout=half pairs (j, j + rot_dim/2)
 * (HF, NeoX). fraction=F rotates only the first F of each head's dims (GPT-NeoX partial rotary).
 * scale=RULE applies a context-extension rule (rope_scaling.h). keep=P is p-RoPE (Barbero et al.
 * 2024, arXiv 2410.06205): only the share P of pairs with the highest frequencies rotate, the
 * rest (the longest wavelengths) carry no position; P = 1 is RoPE, P = 0 NoPE. Unlike fraction=,
 * which keeps a leading slice of dims at all frequencies, keep= cuts the frequency band.
 * max_period=N is HoPE's cut (Chen et al. 2024, arXiv 2410.21216): the pairs whose period
 * 2 pi / theta_j is longer than N (with N = L: those that never complete a turn inside the
 * training window, the "activated" low frequencies the paper blames for the U-shaped attention)
 * carry no position; both cuts may be given, the stricter wins. Keys are cached after rotation.
 * A dynamic rule (dynamic-ntk; longrope once, at L) past L changes every position's rotation with the length, so
 * qk_dynamic_from tells the KV-cache decoder to recompute the whole prefix: at each step under
 * dynamic NTK, once (when the length crosses L) under LongRoPE (qk_transform_changes). */
#include <math.h>
#include <stdlib.h>

#include "pos.h"
#include "rotary.h"

typedef struct {
    RotaryCore core;
    double keep;       /* p-RoPE: share of pairs, highest frequencies first, that rotate */
    int max_period;    /* HoPE: pairs that do not complete a turn within this many positions stay still */
    int rotating;      /* pairs 0 .. rotating-1 rotate (pair j turns at base^(-2j/rot_dim): j = 0 fastest) */
    SinCosTable table; /* [pos][pair]: attn_factor * (cos, sin) of the angle */
} Rope;

static const PosOption rope_options[] = {
    ROTARY_OPTIONS(Rope),
    POS_DOUBLE("keep", Rope, keep, 1, 0, 1,
               "p-RoPE: share of pairs that rotate, highest frequencies first (floor(P x pairs), as the paper's "
               "code); the lowest "
               "frequencies carry no position (1: RoPE, 0: NoPE)", .flags = POS_OPT_SHORTEST),
    POS_INT("max_period", Rope, max_period, 0, 0, 1 << 30,
            "HoPE: pairs whose period 2 pi / theta_j exceeds N positions carry no position (HoPE: N = the "
            "training length; 0: off)"),
};

static void rope_row(const void *ctx, long pos, int n, double *angle, double *amp) {
    const Rope *s = ctx;
    for (int j = 0; j < n; j++)
        angle[j] = j < s->rotating ? rotary_core_angle(&s->core, j, pos) : 0.0, amp[j] = s->core.attn_factor;
}

static int rope_prepare(PosCtx *pc) {
    Rope *s = pc->state;
    if (rotary_core_prepare(&s->core, "rope", pc->head_dim, pc->seq_len) != 0) return -1;
    int pairs = s->core.layout.rot_pairs;
    /* the paper's code (Barbero et al. 2024, apply_p_rope): rope_angles = int(p * head_dim // 2),
     * a floor; its head_dim is the rotary width, 2 pairs */
    s->rotating = (int)floor(s->keep * (2.0 * pairs) / 2.0);
    /* theta_j = base^(-2j/rot_dim) falls with j: the first pair whose period 2 pi / theta_j exceeds
     * max_period, and every slower one, is cut (before any scaling rule: the cut is the training
     * window's, as HoPE's) */
    for (int j = 0; s->max_period > 0 && j < s->rotating; j++)
        if (2.0 * M_PI * pow(s->core.base, 2.0 * j / (2.0 * pairs)) > s->max_period) s->rotating = j;
    sincos_table_init_fn(&s->table, s->core.layout.rot_pairs, rope_row, s);
    return 0;
}

static int rope_reserve(PosCtx *pc, long n_positions) {
    Rope *s = pc->state;
    if (rotary_core_set_length(&s->core, n_positions)) sincos_table_invalidate(&s->table);
    return sincos_table_reserve(&s->table, n_positions);
}

static long rope_dynamic_from(const PosCtx *pc) { return rotary_core_dynamic_from(&((const Rope *)pc->state)->core); }

static int rope_changes(const PosCtx *pc, long from_len, long to_len) {
    return rotary_core_changes(&((const Rope *)pc->state)->core, from_len, to_len);
}

static void rope_qk_forward(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer) {
    (void)is_key, (void)layer;
    const Rope *s = pc->state;
    rotary_apply(&s->core.layout, &(RotaryTable){&s->table, 0, 1}, v, pos, n, n_heads, 1.0f);
}

static void rope_qk_backward(const PosCtx *pc, float *dv, const int *pos, int n, int n_heads, int is_key,
                             int layer) {
    (void)is_key, (void)layer;
    const Rope *s = pc->state;
    rotary_apply(&s->core.layout, &(RotaryTable){&s->table, 0, 1}, dv, pos, n, n_heads, -1.0f);
}

static void rope_release(PosCtx *pc) {
    Rope *s = pc->state;
    sincos_table_free(&s->table);
    rotary_core_free(&s->core);
}

const PosScheme pos_rope = {
    .name = "rope",
    .caps = POS_CAP_ROTARY | POS_CAP_RULES | POS_CAP_DYNAMIC,
    POS_OPTIONS(rope_options),
    .state_size = sizeof(Rope),
    .test_specs = {"rope:layout=half,base=500", "rope:scale=pi:4", "rope:scale=ntk:4", "rope:scale=yarn:4",
                   "rope:scale=llama3:4", "rope:scale=dynatan", "rope:scale=dynatan-a", "rope:keep=0.5,layout=half,max_period=20",
                   "rope+temp:floor=2,scale=0.5",
                   /* dynamic: the shared checks leave out the KV cache (test_rope_scaling.c decodes past L) */
                   "rope:scale=dynamic-ntk:2,fraction=0.5",
                   /* a NoPE layer (Llama 4, RNoPE); SSMax's learned s */
                   "rope+nope@1", "rope+ssmax",
                   /* gpt-oss's learned sinks (sinks.h) */
                   "rope+sinks:init=-0.5"},
    .prepare = rope_prepare,
    .reserve = rope_reserve,
    .qk_dynamic_from = rope_dynamic_from,
    .qk_transform_changes = rope_changes,
    .qk_forward = rope_qk_forward,
    .qk_backward = rope_qk_backward,
    .release = rope_release,
};
