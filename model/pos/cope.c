/* cope.c: CoPE, contextual position encoding (Golovneva et al. 2024, arXiv 2405.18719).
 * A query counts positions with gates on its own scores instead of reading position ids:
 *     g_ij = sigmoid(s_ij)                 s_ij = q_i . k_j / sqrt(d), before any bias
 *     p_ij = sum_{m = j..i} g_im           (so p_ii = g_ii, and p grows toward older keys)
 *     p_ij = min(p_ij, npos - 1)
 *     s_ij += z_i[floor p] (1 - w) + z_i[ceil p] w,   w = p - floor p,   z_i[n] = q_i . e[n]
 * with e a learned [npos, head_dim] table of position embeddings, one per layer (heads=shared, the
 * authors' code: pos_emb of shape [1, head_dim, npos_max] per attention module) or one per layer
 * and head (heads=separate). As in that code, z uses the query before the 1/sqrt(d) scaling, the
 * gates read the scaled scores, and e starts at zero (the gates then carry no gradient until e
 * moves, which the first step does: de = dz q).
 *
 * The hook sees no position ids at all: p comes from the row's order (oldest key first) and the
 * causal limit, so the scheme accepts any position and keeps no table that grows with length.
 * A row's z entries are computed on demand, in the order the suffix sum needs them: at most
 * min(npos, ceil(p_i0) + 1) dot products of head_dim per query. */
#include <math.h>
#include <string.h>

#include "../../core/error.h"
#include "../fastmath.h"
#include "pos.h"

enum { COPE_MAX_POS = 4096 }; /* z lives on the stack */

typedef struct {
    int npos;     /* positions with an embedding: p is capped at npos - 1 */
    int separate; /* 1: one table per (layer, head); 0: per layer, shared by its heads */
} Cope;

static const PosOption cope_options[] = {
    POS_INT("npos", Cope, npos, 0, 2, COPE_MAX_POS,
            "positions with a learned embedding; p is capped at N-1",
            .flags = POS_OPT_TRAIN_LEN),
    POS_WORD("heads", Cope, separate, 0, "one embedding table per layer shared by its heads (the authors' code), or one per head",
             "shared", "separate"),
};

static int cope_prepare(PosCtx *pc) {
    const Cope *c = pc->state;
    if (c->npos < 2 || c->npos > COPE_MAX_POS)
        return pelab_fail("--pos cope: npos=%d: expected 2..%d", c->npos, COPE_MAX_POS);
    return 0;
}

static int cope_tables_per_layer(const PosCtx *pc) { return ((const Cope *)pc->state)->separate ? pc->n_heads : 1; }

static void cope_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    const Cope *c = pc->state;
    *ndim = 3; /* [layer, head if separate] flattened in the first dimension */
    shape[0] = pc->n_layers * cope_tables_per_layer(pc), shape[1] = c->npos, shape[2] = pc->head_dim;
}

/* e: [npos, head_dim] of this layer and head */
static size_t cope_table(const PosCtx *pc, int layer, int head) {
    const Cope *c = pc->state;
    int tables = cope_tables_per_layer(pc);
    return ((size_t)layer * tables + (tables > 1 ? head : 0)) * c->npos * pc->head_dim;
}

static void cope_init_params(const PosCtx *pc, float *params, Rng *rng) {
    (void)rng; /* zeros, as the authors' code */
    int nd, shape[4];
    cope_param_shape(pc, &nd, shape);
    memset(params, 0, (size_t)shape[0] * shape[1] * shape[2] * sizeof(float));
}

/* 8 partial sums, so the loop vectorizes (a fixed order: the same result on every call) */
static inline float dot(const float *a, const float *b, int n) {
    float part[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int u = 0; u < 8; u++) part[u] += a[i + u] * b[i + u];
    float s = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

enum { COPE_CHUNK = 64 }; /* gates are computed a chunk of keys at a time, vectorized */

/* g[i] = sigmoid(scores[i]) for i < n. One out-of-line copy, so the forward and the backward
 * compute bit for bit the same gates. */
__attribute__((noinline)) static void gates(const float *scores, int n, float *g) {
    for (int i = 0; i < n; i++) g[i] = 1.0f / (1.0f + fast_expf(-scores[i]));
}

/* the chunk of keys [*start, end) walked next from the newest key down, its gates in g */
static inline int next_chunk(const float *scores, int end, float *g) {
    int start = end > COPE_CHUNK ? end - COPE_CHUNK : 0;
    gates(scores + start, end - start, g);
    return start;
}

/* Key j's capped position from the suffix sum acc (keys j..end): floor fl, ceiling ce, weight w.
 * Forward and backward walk the row the same way, so they see the same p bit for bit. */
typedef struct {
    int fl, ce, capped;
    float w;
} CopePos;

static inline CopePos cope_pos(float acc, int npos) {
    float cap = (float)(npos - 1);
    CopePos r = {.capped = !(acc < cap)};
    float p = r.capped ? cap : acc;
    r.fl = (int)p;
    r.w = p - (float)r.fl;
    r.ce = r.w > 0.0f ? r.fl + 1 : r.fl;
    return r;
}

/* z[n] = q . e[n] for n < needed, extending the count *have */
static inline void extend_z(float *z, int *have, int needed, const float *q, const float *e, int hd) {
    for (; *have < needed; (*have)++) z[*have] = dot(q, e + (size_t)*have * hd, hd);
}

static void cope_content_row(const PosCtx *pc, float *row, const float *q, int nk, int head, int layer) {
    const Cope *c = pc->state;
    int hd = pc->head_dim, have = 0;
    const float *e = pc->params + cope_table(pc, layer, head);
    float z[COPE_MAX_POS], g[COPE_CHUNK], acc = 0.0f;
    for (int end = nk; end > 0;) {
        int start = next_chunk(row, end, g);
        for (int j = end - 1; j >= start; j--) {
            acc += g[j - start];
            CopePos p = cope_pos(acc, c->npos);
            extend_z(z, &have, p.ce + 1, q, e, hd);
            row[j] += z[p.fl] + p.w * (z[p.ce] - z[p.fl]);
        }
        end = start;
    }
}

/* With t_j = z[fl] + w (z[ce] - z[fl]) added to s_j, and D_j = d(loss)/d(s_j after):
 *   dz[fl] += D_j (1 - w), dz[ce] += D_j w         -> dq += sum_n dz[n] e[n], de[n] += dz[n] q
 *   dp_j = D_j (z[ce] - z[fl]), 0 where p is capped
 *   dg_m = sum_{j <= m} dp_j (p_j sums the gates from j on), ds_m += dg_m g_m (1 - g_m)
 * The walk runs from the newest key like the forward's; the prefix sum over j <= m is the total
 * minus the suffix after m, so a first walk finds the total and a second applies it. */
static void cope_content_backward(const PosCtx *pc, const PosContentGrad *grad) {
    float *drow = grad->drow, *dq = grad->dq, *dparams = grad->dparams;
    const float *scores = grad->scores, *q = grad->q;
    int nk = grad->nk, head = grad->head, layer = grad->layer;
    const Cope *c = pc->state;
    int hd = pc->head_dim, have = 0;
    size_t table = cope_table(pc, layer, head);
    const float *e = pc->params + table;
    float z[COPE_MAX_POS], dz[COPE_MAX_POS], g[COPE_CHUNK], acc = 0.0f;
    double dp_total = 0.0;
    for (int end = nk; end > 0;) {
        int start = next_chunk(scores, end, g);
        for (int j = end - 1; j >= start; j--) {
            acc += g[j - start];
            CopePos p = cope_pos(acc, c->npos);
            extend_z(z, &have, p.ce + 1, q, e, hd);
            if (!p.capped) dp_total += (double)drow[j] * (z[p.ce] - z[p.fl]);
        }
        end = start;
    }
    memset(dz, 0, (size_t)have * sizeof(float));
    double dp_after = 0.0; /* sum of dp over the keys newer than j */
    acc = 0.0f;
    for (int end = nk; end > 0;) {
        int start = next_chunk(scores, end, g);
        for (int j = end - 1; j >= start; j--) {
            float gj = g[j - start], d = drow[j];
            acc += gj;
            CopePos p = cope_pos(acc, c->npos);
            dz[p.fl] += d * (1.0f - p.w);
            dz[p.ce] += d * p.w;
            double dp = p.capped ? 0.0 : (double)d * (z[p.ce] - z[p.fl]);
            double dg = dp_total - dp_after; /* sum over keys j' <= j */
            dp_after += dp;
            drow[j] = d + (float)dg * gj * (1.0f - gj);
        }
        end = start;
    }
    float *de = dparams ? dparams + table : NULL;
    for (int n = 0; n < have; n++) {
        if (dz[n] == 0.0f) continue;
        const float *en = e + (size_t)n * hd;
        for (int i = 0; i < hd; i++) dq[i] += dz[n] * en[i];
        if (de)
            for (int i = 0; i < hd; i++) de[(size_t)n * hd + i] += dz[n] * q[i];
    }
}

const PosScheme pos_cope = {
    .name = "cope",
    .caps = POS_CAP_LEARNED | POS_CAP_KINKED,
    POS_OPTIONS(cope_options),
    .state_size = sizeof(Cope),
    .test_specs = {"cope:heads=separate", "cope:npos=3"},
    .prepare = cope_prepare,
    .param_shape = cope_param_shape,
    .init_params = cope_init_params,
    .content_row = cope_content_row,
    .content_backward = cope_content_backward,
};
