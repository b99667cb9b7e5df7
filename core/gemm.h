/* gemm.h: a register-blocked single-precision product for the small shapes of the tiny models
 * (dim 64-128: K, N a few hundred at most). No packing of A, no call into a library: at these
 * sizes OpenBLAS spends as much time packing, zeroing C and dispatching as multiplying. GNU vector
 * extensions (gcc and clang, x86 and arm64), in one set per instruction set chosen at run time
 * (kernels.h, kern_gemm.h); one thread; deterministic (the sum over k runs in one order whatever the
 * caller). blas_sgemm (blas.h) chooses between it and cblas_sgemm. */
#ifndef PELAB_GEMM_H
#define PELAB_GEMM_H

/* Row-major C[M, N] = alpha op(A)[M, K] op(B)[K, N] + beta C, as cblas_sgemm(CblasRowMajor, ...):
 * trans_a / trans_b nonzero: op(X) = X^T (A then holds [K, M] with row stride lda, B [N, K]).
 * beta 0: C is written, never read (as BLAS: a NaN there does not survive). */
void gemm_small(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc);

#endif
