/* kern_neon.c: the kernels for arm64 (kernels.h; NEON is part of every arm64 CPU). 32 vector
 * registers: gemm tiles of 6 rows x 2 pairs of registers (24 sums, 4 of B, 1 broadcast); rows: four
 * keys per step with two sums each, the weighted sum holding 32 output columns in 16 registers. */
#include "kernels.h"

#if defined(__aarch64__) && defined(__ARM_NEON)
#define KERN_VL 8
#define KERN_ROWS 6
#define KERN_ROWS_NEON 1
#include "kern_gemm.h"
#include "kern_rows.h"

static const Kernels set = {ISA_NEON, "neon", "gemm 6x16 tiles (2 q registers a vector, FMA); rows: NEON, 4 keys per step",
                            kern_gemm, kern_dot_rows, kern_weighted_rows};
const Kernels *const kern_set_neon = &set;
#else
const Kernels *const kern_set_neon = NULL; /* not arm64 */
#endif
