/* test_cpu.c: what pelab says about the BLAS and the CPU (core/cpu.h): OpenBLAS core names to
 * kernel families, the warning for kernels narrower than the CPU (on constructed cases: the tests
 * never change OPENBLAS_CORETYPE), the instruction sets against /proc/cpuinfo, and `pelab info`. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "../core/blas.h"
#include "../core/cpu.h"
#include "../core/error.h"
#include "../model/bf16.h"
#include "test.h"

static void families(void) {
    CHECK(blas_family("Haswell") == BLAS_AVX2 && blas_family("haswell") == BLAS_AVX2 && blas_family("Zen") == BLAS_AVX2,
          "Haswell and Zen kernels are AVX2 (case ignored)");
    CHECK(blas_family("SkylakeX") == BLAS_AVX512 && blas_family("Cooperlake") == BLAS_AVX512, "SkylakeX: AVX-512");
    CHECK(blas_family("Prescott") == BLAS_SSE && blas_family("Nehalem") == BLAS_SSE && blas_family("Sandybridge") == BLAS_AVX,
          "Prescott and Nehalem: SSE; Sandybridge: AVX");
    CHECK(blas_family("Frobnicator") == BLAS_UNKNOWN && blas_family(NULL) == BLAS_UNKNOWN, "unknown names: unknown");
    CHECK(strcmp(blas_family_name(BLAS_AVX512), "AVX-512") == 0, "family names");
}

static void narrow_warning(void) {
    char msg[512];
    CpuIsa avx2 = {.fma = 1, .avx2 = 1}, avx512 = {.fma = 1, .avx2 = 1, .avx512f = 1}, old = {0};
    CHECK(blas_narrow_kernels("Prescott", &avx2, msg, sizeof msg) == 1 && strstr(msg, "Prescott (SSE)") &&
              strstr(msg, "OPENBLAS_CORETYPE=Haswell"),
          "SSE kernels on an AVX2 CPU: warned, with the remedy: %s", msg);
    CHECK(blas_narrow_kernels("Sandybridge", &avx512, msg, sizeof msg) == 1 && strstr(msg, "AVX-512") &&
              strstr(msg, "OPENBLAS_CORETYPE=SkylakeX"),
          "AVX kernels on an AVX-512 CPU: warned: %s", msg);
    CHECK(blas_narrow_kernels("Haswell", &avx512, msg, sizeof msg) == 0 &&
              blas_narrow_kernels("SkylakeX", &avx512, msg, sizeof msg) == 0 &&
              blas_narrow_kernels("Prescott", &old, msg, sizeof msg) == 0 &&
              blas_narrow_kernels(NULL, &avx2, msg, sizeof msg) == 0 &&
              blas_narrow_kernels("Frobnicator", &avx2, msg, sizeof msg) == 0,
          "no warning for AVX2 kernels, a CPU without AVX2, or a BLAS that is not OpenBLAS");
}

#if defined(__x86_64__) || defined(__i386__)
/* 1 if /proc/cpuinfo's first "flags" line has the word flag; -1 without /proc/cpuinfo */
static int cpuinfo_flag(const char *flag) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return -1;
    static char line[8192];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            char want[64];
            snprintf(want, sizeof want, " %s ", flag);
            line[strcspn(line, "\n")] = ' ';
            found = strstr(line, want) != NULL;
            break;
        }
    fclose(f);
    return found;
}

#endif

static void isa_matches_kernel(void) {
    CpuIsa isa;
    cpu_isa(&isa);
#if defined(__x86_64__) || defined(__i386__)
    if (cpuinfo_flag("fpu") < 0) {
        fprintf(stderr, "  skip: no /proc/cpuinfo to check cpuid against\n");
        return;
    }
    struct { const char *flag; int have; } f[] = {{"fma", isa.fma}, {"avx2", isa.avx2}, {"avx512f", isa.avx512f},
                                                 {"avx512_bf16", isa.avx512bf16}, {"amx_bf16", isa.amx_bf16},
                                                 {"amx_tile", isa.amx_tile}};
    /* fma, avx2, avx512f: every kernel names them, so both must agree; a kernel older than the newer
     * flags may not list them, so there only what it lists must be detected */
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        int listed = cpuinfo_flag(f[i].flag);
        CHECK(i < 3 ? f[i].have == listed : (!listed || f[i].have), "cpuid says %s = %d, /proc/cpuinfo %d", f[i].flag,
              f[i].have, listed);
    }
#else
    /* cpuid is x86's: elsewhere every flag is 0 (and qemu-user shows the host's /proc/cpuinfo) */
    CHECK(!isa.fma && !isa.avx2 && !isa.avx512f && !isa.avx512bf16 && !isa.amx_tile && !isa.amx_bf16,
          "off x86 no x86 instruction set is reported");
#endif
#ifdef PELAB_BLAS_ACCELERATE
    CHECK(!blas_core_name() && blas_set_threads(omp_get_max_threads()) != 0 && strstr(pelab_errmsg, "VECLIB_MAXIMUM_THREADS"),
          "Accelerate: no OpenBLAS core, and its thread count refused with the reason: %s", pelab_errmsg);
    return;
#endif
    CHECK(blas_set_threads(omp_get_max_threads()) == 0, "OpenBLAS takes a thread count");
    const char *core = blas_core_name();
    CHECK(core && *core && blas_config(), "the linked OpenBLAS names its core: %s", core ? core : "(none)");
    if (core && blas_family(core) == BLAS_UNKNOWN) /* a core this table lacks: said, not a failure */
        fprintf(stderr, "  note: OpenBLAS core %s is not in core/cpu.c's family table\n", core);
}

static void info_command(void) {
    static char out[4096];
    int rc = run_pelab("./pelab info", out, sizeof out);
    char want[64];
    snprintf(want, sizeof want, "BLAS: %s", blas_name());
    /* the line opens the output, or follows the warning about a BLAS core below the CPU (stderr) */
    const char *blas_line = strncmp(out, "pelab: warning: ", 16) == 0 && strchr(out, '\n') ? strchr(out, '\n') + 1 : out;
    CHECK(rc == 0 && strncmp(blas_line, want, strlen(want)) == 0 && strstr(blas_line, " kernels); CPU: "),
          "pelab info without a checkpoint: the BLAS and CPU line (exit %d): %s", rc, out);
    /* the bf16 line agrees with what the library says of this CPU and build */
    char why[160];
    int bf16 = bf16_native(why, sizeof why);
    const char *line = strstr(out, bf16 ? "\nbf16 products: " : "\nbf16 weights: ");
    CHECK(line && (bf16 ? strstr(line, "oneDNN ") && strstr(line, "--precision bf16") != NULL
                        : strstr(line, "widened to fp32 in registers") && strstr(line, why) != NULL),
          "pelab info: a bf16 line that says %s: %s", bf16 ? "which oneDNN runs them" : why, out);
    rc = run_pelab("./pelab info a b", out, sizeof out);
    CHECK(rc != 0, "pelab info with two paths is refused: %s", out);
}

void test_cpu(void) {
    families();
    narrow_warning();
    isa_matches_kernel();
    info_command();
}
