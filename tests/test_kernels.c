/* test_kernels.c: every kernel set this build has and this CPU runs (core/kernels.h: portable, and
 * SSE2 / AVX2 / AVX-512 on x86-64, NEON on arm64), each kernel against a plain double reference at
 * odd sizes and row strides: the small product for every transpose case, alpha and beta, a NaN under
 * beta 0, K past one pass; the decoding rows over float and bf16 rows (every head size's tail); the
 * sets that share the row intrinsics giving the same bits; and the choice itself (the widest runnable set by
 * default, PELAB_ISA's names, the refusals, through ./pelab too, and bench's line naming the set). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/kernels.h"
#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../model/bf16.h"
#include "test.h"

static void fill(float *x, size_t n, Rng *rng) {
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_f32(rng) - 1.0f;
}

/* ---- the small product ---- */

typedef struct {
    int M, N, K;
} Shape;

/* one set's gemm on one case against a double product; the largest error over the bound
 * (|alpha| K + |beta|) 1e-6 (> 1 fails), past column N of C untouched; C's bits in got */
static double gemm_case(const Kernels *k, int ta, int tb, Shape s, float alpha, float beta, int pad, Rng *rng,
                        float **got) {
    int lda = (ta ? s.M : s.K) + pad, ldb = (tb ? s.K : s.N) + pad, ldc = s.N + pad;
    size_t na = (size_t)(ta ? s.K : s.M) * lda, nb = (size_t)(tb ? s.N : s.K) * ldb, nc = (size_t)s.M * ldc;
    float *A = xmalloc(na * sizeof(float)), *B = xmalloc(nb * sizeof(float));
    float *C = xmalloc(nc * sizeof(float)), *C0 = xmalloc(nc * sizeof(float));
    fill(A, na, rng), fill(B, nb, rng), fill(C, nc, rng);
    if (beta == 0.0f) C[0] = NAN; /* never read under beta 0 */
    memcpy(C0, C, nc * sizeof(float));
    k->gemm(ta, tb, s.M, s.N, s.K, alpha, A, lda, B, ldb, beta, C, ldc);
    double worst = 0.0, bound = (fabsf(alpha) * s.K + fabsf(beta)) * 1e-6;
    for (int i = 0; i < s.M; i++)
        for (int j = 0; j < ldc; j++) {
            size_t at = (size_t)i * ldc + j;
            if (j >= s.N) { /* the stride's padding */
                if (memcmp(&C[at], &C0[at], sizeof(float)) != 0) worst = INFINITY;
                continue;
            }
            double ref = beta != 0.0f ? (double)beta * C0[at] : 0.0;
            double sum = 0.0;
            for (int p = 0; p < s.K; p++)
                sum += (double)(ta ? A[(size_t)p * lda + i] : A[(size_t)i * lda + p]) *
                       (tb ? B[(size_t)j * ldb + p] : B[(size_t)p * ldb + j]);
            double err = fabs(C[at] - (ref + alpha * sum)) / bound;
            worst = worse(worst, err != err ? INFINITY : err);
        }
    free(A), free(B), free(C0);
    *got = C;
    return worst;
}

static const Shape shapes[] = {{1, 1, 1},   {1, 16, 16},  {3, 5, 7},    {7, 17, 3},  {8, 32, 64},  {9, 33, 65},
                               {13, 15, 1}, {6, 31, 300}, {64, 16, 64}, {5, 64, 257}, {17, 40, 33}, {37, 47, 513}};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };
static const float scalars[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, -2.0f}, {-1.5f, 0.0f}};

static void gemm_against_double(const Kernels *k) {
    Rng rng;
    rng_seed(&rng, 36);
    double worst = 0.0;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int s = 0; s < N_SHAPES; s++)
                for (int c = 0; c < 4; c++) {
                    float *C;
                    worst = worse(worst, gemm_case(k, ta, tb, shapes[s], scalars[c][0], scalars[c][1], s % 3 * 3, &rng, &C));
                    free(C);
                }
    CHECK(worst <= 1.0, "%s gemm: NN NT TN TT x %d shapes x 4 (alpha, beta), padded strides, equals a double product "
                        "within (|alpha| K + |beta|) 1e-6, padding untouched, NaN under beta 0 gone: worst %.3g of it",
          k->name, N_SHAPES, worst);
    float Cz[6] = {1, 2, 3, 4, 5, 6}, Z[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
    k->gemm(0, 0, 2, 3, 0, 1.0f, NULL, 1, NULL, 3, 2.0f, Cz, 3);
    k->gemm(1, 1, 2, 3, 0, 1.0f, NULL, 1, NULL, 3, 0.0f, Z, 3);
    CHECK(Cz[0] == 2 && Cz[5] == 12 && Z[0] == 0 && Z[5] == 0, "%s gemm, K = 0: C = beta C, and 0 (not NaN) under beta 0",
          k->name);
}

/* ---- the decoding rows ---- */

enum { MAXN = 67, MAXHD = 136 };

/* one set's dot_rows and weighted_rows over float and bf16 rows against double sums: the worst
 * |error| over (1 + sum |terms|) 1e-6 (> 1 fails); the outputs of every case appended to log */
static double rows_against_double(const Kernels *k, float *log, size_t *logged) {
    static const int hds[] = {1, 3, 4, 7, 8, 12, 16, 20, 24, 33, 36, 40, 64, 72, 128, 136};
    static const int ns[] = {0, 1, 3, 4, 7, 8, 9, 17, 64, 67};
    Rng rng;
    rng_seed(&rng, 8);
    size_t ld_max = MAXHD + 5;
    float *rows = xmalloc(sizeof(float) * MAXN * ld_max), x[MAXHD], w[MAXN], out[MAXHD + 1], got[MAXN + 1];
    bf16 *rows16 = xmalloc(sizeof(bf16) * MAXN * ld_max);
    for (size_t i = 0; i < MAXN * ld_max; i++) rows[i] = rng_normal(&rng), rows16[i] = bf16_from_float(rows[i]);
    for (int i = 0; i < MAXHD; i++) x[i] = rng_normal(&rng);
    for (int i = 0; i < MAXN; i++) w[i] = rng_f32(&rng);
    double worst = 0.0;
    for (size_t a = 0; a < sizeof hds / sizeof hds[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
            for (int strided = 0; strided < 2; strided++)
                for (int half = 0; half < 2; half++) {
                    int hd = hds[a], n = ns[b];
                    size_t ld = strided ? (size_t)hd + 5 : (size_t)hd;
                    const void *r = half ? (const void *)rows16 : (const void *)rows;
#define ROW(j, d) (half ? bf16_to_float(rows16[(size_t)(j) * ld + (d)]) : rows[(size_t)(j) * ld + (d)])
                    got[n] = out[hd] = 12345.0f; /* a sentinel past the end */
                    k->dot_rows(r, half, ld, n, x, hd, 0.5f, got);
                    for (int j = 0; j < n; j++) {
                        double s = 0, mag = 0;
                        for (int d = 0; d < hd; d++) s += (double)ROW(j, d) * x[d], mag += fabs((double)ROW(j, d) * x[d]);
                        worst = worse(worst, fabs(0.5 * s - got[j]) / ((1.0 + mag) * 1e-6));
                    }
                    for (int d = 0; d < hd; d++) out[d] = NAN; /* overwritten, never read */
                    k->weighted_rows(r, half, ld, n, w, hd, out);
                    for (int d = 0; d < hd; d++) {
                        double s = 0, mag = 0;
                        for (int j = 0; j < n; j++) s += (double)w[j] * ROW(j, d), mag += fabs((double)w[j] * ROW(j, d));
                        double err = fabs(s - out[d]) / ((1.0 + mag) * 1e-6);
                        worst = worse(worst, err != err ? INFINITY : err);
                    }
#undef ROW
                    if (got[n] != 12345.0f || out[hd] != 12345.0f) worst = INFINITY;
                    if (hd % 8) continue; /* the intrinsics' cases only: the loops of the tails vectorize per ISA */
                    memcpy(log + *logged, got, (size_t)(n / 8 * 8) * sizeof(float)), *logged += (size_t)(n / 8 * 8);
                    memcpy(log + *logged, out, (size_t)hd * sizeof(float)), *logged += (size_t)hd;
                }
    free(rows), free(rows16);
    return worst;
}

enum { LOG_CAP = 16 * 10 * 4 * (MAXN + MAXHD) };

/* ---- the choice ---- */

static void choice(void) {
    const Kernels *def = kernels();
    CHECK(def && kernels_get(def->isa) == def, "a kernel set is chosen (%s), and it is one this CPU runs",
          def ? def->name : "none");
    int wider = 0; /* a runnable set wider than the default: the choice would be wrong */
    if (def->isa == ISA_SSE2 || def->isa == ISA_PORTABLE) wider = kernels_get(ISA_AVX2) || kernels_get(ISA_AVX512);
    if (def->isa == ISA_AVX2) wider = kernels_get(ISA_AVX512) != NULL;
    if (def->isa == ISA_PORTABLE) wider = wider || kernels_get(ISA_SSE2) || kernels_get(ISA_NEON);
    const char *forced = getenv("PELAB_ISA"); /* run_tests honours it: then that set is the default */
    if (forced && *forced) CHECK(strcmp(def->name, forced) == 0, "PELAB_ISA=%s: the set in use is %s", forced, def->name);
    else CHECK(!wider, "the default set (%s) is the widest this CPU runs", def->name);
    CHECK(kernels_get(ISA_PORTABLE) != NULL, "the portable set is always there");
#if defined(__x86_64__)
    CHECK(kernels_get(ISA_SSE2) && !kernels_get(ISA_NEON), "x86-64: the SSE2 set is there, NEON is not");
#elif defined(__aarch64__)
    CHECK(kernels_get(ISA_NEON) && !kernels_get(ISA_SSE2) && !kernels_get(ISA_AVX2), "arm64: NEON is there, x86's are not");
#endif
    CHECK(kernels_force("avx3") == -1 && strstr(pelab_errmsg, "PELAB_ISA=avx3") && strstr(pelab_errmsg, "expected"),
          "PELAB_ISA=avx3 refused, naming the choices: %s", pelab_errmsg);
    const char *absent = kernels_get(ISA_NEON) ? "sse2" : "neon";
    CHECK(kernels_force(absent) == -1 && strstr(pelab_errmsg, "cannot run it") && strstr(pelab_errmsg, "portable"),
          "PELAB_ISA=%s (not this CPU's) refused, naming what runs: %s", absent, pelab_errmsg);
    CHECK(kernels() == def, "a refused PELAB_ISA leaves the choice as it was");
    int ok = 1;
    for (int i = 0; i < ISA_COUNT; i++) {
        const Kernels *k = kernels_get((KernelIsa)i);
        if (k) ok &= kernels_force(kernels_isa_name((KernelIsa)i)) == 0 && kernels() == k;
    }
    CHECK(ok, "PELAB_ISA=<each runnable set> chooses it");
    char line[256];
    kernels_force(def->name);
    kernels_report(line, sizeof line);
    CHECK(strstr(line, def->name) && strstr(line, "portable"), "the report names the set in use and the runnable: %s", line);
}

/* the command layer: PELAB_ISA reaches ./pelab, a bad one is one line and exit 1, bench names the set */
static void command_line(void) {
    expect_pelab_error("PELAB_ISA=avx3 ./pelab info", "PELAB_ISA=avx3: expected portable, sse2, avx2, avx512 or neon");
#if defined(__x86_64__) /* a bench under qemu takes minutes (its 1024^3 sgemm) */
    static char out[8192];
    int rc = run_pelab("PELAB_ISA=portable ./pelab bench --configs XS --workloads sample --precision fp32 --repeats 1 "
                       "--sample-tokens 4 --sample-batch 1 --no-fork 2>&1", out, sizeof out);
    CHECK(rc == 0 && strstr(out, "\nkernels: portable (") && strstr(out, "this CPU and build run: portable sse2"),
          "PELAB_ISA=portable pelab bench prints the set it runs and the runnable (exit %d): %.600s", rc, out);
#endif
}

void test_kernels(void) {
    command_line();
    const Kernels *def = kernels();
    choice();
    float *logs[ISA_COUNT] = {0};
    size_t logged[ISA_COUNT] = {0};
    int n_sets = 0;
    for (int i = 0; i < ISA_COUNT; i++) {
        const Kernels *k = kernels_get((KernelIsa)i);
        if (!k) {
            fprintf(stderr, "test_kernels: the %s set is not run (not this build's or this CPU's)\n",
                    kernels_isa_name((KernelIsa)i));
            continue;
        }
        n_sets++;
        gemm_against_double(k);
        logs[i] = xmalloc(LOG_CAP * sizeof(float));
        double worst = rows_against_double(k, logs[i], &logged[i]);
        CHECK(worst <= 1.0, "%s dot_rows and weighted_rows, float and bf16 rows, 16 head sizes x 10 row counts, "
                            "strided or not, equal double sums within (1 + sum |terms|) 1e-6, nothing written past "
                            "the end: worst %.3g of it", k->name, worst);
    }
    CHECK(n_sets >= 2, "at least the portable set and one for this CPU ran (%d)", n_sets);
    /* AVX-512's rows are AVX2's intrinsics (head sizes a multiple of 8): the same bits */
    if (logs[ISA_AVX2] && logs[ISA_AVX512]) {
        CHECK(logged[ISA_AVX2] == logged[ISA_AVX512] &&
                  memcmp(logs[ISA_AVX2], logs[ISA_AVX512], logged[ISA_AVX2] * sizeof(float)) == 0,
              "avx2 and avx512 rows, head sizes a multiple of 8 (dot_rows: whole groups of 8 keys): the same bits");
    }
    for (int i = 0; i < ISA_COUNT; i++) free(logs[i]);
    kernels_force(def->name);
}
