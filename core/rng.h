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

#endif
