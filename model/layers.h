/* layers.h: the decoder's layers except attention (attention.h), forward and backward side by
 * side (llm.c style); block_forward in model.c chains them. Shapes: N rows (tokens), row-major.
 * Backward functions accumulate (+=) into parameter gradients. Input gradients: rmsnorm_backward
 * adds (the residual stream's gradient flows past it), matmul_backward adds or overwrites as asked,
 * swiglu_backward and crossentropy_backward overwrite. Loops with fewer than PAR_MIN_WORK
 * elements (core/sys.h) run on one thread. */
#ifndef PELAB_LAYERS_H
#define PELAB_LAYERS_H

#include <stddef.h>

#include "bf16.h"

/* out[N, D] = tok_emb[inp[n]] */
void embedding_forward(float *out, const int *inp, const float *tok_emb, int N, int D);
/* the same from bf16 rows, widened (exact) */
void embedding_forward_bf16(float *out, const int *inp, const bf16 *tok_emb, int N, int D);
/* dtok_emb[inp[n]] += dout[n]; serial, since two rows may share a token */
void embedding_backward(float *dtok_emb, const float *dout, const int *inp, int N, int D);

/* out = x * rstd * gain, rstd = 1/sqrt(mean(x^2) + eps); rstd [N] may be NULL (decoding keeps none) */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *gain, int N, int D, float eps);
/* dinp += d(out)/d(inp) dout, dgain += sum over rows */
void rmsnorm_backward(float *dinp, float *dgain, const float *dout, const float *inp, const float *gain,
                      const float *rstd, int N, int D);

/* out[N, OC] = inp[N, C] @ w[OC, C]^T  (cblas_sgemm; a few rows, as when decoding, as rows_product).
 * w16: NULL, or w rounded to bf16 (model_sync_bf16): the product then runs in bf16 with float32
 * accumulation (bf16.h), inp rounded on the way in; without native bf16 products (bf16_native) a
 * few rows (decoding: fewer than BLAS_SMALL_MIN_ROWS) run as rows_product over the bf16 rows
 * (widened in registers, inp float32), and more (or a product oneDNN refuses) through sgemm on w16
 * widened (w itself is never read then: a
 * bf16-only model has none). */
void matmul_forward(float *out, const float *inp, const float *w, const bf16 *w16, int N, int C, int OC);
/* several matmul_forward of the same input rows: out = inp @ w^T for each job (OC its rows) */
typedef struct {
    float *out;
    const float *w;
    const bf16 *w16;
    int OC;
} MatmulJob;
/* for a few rows (decoding) the jobs run in one loop over threads (rows_product_many: one fork for
 * q, k and v, one for gate and up); otherwise one matmul_forward each. The same results either way. */
void matmul_forward_shared(const MatmulJob *jobs, int n_jobs, const float *inp, int N, int C);
/* where matmul_backward's gradients go: dinp[N, C] (+)= dout @ w (overwritten if accumulate_dinp
 * is 0; skipped if dinp is NULL); dw[OC, C] += dout^T @ inp */
typedef struct {
    float *dinp, *dw;
    int accumulate_dinp;
} MatmulGrads;
/* the backward of matmul_forward into g; w16 as in matmul_forward: both products in bf16, dw still
 * float32 */
void matmul_backward(const MatmulGrads *g, const float *dout, const float *inp, const float *w, const bf16 *w16, int N,
                     int C, int OC);

/* act = silu(gate) * up */
void swiglu_forward(float *act, const float *gate, const float *up, size_t n);
/* writes dgate, dup (overwrite) */
void swiglu_backward(float *dgate, float *dup, const float *dact, const float *gate, const float *up, size_t n);

/* out = a + b (out may be a or b). No backward: the gradient reaches both inputs unchanged. */
void residual_forward(float *out, const float *a, const float *b, size_t n);

/* Softmax cross-entropy over V classes for N rows. losses[n] = -log p(target); returns the mean
 * over the counted rows. targets < 0 are ignored (loss 0, no gradient). */
float crossentropy_forward(float *losses, const float *logits, const int *targets, int N, int V);
/* the two halves of crossentropy_forward: the rows' losses, and their mean over the counted rows */
void crossentropy_losses(float *losses, const float *logits, const int *targets, int N, int V);
float crossentropy_mean(const float *losses, const int *targets, int N);
/* Overwrites logits with d(mean loss)/d(logits) = (softmax - onehot) / n_counted. */
void crossentropy_backward(float *logits, const int *targets, int N, int V);
/* the same for some of the rows, scale = 1 / (the whole batch's counted rows) */
void crossentropy_backward_rows(float *logits, const int *targets, int N, int V, float scale);

/* log-softmax of one row into out (may alias) */
void log_softmax(float *out, const float *logits, int V);

#endif
