/* test_gemm.c: the small-shape product (core/gemm.h) against cblas_sgemm for every transpose case,
 * odd sizes (tails of the row tile and of the vector panel, K past one pass), row strides wider
 * than the rows, alpha and beta, a NaN under beta 0; and blas_sgemm's dispatch on both sides. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/blas.h"
#include "../core/gemm.h"
#include "../core/rng.h"
#include "test.h"

typedef struct {
    int M, N, K;
} Shape;

static void fill(float *x, size_t n, Rng *rng) {
    for (size_t i = 0; i < n; i++) x[i] = 2.0f * rng_f32(rng) - 1.0f;
}

/* gemm_small against cblas_sgemm on one shape, transposes and scalars; the largest error over the
 * bound (|alpha| K + |beta|) 1e-6, so > 1 fails */
static double one_case(int ta, int tb, Shape s, float alpha, float beta, int pad, Rng *rng) {
    int lda = (ta ? s.M : s.K) + pad, ldb = (tb ? s.K : s.N) + pad, ldc = s.N + pad;
    size_t na = (size_t)(ta ? s.K : s.M) * lda, nb = (size_t)(tb ? s.N : s.K) * ldb, nc = (size_t)s.M * ldc;
    float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
    float *C = malloc(nc * sizeof(float)), *R = malloc(nc * sizeof(float));
    fill(A, na, rng), fill(B, nb, rng), fill(C, nc, rng);
    memcpy(R, C, nc * sizeof(float));
    if (beta == 0.0f) /* BLAS never reads C under beta 0: a NaN there must not come out */
        C[0] = NAN, C[nc - 1] = NAN;
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, s.M, s.N, s.K, alpha, A,
                lda, B, ldb, beta, R, ldc);
    gemm_small(ta, tb, s.M, s.N, s.K, alpha, A, lda, B, ldb, beta, C, ldc);
    double worst = 0.0, bound = (fabsf(alpha) * s.K + fabsf(beta)) * 1e-6;
    for (int i = 0; i < s.M; i++)
        for (int j = 0; j < ldc; j++) {
            size_t at = (size_t)i * ldc + j;
            /* past column N (the padding): untouched, the NaN put there too */
            double err = j < s.N ? fabs((double)C[at] - R[at]) / bound
                                 : memcmp(&C[at], &R[at], sizeof(float)) == 0 || at == nc - 1 ? 0.0 : INFINITY;
            worst = worse(worst, err != err ? INFINITY : err);
        }
    free(A), free(B), free(C), free(R);
    return worst;
}

static void against_cblas(void) {
    const Shape shapes[] = {{1, 1, 1},    {1, 16, 16},  {3, 5, 7},     {7, 17, 3},    {8, 32, 64},  {9, 33, 65},
                            {13, 15, 1},  {6, 31, 300}, {64, 64, 16},  {64, 16, 64},  {67, 47, 255}, {5, 64, 257},
                            {17, 200, 33}, {256, 64, 64}, {64, 192, 256}, {40, 48, 600}};
    Rng rng;
    rng_seed(&rng, 26);
    const float scalars[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, -2.0f}, {-1.5f, 0.0f}};
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            double worst = 0.0;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int k = 0; k < 4; k++)
                    worst = worse(worst, one_case(ta, tb, shapes[s], scalars[k][0], scalars[k][1], (int)(s % 3) * 3, &rng));
            CHECK(worst <= 1.0, "gemm_small %s%s equals cblas_sgemm within (|alpha| K + |beta|) 1e-6 on 16 shapes x 4 "
                                "(alpha, beta), padded strides, NaN under beta 0 gone: worst %.3g of the bound",
                  ta ? "T" : "N", tb ? "T" : "N", worst);
        }
}

/* K = 0: C = beta C (BLAS's rule), nothing else read */
static void empty_k(void) {
    float C[6] = {1, 2, 3, 4, 5, 6}, Z[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
    gemm_small(0, 0, 2, 3, 0, 1.0f, NULL, 1, NULL, 3, 2.0f, C, 3);
    gemm_small(1, 1, 2, 3, 0, 1.0f, NULL, 1, NULL, 3, 0.0f, Z, 3);
    CHECK(C[0] == 2 && C[5] == 12 && Z[0] == 0 && Z[5] == 0, "K = 0: C = beta C, and 0 (not NaN) under beta 0");
}

/* blas_sgemm: the same answer whichever side of BLAS_SMALL_MACS and BLAS_SMALL_MIN_ROWS (a decoded
 * token's one row); the same bits on every call */
static void dispatch(void) {
    Rng rng;
    rng_seed(&rng, 7);
    const Shape sides[] = {{64, 64, 64}, {384, 384, 256}, {1, 288, 288}}; /* 2^18, 2^25.2; one row */
    for (int s = 0; s < 3; s++) {
        Shape sh = sides[s];
        size_t na = (size_t)sh.M * sh.K, nb = (size_t)sh.K * sh.N, nc = (size_t)sh.M * sh.N;
        float *A = malloc(na * sizeof(float)), *B = malloc(nb * sizeof(float));
        float *C = malloc(nc * sizeof(float)), *C2 = malloc(nc * sizeof(float)), *R = malloc(nc * sizeof(float));
        fill(A, na, &rng), fill(B, nb, &rng);
        blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.M, sh.N, sh.K, 1.0f, A, sh.K, B, sh.K, 0.0f, C, sh.N);
        blas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.M, sh.N, sh.K, 1.0f, A, sh.K, B, sh.K, 0.0f, C2, sh.N);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sh.M, sh.N, sh.K, 1.0f, A, sh.K, B, sh.K, 0.0f, R, sh.N);
        float d = max_abs_diff(C, R, (int)nc);
        CHECK(d <= sh.K * 1e-6f && memcmp(C, C2, nc * sizeof(float)) == 0,
              "blas_sgemm %dx%dx%d (%s): cblas's answer (max diff %g), the same bits twice", sh.M, sh.N, sh.K,
              sh.M >= BLAS_SMALL_MIN_ROWS && (long long)sh.M * sh.N * sh.K <= BLAS_SMALL_MACS ? "gemm_small" : "cblas", d);
        free(A), free(B), free(C), free(C2), free(R);
    }
}

void test_gemm(void) {
    against_cblas();
    empty_k();
    dispatch();
}
