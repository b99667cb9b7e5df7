/* kern_rows.h: the decoding rows of model/dot_rows.h (one query against a head's cached keys, the
 * weighted sum of its values; also a bf16-weight product's rows), as a template a kern_<isa>.c file
 * includes once. KERN_ROWS_AVX2 (x86 AVX2 + FMA) or KERN_ROWS_NEON (arm64) adds that ISA's
 * intrinsics for the head sizes they cover (a multiple of 8, of 4); plain loops, which the compiler
 * vectorizes for the file's ISA, do the rest. bf16 rows are widened to float32 as they are loaded
 * (exact: bf16 is float32's upper half). Defines kern_dot_rows and kern_weighted_rows. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(KERN_ROWS_AVX2)
#include <immintrin.h>
#elif defined(KERN_ROWS_NEON)
#include <arm_neon.h>
#endif

static inline float widen1(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* element `at` of float rows, or of bf16 rows widened (IS_BF16 a constant: each caller is compiled
 * for one) */
static inline __attribute__((always_inline)) float load1(const void *rows, size_t at, const int IS_BF16) {
    return IS_BF16 ? widen1(((const uint16_t *)rows)[at]) : ((const float *)rows)[at];
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

#if defined(KERN_ROWS_AVX2)
enum { ROWS_VEC = 8 }; /* the head sizes the intrinsics take: multiples of this */

/* eight elements from float rows, or from bf16 rows widened */
static inline __attribute__((always_inline)) __m256 load8(const void *rows, size_t at, const int IS_BF16) {
    if (!IS_BF16) return _mm256_loadu_ps((const float *)rows + at);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)rows + at));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* the eight lane sums of each of a..h, as one vector [sum a, sum b, ..., sum h] */
static inline __m256 fold8(__m256 a, __m256 b, __m256 c, __m256 d, __m256 e, __m256 f, __m256 g, __m256 h) {
    __m256 ab = _mm256_hadd_ps(a, b), cd = _mm256_hadd_ps(c, d), ef = _mm256_hadd_ps(e, f), gh = _mm256_hadd_ps(g, h);
    __m256 abcd = _mm256_hadd_ps(ab, cd), efgh = _mm256_hadd_ps(ef, gh); /* [a b c d | a b c d] halves */
    return _mm256_add_ps(_mm256_permute2f128_ps(abcd, efgh, 0x20), _mm256_permute2f128_ps(abcd, efgh, 0x31));
}

/* eight rows at a time (eight sums in eight registers, folded together at the end); returns the
 * rows done */
static inline __attribute__((always_inline)) int dot_rows_vec(const void *rows, size_t ld, int n, const float *x,
                                                              int hd, float scale, float *out, const int IS_BF16) {
    __m256 vscale = _mm256_set1_ps(scale);
    const size_t elem = IS_BF16 ? 2 : 4;
    const int line = 64 / (int)elem; /* elements a cache line holds */
    int j = 0;
    for (; j + 8 <= n; j += 8) {
        size_t r = (size_t)j * ld;
        /* the next step's eight rows, a line at a time as this step reads its own: eight short rows
         * at a stride defeat the hardware prefetcher, and this loop waits on memory (measured: one
         * core streaming 24 MB of rows went from 15 to 28 GB/s); the last step fetches itself again */
        const char *next = (const char *)rows + (j + 16 <= n ? r + 8 * ld : r) * elem;
        __m256 s[8];
        for (int u = 0; u < 8; u++) s[u] = _mm256_setzero_ps();
        for (int d = 0; d < hd; d += 8) {
            __m256 xv = _mm256_loadu_ps(x + d);
            if (d % line == 0)
                for (int u = 0; u < 8; u++) __builtin_prefetch(next + (u * ld + d) * elem);
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

/* 32 columns per pass over the rows: 8 accumulators, 16 ymm registers in all (AVX2 has no more) */
static inline __attribute__((always_inline)) void weighted_rows_vec(const void *rows, size_t ld, int n,
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

#elif defined(KERN_ROWS_NEON)
enum { ROWS_VEC = 4 };

/* four elements from float rows, or from bf16 rows widened (a shift left by 16 of each half) */
static inline __attribute__((always_inline)) float32x4_t load4(const void *rows, size_t at, const int IS_BF16) {
    if (!IS_BF16) return vld1q_f32((const float *)rows + at);
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *)rows + at), 16));
}

/* four rows at a time, two sums each (even and odd vectors of the row, so the FMAs of a row do not
 * wait on each other); the eight folded into [sum 0, sum 1, sum 2, sum 3] by pairwise adds */
static inline __attribute__((always_inline)) int dot_rows_vec(const void *rows, size_t ld, int n, const float *x,
                                                              int hd, float scale, float *out, const int IS_BF16) {
    const size_t elem = IS_BF16 ? 2 : 4;
    const int line = 64 / (int)elem;
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        size_t r = (size_t)j * ld;
        const char *next = (const char *)rows + (j + 8 <= n ? r + 4 * ld : r) * elem; /* as AVX2's */
        float32x4_t s[4], t[4];
        for (int u = 0; u < 4; u++) s[u] = vdupq_n_f32(0.0f), t[u] = vdupq_n_f32(0.0f);
        int d = 0;
        for (; d + 8 <= hd; d += 8) {
            float32x4_t x0 = vld1q_f32(x + d), x1 = vld1q_f32(x + d + 4);
            if (d % line == 0)
                for (int u = 0; u < 4; u++) __builtin_prefetch(next + (u * ld + d) * elem);
            for (int u = 0; u < 4; u++) {
                s[u] = vfmaq_f32(s[u], load4(rows, r + u * ld + d, IS_BF16), x0);
                t[u] = vfmaq_f32(t[u], load4(rows, r + u * ld + d + 4, IS_BF16), x1);
            }
        }
        if (d < hd) {
            float32x4_t x0 = vld1q_f32(x + d);
            for (int u = 0; u < 4; u++) s[u] = vfmaq_f32(s[u], load4(rows, r + u * ld + d, IS_BF16), x0);
        }
        for (int u = 0; u < 4; u++) s[u] = vaddq_f32(s[u], t[u]);
        float32x4_t sums = vpaddq_f32(vpaddq_f32(s[0], s[1]), vpaddq_f32(s[2], s[3]));
        vst1q_f32(out + j, vmulq_n_f32(sums, scale));
    }
    return j;
}

/* NC vectors of 4 held in registers across every row, two sets (even and odd rows) */
static inline __attribute__((always_inline)) void weighted_regs(const void *rows, size_t ld, int c0, int n,
                                                                const float *w, float *out, const int NC,
                                                                const int IS_BF16) {
    float32x4_t even[8], odd[8];
    for (int c = 0; c < NC; c++) even[c] = vdupq_n_f32(0.0f), odd[c] = vdupq_n_f32(0.0f);
    int j = 0;
    for (; j + 2 <= n; j += 2) {
        float w0 = w[j], w1 = w[j + 1];
        size_t r0 = (size_t)j * ld + c0, r1 = r0 + ld;
        for (int c = 0; c < NC; c++) {
            even[c] = vfmaq_n_f32(even[c], load4(rows, r0 + 4 * c, IS_BF16), w0);
            odd[c] = vfmaq_n_f32(odd[c], load4(rows, r1 + 4 * c, IS_BF16), w1);
        }
    }
    if (j < n)
        for (int c = 0; c < NC; c++)
            even[c] = vfmaq_n_f32(even[c], load4(rows, (size_t)j * ld + c0 + 4 * c, IS_BF16), w[j]);
    for (int c = 0; c < NC; c++) vst1q_f32(out + c0 + 4 * c, vaddq_f32(even[c], odd[c]));
}

/* 32 columns per pass: 16 of the 32 NEON registers accumulate */
static inline __attribute__((always_inline)) void weighted_rows_vec(const void *rows, size_t ld, int n,
                                                                    const float *w, int hd, float *out,
                                                                    const int IS_BF16) {
    for (int c0 = 0; c0 < hd; c0 += 32) {
        switch ((hd - c0 < 32 ? hd - c0 : 32) / 4) {
        case 1: weighted_regs(rows, ld, c0, n, w, out, 1, IS_BF16); break;
        case 2: weighted_regs(rows, ld, c0, n, w, out, 2, IS_BF16); break;
        case 3: weighted_regs(rows, ld, c0, n, w, out, 3, IS_BF16); break;
        case 4: weighted_regs(rows, ld, c0, n, w, out, 4, IS_BF16); break;
        case 5: weighted_regs(rows, ld, c0, n, w, out, 5, IS_BF16); break;
        case 6: weighted_regs(rows, ld, c0, n, w, out, 6, IS_BF16); break;
        case 7: weighted_regs(rows, ld, c0, n, w, out, 7, IS_BF16); break;
        default: weighted_regs(rows, ld, c0, n, w, out, 8, IS_BF16); break;
        }
    }
}
#endif

/* either element type: the intrinsics where the head size allows, the loops for the rest */
static void kern_dot_rows(const void *rows, int is_bf16, size_t ld, int n, const float *x, int hd, float scale,
                          float *out) {
    int j = 0;
#if defined(KERN_ROWS_AVX2) || defined(KERN_ROWS_NEON)
    if (hd % ROWS_VEC == 0) j = is_bf16 ? dot_rows_vec(rows, ld, n, x, hd, scale, out, 1)
                                        : dot_rows_vec(rows, ld, n, x, hd, scale, out, 0);
#endif
    if (is_bf16) dot_rows_plain(rows, ld, j, n, x, hd, scale, out, 1);
    else dot_rows_plain(rows, ld, j, n, x, hd, scale, out, 0);
}

static void kern_weighted_rows(const void *rows, int is_bf16, size_t ld, int n, const float *w, int hd, float *out) {
#if defined(KERN_ROWS_AVX2) || defined(KERN_ROWS_NEON)
    if (hd % ROWS_VEC == 0) {
        if (is_bf16) weighted_rows_vec(rows, ld, n, w, hd, out, 1);
        else weighted_rows_vec(rows, ld, n, w, hd, out, 0);
        return;
    }
#endif
    if (is_bf16) weighted_rows_plain(rows, ld, n, w, hd, out, 1);
    else weighted_rows_plain(rows, ld, n, w, hd, out, 0);
}
