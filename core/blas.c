/* blas.c: what only OpenBLAS can answer, and the refusal where another BLAS is linked (blas.h). */
#include "blas.h"

#include "error.h"

/* blas_sgemm is in kernels.c, beside gemm_small (its comment says why) */

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
