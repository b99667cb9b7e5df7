/* rng.c: xorshift64* and the distributions drawn from it. */
#include "rng.h"

#include <math.h>

void rng_seed(Rng *r, uint64_t seed) { r->state = seed ? seed : 0x9E3779B97F4A7C15ull; }

uint32_t rng_u32(Rng *r) {
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return (uint32_t)((r->state * 0x2545F4914F6CDD1Dull) >> 32);
}

float rng_f32(Rng *r) { return (rng_u32(r) >> 8) / 16777216.0f; }

float rng_normal(Rng *r) {
    double u1 = (rng_u32(r) + 1.0) / 4294967297.0; /* (0,1]: log never sees 0 */
    double u2 = rng_u32(r) / 4294967296.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

uint64_t rng_below(Rng *r, uint64_t n) {
    uint64_t x = ((uint64_t)rng_u32(r) << 32) | rng_u32(r);
    return n ? x % n : 0;
}

void rng_sorted_sample(Rng *rng, int max, int T, int *out) {
    int needed = T;
    for (int id = 0; id < max && needed > 0; id++)
        if (rng_below(rng, (uint64_t)(max - id)) < (uint64_t)needed) out[T - needed--] = id;
}
