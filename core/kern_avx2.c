/* kern_avx2.c: the kernels for x86-64 with AVX2 and FMA but no AVX-512 (kernels.h): compiled with
 * -mavx2 -mfma -mno-avx512f (Makefile: KERN_FLAGS), so they run on the CPUs most laptops have even
 * from a binary built on an AVX-512 machine. 16 ymm registers: gemm tiles of 6 rows x 2 vectors of
 * 8 (12 sums, 2 of B, 1 broadcast); rows: eight keys per step folded in registers, the weighted sum
 * holding 32 output columns in 8 registers. */
#include "kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#define KERN_VL 8
#define KERN_ROWS 6
#define KERN_ROWS_AVX2 1
#include "kern_gemm.h"
#include "kern_rows.h"

static const Kernels set = {ISA_AVX2, "avx2", "gemm 6x16 ymm tiles (FMA); rows: AVX2+FMA, 8 keys per step",
                            kern_gemm, kern_dot_rows, kern_weighted_rows};
const Kernels *const kern_set_avx2 = &set;
#else
const Kernels *const kern_set_avx2 = NULL; /* not x86-64, or built without KERN_FLAGS */
#endif
