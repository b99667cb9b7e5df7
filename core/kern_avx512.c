/* kern_avx512.c: the kernels for x86-64 with AVX-512F (kernels.h), compiled with -mavx512f
 * (Makefile: KERN_FLAGS). 32 zmm registers: gemm tiles of 8 rows x 2 vectors of 16 (16 sums); the
 * rows are AVX2's (the same bits: a head of 16-128 floats gains nothing from wider loads). */
#include "kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX2__) && defined(__FMA__)
#define KERN_VL 16
#define KERN_ROWS 8
#define KERN_ROWS_AVX2 1
#include "kern_gemm.h"
#include "kern_rows.h"

static const Kernels set = {ISA_AVX512, "avx512", "gemm 8x32 zmm tiles (FMA); rows: AVX2+FMA, 8 keys per step",
                            kern_gemm, kern_dot_rows, kern_weighted_rows};
const Kernels *const kern_set_avx512 = &set;
#else
const Kernels *const kern_set_avx512 = NULL; /* not x86-64, or built without KERN_FLAGS */
#endif
