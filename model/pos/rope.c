/* rope.c: rotary position embedding (Su et al. 2021). Pair j of every q and k head is rotated by
 * pos * theta_j, theta_j = base^(-2j/head_dim), so q(m).k(n) depends only on m - n.
 * layout=interleaved pairs dims (2j, 2j+1) (llama2.c, Meta); layout=half pairs (j, j + hd/2) (HF, NeoX).
 * Keys are cached after rotation: the angle depends only on the key's own position. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pos.h"
#include "sincos_table.h"

typedef struct {
    double base;
    int half_layout; /* 0: interleaved (default), 1: half / rotate_half */
    SinCosTable table;
} Rope;

static int rope_create(PosCtx *pc) {
    Rope *s = xcalloc(1, sizeof *s);
    s->base = 10000.0;
    pc->state = s;
    return 0;
}

static int rope_set_option(PosCtx *pc, const char *key, const char *val) {
    Rope *s = pc->state;
    if (strcmp(key, "base") == 0) return pos_parse_double("rope", key, val, 1.0001, 1e12, &s->base);
    if (strcmp(key, "layout") == 0) {
        if (strcmp(val, "interleaved") == 0) s->half_layout = 0;
        else if (strcmp(val, "half") == 0) s->half_layout = 1;
        else return pelab_fail("--pos rope: option layout=%s: expected interleaved or half", val);
        return 0;
    }
    return pelab_fail("--pos rope: unknown option '%s' (expected base=F, layout=interleaved|half)", key);
}

static int rope_prepare(PosCtx *pc) {
    Rope *s = pc->state;
    int n = pc->head_dim / 2;
    double *freq = xmalloc(sizeof(double) * n);
    for (int j = 0; j < n; j++) freq[j] = pow(s->base, -2.0 * j / pc->head_dim);
    sincos_table_init(&s->table, freq, n);
    free(freq);
    return 0;
}

static void rope_describe(const PosCtx *pc, char *buf, size_t n) {
    const Rope *s = pc->state;
    snprintf(buf, n, "base=%.17g,layout=%s", s->base, s->half_layout ? "half" : "interleaved");
}

static int rope_reserve(PosCtx *pc, long n_positions) {
    return sincos_table_reserve(&((Rope *)pc->state)->table, n_positions);
}

/* sin_sign +1: forward rotation R(phi); -1: its transpose R(-phi), the backward */
static void rope_apply(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, float sin_sign) {
    const Rope *s = pc->state;
    const SinCosTable *t = &s->table;
    int hd = pc->head_dim, np = hd / 2;
    int stride_pair = s->half_layout ? 1 : 2, offset_second = s->half_layout ? np : 1;
#pragma omp parallel for
    for (int r = 0; r < n; r++) {
        const float *c = t->cos_t + (size_t)pos[r] * np, *sn = t->sin_t + (size_t)pos[r] * np;
        for (int h = 0; h < n_heads; h++) {
            float *x = v + ((size_t)r * n_heads + h) * hd;
            for (int j = 0; j < np; j++) {
                float *a = x + j * stride_pair, *b = a + offset_second;
                float cs = c[j], si = sin_sign * sn[j], x0 = *a, x1 = *b;
                *a = x0 * cs - x1 * si;
                *b = x0 * si + x1 * cs;
            }
        }
    }
}

static void rope_qk_forward(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer) {
    (void)is_key, (void)layer;
    rope_apply(pc, v, pos, n, n_heads, 1.0f);
}

static void rope_qk_backward(const PosCtx *pc, float *dv, const int *pos, int n, int n_heads, int is_key,
                             int layer) {
    (void)is_key, (void)layer;
    rope_apply(pc, dv, pos, n, n_heads, -1.0f);
}

static void rope_destroy(PosCtx *pc) {
    Rope *s = pc->state;
    if (s) sincos_table_free(&s->table);
    free(s);
}

const PosScheme pos_rope = {
    .name = "rope",
    .options_help = "base=F (default 10000), layout=interleaved|half (default interleaved)",
    .create = rope_create,
    .set_option = rope_set_option,
    .prepare = rope_prepare,
    .describe = rope_describe,
    .reserve = rope_reserve,
    .qk_forward = rope_qk_forward,
    .qk_backward = rope_qk_backward,
    .destroy = rope_destroy,
};
