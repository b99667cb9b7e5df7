#include "attention.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mem.h"
#include "../core/sys.h"
#include "fastmath.h"

/* softmax of row[0..n) in place; every loop vectorizes (8 partial sums: a fixed order, so the
 * result does not depend on the thread count) */
static void softmax_row(float *row, int n) {
    float mx = row[0];
    for (int j = 1; j < n; j++) mx = row[j] > mx ? row[j] : mx;
    for (int j = 0; j < n; j++) row[j] = fast_expf(row[j] - mx);
    float part[8] = {0};
    int j = 0;
    for (; j + 8 <= n; j += 8)
        for (int u = 0; u < 8; u++) part[u] += row[j + u];
    for (; j < n; j++) part[0] += row[j];
    float sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++) row[j] *= inv;
}

AttnHead attention_head(const Attention *a, int b, int h) {
    int hd = a->head_dim, qdim = a->n_heads * hd, kvdim = a->n_kv_heads * hd;
    int kvh = h / (a->n_heads / a->n_kv_heads);
    size_t qrow = (size_t)b * a->nq, krow = (size_t)b * a->nk;
    return (AttnHead){.q = a->q + qrow * qdim + h * hd, .k = a->k + krow * kvdim + kvh * hd,
                      .v = a->v + krow * kvdim + kvh * hd, .out = a->out + qrow * qdim + h * hd,
                      .probs = a->probs + ((size_t)b * a->n_heads + h) * a->nq * a->nk, .ldq = qdim, .ldkv = kvdim,
                      .qpos = a->qpos + qrow, .kpos = a->kpos + krow, .nq = a->nq, .nk = a->nk,
                      .q_offset = a->q_offset, .hd = hd, .head = h, .layer = a->layer};
}

/* keys query i may see: up to its own index, all of them when q_offset >= nk (no mask) */
static inline int visible_keys(const AttnHead *a, int i) {
    return a->q_offset + i + 1 < a->nk ? a->q_offset + i + 1 : a->nk;
}

void attention_head_forward(const AttnHead *a, const PosCtx *pc) {
    int nq = a->nq, nk = a->nk, hd = a->hd;
    float scale = 1.0f / sqrtf((float)hd);
    /* all scores at once through sgemm (sgemv for one query, as in decoding: no repacking of k);
     * entries past the causal limit are overwritten below */
    if (nq == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, nk, hd, scale, a->k, a->ldkv, a->q, 1, 0.0f, a->probs, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, hd, scale, a->q, a->ldq, a->k, a->ldkv, 0.0f,
                    a->probs, nk);
    for (int i = 0; i < nq; i++) {
        float *row = a->probs + (size_t)i * nk;
        int n_visible = visible_keys(a, i);
        if (pc && pc->scheme->bias_row)
            pc->scheme->bias_row(pc, row, a->qpos[i], a->kpos, n_visible, a->head, a->layer);
        softmax_row(row, n_visible);
        for (int j = n_visible; j < nk; j++) row[j] = 0.0f; /* the future gets exactly zero weight */
    }
    if (nq == 1) cblas_sgemv(CblasRowMajor, CblasTrans, nk, hd, 1.0f, a->v, a->ldkv, a->probs, 1, 0.0f, a->out, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, hd, nk, 1.0f, a->probs, nk, a->v, a->ldkv, 0.0f,
                    a->out, a->ldq);
}

void attention_forward(const Attention *a, const PosCtx *pc) {
    size_t work = (size_t)a->n_seq * a->nq * a->nk * a->n_heads * a->head_dim;
#pragma omp parallel for collapse(2) schedule(static) if (work >= PAR_MIN_WORK)
    for (int b = 0; b < a->n_seq; b++) {
        for (int h = 0; h < a->n_heads; h++) {
            AttnHead head = attention_head(a, b, h);
            attention_head_forward(&head, pc);
        }
    }
}

void attention_backward(const Attention *a, const float *dout, float *dq, float *dk, float *dv, float *dscores,
                        float *dpos_params, const PosCtx *pc) {
    int nq = a->nq, nk = a->nk, hd = a->head_dim, group = a->n_heads / a->n_kv_heads;
    float scale = 1.0f / sqrtf((float)hd);
    int has_bias_grad = dpos_params && pc && pc->scheme->bias_backward;
    size_t n_pos = has_bias_grad ? pos_n_params(pc) : 0;
    int n_threads = omp_get_max_threads();
    /* the bias parameters are shared by every (b, head): one private accumulator per thread */
    float *dpos_private = n_pos ? xcalloc((size_t)n_threads * n_pos, sizeof(float)) : NULL;

    /* parallel over (b, kv head): the query heads of one group all write the same dk, dv slice */
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < a->n_seq; b++) {
        for (int kvh = 0; kvh < a->n_kv_heads; kvh++) {
            int tid = omp_get_thread_num();
            float *dS = dscores + (size_t)tid * nq * nk;
            for (int g = 0; g < group; g++) {
                AttnHead hv = attention_head(a, b, kvh * group + g);
                /* the gradients sit where their operands do */
                const float *dO = dout + (hv.out - a->out);
                float *dqh = dq + (hv.q - a->q), *dkh = dk + (hv.k - a->k), *dvh = dv + (hv.v - a->v);
                float beta = g == 0 ? 0.0f : 1.0f;
                /* dV = P^T dO ; dP = dO V^T */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, hd, nq, 1.0f, hv.probs, nk, dO, hv.ldq, beta,
                            dvh, hv.ldkv);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, hd, 1.0f, dO, hv.ldq, hv.v, hv.ldkv, 0.0f,
                            dS, nk);
                /* softmax backward: dS = P * (dP - sum_j P dP); zero where P is (future) */
                for (int i = 0; i < nq; i++) {
                    const float *prow = hv.probs + (size_t)i * nk;
                    float *drow = dS + (size_t)i * nk;
                    int n_visible = visible_keys(&hv, i);
                    float dot = 0.0f;
                    for (int j = 0; j < n_visible; j++) dot += prow[j] * drow[j];
                    for (int j = 0; j < n_visible; j++) drow[j] = prow[j] * (drow[j] - dot);
                    for (int j = n_visible; j < nk; j++) drow[j] = 0.0f;
                    if (n_pos)
                        pc->scheme->bias_backward(pc, drow, hv.qpos[i], hv.kpos, n_visible, hv.head, hv.layer,
                                                  dpos_private + (size_t)tid * n_pos);
                }
                /* dQ = scale dS K ; dK += scale dS^T Q */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, hd, nk, scale, dS, nk, hv.k, hv.ldkv, 0.0f,
                            dqh, hv.ldq);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, hd, nq, scale, dS, nk, hv.q, hv.ldq, beta,
                            dkh, hv.ldkv);
            }
        }
    }
    if (n_pos) {
        for (int t = 0; t < n_threads; t++)
            for (size_t i = 0; i < n_pos; i++) dpos_params[i] += dpos_private[(size_t)t * n_pos + i];
        free(dpos_private);
    }
}
