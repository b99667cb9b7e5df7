/* kernels.c: which kernel set runs (kernels.h): the widest this build has and this CPU runs, unless
 * kernels_force named another. */
#include "kernels.h"

#include <stdio.h>
#include <string.h>

#include "blas.h"
#include "cpu.h"
#include "error.h"
#include "gemm.h"

/* each set's file defines its pointer: NULL where that file was built for another CPU family or
 * without its flags */
extern const Kernels *const kern_set_portable, *const kern_set_sse2, *const kern_set_avx2, *const kern_set_avx512,
    *const kern_set_neon;

static const char *const isa_names[ISA_COUNT] = {"portable", "sse2", "avx2", "avx512", "neon"};

const char *kernels_isa_name(KernelIsa isa) { return isa >= 0 && isa < ISA_COUNT ? isa_names[isa] : "unknown"; }

/* whether this CPU runs isa's instructions (cpu_isa: cpuid and the OS's saved state) */
static int cpu_runs(KernelIsa isa) {
    CpuIsa c;
    cpu_isa(&c);
    switch (isa) {
    case ISA_PORTABLE: return 1;
#if defined(__x86_64__)
    case ISA_SSE2: return 1; /* x86-64's baseline */
#endif
    case ISA_AVX2: return c.avx2 && c.fma;
    case ISA_AVX512: return c.avx512f && c.avx2 && c.fma;
#if defined(__aarch64__)
    case ISA_NEON: return 1; /* every arm64 CPU */
#endif
    default: return 0;
    }
}

const Kernels *kernels_get(KernelIsa isa) {
    const Kernels *all[ISA_COUNT] = {kern_set_portable, kern_set_sse2, kern_set_avx2, kern_set_avx512, kern_set_neon};
    if (isa < 0 || isa >= ISA_COUNT || !all[isa]) return NULL;
    return cpu_runs(isa) ? all[isa] : NULL;
}

/* the chosen set; written once per choice (every thread that races at the first call writes the
 * same pointer) */
static const Kernels *chosen;

const Kernels *kernels(void) {
    const Kernels *k = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (k) return k;
    static const KernelIsa widest_first[] = {ISA_AVX512, ISA_AVX2, ISA_NEON, ISA_SSE2, ISA_PORTABLE};
    for (size_t i = 0; i < sizeof widest_first / sizeof widest_first[0] && !k; i++) k = kernels_get(widest_first[i]);
    __atomic_store_n(&chosen, k, __ATOMIC_RELEASE);
    return k;
}

/* "portable sse2 avx2" : the sets this build has and this CPU runs */
static void runnable(char *buf, size_t n) {
    buf[0] = 0;
    for (int i = 0; i < ISA_COUNT; i++)
        if (kernels_get((KernelIsa)i)) {
            size_t used = strlen(buf);
            snprintf(buf + used, n - used, "%s%s", used ? " " : "", isa_names[i]);
        }
}

int kernels_force(const char *name) {
    for (int i = 0; i < ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0) {
            const Kernels *k = kernels_get((KernelIsa)i);
            char can[96];
            runnable(can, sizeof can);
            if (!k) return pelab_fail("PELAB_ISA=%s: this %s cannot run it (this one runs: %s)", name,
                                      cpu_runs((KernelIsa)i) ? "build" : "CPU", can);
            __atomic_store_n(&chosen, k, __ATOMIC_RELEASE);
            return 0;
        }
    return pelab_fail("PELAB_ISA=%s: expected portable, sse2, avx2, avx512 or neon", name);
}

void kernels_report(char *buf, size_t n) {
    const Kernels *k = kernels();
    char can[96];
    runnable(can, sizeof can);
    snprintf(buf, n, "kernels: %s (%s); this CPU and build run: %s; PELAB_ISA chooses", k->name, k->summary, can);
}

/* gemm.h's product and blas.h's blas_sgemm, which chooses it, here rather than in gemm.c and blas.c:
 * this file reads cpu.h, cpu.c reads blas.h, and blas.c calling back into the kernels would close a
 * cycle */
void gemm_small(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc) {
    kernels()->gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void blas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b, int M, int N,
                int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc) {
    if (order == CblasRowMajor && M >= BLAS_SMALL_MIN_ROWS && (long long)M * N * K <= BLAS_SMALL_MACS)
        gemm_small(trans_a != CblasNoTrans, trans_b != CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        cblas_sgemm(order, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
