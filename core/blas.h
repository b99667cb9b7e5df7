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
