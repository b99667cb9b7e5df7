#include "attention.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/blas.h"
#include "../core/mem.h"
#include "../core/sys.h"
#include "dot_rows.h"
#include "fastmath.h"
#include "pattern.h"

/* softmax of row[0..n) in place, returning the row's max and 1/sum for the backward's
 * recomputation; every loop vectorizes (8 partial sums: a fixed order, so the result does not
 * depend on the thread count) */
static void softmax_row(float *row, int n, float sink, float *row_max, float *row_inv_sum) {
    float mx = max8(row, n);
    if (sink > mx) mx = sink; /* a learned sink (pos_sink_logit): one more term in the denominator only */
    for (int j = 0; j < n; j++) row[j] = fast_expf(row[j] - mx);
    float part[8] = {0};
    if (sink > -INFINITY) part[0] = fast_expf(sink - mx);
    int j = 0;
    for (; j + 8 <= n; j += 8)
        for (int u = 0; u < 8; u++) part[u] += row[j + u];
    for (; j < n; j++) part[0] += row[j];
    float sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++) row[j] *= inv;
    *row_max = mx;
    *row_inv_sum = inv;
}

AttnHead attention_head(const Attention *a, int b, int h) {
    int hd = a->head_dim, qdim = a->n_heads * hd, kvdim = a->n_kv_heads * hd;
    int kvh = h / (a->n_heads / a->n_kv_heads);
    size_t seq_rows = a->kv_stride ? a->kv_stride : a->nk;
    size_t qrow = (size_t)b * a->nq, krow = (size_t)b * seq_rows, head_rows = ((size_t)b * a->n_heads + h) * a->nq;
    /* where kv head kvh of sequence b starts in k, v, k2, and its row stride */
    size_t kv_at = a->kv_head_major ? ((size_t)b * a->n_kv_heads + kvh) * seq_rows * hd : krow * kvdim + kvh * hd;
    int ldkv = a->kv_head_major ? hd : kvdim;
    return (AttnHead){.q = a->q + qrow * qdim + h * hd, .k = a->k ? a->k + kv_at : NULL,
                      .q2 = a->q2 ? a->q2 + qrow * qdim + h * hd : NULL, .k2 = a->q2 ? a->k2 + kv_at : NULL,
                      .v = a->v ? a->v + kv_at : NULL, .k16 = a->k16 ? a->k16 + kv_at : NULL,
                      .v16 = a->v16 ? a->v16 + kv_at : NULL, .out = a->out + qrow * qdim + h * hd,
                      .probs = a->probs ? a->probs + head_rows * a->nk : NULL,
                      .stats = a->stats ? a->stats + head_rows * 2 : NULL, .ldq = qdim, .ldkv = ldkv,
                      .qpos = a->qpos + qrow, .kpos = a->kpos + krow, .nq = a->nq, .nk = a->nk,
                      .q_offset = a->q_offset, .kstart = a->kstart ? a->kstart[b] : 0, .window = a->window, .chunk = a->chunk,
                      .gate = a->gate ? a->gate + krow * a->n_heads + h : NULL,
                      .dgate = a->dgate ? a->dgate + krow * a->n_heads + h : NULL, .ldg = a->n_heads,
                      .hd = hd, .head = h,
                      .layer = a->layer};
}

/* the first key query i sees: past the padding and, under a sliding window or a chunk, past the
 * keys at positions before the earliest it sees (binary search: key positions ascend) */
static inline int first_key(const AttnHead *a, int i) {
    int lo = a->kstart, hi = head_visible_end(a, i);
    if (a->window <= 0 && a->chunk <= 0) return lo;
    long first = layer_first_visible(&(LayerAttn){.window = a->window, .chunk = a->chunk}, a->qpos[i]);
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a->kpos[mid] < first) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* the first key any query of the block i0..i1-1 sees: the block's products start there. 0 under a
 * content bias (CoPE counts over every key before its query, those behind a window included) */
static int block_first_key(const AttnHead *a, const PosCtx *pc, int i0, int i1) {
    if ((a->window <= 0 && a->chunk <= 0) || (pc && pc->scheme->content_row && pos_layer_active(pc, a->layer)))
        return 0;
    int k0 = first_key(a, i0);
    for (int i = i0 + 1; i < i1 && k0 > 0; i++) {
        int f = first_key(a, i);
        k0 = f < k0 ? f : k0;
    }
    /* a block that sees no key at all (left padding past every query) is left to the row masks */
    return k0 < head_visible_end(a, i1 - 1) ? k0 : 0;
}

/* the view without its first k0 keys: key index j of it is key k0 + j of a */
static AttnHead skip_keys(const AttnHead *a, int k0) {
    AttnHead h = *a;
    size_t at = (size_t)k0 * a->ldkv;
    if (h.k) h.k += at;
    if (h.v) h.v += at;
    if (h.k2) h.k2 += at;
    if (h.k16) h.k16 += at;
    if (h.v16) h.v16 += at;
    /* FoX's running sums follow the keys (query i's own stays at key index q_offset + i) */
    if (h.gate) h.gate += (size_t)k0 * a->ldg;
    if (h.dgate) h.dgate += (size_t)k0 * a->ldg;
    h.kpos += k0, h.nk -= k0, h.q_offset -= k0;
    h.kstart = a->kstart > k0 ? a->kstart - k0 : 0;
    return h;
}

/* n rows of hd bf16 (a head of a bf16 cache: contiguous) as float32 in dst, for a block of queries */
static const float *widen(float *dst, const bf16 *src, int n, int hd) {
    for (size_t i = 0; i < (size_t)n * hd; i++) dst[i] = bf16_to_float(src[i]);
    return dst;
}

/* the block's scores (head_view.h's ScoreBlock), scaled, adjusted for position (pos_score_block);
 * entries a row may not see are left as they are */
static void block_scores(const AttnHead *a, const PosCtx *pc, const ScoreBlock *b) {
    float scale = 1.0f / sqrtf((float)a->hd);
    int i0 = b->i0, i1 = b->i1, n_keys = b->n_keys;
    const float *q = a->q + (size_t)i0 * a->ldq;
    // (i1-i0, hd) x (n_keys, hd)^T -> (i1-i0, n_keys); one query (decoding): dot_rows, no BLAS call
    if (i1 - i0 == 1 && a->k16) dot_rows_bf16(a->k16, a->ldkv, n_keys, q, a->hd, scale, b->S);
    else if (i1 - i0 == 1) dot_rows(a->k, a->ldkv, n_keys, q, a->hd, scale, b->S);
    else
        blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, i1 - i0, n_keys, a->hd, scale, q, a->ldq,
                   a->k16 ? widen(a->wide, a->k16, n_keys, a->hd) : a->k, a->ldkv, 0.0f, b->S, b->lds);
    pos_score_block(pc, a, b);
}

/* queries i0..i1-1: softmax rows into S (stride lds; zero from each row's limit to fill_to),
 * their stats, and out = P V */
static void score_block_forward(const AttnHead *whole, const PosCtx *pc, int i0, int i1, float *S, int lds,
                                int fill_to) {
    /* the keys no query of the block sees: weight exactly 0, never multiplied */
    int k0 = block_first_key(whole, pc, i0, i1);
    AttnHead view = k0 ? skip_keys(whole, k0) : *whole;
    const AttnHead *a = &view;
    if (k0) {
        for (int i = i0; i < i1; i++) memset(S + (size_t)(i - i0) * lds, 0, (size_t)k0 * sizeof(float));
        S += k0, fill_to -= k0;
    }
    int n_keys = head_visible_end(a, i1 - 1), nb = i1 - i0;
    float sink = pos_sink_logit(pc, a->layer, a->head);
    block_scores(a, pc, &(ScoreBlock){.i0 = i0, .i1 = i1, .n_keys = n_keys, .S = S, .lds = lds});
    for (int i = i0; i < i1; i++) {
        float *row = S + (size_t)(i - i0) * lds, mx = 0.0f, inv = 0.0f;
        /* a chunk may end before a long padding does: the row holds fill_to entries */
        int n_visible = head_visible_end(a, i), ks = first_key(a, i) < fill_to ? first_key(a, i) : fill_to;
        if (n_visible > ks) softmax_row(row + ks, n_visible - ks, sink, &mx, &inv);
        else n_visible = ks; /* a padding query: all zeros */
        for (int j = 0; j < ks; j++) row[j] = 0.0f; /* padding (and keys past a window) get exactly zero weight */
        for (int j = n_visible; j < fill_to; j++) row[j] = 0.0f; /* so does the future */
        if (a->stats) a->stats[2 * i] = mx, a->stats[2 * i + 1] = inv;
    }
    float *out = a->out + (size_t)i0 * a->ldq;
    if (nb == 1 && a->v16) weighted_rows_bf16(a->v16, a->ldkv, n_keys, S, a->hd, out);
    else if (nb == 1) weighted_rows(a->v, a->ldkv, n_keys, S, a->hd, out);
    else
        blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, a->hd, n_keys, 1.0f, S, lds,
                   a->v16 ? widen(a->wide + (size_t)a->nk * a->hd, a->v16, n_keys, a->hd) : a->v, a->ldkv, 0.0f,
                    out, a->ldq);
}

/* query block `blk` of one head: into the kept probs rows, or into the scratch */
static void head_block_forward(const AttnHead *a, const PosCtx *pc, int blk) {
    int i0 = blk * ATT_QBLOCK, i1 = i0 + ATT_QBLOCK < a->nq ? i0 + ATT_QBLOCK : a->nq;
    if (a->probs) score_block_forward(a, pc, i0, i1, a->probs + (size_t)i0 * a->nk, a->nk, a->nk);
    else score_block_forward(a, pc, i0, i1, a->scratch, a->nk, head_visible_end(a, i1 - 1));
}

static int n_blocks(int nq) { return (nq + ATT_QBLOCK - 1) / ATT_QBLOCK; }

void attention_head_forward(const AttnHead *a, const PosCtx *pc) {
    for (int blk = 0; blk < n_blocks(a->nq); blk++) head_block_forward(a, pc, blk);
}

/* a bf16 cache read by a block of queries: its keys and values widened (one query reads them in place) */
static float *wide_scratch(const Attention *a) {
    return (a->k16 || a->v16) && a->nq > 1 ? xmalloc(2 * (size_t)a->nk * a->head_dim * sizeof(float)) : NULL;
}

void attention_forward(const Attention *a, const PosCtx *pc) {
    size_t work = (size_t)a->n_seq * a->nq * a->nk * a->n_heads * a->head_dim;
    int nblk = n_blocks(a->nq), rows = a->nq < ATT_QBLOCK ? a->nq : ATT_QBLOCK;
    if (work < PAR_MIN_WORK) { /* no region at all: even an inactive one costs a syscall (core/sys.h) */
        float *scratch = a->probs ? NULL : xmalloc((size_t)rows * a->nk * sizeof(float));
        float *copy = a->q2 ? xmalloc((size_t)rows * a->nk * sizeof(float)) : NULL, *wide = wide_scratch(a);
        for (int b = 0; b < a->n_seq; b++)
            for (int h = 0; h < a->n_heads; h++) {
                AttnHead head = attention_head(a, b, h);
                head.scratch = scratch, head.copy_scratch = copy, head.wide = wide;
                attention_head_forward(&head, pc);
            }
        free(scratch), free(copy), free(wide);
        return;
    }
#pragma omp parallel
    {
        float *scratch = a->probs ? NULL : xmalloc((size_t)rows * a->nk * sizeof(float));
        float *copy = a->q2 ? xmalloc((size_t)rows * a->nk * sizeof(float)) : NULL, *wide = wide_scratch(a);
        /* dynamic: under the causal mask a late block costs more than an early one */
#pragma omp for collapse(3) schedule(dynamic)
        for (int b = 0; b < a->n_seq; b++)
            for (int h = 0; h < a->n_heads; h++)
                for (int blk = 0; blk < nblk; blk++) {
                    AttnHead head = attention_head(a, b, h);
                    head.scratch = scratch, head.copy_scratch = copy, head.wide = wide;
                    head_block_forward(&head, pc, blk);
                }
        free(scratch), free(copy), free(wide);
    }
}

/* where one head's gradients go: its dq rows (overwritten), its kv head's dk and dv rows
 * (accumulated over every block and every query head of the group; kv_beta 0: overwritten, the
 * first block of the group's first head), the bias parameters' (dpos, NULL: not wanted) */
typedef struct {
    const float *dO;
    float *dq, *dk, *dv;
    float kv_beta;
    float *dpos;
    float *dsinks; /* NULL, or the layer's [n_heads] sink gradients (this thread's) */
} HeadGrads;

/* one thread's room for a block's backward: P, dS [ATT_QBLOCK x nk]; raw [ATT_QBLOCK x nk] and
 * dq_content [ATT_QBLOCK x hd] only for a content bias (pos_score_needs_raw) */
typedef struct {
    float *P, *dS, *raw, *dq_content;
} BlockScratch;

/* the gradients of queries i0..i1-1 of one head */
static void head_block_backward(const AttnHead *whole, const PosCtx *pc, int i0, int i1, const HeadGrads *whole_g,
                                const BlockScratch *w) {
    /* as the forward: only the keys some query of the block sees */
    int k0 = block_first_key(whole, pc, i0, i1);
    AttnHead view = k0 ? skip_keys(whole, k0) : *whole;
    const AttnHead *hv = &view;
    HeadGrads shifted = *whole_g;
    const HeadGrads *g = &shifted;
    if (k0) {
        if (whole_g->kv_beta == 0.0f) /* the keys skipped by the block that writes (rather than adds to) them */
            for (int j = 0; j < k0; j++) {
                memset(whole_g->dk + (size_t)j * whole->ldkv, 0, whole->hd * sizeof(float));
                memset(whole_g->dv + (size_t)j * whole->ldkv, 0, whole->hd * sizeof(float));
            }
        shifted.dk += (size_t)k0 * whole->ldkv, shifted.dv += (size_t)k0 * whole->ldkv;
    }
    int nb = i1 - i0, n_keys = head_visible_end(hv, i1 - 1), lds = n_keys, hd = hv->hd;
    float scale = 1.0f / sqrtf((float)hd), *P = w->P, *dS = w->dS;
    const float *dOb = g->dO + (size_t)i0 * hv->ldq, *qb = hv->q + (size_t)i0 * hv->ldq;
    /* P from the forward's max and 1/sum: the same operations on the same scores, so bit for bit
     * the forward's probabilities */
    int content = pos_score_needs_raw(pc, hv->layer);
    block_scores(hv, pc, &(ScoreBlock){.i0 = i0, .i1 = i1, .n_keys = n_keys, .S = P, .lds = lds,
                                       .raw = content ? w->raw : NULL});
    if (content) memset(w->dq_content, 0, (size_t)nb * hd * sizeof(float));
    for (int i = i0; i < i1; i++) {
        float *row = P + (size_t)(i - i0) * lds, mx = hv->stats[2 * i], inv = hv->stats[2 * i + 1];
        int n_visible = head_visible_end(hv, i), ks = first_key(hv, i) < n_visible ? first_key(hv, i) : n_visible;
        for (int j = 0; j < ks; j++) row[j] = 0.0f;
        for (int j = ks; j < n_visible; j++) row[j] = fast_expf(row[j] - mx) * inv;
        for (int j = n_visible; j < n_keys; j++) row[j] = 0.0f;
    }
    /* dV += P^T dO ; dP = dO V^T */
    blas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_keys, hd, nb, 1.0f, P, lds, dOb, hv->ldq, g->kv_beta, g->dv,
                hv->ldkv);
    blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, n_keys, hd, 1.0f, dOb, hv->ldq, hv->v, hv->ldkv, 0.0f, dS,
                lds);
    /* softmax backward: dS = P * (dP - sum_j P dP); exactly 0 where P is (the future) */
    for (int i = i0; i < i1; i++) {
        const float *prow = P + (size_t)(i - i0) * lds;
        float *drow = dS + (size_t)(i - i0) * lds;
        int n_visible = head_visible_end(hv, i), ks = first_key(hv, i) < n_visible ? first_key(hv, i) : n_visible;
        float dot = n_visible > ks ? dot8(prow + ks, drow + ks, NULL, n_visible - ks) : 0.0f;
        for (int j = 0; j < ks; j++) drow[j] = 0.0f;
        for (int j = ks; j < n_visible; j++) drow[j] = prow[j] * (drow[j] - dot);
        for (int j = n_visible; j < n_keys; j++) drow[j] = 0.0f;
        if (g->dsinks && n_visible > ks) { /* dL/ds = -sum_j dL/dz_j (sinks.h) */
            float sum = 0.0f;
            for (int j = ks; j < n_visible; j++) sum += drow[j];
            g->dsinks[hv->head] -= sum;
        }
        if (n_visible > ks)
            pos_score_row_backward(pc, hv, &(PosRowGrad){.i = i, .first = ks, .n = n_visible - ks, .drow = drow + ks,
                                                          .raw = content ? w->raw + (size_t)(i - i0) * lds + ks : NULL,
                                                          .dq = content ? w->dq_content + (size_t)(i - i0) * hd : NULL,
                                                          .dpos = g->dpos});
    }
    /* dQ = scale dS K ; dK += scale dS^T Q */
    blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, hd, n_keys, scale, dS, lds, hv->k, hv->ldkv, 0.0f,
                g->dq + (size_t)i0 * hv->ldq, hv->ldq);
    if (content)
        for (int r = 0; r < nb; r++)
            for (int d = 0; d < hd; d++) g->dq[(size_t)(i0 + r) * hv->ldq + d] += w->dq_content[(size_t)r * hd + d];
    blas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_keys, hd, nb, scale, dS, lds, qb, hv->ldq, g->kv_beta, g->dk,
                hv->ldkv);
}

void attention_backward(const Attention *a, const float *dout, float *dq, float *dk, float *dv, float *dpos_params,
                        const PosCtx *pc) {
    int nq = a->nq, nk = a->nk, hd = a->head_dim, group = a->n_heads / a->n_kv_heads;
    int has_bias_grad = dpos_params && pos_score_has_grad(pc);
    size_t n_pos = has_bias_grad ? pos_n_params(pc) : 0;
    int n_threads = omp_get_max_threads();
    int rows = nq < ATT_QBLOCK ? nq : ATT_QBLOCK;
    /* the bias parameters are shared by every (b, head): one private accumulator per thread */
    float *dpos_private = n_pos ? xcalloc((size_t)n_threads * n_pos, sizeof(float)) : NULL;
    int H = a->n_heads, sinks = a->d_sinks && pos_sink_logit(pc, a->layer, 0) > -INFINITY;
    float *dsinks_private = sinks ? xcalloc((size_t)n_threads * H, sizeof(float)) : NULL;

    /* parallel over (b, kv head): the query heads of one group all write the same dk, dv slice */
#pragma omp parallel
    {
        /* P, dS, and only for a content bias the raw scores and the rows' dq share */
        size_t content_floats = pos_score_needs_raw(pc, -1) ? (size_t)rows * nk + (size_t)rows * hd : 0;
        float *P = xmalloc((2 * (size_t)rows * nk + content_floats) * sizeof(float)), *dS = P + (size_t)rows * nk;
        float *raw = content_floats ? dS + (size_t)rows * nk : NULL;
        float *dq_content = content_floats ? raw + (size_t)rows * nk : NULL;
        float *dpos = n_pos ? dpos_private + (size_t)omp_get_thread_num() * n_pos : NULL;
        float *dsinks = sinks ? dsinks_private + (size_t)omp_get_thread_num() * H : NULL;
        BlockScratch room = {.P = P, .dS = dS, .raw = raw, .dq_content = dq_content};
#pragma omp for collapse(2) schedule(static)
        for (int b = 0; b < a->n_seq; b++) {
            for (int kvh = 0; kvh < a->n_kv_heads; kvh++) {
                AttnHead first = attention_head(a, b, kvh * group);
                /* the gradients sit where their operands do */
                float *dkh = dk + (first.k - a->k), *dvh = dv + (first.v - a->v);
                /* the first block's products write its keys' rows (beta 0); the keys past them start at 0 */
                for (int j = head_visible_end(&first, rows - 1); j < nk; j++) {
                    memset(dkh + (size_t)j * first.ldkv, 0, hd * sizeof(float));
                    memset(dvh + (size_t)j * first.ldkv, 0, hd * sizeof(float));
                }
                for (int g = 0; g < group; g++) {
                    AttnHead hv = attention_head(a, b, kvh * group + g);
                    const float *dO = dout + (hv.out - a->out);
                    float *dqh = dq + (hv.q - a->q);
                    for (int i0 = 0; i0 < nq; i0 += ATT_QBLOCK) {
                        HeadGrads grads = {.dO = dO, .dq = dqh, .dk = dkh, .dv = dvh,
                                           .kv_beta = g == 0 && i0 == 0 ? 0.0f : 1.0f, .dpos = dpos,
                                           .dsinks = dsinks};
                        head_block_backward(&hv, pc, i0, i0 + ATT_QBLOCK < nq ? i0 + ATT_QBLOCK : nq, &grads, &room);
                    }
                }
            }
        }
        free(P);
    }
    if (n_pos) {
        for (int t = 0; t < n_threads; t++)
            for (size_t i = 0; i < n_pos; i++) dpos_params[i] += dpos_private[(size_t)t * n_pos + i];
        free(dpos_private);
    }
    if (sinks) {
        for (int t = 0; t < n_threads; t++)
            for (int h = 0; h < H; h++) a->d_sinks[h] += dsinks_private[(size_t)t * H + h];
        free(dsinks_private);
    }
}
