/* cpu.c: instruction sets from cpuid/xgetbv, and the OpenBLAS kernel family (cpu.h). */
#include "cpu.h"

#include "blas.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long xgetbv0(void) {
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

void cpu_isa(CpuIsa *isa) {
    memset(isa, 0, sizeof *isa);
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int osxsave = (c >> 27) & 1;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    int ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0, tiles = (xcr0 & 0x60000) == 0x60000;
    isa->fma = ymm && ((c >> 12) & 1);
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    isa->avx2 = ymm && ((b >> 5) & 1);
    isa->avx512f = zmm && ((b >> 16) & 1);
    isa->amx_bf16 = tiles && ((d >> 22) & 1);
    isa->amx_tile = tiles && ((d >> 24) & 1);
    unsigned a1, b1, c1, d1;
    if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) isa->avx512bf16 = zmm && ((a1 >> 5) & 1);
}
#else
void cpu_isa(CpuIsa *isa) { memset(isa, 0, sizeof *isa); }
#endif

void cpu_isa_str(const CpuIsa *isa, char *buf, size_t n) {
#if !defined(__x86_64__) && !defined(__i386__)
    (void)isa; /* the x86 instruction sets mean nothing here: the architecture instead */
#if defined(__aarch64__)
    snprintf(buf, n, "arm64 (aarch64)");
#else
    snprintf(buf, n, "not x86");
#endif
    return;
#endif
    snprintf(buf, n, "%s%s%s%s%s%s", isa->fma ? "FMA " : "", isa->avx2 ? "AVX2 " : "no AVX2 ",
             isa->avx512f ? "AVX-512F " : "", isa->avx512bf16 ? "AVX512_BF16 " : "", isa->amx_tile ? "AMX-TILE " : "",
             isa->amx_bf16 ? "AMX-BF16 " : "");
    size_t len = strlen(buf);
    if (len && buf[len - 1] == ' ') buf[len - 1] = 0;
}

BlasFamily blas_family(const char *core) {
    static const struct { const char *name; BlasFamily f; } table[] = {
        {"SkylakeX", BLAS_AVX512}, {"Cooperlake", BLAS_AVX512}, {"SapphireRapids", BLAS_AVX512},
        {"Haswell", BLAS_AVX2},    {"Zen", BLAS_AVX2},          {"Excavator", BLAS_AVX2},
        {"Sandybridge", BLAS_AVX}, {"Bulldozer", BLAS_AVX},     {"Piledriver", BLAS_AVX},
        {"Steamroller", BLAS_AVX}, {"Prescott", BLAS_SSE},      {"Core2", BLAS_SSE},
        {"Penryn", BLAS_SSE},      {"Dunnington", BLAS_SSE},    {"Nehalem", BLAS_SSE},
        {"Atom", BLAS_SSE},        {"Opteron", BLAS_SSE},       {"Opteron_SSE3", BLAS_SSE},
        {"Barcelona", BLAS_SSE},   {"Bobcat", BLAS_SSE},        {"Katmai", BLAS_SSE},
        {"Coppermine", BLAS_SSE},  {"Northwood", BLAS_SSE},     {"Banias", BLAS_SSE},
    };
    for (size_t i = 0; core && i < sizeof table / sizeof table[0]; i++)
        if (strcasecmp(core, table[i].name) == 0) return table[i].f;
    return BLAS_UNKNOWN;
}

const char *blas_family_name(BlasFamily f) {
    static const char *const names[] = {"SSE", "AVX", "AVX2", "AVX-512", "unknown"};
    return names[f];
}

void blas_report(char *buf, size_t n) {
    CpuIsa isa;
    cpu_isa(&isa);
    char isa_s[96];
    cpu_isa_str(&isa, isa_s, sizeof isa_s);
    const char *core = blas_core_name(), *config = blas_config();
    if (!core) snprintf(buf, n, "BLAS: %s (kernel family unknown); CPU: %s", blas_name(), isa_s);
    else snprintf(buf, n, "BLAS: %s, core %s (%s kernels); CPU: %s", config ? config : "OpenBLAS", core,
                  blas_family_name(blas_family(core)), isa_s);
}

int blas_narrow_kernels(const char *core, const CpuIsa *isa, char *buf, size_t n) {
    BlasFamily f = blas_family(core);
    if (!core || !isa->avx2 || (f != BLAS_SSE && f != BLAS_AVX)) return 0;
    snprintf(buf, n, "warning: OpenBLAS runs its %s (%s) kernels on a CPU with AVX2%s: matrix products may be several "
                     "times slower; set OPENBLAS_CORETYPE=%s before running pelab",
             core, blas_family_name(f), isa->avx512f ? " and AVX-512" : "", isa->avx512f ? "SkylakeX" : "Haswell");
    return 1;
}
