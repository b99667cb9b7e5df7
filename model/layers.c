#include "layers.h"

#include "../core/blas.h"
#include "../core/sys.h"
#include "dot_rows.h"
#include "fastmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mem.h"

void embedding_forward(float *out, const int *inp, const float *tok_emb, int N, int D) {
    PAR_FOR((size_t)N * D >= PAR_MIN_WORK, int, n, N,
            memcpy(out + (size_t)n * D, tok_emb + (size_t)inp[n] * D, sizeof(float) * D););
}

void embedding_forward_bf16(float *out, const int *inp, const bf16 *tok_emb, int N, int D) {
    PAR_FOR((size_t)N * D >= PAR_MIN_WORK, int, n, N,
        const bf16 *row = tok_emb + (size_t)inp[n] * D;
        for (int i = 0; i < D; i++) out[(size_t)n * D + i] = bf16_to_float(row[i]););
}

void embedding_backward(float *dtok_emb, const float *dout, const int *inp, int N, int D) {
    /* serial: two rows may share a token */
    for (int n = 0; n < N; n++) {
        float *row = dtok_emb + (size_t)inp[n] * D;
        const float *d = dout + (size_t)n * D;
        for (int i = 0; i < D; i++) row[i] += d[i];
    }
}

/* A row whose sum of squares overflows float32 (|x| past about 1e19) would get 1/rms = 0 and become
 * zeros, a finite wrong answer: normalise it by its largest |x| first, as a robust norm does. An
 * infinite or NaN x stays NaN, which the decoder's logit check reports. Returns 1/rms (0 or a
 * subnormal: such a row has no backward worth the name, and training stops at its loss). */
static float rmsnorm_row_scaled(float *y, const float *x, const float *gain, int D) {
    float largest = 0.0f;
    for (int i = 0; i < D; i++) largest = fabsf(x[i]) > largest || x[i] != x[i] ? fabsf(x[i]) : largest;
    double ms = 0.0;
    for (int i = 0; i < D; i++) ms += (double)(x[i] / largest) * (x[i] / largest);
    float r_scaled = (float)(1.0 / sqrt(ms / D)); /* 1/rms of x / largest: in [1, sqrt(D)] */
    for (int i = 0; i < D; i++) y[i] = x[i] / largest * r_scaled * gain[i];
    return r_scaled / largest;
}

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *gain, int N, int D, float eps) {
    PAR_FOR((size_t)N * D >= PAR_MIN_WORK, int, n, N,
        const float *x = inp + (size_t)n * D;
        float *y = out + (size_t)n * D;
        float r = 1.0f / sqrtf(dot8(x, x, NULL, D) / D + eps);
        if (r == 0.0f) r = rmsnorm_row_scaled(y, x, gain, D); /* the squares overflowed */
        else for (int i = 0; i < D; i++) y[i] = x[i] * r * gain[i];
        if (rstd) rstd[n] = r;
    );
}

/* one row's input gradient: with xn = x*r and y = xn*g, dx = r * (g*dy - xn * mean(g*dy*xn)) */
static inline void rmsnorm_row_backward(float *restrict dx, const float *restrict dy, const float *restrict x,
                                        const float *restrict gain, float r, int D) {
    float dot = dot8(gain, dy, x, D) * r / D;
    for (int i = 0; i < D; i++) dx[i] += r * (gain[i] * dy[i] - x[i] * r * dot);
}

void rmsnorm_backward(float *dinp, float *dgain, const float *dout, const float *inp, const float *gain,
                      const float *rstd, int N, int D) {
    enum { ROW_MAX = 1024 };
    if ((size_t)N * D < PAR_MIN_WORK && D <= ROW_MAX) {
        /* one pass over the rows: the gain gradient summed in row order in a local row, the same
         * sums as the columns' loop below */
        float acc[ROW_MAX];
        for (int i = 0; i < D; i++) acc[i] = 0.0f;
        for (int n = 0; n < N; n++) {
            const float *x = inp + (size_t)n * D, *dy = dout + (size_t)n * D;
            float r = rstd[n];
            rmsnorm_row_backward(dinp + (size_t)n * D, dy, x, gain, r, D);
            for (int i = 0; i < D; i++) acc[i] += dy[i] * x[i] * r;
        }
        for (int i = 0; i < D; i++) dgain[i] += acc[i];
        return;
    }
    PAR_FOR((size_t)N * D >= PAR_MIN_WORK, int, n, N,
        rmsnorm_row_backward(dinp + (size_t)n * D, dout + (size_t)n * D, inp + (size_t)n * D, gain, rstd[n], D);
    );
    /* gain gradient: reduce over rows, parallel over columns so no two threads share a slot */
    PAR_FOR((size_t)N * D >= PAR_MIN_WORK, int, i, D,
        float acc = 0.0f;
        for (int n = 0; n < N; n++) acc += dout[(size_t)n * D + i] * inp[(size_t)n * D + i] * rstd[n];
        dgain[i] += acc;
    );
}

/* the bf16 products; 0, or -1 when oneDNN refused (the caller then runs the float32 product) */
static int bf16_forward(float *out, const float *inp, const bf16 *w16, int N, int C, int OC) {
    bf16 *a = bf16_workspace(0, (size_t)N * C);
    if (!a) return -1;
    bf16_convert(a, inp, (size_t)N * C);
    return bf16_gemm(1, N, OC, C, a, C, w16, C, out, OC, 0);
}

/* a product that runs as rows_product: up to ROWS_FP32_MAX rows of x over fp32 weights (decoding:
 * one text, a lookup draft, or a few texts side by side; each weight read from memory once for all
 * the rows), or a few rows over bf16 weights without native bf16 products (widened in registers:
 * half the bytes of fp32). Sampling M with 2-16 texts side by side, against sgemm (one thread
 * under 32 rows: gemm_small), Zen 3: 2 texts x1.9 at 1 thread and x2.9 at 2, 8 texts x1.2 and
 * x1.6, 16 texts x1.0 and x1.15; at 24, gemm_small is faster at 1 thread (x0.85 for rows) */
enum { ROWS_FP32_MAX = 16 };
static int rows_path(const bf16 *w16, int N) {
    return w16 ? N < BLAS_SMALL_MIN_ROWS && bf16_native(NULL, 0) == 0 : N <= ROWS_FP32_MAX;
}

void matmul_forward(float *out, const float *inp, const float *w, const bf16 *w16, int N, int C, int OC) {
    if (w16 && N == 1 && bf16_gemv(out, w16, inp, OC, C) == 0) return;
    if (rows_path(w16, N)) {
        rows_product(w16 ? (const void *)w16 : (const void *)w, w16 != NULL, inp, N, C, OC, out);
        return;
    }
    if (w16 && bf16_forward(out, inp, w16, N, C, OC) == 0) return;
    float *wide = NULL; /* oneDNN refused: the same bf16 weights, widened (a bf16-only model has no others) */
    if (w16) {
        wide = xmalloc((size_t)OC * C * sizeof(float));
        for (size_t i = 0; i < (size_t)OC * C; i++) wide[i] = bf16_to_float(w16[i]);
        w = wide;
    }
    /* one row (decoding): sgemm would repack all of w for a single product; sgemv streams it */
    if (N == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, OC, C, 1.0f, w, C, inp, 1, 0.0f, out, 1);
    else
        blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, OC, C, 1.0f, inp, C, w, C, 0.0f, out, OC);
    free(wide);
}

void matmul_forward_shared(const MatmulJob *jobs, int n_jobs, const float *inp, int N, int C) {
    RowsJob rows[8];
    int fused = n_jobs <= 8;
    for (int i = 0; i < n_jobs && fused; i++) {
        const MatmulJob *j = &jobs[i];
        /* native bf16 (its own products) and many rows keep matmul_forward's paths */
        fused = rows_path(j->w16, N);
        rows[i] = (RowsJob){j->w16 ? (const void *)j->w16 : (const void *)j->w, j->w16 != NULL, j->OC, j->out};
    }
    if (fused) rows_product_many(rows, n_jobs, inp, N, C);
    else
        for (int i = 0; i < n_jobs; i++) matmul_forward(jobs[i].out, inp, jobs[i].w, jobs[i].w16, N, C, jobs[i].OC);
}

void matmul_backward(const MatmulGrads *g, const float *dout, const float *inp, const float *w, const bf16 *w16, int N,
                     int C, int OC) {
    float *dinp = g->dinp, *dw = g->dw;
    int accumulate_dinp = g->accumulate_dinp;
    /* bf16: dout rounded twice (as is, and transposed, the layout oneDNN's fast kernels read), inp
     * once; a product oneDNN refuses falls back to float32 */
    bf16 *d = NULL, *dT = NULL, *x = NULL;
    if (w16) {
        d = bf16_workspace(0, (size_t)N * OC), dT = bf16_workspace(1, (size_t)N * OC);
        x = bf16_workspace(2, (size_t)N * C);
    }
    if (dinp) {
        int done = 0;
        if (d) {
            bf16_convert(d, dout, (size_t)N * OC);
            done = bf16_gemm(0, N, C, OC, d, OC, w16, C, dinp, C, accumulate_dinp) == 0;
        }
        if (!done)
            blas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, OC, 1.0f, dout, OC, w, C,
                        accumulate_dinp ? 1.0f : 0.0f, dinp, C);
    }
    if (dT && x) {
        bf16_convert_transposed(dT, dout, N, OC, OC);
        bf16_convert(x, inp, (size_t)N * C);
        if (bf16_gemm(0, OC, C, N, dT, N, x, C, dw, C, 1) == 0) return;
    }
    blas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dw, C);
}

void swiglu_forward(float *act, const float *gate, const float *up, size_t n) {
    PAR_FOR(n >= PAR_MIN_WORK, size_t, i, n,
        float g = gate[i];
        act[i] = g / (1.0f + fast_expf(-g)) * up[i];
    );
}

void swiglu_backward(float *dgate, float *dup, const float *dact, const float *gate, const float *up, size_t n) {
    /* silu'(g) = s * (1 + g*(1-s)), s = sigmoid(g) */
    PAR_FOR(n >= PAR_MIN_WORK, size_t, i, n,
        float g = gate[i], s = 1.0f / (1.0f + fast_expf(-g));
        dgate[i] = dact[i] * up[i] * s * (1.0f + g * (1.0f - s));
        dup[i] = dact[i] * g * s;
    );
}

void residual_forward(float *out, const float *a, const float *b, size_t n) {
    PAR_FOR(n >= PAR_MIN_WORK, size_t, i, n, out[i] = a[i] + b[i];);
}

void log_softmax(float *out, const float *logits, int V) {
    float mx = logits[0];
    for (int i = 1; i < V; i++) mx = logits[i] > mx ? logits[i] : mx;
    double sum = 0.0;
    for (int i = 0; i < V; i++) sum += exp((double)(logits[i] - mx));
    float lse = mx + (float)log(sum);
    for (int i = 0; i < V; i++) out[i] = logits[i] - lse;
}

/* exp(row[i] - mx) into out (may be row), returning their sum: vectorized (fast_expf, 8 partial
 * sums in a fixed order); the loss and its gradient are the softmax of the same row */
static float exp_shifted(float *out, const float *row, int V, float mx) {
    float part[8] = {0};
    int i = 0;
    for (; i + 8 <= V; i += 8)
        for (int u = 0; u < 8; u++) part[u] += out[i + u] = fast_expf(row[i + u] - mx);
    for (; i < V; i++) part[0] += out[i] = fast_expf(row[i] - mx);
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

void crossentropy_losses(float *losses, const float *logits, const int *targets, int N, int V) {
    PAR_FOR((size_t)N * V >= PAR_MIN_WORK, int, n, N,
        if (targets[n] < 0) {
            losses[n] = 0.0f;
            continue;
        }
        const float *row = logits + (size_t)n * V;
        float mx = max8(row, V), e[256];
        float sum = 0.0f;
        for (int i0 = 0; i0 < V; i0 += 256) sum += exp_shifted(e, row + i0, V - i0 < 256 ? V - i0 : 256, mx);
        losses[n] = (float)(log((double)sum) + mx - row[targets[n]]);
    );
}

float crossentropy_mean(const float *losses, const int *targets, int N) {
    double total = 0.0; /* summed in order, not in thread-completion order */
    int counted = 0;
    for (int n = 0; n < N; n++)
        if (targets[n] >= 0) total += losses[n], counted++;
    return counted ? (float)(total / counted) : 0.0f;
}

float crossentropy_forward(float *losses, const float *logits, const int *targets, int N, int V) {
    crossentropy_losses(losses, logits, targets, N, V);
    return crossentropy_mean(losses, targets, N);
}

void crossentropy_backward(float *logits, const int *targets, int N, int V) {
    int counted = 0;
    for (int n = 0; n < N; n++) counted += targets[n] >= 0;
    crossentropy_backward_rows(logits, targets, N, V, counted ? 1.0f / counted : 0.0f);
}

void crossentropy_backward_rows(float *logits, const int *targets, int N, int V, float scale) {
    PAR_FOR((size_t)N * V >= PAR_MIN_WORK, int, n, N,
        float *row = logits + (size_t)n * V;
        if (targets[n] < 0) {
            memset(row, 0, sizeof(float) * V);
            continue;
        }
        float sum = exp_shifted(row, row, V, max8(row, V)), k = scale / sum;
        for (int i = 0; i < V; i++) row[i] *= k;
        row[targets[n]] -= scale;
    );
}
