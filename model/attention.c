#include "attention.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mem.h"
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

void attention_head_forward(float *out, int ldo, float *probs, int ldp, const float *q, int ldq, int nq,
                            const float *k, int ldk, const float *v, int ldv, int nk, int q_offset,
                            const int *qpos, const int *kpos, int head, int layer, const PosCtx *pc, int hd) {
    float scale = 1.0f / sqrtf((float)hd);
    /* all scores at once through sgemm (sgemv for one query, as in decoding: no repacking of k);
     * entries past the causal limit are overwritten below */
    if (nq == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, nk, hd, scale, k, ldk, q, 1, 0.0f, probs, 1);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, hd, scale, q, ldq, k, ldk, 0.0f, probs, ldp);
    for (int i = 0; i < nq; i++) {
        float *row = probs + (size_t)i * ldp;
        int n_visible = q_offset + i + 1 < nk ? q_offset + i + 1 : nk; /* q_offset >= nk: no mask */
        if (pc && pc->scheme->bias_row) pc->scheme->bias_row(pc, row, qpos[i], kpos, n_visible, head, layer);
        softmax_row(row, n_visible);
        for (int j = n_visible; j < nk; j++) row[j] = 0.0f; /* the future gets exactly zero weight */
    }
    if (nq == 1) cblas_sgemv(CblasRowMajor, CblasTrans, nk, hd, 1.0f, v, ldv, probs, 1, 0.0f, out, 1);
    else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, hd, nk, 1.0f, probs, ldp, v, ldv, 0.0f, out, ldo);
}

void attention_forward(float *out, float *probs, const float *q, const float *k, const float *v, const int *pos,
                       int B, int T, int H, int KVH, int hd, int layer, const PosCtx *pc) {
    int qdim = H * hd, kvdim = KVH * hd, group = H / KVH;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            size_t row0 = (size_t)b * T;
            int kvh = h / group;
            attention_head_forward(out + row0 * qdim + h * hd, qdim, probs + ((size_t)b * H + h) * T * T, T,
                                   q + row0 * qdim + h * hd, qdim, T, k + row0 * kvdim + kvh * hd, kvdim,
                                   v + row0 * kvdim + kvh * hd, kvdim, T, 0, pos + row0, pos + row0, h, layer, pc,
                                   hd);
        }
    }
}

void attention_backward(float *dq, float *dk, float *dv, float *dpos_params, float *dscores, const float *dout,
                        const float *probs, const float *q, const float *k, const float *v, const int *pos, int B,
                        int T, int H, int KVH, int hd, int layer, const PosCtx *pc) {
    int qdim = H * hd, kvdim = KVH * hd, group = H / KVH;
    float scale = 1.0f / sqrtf((float)hd);
    int has_bias_grad = dpos_params && pc && pc->scheme->bias_backward;
    size_t n_pos = has_bias_grad ? pos_n_params(pc) : 0;
    int n_threads = omp_get_max_threads();
    /* the bias parameters are shared by every (b, head): one private accumulator per thread */
    float *dpos_private = n_pos ? xcalloc((size_t)n_threads * n_pos, sizeof(float)) : NULL;

    /* parallel over (b, kv head): the query heads of one group all write the same dk, dv slice */
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++) {
        for (int kvh = 0; kvh < KVH; kvh++) {
            int tid = omp_get_thread_num();
            float *dS = dscores + (size_t)tid * T * T;
            size_t row0 = (size_t)b * T;
            const float *kh = k + row0 * kvdim + kvh * hd, *vh = v + row0 * kvdim + kvh * hd;
            float *dkh = dk + row0 * kvdim + kvh * hd, *dvh = dv + row0 * kvdim + kvh * hd;
            const int *bpos = pos + row0;
            for (int g = 0; g < group; g++) {
                int h = kvh * group + g;
                const float *P = probs + ((size_t)b * H + h) * T * T;
                const float *dO = dout + row0 * qdim + h * hd;
                const float *qh = q + row0 * qdim + h * hd;
                float beta = g == 0 ? 0.0f : 1.0f;
                /* dV = P^T dO ; dP = dO V^T */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, 1.0f, P, T, dO, qdim, beta, dvh,
                            kvdim);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hd, 1.0f, dO, qdim, vh, kvdim, 0.0f, dS,
                            T);
                /* softmax backward: dS = P * (dP - sum_j P dP); zero where P is (future) */
                for (int i = 0; i < T; i++) {
                    const float *prow = P + (size_t)i * T;
                    float *drow = dS + (size_t)i * T;
                    float dot = 0.0f;
                    for (int j = 0; j <= i; j++) dot += prow[j] * drow[j];
                    for (int j = 0; j <= i; j++) drow[j] = prow[j] * (drow[j] - dot);
                    for (int j = i + 1; j < T; j++) drow[j] = 0.0f;
                    if (n_pos)
                        pc->scheme->bias_backward(pc, drow, bpos[i], bpos, i + 1, h, layer,
                                                  dpos_private + (size_t)tid * n_pos);
                }
                /* dQ = scale dS K ; dK += scale dS^T Q */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hd, T, scale, dS, T, kh, kvdim, 0.0f,
                            dq + row0 * qdim + h * hd, qdim);
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hd, T, scale, dS, T, qh, qdim, beta, dkh,
                            kvdim);
            }
        }
    }
    if (n_pos) {
        for (int t = 0; t < n_threads; t++)
            for (size_t i = 0; i < n_pos; i++) dpos_params[i] += dpos_private[(size_t)t * n_pos + i];
        free(dpos_private);
    }
}
