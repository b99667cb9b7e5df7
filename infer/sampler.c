#include "sampler.h"
#include "../core/mem.h"
#include "../core/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sampler_init(Sampler *s, int vocab_size, float temperature, float top_p, int top_k, unsigned long long seed) {
    s->vocab_size = vocab_size;
    s->temperature = temperature;
    s->top_p = top_p;
    s->top_k = top_k;
    rng_seed(&s->rng, seed);
    s->probindex = xmalloc(sizeof(ProbIndex) * vocab_size);
}

void sampler_free(Sampler *s) { free(s->probindex); }

void softmax_inplace(float *x, int n) {
    float max_val = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > max_val) max_val = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max_val);
        sum += x[i];
    }
    for (int i = 0; i < n; i++) x[i] /= sum;
}

static int argmax(const float *p, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (p[i] > p[best]) best = i;
    return best;
}

static int sample_mult(const float *probs, int n, float coin) {
    float cdf = 0.0f;
    for (int i = 0; i < n; i++) {
        cdf += probs[i];
        if (coin < cdf) return i;
    }
    return n - 1; /* rounding */
}

static int compare_desc(const void *a, const void *b) {
    const ProbIndex *x = a, *y = b;
    if (x->prob > y->prob) return -1;
    if (x->prob < y->prob) return 1;
    return 0;
}

/* the nucleus: the smallest set of tokens whose probability exceeds top_p, sorted in pi[0..*last]
 * (-1: none); returns its mass. Tokens below (1 - top_p)/(n - 1) cannot be in it, so they are
 * dropped before the sort. */
static float nucleus(const float *probs, int n, float top_p, ProbIndex *pi, int *last) {
    int n0 = 0;
    const float cutoff = (1.0f - top_p) / (n - 1);
    for (int i = 0; i < n; i++)
        if (probs[i] >= cutoff) {
            pi[n0].index = i;
            pi[n0].prob = probs[i];
            n0++;
        }
    *last = n0 - 1;
    if (n0 == 0) return 0.0f; /* cannot happen with finite probabilities */
    qsort(pi, n0, sizeof(ProbIndex), compare_desc);
    float cumulative = 0.0f;
    for (int i = 0; i < n0; i++) {
        cumulative += pi[i].prob;
        if (cumulative > top_p) {
            *last = i;
            break;
        }
    }
    return cumulative;
}

/* nucleus sampling, in llama2.c's order: the coin scaled by the nucleus' mass, walked in it sorted */
static int sample_topp(const float *probs, int n, float top_p, ProbIndex *pi, float coin) {
    int last;
    float r = coin * nucleus(probs, n, top_p, pi, &last), cdf = 0.0f;
    if (last < 0) return sample_mult(probs, n, coin);
    for (int i = 0; i <= last; i++) {
        cdf += pi[i].prob;
        if (r < cdf) return pi[i].index;
    }
    return pi[last].index;
}

/* zero the probabilities outside the nucleus; returns the mass kept (what they divide by) */
static float keep_topp(float *probs, int n, float top_p, ProbIndex *pi) {
    int last;
    float kept = nucleus(probs, n, top_p, pi, &last);
    if (last < 0) return 1.0f;
    memset(probs, 0, sizeof(float) * n); /* the kept ones are in pi[0..last] */
    for (int i = 0; i <= last; i++) probs[pi[i].index] = pi[i].prob;
    return kept;
}

/* keep the k largest logits (ties at the k-th value are kept too) */
static void apply_top_k(float *logits, int n, int k, ProbIndex *pi) {
    if (k <= 0 || k >= n) return;
    for (int i = 0; i < n; i++) {
        pi[i].prob = logits[i];
        pi[i].index = i;
    }
    qsort(pi, n, sizeof(ProbIndex), compare_desc);
    float kth = pi[k - 1].prob;
    for (int i = 0; i < n; i++)
        if (logits[i] < kth) logits[i] = -INFINITY;
}

int sampler_sample(Sampler *s, float *logits) {
    int n = s->vocab_size;
    if (s->temperature == 0.0f) return argmax(logits, n);
    /* a temperature so small that logits / T overflow is greedy in the limit */
    int best = argmax(logits, n);
    if (!isfinite(logits[best] / s->temperature)) return best;
    for (int i = 0; i < n; i++) logits[i] /= s->temperature;
    apply_top_k(logits, n, s->top_k, s->probindex);
    softmax_inplace(logits, n);
    float coin = rng_f32(&s->rng);
    if (s->top_p <= 0.0f || s->top_p >= 1.0f) return sample_mult(logits, n, coin);
    return sample_topp(logits, n, s->top_p, s->probindex, coin);
}

int sampler_check(Sampler *s, float *logits, int draft) {
    int n = s->vocab_size, best = argmax(logits, n);
    if (s->temperature == 0.0f || !isfinite(logits[best] / s->temperature)) return best; /* greedy */
    for (int i = 0; i < n; i++) logits[i] /= s->temperature;
    apply_top_k(logits, n, s->top_k, s->probindex);
    softmax_inplace(logits, n);
    float kept = s->top_p <= 0.0f || s->top_p >= 1.0f ? 1.0f : keep_topp(logits, n, s->top_p, s->probindex);
    /* a draft certain of its token: accepted with probability p(draft) */
    if (rng_f32(&s->rng) * kept < logits[draft]) return draft;
    /* rejected: p without the draft, renormalized (the residual max(0, p - q) of speculative sampling) */
    float rest = kept - logits[draft], r = rng_f32(&s->rng) * rest, cdf = 0.0f;
    logits[draft] = 0.0f;
    int last = -1;
    for (int i = 0; i < n; i++) {
        if (logits[i] <= 0.0f) continue;
        cdf += logits[i], last = i;
        if (r < cdf) return i;
    }
    return last >= 0 ? last : draft; /* rounding; or the draft held all the mass */
}
