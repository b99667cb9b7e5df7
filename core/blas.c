/* blas.c: what only OpenBLAS can answer, and the refusal where another BLAS is linked (blas.h). */
#include "blas.h"

#include "error.h"
#include "gemm.h"

void blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b, int M, int N,
                int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    if (order == CblasRowMajor && M >= BLAS_SMALL_MIN_ROWS && (long long)M * N * K <= BLAS_SMALL_MACS)
        gemm_small(trans_a != CblasNoTrans, trans_b != CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        cblas_sgemm(order, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

#ifdef PELAB_BLAS_ACCELERATE

const char *blas_name(void) { return "Accelerate"; }
int blas_set_threads(int n) {
    (void)n;
    return pelab_fail("Accelerate: the BLAS's thread count cannot be set at run time (VECLIB_MAXIMUM_THREADS before "
                      "launch only); --threads sets pelab's own loops");
}
const char *blas_core_name(void) { return NULL; }
const char *blas_config(void) { return NULL; }

#else

const char *blas_name(void) { return "OpenBLAS"; }
int blas_set_threads(int n) {
    openblas_set_num_threads(n);
    return 0;
}
const char *blas_core_name(void) { return openblas_get_corename(); }
const char *blas_config(void) { return openblas_get_config(); }

#endif
