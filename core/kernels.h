/* kernels.h: the hand-written inner loops (the small-shape product of gemm.h, the decoding rows of
 * model/dot_rows.h, which are also the bf16-weight decoding product of model/bf16.h) in one set per
 * instruction set, chosen once at run time from what the CPU offers (cpu.h), so one binary runs
 * well on AVX2, AVX-512 and arm64 and never executes an instruction the CPU lacks. Each set lives in
 * a file of its own (core/kern_<isa>.c) compiled with that ISA's flags (Makefile: KERN_FLAGS), from
 * the templates core/kern_gemm.h and core/kern_rows.h; the build's own flags reach only the portable
 * set. Products are deterministic per set: the same inputs give the same bits on 1 or 16 threads;
 * different sets may round differently (FMA or not). */
#ifndef PELAB_KERNELS_H
#define PELAB_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef enum { ISA_PORTABLE, ISA_SSE2, ISA_AVX2, ISA_AVX512, ISA_NEON, ISA_COUNT } KernelIsa;

typedef struct {
    KernelIsa isa;
    const char *name;    /* "avx2": what PELAB_ISA takes */
    const char *summary; /* what each kernel is, for pelab bench */
    /* gemm_small (gemm.h), same contract */
    void (*gemm)(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                 int ldb, float beta, float *C, int ldc);
    /* dot_rows / weighted_rows (model/dot_rows.h); rows are float32, or bf16 (uint16_t) when is_bf16 */
    void (*dot_rows)(const void *rows, int is_bf16, size_t ld, int n, const float *x, int hd, float scale, float *out);
    void (*weighted_rows)(const void *rows, int is_bf16, size_t ld, int n, const float *w, int hd, float *out);
} Kernels;

/* the set in use: the widest this CPU runs, or the one kernels_force chose; chosen at the first call */
const Kernels *kernels(void);
/* the set for isa if this build has it and this CPU can run it, else NULL */
const Kernels *kernels_get(KernelIsa isa);
/* "portable", "sse2", "avx2", "avx512", "neon" */
const char *kernels_isa_name(KernelIsa isa);
/* use the set named (PELAB_ISA=avx2 emulates an AVX2-only CPU on a newer one): 0, or -1 with one
 * message naming the sets this CPU runs */
int kernels_force(const char *name);
/* one line: "kernels: avx2 (gemm 6x16 ymm tiles, ...); CPU runs: portable sse2 avx2 avx512" */
void kernels_report(char *buf, size_t n);

#endif
