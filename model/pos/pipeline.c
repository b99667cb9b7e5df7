#include "pipeline.h"

#include <math.h>
#include <string.h>

#include "../../core/blas.h"
#include "../../core/error.h"
#include "../dot_rows.h"

int pos_key_copies(const PosCtx *pc) { return extend_two_branch(&pc->extend) ? 2 : 1; }

/* the far branch never runs in a NoPE layer */
int pos_layer_copies(const PosCtx *pc, int layer) {
    return pos_key_copies(pc) > 1 && pos_layer_active(pc, layer) ? 2 : 1;
}

/* the length scale applies in this layer (layers=nope: only in NoPE layers) */
static int attn_scaled(const PosCtx *pc, int layer) {
    return pc->attn_scale.kind != ATTN_SCALE_NONE && (!pc->attn_scale.nope_only || !pos_layer_active(pc, layer));
}

void pos_map_keys(const PosCtx *pc, int layer, float *k, const int *pos, int n) {
    if (pc->scheme->qk_forward && pos_layer_active(pc, layer) && n > 0)
        pc->scheme->qk_forward(pc, k, pos, n, pc->n_kv_heads, 1, layer);
}

void pos_layer_map(const PosCtx *pc, int layer, const PosLayerRows *r) {
    const PosScheme *ps = pc->scheme;
    int n = r->n, H = r->n_heads, KVH = r->n_kv_heads, qdim = H * r->head_dim, kvdim = KVH * r->head_dim;
    if (r->k_unmapped) memcpy(r->k_unmapped, r->k, (size_t)n * kvdim * sizeof(float));
    int two = r->q2 && pos_layer_copies(pc, layer) > 1;
    if (two) { /* copy 1: the same projections at the far branch's positions (extend.h) */
        const PosExtend *e = &pc->extend;
        const PosCtx *fc = pos_far_ctx(pc);
        memcpy(r->q2, r->q, (size_t)n * qdim * sizeof(float));
        memcpy(r->k2, r->k, (size_t)n * kvdim * sizeof(float));
        for (int i = 0; i < n; i++) r->copy_pos[i] = extend_far_qpos(e, r->pos[i]);
        ps->qk_forward(fc, r->q2, r->copy_pos, n, H, 0, layer); // (n, H*hd) rotated at far query positions
        for (int i = 0; i < n; i++) r->copy_pos[i] = extend_far_kpos(e, r->pos[i]);
        ps->qk_forward(fc, r->k2, r->copy_pos, n, KVH, 1, layer); // (n, KVH*hd) at far key positions
    }
    if (ps->qk_forward && pos_layer_active(pc, layer)) {
        ps->qk_forward(pc, r->q, r->pos, n, H, 0, layer);
        ps->qk_forward(pc, r->k, r->pos, n, KVH, 1, layer);
    }
    if (attn_scaled(pc, layer)) { /* queries only, by their real position: keys stay cacheable */
        attn_scale_apply(&pc->attn_scale, r->q, r->pos, n, H, r->head_dim, layer);
        if (two) attn_scale_apply(&pc->attn_scale, r->q2, r->pos, n, H, r->head_dim, layer);
    }
}

int pos_backward_needs_q(const PosCtx *pc, int layer) {
    return attn_scaled(pc, layer) && attn_scale_learned(&pc->attn_scale);
}

void pos_layer_backward(const PosCtx *pc, int layer, const PosLayerGrads *g) {
    const PosScheme *ps = pc->scheme;
    int active = ps->qk_forward && pos_layer_active(pc, layer), n = g->n, H = g->n_heads;
    if (attn_scaled(pc, layer)) {
        if (pos_backward_needs_q(pc, layer)) {
            /* ds needs q before the scaling: mapped again from the projections (a->q holds f q, and
             * dividing by s is unstable near 0) */
            if (active) ps->qk_forward(pc, g->q_proj, g->pos, n, H, 0, layer);
            attn_scale_backward_s(g->dq, g->q_proj, g->pos, n, H, g->head_dim, g->d_attn_scale);
        }
        attn_scale_apply(&pc->attn_scale, g->dq, g->pos, n, H, g->head_dim, layer); /* q' = f q: dq = f dq' */
    }
    if (ps->qk_backward_mapped && pos_layer_active(pc, layer)) {
        ps->qk_backward_mapped(pc, g->dq, g->q_mapped, g->pos, n, H, 0, layer, g->dpos);
        ps->qk_backward_mapped(pc, g->dk, g->k_mapped, g->pos, n, g->n_kv_heads, 1, layer, g->dpos);
    }
    if (ps->qk_backward && pos_layer_active(pc, layer)) {
        ps->qk_backward(pc, g->dq, g->pos, n, H, 0, layer);
        ps->qk_backward(pc, g->dk, g->pos, n, g->n_kv_heads, 1, layer);
    }
}

/* the scores of the keys that the block's queries see through the far branch replaced by q2 . k2
 * (scaled). Far keys are those at least W positions behind the query; only the keys up to the
 * last one any query of the block sees as far are multiplied. */
static void merge_far(const PosCtx *pc, const AttnHead *h, const ScoreBlock *b) {
    const PosExtend *e = &pc->extend;
    int i0 = b->i0, i1 = b->i1, qmax = h->qpos[i0], n_far = 0;
    float scale = 1.0f / sqrtf((float)h->hd); /* as attention scales q.k */
    for (int i = i0 + 1; i < i1; i++) qmax = h->qpos[i] > qmax ? h->qpos[i] : qmax;
    for (int j = h->kstart; j < b->n_keys; j++)
        if (!extend_near(e, qmax, h->kpos[j])) n_far = j + 1;
    if (n_far == 0) return;
    float *F = h->copy_scratch;
    const float *q = h->q2 + (size_t)i0 * h->ldq;
    // (i1-i0, hd) x (n_far, hd)^T -> (i1-i0, n_far)
    if (i1 - i0 == 1) dot_rows(h->k2, h->ldkv, n_far, q, h->hd, scale, F);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, i1 - i0, n_far, h->hd, scale, q, h->ldq, h->k2, h->ldkv,
                    0.0f, F, n_far);
    for (int i = i0; i < i1; i++) {
        int end = head_visible_end(h, i) < n_far ? head_visible_end(h, i) : n_far;
        float *row = b->S + (size_t)(i - i0) * b->lds;
        const float *far = F + (size_t)(i - i0) * n_far;
        for (int j = h->kstart; j < end; j++)
            if (!extend_near(e, h->qpos[i], h->kpos[j])) row[j] = far[j];
    }
}

/* the key index of query i's own row: q_offset + i, or without a causal mask (q_offset >= nk) the
 * queries are the last nq keys */
static int own_key(const AttnHead *h, int i) { return (h->q_offset < h->nk ? h->q_offset : h->nk - h->nq) + i; }

void pos_score_block(const PosCtx *pc, const AttnHead *h, const ScoreBlock *b) {
    if (h->q2 && h->copy_scratch) merge_far(pc, h, b);
    if (!pc || !pos_layer_active(pc, h->layer)) return; /* +nope@: no position in this layer */
    int ks = h->kstart; /* padding keys never reach a bias (keys past a sliding window do: attention gives them no weight) */
    if (pc->scheme->content_row)
        for (int i = b->i0; i < b->i1; i++) {
            int n = head_visible_end(h, i) - ks;
            float *row = b->S + (size_t)(i - b->i0) * b->lds + ks;
            if (n <= 0) continue;
            if (b->raw) memcpy(b->raw + (size_t)(i - b->i0) * b->lds + ks, row, (size_t)n * sizeof(float));
            pc->scheme->content_row(pc, row, h->q + (size_t)i * h->ldq, n, h->head, h->layer);
        }
    if (h->gate) /* FoX: + c_i - c_j, the log forget gates between key and query summed */
        for (int i = b->i0; i < b->i1; i++) {
            int end = head_visible_end(h, i);
            float ci = h->gate[(size_t)own_key(h, i) * h->ldg];
            float *row = b->S + (size_t)(i - b->i0) * b->lds;
            for (int j = ks; j < end; j++) row[j] += ci - h->gate[(size_t)j * h->ldg];
        }
    if (pc->scheme->bias_row)
        for (int i = b->i0; i < b->i1; i++) {
            int n = head_visible_end(h, i) - ks;
            if (n > 0)
                pc->scheme->bias_row(pc, b->S + (size_t)(i - b->i0) * b->lds + ks, h->qpos[i], h->kpos + ks, n, h->head,
                                     h->layer);
        }
}

int pos_score_needs_raw(const PosCtx *pc, int layer) {
    return pc && pc->scheme->content_backward && (layer < 0 || pos_layer_active(pc, layer));
}

int pos_score_has_grad(const PosCtx *pc) {
    return pc && (pc->scheme->bias_backward || pc->scheme->content_backward);
}

void pos_score_row_backward(const PosCtx *pc, const AttnHead *h, const PosRowGrad *g) {
    if (!pc || !pos_layer_active(pc, h->layer)) return;
    const PosScheme *ps = pc->scheme;
    if (h->dgate) { /* d(c_i - c_j): + the row's sum at the query's own key, - each entry at its key */
        float sum = 0.0f, *dg = h->dgate;
        for (int j = 0; j < g->n; j++) {
            sum += g->drow[j];
            dg[(size_t)(g->first + j) * h->ldg] -= g->drow[j];
        }
        dg[(size_t)own_key(h, g->i) * h->ldg] += sum;
    }
    if (g->dpos && ps->bias_backward)
        ps->bias_backward(pc, g->drow, h->qpos[g->i], h->kpos + g->first, g->n, h->head, h->layer, g->dpos);
    /* the content bias's gradient flows into the scores themselves (and q), parameters or not */
    if (g->raw && ps->content_backward)
        ps->content_backward(pc, &(PosContentGrad){.drow = g->drow, .scores = g->raw,
                                                   .q = h->q + (size_t)g->i * h->ldq, .dq = g->dq, .dparams = g->dpos,
                                                   .nk = g->n, .head = h->head, .layer = h->layer});
}

int pos_has_gate(const PosCtx *pc, int layer) { return pc && pc->scheme->gate_forward && pos_layer_active(pc, layer); }

void pos_gate_forward(const PosCtx *pc, int layer, const float *x, int n, int n_pad, const float *prev, float *c) {
    int H = pc->n_heads;
    pc->scheme->gate_forward(pc, layer, x, n, c); /* log f in place, then summed down the rows */
    for (size_t i = 0; i < (size_t)(n_pad < n ? n_pad : n) * H; i++) c[i] = 0.0f;
    for (int t = 0; t < n; t++)
        for (int h = 0; h < H; h++) c[(size_t)t * H + h] += t ? c[(size_t)(t - 1) * H + h] : prev ? prev[h] : 0.0f;
}

void pos_gate_backward(const PosCtx *pc, int layer, const float *x, int n, float *dc, float *dx, float *dparams) {
    int H = pc->n_heads;
    for (int t = n - 2; t >= 0; t--) /* c_t sums logf_l for l <= t: d logf_l = sum_{t >= l} dc_t */
        for (int h = 0; h < H; h++) dc[(size_t)t * H + h] += dc[(size_t)(t + 1) * H + h];
    pc->scheme->gate_backward(pc, layer, x, dc, n, dx, dparams);
}

float pos_sink_logit(const PosCtx *pc, int layer, int head) {
    return pc ? sinks_logit(&pc->sinks, layer, head, pc->n_heads) : -INFINITY;
}

PosCachePolicy pos_cache_policy(const PosCtx *pc) { return extend_cache_policy(&pc->extend); }

int pos_cache_refuse_batch(const PosCtx *pc, int n_seq) {
    char method[64];
    extend_describe(&pc->extend, method, sizeof method);
    return pelab_fail("%s: a streaming cache holds one sequence; decode these %d one at a time", method, n_seq);
}

int pos_check_full_forward(const PosCtx *pc) {
    char method[64];
    extend_describe(&pc->extend, method, sizeof method);
    if (pc->extend.method && pc->extend.method->cache_only)
        return pelab_fail("%s works through the KV-cache decoder (sample, score, eval); a full forward has no cache "
                          "to slide", method);
    return 0;
}
