/* test_kv_layout.c: the per-head KV cache ([L, n_seq, KVH, len, hd]) and the one-query kernels
 * that read it (model/dot_rows.c), on shapes the other decoding tests do not reach: head_dim 8
 * and 16 (the AVX2 kernels take hd a multiple of 8; tiny_model's hd 4 takes the portable loops),
 * grouped-query heads, 40-token caches (several groups of eight keys and a tail).
 *   a. dot_rows, weighted_rows (float and bf16 rows, strided and not) against double sums
 *   b. cache == full recomputation, one token at a time and in uneven chunks, for RoPE, ALiBi, T5,
 *      and Self-Extend's second key copy (the far branch); batched == one at a time
 *   c. the sliding cache's eviction per head: one layer, every step a full forward over exactly
 *      the cached tokens
 *   d. --kv-cache bf16: chunked == token by token (both read the same rounded rows), within a
 *      stated tolerance of the float32 cache (and under eviction), and half the cache's bytes */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../infer/decode.h"
#include "../model/dot_rows.h"
#include "../model/model.h"
#include "test.h"

enum { V = 13, N = 40 }; /* tiny_model's vocabulary; tokens decoded */

/* a: the kernels against sums in double */
static void kernels(void) {
    const int hds[] = {4, 8, 12, 16, 24, 40, 64, 72}, ns[] = {1, 7, 8, 9, 23, 64};
    Rng rng;
    rng_seed(&rng, 7);
    float *rows = xmalloc(sizeof(float) * 64 * 80), x[80], w[64], out[80];
    bf16 *rows16 = xmalloc(sizeof(bf16) * 64 * 80);
    for (int i = 0; i < 64 * 80; i++) rows[i] = rng_normal(&rng), rows16[i] = bf16_from_float(rows[i]);
    for (int i = 0; i < 80; i++) x[i] = rng_normal(&rng);
    for (int i = 0; i < 64; i++) w[i] = rng_f32(&rng);
    double worst = 0;
    for (size_t a = 0; a < sizeof hds / sizeof hds[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
            for (int strided = 0; strided < 2; strided++)
                for (int half = 0; half < 2; half++) {
                    int hd = hds[a], n = ns[b];
                    size_t ld = strided ? 80 : (size_t)hd;
                    float got[64];
                    if (half) dot_rows_bf16(rows16, ld, n, x, hd, 0.5f, got);
                    else dot_rows(rows, ld, n, x, hd, 0.5f, got);
                    for (int j = 0; j < n; j++) {
                        double s = 0;
                        for (int d = 0; d < hd; d++)
                            s += (double)(half ? bf16_to_float(rows16[j * ld + d]) : rows[j * ld + d]) * x[d];
                        worst = worse(worst, fabs(0.5 * s - got[j]));
                    }
                    if (half) weighted_rows_bf16(rows16, ld, n, w, hd, out);
                    else weighted_rows(rows, ld, n, w, hd, out);
                    for (int d = 0; d < hd; d++) {
                        double s = 0;
                        for (int j = 0; j < n; j++)
                            s += (double)w[j] * (half ? bf16_to_float(rows16[j * ld + d]) : rows[j * ld + d]);
                        worst = worse(worst, fabs(s - out[d]));
                    }
                }
    CHECK(worst <= 2e-5, "dot_rows, weighted_rows (float, bf16; hd 4..72, 1..64 rows, strided): max error %g", worst);
    free(rows), free(rows16);
}

static void some_tokens(int *t, int n, unsigned long long seed) {
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) t[i] = (int)rng_below(&rng, V);
}

/* every row's logits [N, V], fed in calls of the sizes in `calls` (cycled) */
static int feed(Model *m, KVCache *kv, const int *tok, const int *calls, int n_calls, float *out) {
    int pos[N], rc = 0;
    for (int i = 0; i < N; i++) pos[i] = i;
    for (int done = 0, c = 0; done < N && rc == 0; c++) {
        int nb = calls[c % n_calls] < N - done ? calls[c % n_calls] : N - done;
        rc = decode_forward(m, kv, tok + done, pos + done, nb, out + (size_t)done * V, 1);
        done += nb;
    }
    return rc;
}

static float largest(const float *x, int n) {
    float big = 1;
    for (int i = 0; i < n; i++) big = fabsf(x[i]) > big ? fabsf(x[i]) : big;
    return big;
}

/* the shapes: heads, kv heads (dim 16: hd 16 / heads) */
static const int shapes[][2] = {{2, 2}, {2, 1}, {1, 1}};

/* every (spec, scale) pair on every shape: a 2-layer tiny model (the extension rule scale, NULL:
 * none) handed to check with a name for its messages, then freed */
typedef void (*ModelCheck)(Model *m, const char *name);

static void each_model(const char *const *specs, const char *const *scales, size_t n, ModelCheck check) {
    for (size_t s = 0; s < n; s++)
        for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
            Model m;
            char name[64];
            snprintf(name, sizeof name, "%s%s%s, %d heads, %d kv heads", specs[s], scales[s] ? " " : "",
                     scales[s] ? scales[s] : "", shapes[h][0], shapes[h][1]);
            if (tiny_model_shaped(&m, specs[s], shapes[h][0], shapes[h][1], 2, 0, 9) != 0 ||
                (scales[s] && pos_set_scale(&m.pos, scales[s]) != 0)) {
                CHECK(0, "%s: %s", name, pelab_errmsg);
                continue;
            }
            check(&m, name);
            model_free(&m);
        }
}

static const int by_token[] = {1}, uneven[] = {7, 1, 1, 3, 1, 9};

/* b: the cache against the full forward, and a batch of two against each alone */
static void recompute_check(Model *m, const char *name) {
    int tok[N], tok2[N], pos[N];
    some_tokens(tok, N, 3), some_tokens(tok2, N, 4);
    for (int i = 0; i < N; i++) pos[i] = i;
    model_alloc_train(m, 1, N);
    int rc = model_forward(m, tok, NULL, pos, 1, N);
    float *full = xmalloc(sizeof(float) * N * V), *dec = xmalloc(sizeof(float) * N * V);
    memcpy(full, m->acts.logits, sizeof(float) * N * V);
    float big = largest(full, N * V), worst = 0;
    for (int way = 0; way < 2; way++) {
        KVCache kv;
        kvcache_init(&kv, m, N, 8);
        rc |= way ? feed(m, &kv, tok, uneven, 6, dec) : feed(m, &kv, tok, by_token, 1, dec);
        worst = worse(worst, max_abs_diff(full, dec, N * V));
        kvcache_free(&kv);
    }
    CHECK(rc == 0 && worst <= 1e-5f * big,
          "%s (hd %d): the per-head cache equals the full forward, token by token and in uneven chunks (rc %d, max "
          "diff %g, max |logit| %g)", name, m->head_dim, rc, worst, big);
    /* two sequences side by side: each as alone (the second sequence's rows start a head's block
     * of max_len further on) */
    int both[2 * N], both_pos[2 * N];
    float *batch = xmalloc(sizeof(float) * 2 * N * V), *alone = xmalloc(sizeof(float) * N * V);
    for (int i = 0; i < N; i++) both[i] = tok[i], both[N + i] = tok2[i], both_pos[i] = both_pos[N + i] = i;
    KVCache kb, k1;
    kvcache_init_batch(&kb, m, 2, N, 8);
    rc = decode_forward_batch(m, &kb, both, both_pos, N, batch, 1);
    kvcache_init(&k1, m, N, 8);
    rc |= feed(m, &k1, tok2, by_token, 1, alone);
    float d = max_abs_diff(batch + (size_t)N * V, alone, N * V);
    CHECK(rc == 0 && d <= 1e-5f * big, "%s: batch of two == the second alone (max diff %g)", name, d);
    kvcache_free(&kb), kvcache_free(&k1);
    free(batch), free(alone), free(full), free(dec);
}

static void cache_equals_recompute(void) {
    const char *specs[] = {"rope", "alibi", "t5", "rope"};
    const char *scales[] = {NULL, NULL, NULL, "selfextend:2:4"}; /* the far branch: a second key copy */
    each_model(specs, scales, 4, recompute_check);
}

/* the keys token t attends to through stream:S:W: the first S, up to W recent ones, t itself */
static int cached_tokens(const int *tok, int t, int S, int W, int *out) {
    int n = 0;
    for (int i = 0; i <= t; i++)
        if (i < S || i >= t - W) out[n++] = tok[i];
    return n;
}

/* c (and d's eviction when bf16): one layer, stream:S:W, every step equals a full forward over
 * the cached tokens; returns the worst difference relative to the largest logit, -1 on an error */
static float eviction_gap(const char *spec, int heads, int kv_heads, int kv_bf16, float *logits) {
    enum { S = 2, W = 11 };
    int tok[N], seq[N], pos[N], calls[] = {7, 3, 1, 1, 2};
    some_tokens(tok, N, 5);
    for (int i = 0; i < N; i++) pos[i] = i;
    Model plain, stream;
    char rule[32];
    snprintf(rule, sizeof rule, "stream:%d:%d", S, W);
    if (tiny_model_shaped(&plain, spec, heads, kv_heads, 1, 0, 11) != 0 ||
        tiny_model_shaped(&stream, spec, heads, kv_heads, 1, 0, 11) != 0 || pos_set_scale(&stream.pos, rule) != 0)
        return -1;
    stream.kv_cache_bf16 = kv_bf16;
    KVCache kv;
    kvcache_init(&kv, &stream, N, 3);
    int rc = feed(&stream, &kv, tok, calls, 5, logits);
    model_alloc_train(&plain, 1, S + W + 1);
    float worst = 0, big = 1;
    for (int t = 0; t < N && rc == 0; t++) {
        int n = cached_tokens(tok, t, S, W, seq);
        rc = model_forward(&plain, seq, NULL, pos, 1, n);
        const float *ref = plain.acts.logits + (size_t)(n - 1) * V;
        worst = worse(worst, max_abs_diff(ref, logits + (size_t)t * V, V));
        big = fmaxf(big, largest(ref, V));
    }
    int evicted = kv.len == S + W + 1 && kv.max_len == S + W + 1;
    kvcache_free(&kv);
    model_free(&plain), model_free(&stream);
    return rc == 0 && evicted ? worst / big : -1;
}

static void eviction(void) {
    const char *specs[] = {"rope", "alibi", "xpos"};
    float *logits = xmalloc(sizeof(float) * N * V);
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
            float gap = eviction_gap(specs[s], shapes[h][0], shapes[h][1], 0, logits);
            CHECK(gap >= 0 && gap <= 1e-5f,
                  "%s, %d heads, %d kv heads, stream:2:11, 1 layer: past eviction every step equals a full forward "
                  "over the cached tokens (relative gap %g)",
                  specs[s], shapes[h][0], shapes[h][1], gap);
        }
    free(logits);
}

/* d: the bf16 cache. Rounding keys and values to bf16 moves a logit of this tiny model (weights
 * ~N(0, 0.35^2), logits up to ~10) by at most a few hundredths; the bound is 2% of the largest
 * logit. Chunked and token-by-token decoding read the same rounded rows and differ only in the
 * order of their sums (sgemm, dot_rows): 5e-5 of the largest logit (Self-Extend's last row, where
 * near and far scores meet, reaches 1.3e-5; every other row stays under 1e-6). */
static void bf16_check(Model *m, const char *name) {
    int tok[N];
    some_tokens(tok, N, 3);
    float *f32 = xmalloc(sizeof(float) * N * V), *one = xmalloc(sizeof(float) * N * V),
          *chunked = xmalloc(sizeof(float) * N * V);
    KVCache a, b, c;
    kvcache_init(&a, m, N, 8);
    int rc = feed(m, &a, tok, by_token, 1, f32);
    m->kv_cache_bf16 = 1;
    kvcache_init(&b, m, N, 8);
    kvcache_init(&c, m, N, 8);
    rc |= feed(m, &b, tok, by_token, 1, one) | feed(m, &c, tok, uneven, 6, chunked);
    float big = largest(f32, N * V), same = max_abs_diff(one, chunked, N * V), off = max_abs_diff(f32, one, N * V);
    CHECK(rc == 0 && b.k == NULL && b.v == NULL && b.k16 && b.v16 && same <= 5e-5f * big,
          "%s: the bf16 cache in uneven chunks equals it token by token (max diff %g)", name, same);
    CHECK(rc == 0 && off > 0 && off <= 0.02f * big,
          "%s: bf16 cache within 2%% of the largest logit of float32's (max diff %g, max |logit| %g; 0 would mean "
          "nothing was rounded)", name, off, big);
    kvcache_free(&a), kvcache_free(&b), kvcache_free(&c);
    free(f32), free(one), free(chunked);
}

static void bf16_cache(void) {
    const char *specs[] = {"rope", "alibi", "rope"};
    const char *scales[] = {NULL, NULL, "selfextend:2:4"};
    each_model(specs, scales, 3, bf16_check);
    float *logits = xmalloc(sizeof(float) * N * V);
    for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++) {
        float gap = eviction_gap("rope", shapes[h][0], shapes[h][1], 1, logits);
        CHECK(gap >= 0 && gap <= 0.02f, "rope, %d heads, %d kv heads: the bf16 stream cache past eviction within 2%% "
              "of a full forward over the cached tokens (relative gap %g)", shapes[h][0], shapes[h][1], gap);
    }
    free(logits);
}

static void cli(void) {
    expect_pelab_error("./pelab sample missing.safetensors --kv-cache fp16", "--kv-cache fp16: expected fp32 or bf16");
    expect_pelab_error("./pelab sample missing.safetensors --kv-cache bf16 --no-cache", "no cache to keep");
}

void test_kv_layout(void) {
    kernels();
    cache_equals_recompute();
    eviction();
    bf16_cache();
    cli();
}
