/* sampler.h: next-token sampling, bit-compatible with llama2.c's run.c when top_k is 0
 * (same xorshift64* generator, softmax, multinomial draw and top-p cutoff/sort rule). */
#ifndef PELAB_SAMPLER_H
#define PELAB_SAMPLER_H

#include "../core/rng.h"

typedef struct {
    float prob;
    int index;
} ProbIndex;

typedef struct {
    int vocab_size;
    float temperature; /* 0 = greedy */
    float top_p;       /* <= 0 or >= 1: off */
    int top_k;         /* 0: off */
    Rng rng;
    ProbIndex *probindex; /* [vocab_size] */
} Sampler;

void sampler_init(Sampler *s, int vocab_size, float temperature, float top_p, int top_k, unsigned long long seed);
void sampler_free(Sampler *s);
/* picks the next token; modifies logits in place */
int sampler_sample(Sampler *s, float *logits);
/* speculative sampling's check of a drafted token, for a draft that proposes one token with
 * certainty (prompt lookup: lookup.h): the token to keep at this position. Greedy: the argmax,
 * the draft or not. Otherwise the draft with probability p(draft) under the distribution
 * sampler_sample draws from (temperature, top-k, top-p), else a draw from p without the draft:
 * the kept token is distributed as p exactly (Leviathan et al. 2023; Chen et al. 2023), by other
 * draws of the generator than sampler_sample's. Modifies logits in place. */
int sampler_check(Sampler *s, float *logits, int draft);
/* softmax in place, float arithmetic in llama2.c's order */
void softmax_inplace(float *x, int n);

#endif
