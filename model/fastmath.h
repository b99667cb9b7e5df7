/* fastmath.h: an exp that the compiler vectorizes (libm's expf is a call per element, with an
 * errno path for underflow that softmax rows of long contexts hit all the time).
 * Cephes' expf scheme: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two for exactness), a
 * degree-6 polynomial for e^r, 2^n put into the exponent bits. Relative error below 2.5e-7
 * (about 2 ulp) on [-87.3, 88.7]; exactly 0 below -87.3 (libm gives denormals or 0 there),
 * +inf above 88.7, NaN stays NaN. tests/test_model.c checks it against expf. */
#ifndef PELAB_FASTMATH_H
#define PELAB_FASTMATH_H

#include <stdint.h>
#include <string.h>

static inline float fast_expf(float x) {
    const float hi = 88.72283f, lo = -87.33654f;
    /* NaN fails both comparisons and takes hi: the int cast below must never see a NaN (UB) */
    float xc = x < lo ? lo : x <= hi ? x : hi;
    /* n = round(x / ln2): adding and removing 1.5 * 2^23 rounds to nearest without a call */
    float n = (xc * 1.44269504f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * (r * r) + r + 1.0f;
    /* e * 2^n in two steps, so n = 128 (x near hi) does not overflow the exponent field */
    int32_t ni = (int32_t)n;
    int32_t half = ni / 2;
    uint32_t b1 = (uint32_t)(half + 127) << 23, b2 = (uint32_t)(ni - half + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, 4);
    memcpy(&s2, &b2, 4);
    float y = e * s1 * s2;
    y = x < lo ? 0.0f : y;
    y = x > hi ? __builtin_inff() : y;
    return x != x ? x : y;
}

/* The reductions of a short row in 8 lanes: the compilers vectorize them (one chain of float adds
 * or maxima they may not reorder), and the order is fixed, so the result does not depend on the
 * thread count. */

/* the largest of x[0..n), n >= 1 */
static inline float max8(const float *x, int n) {
    float part[8];
    for (int u = 0; u < 8; u++) part[u] = x[0];
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int u = 0; u < 8; u++) part[u] = x[i + u] > part[u] ? x[i + u] : part[u];
    for (; i < n; i++) part[0] = x[i] > part[0] ? x[i] : part[0];
    for (int u = 1; u < 8; u++) part[0] = part[u] > part[0] ? part[u] : part[0];
    return part[0];
}

/* sum of a[i] b[i] c[i] (c NULL: of a[i] b[i]) */
static inline float dot8(const float *a, const float *b, const float *c, int n) {
    float part[8] = {0};
    int i = 0;
    if (c)
        for (; i + 8 <= n; i += 8)
            for (int u = 0; u < 8; u++) part[u] += a[i + u] * b[i + u] * c[i + u];
    else
        for (; i + 8 <= n; i += 8)
            for (int u = 0; u < 8; u++) part[u] += a[i + u] * b[i + u];
    for (; i < n; i++) part[0] += a[i] * b[i] * (c ? c[i] : 1.0f);
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

#endif
