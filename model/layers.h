/* layers.h: each layer's forward and backward, side by side (llm.c style).
 * Shapes: N rows (tokens), row-major. Backward functions ACCUMULATE (+=) into parameter
 * gradients and, unless stated otherwise, into input gradients. */
#ifndef PELAB_LAYERS_H
#define PELAB_LAYERS_H

#include <stddef.h>

/* out[N, D] = tok_emb[inp[n]] */
void embedding_forward(float *out, const int *inp, const float *tok_emb, int N, int D);
void embedding_backward(float *dtok_emb, const float *dout, const int *inp, int N, int D);

/* out = x * rstd * gain, rstd = 1/sqrt(mean(x^2) + eps) */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *gain, int N, int D, float eps);
void rmsnorm_backward(float *dinp, float *dgain, const float *dout, const float *inp, const float *gain,
                      const float *rstd, int N, int D);

/* out[N, OC] = inp[N, C] @ w[OC, C]^T  (cblas_sgemm) */
void matmul_forward(float *out, const float *inp, const float *w, int N, int C, int OC);
/* dinp[N, C] (+)= dout @ w (overwrite if accumulate_dinp is 0); dw[OC, C] += dout^T @ inp */
void matmul_backward(float *dinp, float *dw, const float *dout, const float *inp, const float *w, int N, int C,
                     int OC, int accumulate_dinp);

/* act = silu(gate) * up */
void swiglu_forward(float *act, const float *gate, const float *up, size_t n);
/* writes dgate, dup (overwrite) */
void swiglu_backward(float *dgate, float *dup, const float *dact, const float *gate, const float *up, size_t n);

/* out += inp (residual add) */
void residual_forward(float *out, const float *a, const float *b, size_t n);

/* Softmax cross-entropy over V classes for N rows. losses[n] = -log p(target). Returns mean.
 * targets < 0 are ignored (loss 0, no gradient). */
float crossentropy_forward(float *losses, const float *logits, const int *targets, int N, int V);
/* Overwrites logits with d(mean loss)/d(logits) = (softmax - onehot) / n_counted. */
void crossentropy_backward(float *logits, const int *targets, int N, int V);

/* log-softmax of one row into out (may alias) */
void log_softmax(float *out, const float *logits, int V);

#endif
