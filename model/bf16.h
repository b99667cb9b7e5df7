/* bf16.h: bfloat16 matrix products with float32 accumulation, through oneDNN's matmul (the
 * library PyTorch's CPU autocast uses), for --precision bf16. Only the products' operands are
 * rounded to bf16: what they accumulate into, and every norm, softmax, loss, optimizer state and
 * position computation, stays float32.
 *
 * bf16 keeps float32's exponent and 8 significant bits (relative rounding error up to 2^-8 = 0.4%).
 * Conversion rounds to nearest even; NaN stays NaN. */
#ifndef PELAB_BF16_H
#define PELAB_BF16_H

#include <stddef.h>
#include <stdint.h>

typedef uint16_t bf16;

static inline bf16 bf16_from_float(float x) {
    uint32_t u;
    __builtin_memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (bf16)((u >> 16) | 0x40); /* NaN: keep it quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);                                      /* round to nearest even */
    return (bf16)(u >> 16);
}

static inline float bf16_to_float(bf16 h) {
    uint32_t u = (uint32_t)h << 16;
    float x;
    __builtin_memcpy(&x, &u, 4);
    return x;
}

/* dst[i] = bf16(src[i]) for n elements (parallel when large) */
void bf16_convert(bf16 *dst, const float *src, size_t n);
/* rows x cols of src (row stride lds) into dst transposed: dst[c * rows + r] = bf16(src[r * lds + c]) */
void bf16_convert_transposed(bf16 *dst, const float *src, int rows, int cols, int lds);

/* 1 if this build and this CPU run bf16 products natively (oneDNN with AVX512_BF16 or AMX-BF16, and
 * the AVX-512 kernel set in use: PELAB_ISA=avx2 emulates a CPU without them); else 0 with why[]
 * naming what is missing ("this CPU lacks AVX512_BF16 and AMX-BF16", "pelab was built without
 * oneDNN"). Training in bf16 needs them; inference does not: without them bf16 weights are widened
 * to float32 in registers by the kernel set in use (core/kernels.h: AVX2, NEON, ...), so decoding,
 * which is memory-bound, still reads half the weight bytes (rows_product), and products of several rows
 * widen a copy of the weights (model/layers.c). */
int bf16_native(char *why, size_t n);
/* one line: "bf16 products: oneDNN 2.6.3, AVX512_BF16 (--precision bf16)", or the widened path and
 * why there are no native products */
void bf16_report(char *buf, size_t n);
/* what oneDNN runs a bf16 product with ("brg:avx512_core_bf16", ...), or "none" */
const char *bf16_impl_name(void);

/* C[M, N] = A[M, K] B[K, N] (+ C when accumulate), row-major bf16 operands, float32 C.
 * trans_b: B is given as [N, K] (row stride ldb), i.e. the product is A B^T. Products of one shape
 * reuse a cached oneDNN primitive. Not thread-safe: call from outside parallel regions.
 * -1 with one message if oneDNN refuses, or where bf16_native is 0 (the caller widens the weights). */
int bf16_gemm(int trans_b, int M, int N, int K, const bf16 *A, int lda, const bf16 *B, int ldb, float *C, int ldc,
              int accumulate);

/* out[OC] = w[OC, C] x (x rounded to bf16), fp32 accumulation: one row of a decoding step, where
 * a oneDNN primitive call costs more than the product (M sampled at 1,126 tokens/s in bf16 against
 * 1,764 in fp32). AVX512_BF16 dot products, rows split over threads when large. -1 where
 * bf16_native's AVX512_BF16 is missing (the caller widens the weights: rows_product, dot_rows.h). */
int bf16_gemv(float *out, const bf16 *w, const float *x, int OC, int C);

/* a grow-only conversion buffer of n elements, one per slot (0..2): the operands of one product
 * (not thread-safe, like the primitive cache); NULL if out of memory */
bf16 *bf16_workspace(int slot, size_t n);

/* frees the cached primitives and the workspaces (tests, valgrind) */
void bf16_release(void);

#endif
