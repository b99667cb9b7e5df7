/* kern_sse2.c: the kernels for x86-64's baseline (kernels.h): compiled with -mno-avx (Makefile:
 * KERN_FLAGS), so nothing past SSE2 reaches them whatever the build's -march. 16 xmm registers:
 * tiles of 6 rows x 2 vectors of 4 (12 sums, 2 of B, 1 broadcast); no FMA. */
#include "kernels.h"

#if defined(__x86_64__) && defined(__SSE2__) && !defined(__AVX__)
#define KERN_VL 4
#define KERN_ROWS 6
#include "kern_gemm.h"
#include "kern_rows.h"

static const Kernels set = {ISA_SSE2, "sse2", "gemm 6x8 xmm tiles; rows: plain loops (SSE2, no FMA)", kern_gemm,
                            kern_dot_rows, kern_weighted_rows};
const Kernels *const kern_set_sse2 = &set;
#else
const Kernels *const kern_set_sse2 = NULL; /* not x86-64, or built without KERN_FLAGS */
#endif
