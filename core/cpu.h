/* cpu.h: what the CPU and the linked BLAS run: the instruction sets the CPU offers (and the OS has
 * enabled), and the kernel family OpenBLAS chose. A BLAS that runs generic kernels on a CPU with
 * AVX2 loses most of its speed without a sign (seen 2026-12-01: "Prescott" kernels on an AVX-512 Xeon, 5x
 * slower); pelab says so. */
#ifndef PELAB_CPU_H
#define PELAB_CPU_H

#include <stddef.h>

typedef struct {
    int fma, avx2, avx512f, avx512bf16, amx_tile, amx_bf16; /* usable: the CPU has it, the OS saves its state */
} CpuIsa;

/* the running CPU (cpuid and xgetbv; all 0 off x86-64) */
void cpu_isa(CpuIsa *isa);
/* "FMA AVX2 AVX-512F AVX512_BF16", or "no AVX2"; off x86 the architecture ("arm64 (aarch64)") */
void cpu_isa_str(const CpuIsa *isa, char *buf, size_t n);

/* the widest vector extension a kernel family uses */
typedef enum { BLAS_SSE, BLAS_AVX, BLAS_AVX2, BLAS_AVX512, BLAS_UNKNOWN } BlasFamily;
/* OpenBLAS's core name ("Haswell", "SkylakeX", "Prescott", ...) to its family (case ignored) */
BlasFamily blas_family(const char *core);
const char *blas_family_name(BlasFamily f); /* "SSE", "AVX", "AVX2", "AVX-512", "unknown" */

/* One line on what the matrix products run on: "OpenBLAS 0.3.21 ..., core Haswell (AVX2 kernels);
 * CPU: FMA AVX2 AVX-512F AVX512_BF16". */
void blas_report(char *buf, size_t n);
/* the warning when the BLAS runs kernels narrower than the CPU offers: pre-AVX2 kernels on an AVX2
 * CPU (a large loss: said as a warning with the remedy, OPENBLAS_CORETYPE); returns 1 and fills buf,
 * else 0. Pure: core and isa given. */
int blas_narrow_kernels(const char *core, const CpuIsa *isa, char *buf, size_t n);

#endif
