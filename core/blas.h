/* blas.h: the one place pelab meets its BLAS. The cblas products (cblas_sgemm, cblas_sgemv, ...)
 * come from OpenBLAS's <cblas.h> or from Apple's Accelerate (make BLAS=accelerate, which defines
 * PELAB_BLAS_ACCELERATE); what only OpenBLAS offers (its thread count, its kernel name and build
 * string) goes through the functions below, which say when the linked BLAS cannot do it. */
#ifndef PELAB_BLAS_H
#define PELAB_BLAS_H

#ifdef PELAB_BLAS_ACCELERATE
#include <Accelerate/Accelerate.h>
#else
#include <cblas.h>
#endif

/* cblas_sgemm's signature and result; small products (M N K <= BLAS_SMALL_MACS) of at least
 * BLAS_SMALL_MIN_ROWS rows run in gemm_small (gemm.h): one thread, no packing of A, no library
 * call; larger ones, column-major and products of a few rows go to cblas_sgemm. A few rows are
 * decoding's (one per sequence): there gemm_small would copy the whole transposed weight matrix
 * into its panel for every token and run on one thread, where OpenBLAS reads the weights once on
 * the threads decoding allows (sampling S and M ran 10-20% slower through gemm_small). The choice depends on the shape alone, never on the thread count, so a result is
 * the same on 1 or 16 threads. At XS and S sizes (products of 16-25M multiply-adds and less)
 * gemm_small is 1.3-2x OpenBLAS 0.3.21's Haswell kernel on one core (docs/PERFORMANCE.md). */
#define BLAS_SMALL_MACS (1L << 25)
#define BLAS_SMALL_MIN_ROWS 32
void blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b, int M, int N,
                int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc);

/* "OpenBLAS" or "Accelerate" */
const char *blas_name(void);
/* the BLAS's own thread count: 0, or -1 with one message (pelab_errmsg) when this BLAS cannot set it
 * at run time (Accelerate: only VECLIB_MAXIMUM_THREADS before launch) */
int blas_set_threads(int n);
/* OpenBLAS's core name ("Haswell", "SkylakeX", "NEOVERSEN1", ...) and its build string; NULL when
 * the linked BLAS is not OpenBLAS */
const char *blas_core_name(void);
const char *blas_config(void);

#endif
