#include "dot_rows.h"

#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DOT_ROWS_AVX2 1
#endif

/* element `at` of float rows, or of bf16 rows widened (IS_BF16 a constant: each caller is compiled
 * for one) */
static inline __attribute__((always_inline)) float load1(const void *rows, size_t at, const int IS_BF16) {
    return IS_BF16 ? bf16_to_float(((const bf16 *)rows)[at]) : ((const float *)rows)[at];
}

/* the portable loops, from row j: four rows per step keep four independent sums */
static inline __attribute__((always_inline)) void dot_rows_plain(const void *rows, size_t ld, int j, int n,
                                                                 const float *x, int hd, float scale, float *out,
                                                                 const int IS_BF16) {
    for (; j + 4 <= n; j += 4) {
        size_t r0 = (size_t)j * ld, r1 = r0 + ld, r2 = r1 + ld, r3 = r2 + ld;
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
        for (int d = 0; d < hd; d++) {
            s0 += load1(rows, r0 + d, IS_BF16) * x[d];
            s1 += load1(rows, r1 + d, IS_BF16) * x[d];
            s2 += load1(rows, r2 + d, IS_BF16) * x[d];
            s3 += load1(rows, r3 + d, IS_BF16) * x[d];
        }
        out[j] = scale * s0, out[j + 1] = scale * s1, out[j + 2] = scale * s2, out[j + 3] = scale * s3;
    }
    for (; j < n; j++) {
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int d = 0; d < hd; d++) s += load1(rows, (size_t)j * ld + d, IS_BF16) * x[d];
        out[j] = scale * s;
    }
}

static inline __attribute__((always_inline)) void weighted_rows_plain(const void *rows, size_t ld, int n,
                                                                      const float *w, int hd, float *out,
                                                                      const int IS_BF16) {
    memset(out, 0, (size_t)hd * sizeof(float));
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        size_t r0 = (size_t)j * ld, r1 = r0 + ld, r2 = r1 + ld, r3 = r2 + ld;
        float w0 = w[j], w1 = w[j + 1], w2 = w[j + 2], w3 = w[j + 3];
#pragma omp simd
        for (int d = 0; d < hd; d++)
            out[d] += (w0 * load1(rows, r0 + d, IS_BF16) + w1 * load1(rows, r1 + d, IS_BF16)) +
                      (w2 * load1(rows, r2 + d, IS_BF16) + w3 * load1(rows, r3 + d, IS_BF16));
    }
    for (; j < n; j++) {
        float wj = w[j];
#pragma omp simd
        for (int d = 0; d < hd; d++) out[d] += wj * load1(rows, (size_t)j * ld + d, IS_BF16);
    }
}

#ifdef DOT_ROWS_AVX2
/* eight elements from float rows, or from bf16 rows widened (IS_BF16 a constant: each caller is
 * compiled for one) */
static inline __attribute__((always_inline)) __m256 load8(const void *rows, size_t at, const int IS_BF16) {
    if (!IS_BF16) return _mm256_loadu_ps((const float *)rows + at);
    __m128i h = _mm_loadu_si128((const __m128i *)((const bf16 *)rows + at));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* the eight lane sums of each of a..h, as one vector [sum a, sum b, ..., sum h] */
static inline __m256 fold8(__m256 a, __m256 b, __m256 c, __m256 d, __m256 e, __m256 f, __m256 g, __m256 h) {
    __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d), ef = _mm256_hadd_ps(e, f), gh = _mm256_hadd_ps(g, h);
    __m256 abcd = _mm256_hadd_ps(ab, cd), efgh = _mm256_hadd_ps(ef, gh); /* [a b c d | a b c d] halves */
    return _mm256_add_ps(_mm256_permute2f128_ps(abcd, efgh, 0x20), _mm256_permute2f128_ps(abcd, efgh, 0x31));
}

/* eight rows at a time (hd a multiple of 8); returns the rows done */
static inline __attribute__((always_inline)) int dot_rows_avx2(const void *rows, size_t ld, int n, const float *x,
                                                               int hd, float scale, float *out, const int IS_BF16) {
    __m256 vscale = _mm256_set1_ps(scale);
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        size_t r = (size_t)j * ld;
        __m256 s[8];
        for (int u = 0; u < 8; u++) s[u] = _mm256_setzero_ps();
        for (int d = 0; d < hd; d += 8) {
            __m256 xv = _mm256_loadu_ps(x + d);
            for (int u = 0; u < 8; u++) s[u] = _mm256_fmadd_ps(load8(rows, r + u * ld + d, IS_BF16), xv, s[u]);
        }
        _mm256_storeu_ps(out + j, _mm256_mul_ps(vscale, fold8(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])));
    }
    return j;
}

/* NC vectors of 8 (8 NC columns from column c0) held in registers across every row; two sets
 * (even and odd rows), so consecutive FMAs do not wait on each other */
static inline __attribute__((always_inline)) void weighted_regs(const void *rows, size_t ld, int c0, int n,
                                                                const float *w, float *out, const int NC,
                                                                const int IS_BF16) {
    __m256 even[4], odd[4];
    for (int c = 0; c < NC; c++) even[c] = _mm256_setzero_ps(), odd[c] = _mm256_setzero_ps();
    int j = 0;
    for (; j + 2 <= n; j += 2) {
        __m256 w0 = _mm256_broadcast_ss(w + j), w1 = _mm256_broadcast_ss(w + j + 1);
        size_t r0 = (size_t)j * ld + c0, r1 = r0 + ld;
        for (int c = 0; c < NC; c++) {
            even[c] = _mm256_fmadd_ps(w0, load8(rows, r0 + 8 * c, IS_BF16), even[c]);
            odd[c] = _mm256_fmadd_ps(w1, load8(rows, r1 + 8 * c, IS_BF16), odd[c]);
        }
    }
    if (j < n) {
        __m256 wj = _mm256_broadcast_ss(w + j);
        for (int c = 0; c < NC; c++)
            even[c] = _mm256_fmadd_ps(wj, load8(rows, (size_t)j * ld + c0 + 8 * c, IS_BF16), even[c]);
    }
    for (int c = 0; c < NC; c++) _mm256_storeu_ps(out + c0 + 8 * c, _mm256_add_ps(even[c], odd[c]));
}

/* hd a multiple of 8: 32 columns per pass over the rows (16 registers: AVX2 has no more) */
static inline __attribute__((always_inline)) void weighted_rows_avx2(const void *rows, size_t ld, int n,
                                                                     const float *w, int hd, float *out,
                                                                     const int IS_BF16) {
    for (int c0 = 0; c0 < hd; c0 += 32) {
        switch ((hd - c0 < 32 ? hd - c0 : 32) / 8) {
        case 1: weighted_regs(rows, ld, c0, n, w, out, 1, IS_BF16); break;
        case 2: weighted_regs(rows, ld, c0, n, w, out, 2, IS_BF16); break;
        case 3: weighted_regs(rows, ld, c0, n, w, out, 3, IS_BF16); break;
        default: weighted_regs(rows, ld, c0, n, w, out, 4, IS_BF16); break;
        }
    }
}
#endif

/* one kernel for either element type: the AVX2 one where hd allows, the loops for the rest */
static void dot_rows_any(const void *rows, int is_bf16, size_t ld, int n, const float *x, int hd, float scale,
                         float *out) {
    int j = 0;
#ifdef DOT_ROWS_AVX2
    if (hd % 8 == 0) j = is_bf16 ? dot_rows_avx2(rows, ld, n, x, hd, scale, out, 1)
                                 : dot_rows_avx2(rows, ld, n, x, hd, scale, out, 0);
#endif
    if (is_bf16) dot_rows_plain(rows, ld, j, n, x, hd, scale, out, 1);
    else dot_rows_plain(rows, ld, j, n, x, hd, scale, out, 0);
}

static void weighted_rows_any(const void *rows, int is_bf16, size_t ld, int n, const float *w, int hd, float *out) {
#ifdef DOT_ROWS_AVX2
    if (hd % 8 == 0 && is_bf16) weighted_rows_avx2(rows, ld, n, w, hd, out, 1);
    else if (hd % 8 == 0) weighted_rows_avx2(rows, ld, n, w, hd, out, 0);
    if (hd % 8 == 0) return;
#endif
    if (is_bf16) weighted_rows_plain(rows, ld, n, w, hd, out, 1);
    else weighted_rows_plain(rows, ld, n, w, hd, out, 0);
}

void dot_rows(const float *rows, size_t ld, int n, const float *x, int hd, float scale, float *out) {
    dot_rows_any(rows, 0, ld, n, x, hd, scale, out);
}

void weighted_rows(const float *rows, size_t ld, int n, const float *w, int hd, float *out) {
    weighted_rows_any(rows, 0, ld, n, w, hd, out);
}

void dot_rows_bf16(const bf16 *rows, size_t ld, int n, const float *x, int hd, float scale, float *out) {
    dot_rows_any(rows, 1, ld, n, x, hd, scale, out);
}

void weighted_rows_bf16(const bf16 *rows, size_t ld, int n, const float *w, int hd, float *out) {
    weighted_rows_any(rows, 1, ld, n, w, hd, out);
}
