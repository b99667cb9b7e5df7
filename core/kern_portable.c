/* kern_portable.c: the kernels for any CPU (kernels.h): GNU C vectors of 8 floats that the compiler
 * maps onto the build's own instructions (two NEON or SSE registers, one ymm), 6-row tiles, and
 * plain row loops. Compiled with the build's flags alone. */
#include "kernels.h"

#define KERN_VL 8
#define KERN_ROWS 6
#include "kern_gemm.h"
#include "kern_rows.h"

static const Kernels set = {ISA_PORTABLE, "portable", "gemm 6x16 tiles of C vectors; rows: plain loops", kern_gemm,
                            kern_dot_rows, kern_weighted_rows};
const Kernels *const kern_set_portable = &set;
