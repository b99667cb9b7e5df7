/* rng.h: xorshift64* (llama2.c's generator, so its samplers can be reproduced exactly). */
#ifndef PELAB_RNG_H
#define PELAB_RNG_H

#include <stdint.h>

typedef struct { uint64_t state; } Rng;
void rng_seed(Rng *r, uint64_t seed);
uint32_t rng_u32(Rng *r);
float rng_f32(Rng *r);           /* uniform in [0,1), 24 bits */
float rng_normal(Rng *r);        /* standard normal, Box-Muller */
uint64_t rng_below(Rng *r, uint64_t n); /* uniform in [0,n) */

/* T distinct ids from [0, max) (T <= max), increasing, by selection sampling (Knuth's algorithm S:
 * each id is taken with probability needed / remaining): randomized positions (Ruoss et al. 2023) */
void rng_sorted_sample(Rng *rng, int max, int T, int *out);

#endif
