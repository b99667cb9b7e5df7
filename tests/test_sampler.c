/* test_sampler.c: the sampler (llama2.c's generator and rules) and generation with and without
 * the KV cache. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/rng.h"
#include "../infer/generate.h"
#include "../infer/sampler.h"
#include "test.h"

static void generator_values(void) {
    /* xorshift64* from seed 133742, as llama2.c's random_u32 (computed independently in Python) */
    static const uint32_t want[5] = {3033531262u, 2674377904u, 2312864567u, 2287415643u, 1408443089u};
    Rng r;
    rng_seed(&r, 133742);
    int ok = 1;
    for (int i = 0; i < 5; i++) ok &= rng_u32(&r) == want[i];
    CHECK(ok, "xorshift64* stream equals llama2.c's for seed 133742");
}

static void sampling_rules(void) {
    enum { V = 6 };
    float base[V] = {1.0f, 3.0f, 0.5f, 2.9f, -1.0f, 0.0f}, logits[V];
    Sampler s;
    sampler_init(&s, V, 0.0f, 0.9f, 0, 1);
    memcpy(logits, base, sizeof base);
    CHECK(sampler_sample(&s, logits) == 1, "temperature 0 is argmax");
    sampler_free(&s);

    sampler_init(&s, V, 1.0f, 0.0f, 1, 7);
    int only_top = 1;
    for (int i = 0; i < 200; i++) {
        memcpy(logits, base, sizeof base);
        only_top &= sampler_sample(&s, logits) == 1;
    }
    CHECK(only_top, "top-k 1 always picks the argmax");
    sampler_free(&s);

    /* top-p 0.5: probs of tokens 1 and 3 are 0.44 and 0.40; the nucleus is {1, 3} */
    sampler_init(&s, V, 1.0f, 0.5f, 0, 11);
    int counts[V] = {0};
    for (int i = 0; i < 4000; i++) {
        memcpy(logits, base, sizeof base);
        counts[sampler_sample(&s, logits)]++;
    }
    CHECK(counts[0] + counts[2] + counts[4] + counts[5] == 0 && counts[1] > 1800 && counts[3] > 1600,
          "top-p 0.5 draws only from the two-token nucleus (%d %d others %d)", counts[1], counts[3],
          counts[0] + counts[2] + counts[4] + counts[5]);
    sampler_free(&s);

    /* plain multinomial: frequencies within 5 standard errors of the softmax probabilities */
    float probs[V];
    memcpy(probs, base, sizeof base);
    softmax_inplace(probs, V);
    sampler_init(&s, V, 1.0f, 1.0f, 0, 12345);
    memset(counts, 0, sizeof counts);
    enum { N = 20000 };
    for (int i = 0; i < N; i++) {
        memcpy(logits, base, sizeof base);
        counts[sampler_sample(&s, logits)]++;
    }
    int ok = 1;
    for (int i = 0; i < V; i++) {
        double se = sqrt(probs[i] * (1 - probs[i]) / N);
        if (fabs((double)counts[i] / N - probs[i]) > 5 * se + 1e-4) ok = 0;
    }
    CHECK(ok, "multinomial frequencies match the softmax");
    sampler_free(&s);

    /* a temperature so small that logits / T overflow behaves as greedy (no NaN probabilities) */
    sampler_init(&s, V, 1e-40f, 0.9f, 0, 3);
    memcpy(logits, base, sizeof base);
    CHECK(sampler_sample(&s, logits) == 1, "temperature 1e-40 is greedy, not NaN");
    sampler_free(&s);

    /* temperature 0.5 doubles the logits before softmax */
    sampler_init(&s, V, 0.5f, 0.0f, 0, 3);
    memcpy(logits, base, sizeof base);
    sampler_sample(&s, logits);
    float want[V];
    for (int i = 0; i < V; i++) want[i] = base[i] * 2;
    softmax_inplace(want, V);
    CHECK(max_abs_diff(logits, want, V) < 1e-6f, "temperature scales the logits before the softmax");
    sampler_free(&s);
}

static void cache_equals_recompute(const char *spec) {
    Model m;
    ModelConfig c = {.vocab_size = 32, .dim = 16, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .hidden_dim = 24,
                     .seq_len = 16, .norm_eps = 1e-5f, .tied = 1};
    CHECK(model_create(&m, &c, spec) == 0, "%s", pelab_errmsg);
    model_init_weights(&m, 77);
    for (size_t i = 0; i < m.n_params; i++) m.params_mem[i] *= 4; /* not too flat, not collapsed */
    enum { P = 3, NEW = 40 };
    int a[P + NEW] = {5, 9, 2}, b[P + NEW] = {5, 9, 2};
    Sampler s1, s2;
    sampler_init(&s1, 32, 0.8f, 0.95f, 0, 99);
    sampler_init(&s2, 32, 0.8f, 0.95f, 0, 99);
    int rc1 = generate(&m, &s1, a, P, NEW, 1, -1, NULL, NULL), rc2 = generate(&m, &s2, b, P, NEW, 0, -1, NULL, NULL);
    CHECK(rc1 == NEW && rc2 == NEW && memcmp(a, b, sizeof a) == 0, "%s: cached and recomputed generation agree", spec);
    int distinct = 0;
    for (int i = P + 1; i < P + NEW; i++) distinct += a[i] != a[i - 1];
    CHECK(distinct > 5, "%s: the generated text is not constant (%d changes)", spec, distinct);
    sampler_free(&s1), sampler_free(&s2);
    model_free(&m);
}

void test_sampler(void) {
    generator_values();
    sampling_rules();
    cache_equals_recompute("rope");
    cache_equals_recompute("sinusoidal");
    cache_equals_recompute("learned:max_len=64");
    cache_equals_recompute("nope");
}
