/* fp16.c: IEEE binary16 <-> float32 (see fp16.h). */
#include "fp16.h"

#include <math.h>
#include <string.h>

float fp16_to_float(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
    return h & 0x8000 ? -v : v;
}

uint16_t fp16_from_float(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00;  /* NaN stays a quiet NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00; /* rounds past 65504: inf */
    if (a < 0x38800000u) {                      /* below 2^-14: a subnormal half (or 0) */
        float m = fabsf(x) * 16777216.0f;       /* in units of 2^-24, exact in float */
        return sign | (uint16_t)nearbyintf(m);  /* the default rounding: to nearest even */
    }
    uint32_t r = a - 0x38000000u;               /* rebias the exponent (127 -> 15) */
    r += 0x0fffu + ((r >> 13) & 1u);            /* round to nearest even on the 13 dropped bits */
    return sign | (uint16_t)(r >> 13);
}
