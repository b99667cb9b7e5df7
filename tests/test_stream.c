/* test_stream.c: StreamingLLM (--scale stream:S:W) in the KV cache: before any eviction it equals
 * plain decoding; after, a 1-layer model's logits equal a full forward over exactly the cached
 * tokens at positions 0..n-1, and a deeper model's equal an independent double-precision
 * reference built from the weights; memory stays constant; everything else refuses it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../infer/decode.h"
#include "../infer/generate.h"
#include "../infer/probe.h"
#include "../infer/score.h"
#include "../model/model.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define STREAM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STREAM_ASAN 1
#endif
#endif

/* bytes the allocator has handed out and not taken back: glibc's mallinfo2 (2.33 and later),
 * macOS's default zone; elsewhere the heap check is skipped (NO_HEAP_STATS) */
#if defined(__APPLE__)
#include <malloc/malloc.h>
static inline size_t heap_in_use(void) {
    malloc_statistics_t st;
    malloc_zone_statistics(NULL, &st);
    return st.size_in_use;
}
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#include <malloc.h>
static inline size_t heap_in_use(void) { return mallinfo2().uordblks; }
#else
#define NO_HEAP_STATS 1
#endif
#if defined(STREAM_ASAN) && !defined(NO_HEAP_STATS)
#define NO_HEAP_STATS 1 /* ASan's allocator keeps freed blocks in quarantine: no steady heap to read */
#endif

enum { V = 13 }; /* tiny_model's vocabulary */

static void random_tokens(int *t, int n, unsigned long long seed) {
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) t[i] = (int)rng_below(&rng, V);
}

/* the same weights twice: plain, and with --scale stream:S:W */
static int model_pair(Model *plain, Model *stream, const char *spec, int kvh, int layers, int S, int W) {
    char rule[64];
    snprintf(rule, sizeof rule, "stream:%d:%d", S, W);
    if (tiny_model_shaped(plain, spec, 4, kvh, layers, 0, 11) != 0) return -1;
    if (tiny_model_shaped(stream, spec, 4, kvh, layers, 0, 11) != 0) return -1;
    return pos_set_scale(&stream->pos, rule);
}

/* feeds n tokens in calls of the sizes in `calls` (cycled), every row's logits into out [n, V] */
static int feed(Model *m, KVCache *kv, const int *tok, int n, const int *calls, int n_calls, float *out) {
    int *pos = xmalloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) pos[i] = i;
    int rc = 0;
    for (int done = 0, c = 0; done < n && rc == 0; c++) {
        int nb = calls[c % n_calls] < n - done ? calls[c % n_calls] : n - done;
        rc = decode_forward(m, kv, tok + done, pos + done, nb, out + (size_t)done * V, 1);
        done += nb;
    }
    free(pos);
    return rc;
}

/* a: up to S + W + 1 tokens (S sinks, W recent keys and the query's own), stream decoding is
 * plain decoding at positions 0..n-1 */
static void before_eviction(void) {
    const char *specs[] = {"rope", "alibi", "t5", "nope", "xpos", "cope", "kerple", "rope+logn:len=4"};
    enum { S = 3, W = 9, N = S + W + 1 };
    int tok[N], calls[] = {5, 1, 4, 2};
    random_tokens(tok, N, 3);
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        Model a, b;
        if (model_pair(&a, &b, specs[s], 2, 2, S, W) != 0) {
            CHECK(0, "stream %s: %s", specs[s], pelab_errmsg);
            continue;
        }
        KVCache ka, kb;
        kvcache_init(&ka, &a, N, 4);
        kvcache_init(&kb, &b, 1 << 20, 4); /* capacity S + W + 1 whatever is asked */
        float *la = xmalloc(sizeof(float) * N * V), *lb = xmalloc(sizeof(float) * N * V);
        int rc = feed(&a, &ka, tok, N, calls, 4, la) | feed(&b, &kb, tok, N, calls, 4, lb);
        float d = max_abs_diff(la, lb, N * V);
        CHECK(rc == 0 && d <= 1e-5f && kb.max_len == N && kb.len == N,
              "%s: stream:%d:%d before eviction equals plain decoding (rc %d, max diff %g, capacity %d)", specs[s], S,
              W, rc, d, kb.max_len);
        kvcache_free(&ka), kvcache_free(&kb);
        free(la), free(lb);
        model_free(&a), model_free(&b);
    }
}

/* the keys token t of tok attends to under StreamingLLM's official meaning (its start_size S and
 * recent_size W): the first S, up to W recent ones before t, and t itself; S + W + 1 at most */
static int cached_tokens(const int *tok, int t, int S, int W, int *out) {
    int n = 0;
    for (int i = 0; i <= t; i++)
        if (i < S || i >= t - W) out[n++] = tok[i];
    return n;
}

/* b: one layer: every step's logits are a full forward over exactly the cached tokens, positions
 * 0..n-1, of the same weights without the stream setting */
static void one_layer_reference(void) {
    const char *specs[] = {"rope", "rope:layout=half", "alibi", "t5", "kerple", "nope", "xpos", "cope", "fope"};
    const int sinks[] = {0, 1, 4};
    enum { W = 5, N = 40 };
    int tok[N], calls[] = {7, 3, 1, 1, 2}, seq[N], pos[N];
    random_tokens(tok, N, 5);
    for (int i = 0; i < N; i++) pos[i] = i;
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (int si = 0; si < 3; si++) {
            int S = sinks[si];
            Model a, b;
            if (model_pair(&a, &b, specs[s], 2, 1, S, W) != 0) {
                CHECK(0, "stream %s: %s", specs[s], pelab_errmsg);
                continue;
            }
            KVCache kb;
            kvcache_init(&kb, &b, N, 3);
            float *lb = xmalloc(sizeof(float) * N * V);
            int rc = feed(&b, &kb, tok, N, calls, 5, lb);
            model_alloc_train(&a, 1, S + W + 1);
            float worst = 0, big = 1; /* the two paths sum in different orders (sgemv, sgemm) */
            for (int t = 0; t < N && rc == 0; t++) {
                int n = cached_tokens(tok, t, S, W, seq);
                rc = model_forward(&a, seq, NULL, pos, 1, n);
                const float *ref = a.acts.logits + (size_t)(n - 1) * V;
                float d = max_abs_diff(ref, lb + (size_t)t * V, V);
                worst = d > worst ? d : worst;
                for (int i = 0; i < V; i++) big = fabsf(ref[i]) > big ? fabsf(ref[i]) : big;
            }
            CHECK(rc == 0 && worst <= 1e-5f * big,
                  "%s, 1 layer, stream:%d:%d: every step equals a full forward over the cached tokens at 0..n-1 "
                  "(rc %d, max diff %g, max |logit| %g)", specs[s], S, W, rc, worst, big);
            kvcache_free(&kb);
            free(lb);
            model_free(&a), model_free(&b);
        }
}

/* ---- c: an independent reference for a deeper model, in double precision ---- */

static void ref_rmsnorm(double *y, const double *x, const float *g, int D, double eps) {
    double ss = 0;
    for (int i = 0; i < D; i++) ss += x[i] * x[i];
    double r = 1.0 / sqrt(ss / D + eps);
    for (int i = 0; i < D; i++) y[i] = x[i] * r * g[i];
}

/* y [rows] = W [rows, cols] x */
static void ref_matvec(double *y, const float *w, const double *x, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < cols; c++) s += (double)w[(size_t)r * cols + c] * x[c];
        y[r] = s;
    }
}

/* RoPE, layout=interleaved, base 10000, every pair: heads of hd dims at position p */
static void ref_rope(double *x, int heads, int hd, int p) {
    for (int h = 0; h < heads; h++)
        for (int j = 0; j < hd / 2; j++) {
            double th = p * pow(10000.0, -2.0 * j / hd), c = cos(th), s = sin(th);
            double *a = x + h * hd + 2 * j, x0 = a[0], x1 = a[1];
            a[0] = x0 * c - x1 * s;
            a[1] = x0 * s + x1 * c;
        }
}

/* The paper's cache, token by token: each token's per-layer raw k and v are computed once, when it
 * enters; S + W keys stay cached between steps and the new one joins them, so a full cache (S + W
 * + 1) first drops its oldest token after the S sinks; every step attends over the
 * cache with positions = slots (rope: q and k rotated at them; alibi: -m_h (slot_q - slot_k)).
 * logits [N, V] for the N tokens of tok. */
static void stream_reference(const Model *m, int alibi, const int *tok, int N, int S, int W, double *logits) {
    const ModelConfig *c = &m->cfg;
    const ParamTensors *p = &m->params;
    int D = c->dim, L = c->n_layers, H = c->n_heads, KVH = c->n_kv_heads, hd = m->head_dim, F = c->hidden_dim;
    int qdim = H * hd, kvd = KVH * hd, cap = S + W + 1, len = 0;
    double *kc = xcalloc((size_t)cap * L * kvd, sizeof(double)), *vc = xcalloc((size_t)cap * L * kvd, sizeof(double));
    double *x = xmalloc(sizeof(double) * D), *h = xmalloc(sizeof(double) * D), *q = xmalloc(sizeof(double) * qdim);
    double *att = xmalloc(sizeof(double) * qdim), *o = xmalloc(sizeof(double) * D), *kr = xmalloc(sizeof(double) * kvd);
    double *g = xmalloc(sizeof(double) * F), *u = xmalloc(sizeof(double) * F), *sc = xmalloc(sizeof(double) * cap);
    for (int t = 0; t < N; t++) {
        if (len == cap) { /* evict slot S */
            size_t row = (size_t)L * kvd;
            memmove(kc + S * row, kc + (S + 1) * row, (cap - S - 1) * row * sizeof(double));
            memmove(vc + S * row, vc + (S + 1) * row, (cap - S - 1) * row * sizeof(double));
            len--;
        }
        int slot = len++;
        for (int i = 0; i < D; i++) x[i] = p->tok_emb[(size_t)tok[t] * D + i];
        for (int l = 0; l < L; l++) {
            ref_rmsnorm(h, x, p->attn_norm + l * D, D, c->norm_eps);
            ref_matvec(q, p->wq + (size_t)l * qdim * D, h, qdim, D);
            ref_matvec(kc + ((size_t)slot * L + l) * kvd, p->wk + (size_t)l * kvd * D, h, kvd, D);
            ref_matvec(vc + ((size_t)slot * L + l) * kvd, p->wv + (size_t)l * kvd * D, h, kvd, D);
            if (!alibi) ref_rope(q, H, hd, slot);
            for (int hh = 0; hh < H; hh++) {
                int kh = hh / (H / KVH);
                double mx = -INFINITY, sum = 0, slope = pow(2.0, -8.0 * (hh + 1) / H); /* H a power of 2 */
                for (int j = 0; j < len; j++) {
                    memcpy(kr, kc + ((size_t)j * L + l) * kvd, sizeof(double) * kvd);
                    if (!alibi) ref_rope(kr, KVH, hd, j);
                    double s = 0;
                    for (int i = 0; i < hd; i++) s += q[hh * hd + i] * kr[kh * hd + i];
                    sc[j] = s / sqrt((double)hd) - (alibi ? slope * (slot - j) : 0);
                    mx = sc[j] > mx ? sc[j] : mx;
                }
                for (int j = 0; j < len; j++) sum += sc[j] = exp(sc[j] - mx);
                for (int i = 0; i < hd; i++) {
                    double a = 0;
                    for (int j = 0; j < len; j++) a += sc[j] / sum * vc[((size_t)j * L + l) * kvd + kh * hd + i];
                    att[hh * hd + i] = a;
                }
            }
            ref_matvec(o, p->wo + (size_t)l * D * qdim, att, D, qdim);
            for (int i = 0; i < D; i++) x[i] += o[i];
            ref_rmsnorm(h, x, p->mlp_norm + l * D, D, c->norm_eps);
            ref_matvec(g, p->w1 + (size_t)l * F * D, h, F, D);
            ref_matvec(u, p->w3 + (size_t)l * F * D, h, F, D);
            for (int i = 0; i < F; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
            ref_matvec(o, p->w2 + (size_t)l * D * F, g, D, F);
            for (int i = 0; i < D; i++) x[i] += o[i];
        }
        ref_rmsnorm(h, x, p->final_norm, D, c->norm_eps);
        ref_matvec(logits + (size_t)t * c->vocab_size, p->lm_head, h, c->vocab_size, D);
    }
    free(kc), free(vc), free(x), free(h), free(q), free(att), free(o), free(kr), free(g), free(u), free(sc);
}

static void deep_reference(void) {
    const char *specs[] = {"rope", "alibi"};
    const int sinks[] = {0, 2}, kv_heads[] = {2, 4};
    enum { W = 6, N = 30 };
    int tok[N], calls[] = {9, 1, 4, 1};
    random_tokens(tok, N, 9);
    for (int s = 0; s < 2; s++)
        for (int si = 0; si < 2; si++) {
            int S = sinks[si];
            Model a, b;
            if (model_pair(&a, &b, specs[s], kv_heads[si], 3, S, W) != 0) {
                CHECK(0, "stream %s: %s", specs[s], pelab_errmsg);
                continue;
            }
            KVCache kb;
            kvcache_init(&kb, &b, N, 4);
            float *lb = xmalloc(sizeof(float) * N * V);
            double *ref = xmalloc(sizeof(double) * N * V);
            int rc = feed(&b, &kb, tok, N, calls, 4, lb);
            stream_reference(&b, s == 1, tok, N, S, W, ref);
            double worst = 0, big = 1;
            for (int i = 0; i < N * V; i++) {
                double d = fabs(lb[i] - ref[i]);
                worst = d > worst || d != d ? d : worst;
                big = fabs(ref[i]) > big ? fabs(ref[i]) : big;
            }
            CHECK(rc == 0 && worst <= 1e-4 * big,
                  "%s, 3 layers, %d kv heads, stream:%d:%d: every step equals the double-precision reference "
                  "(rc %d, max diff %g, max |logit| %g)", specs[s], kv_heads[si], S, W, rc, worst, big);
            kvcache_free(&kb);
            free(lb), free(ref);
            model_free(&a), model_free(&b);
        }
}

/* d: 100 x (S + W + 1) tokens in a cache allocated once; the heap does not grow and the logits stay
 * finite */
static void constant_memory(void) {
    enum { S = 4, W = 28, CAP = S + W + 1, N = 100 * CAP };
    Model a, b;
    if (model_pair(&a, &b, "rope", 2, 2, S, W) != 0) {
        CHECK(0, "stream rope: %s", pelab_errmsg);
        return;
    }
    KVCache kv;
    kvcache_init(&kv, &b, N, 64);
    const float *k0 = kv.k, *v0 = kv.v;
    float logits[V];
    int finite = 1, rc = 0;
#ifndef NO_HEAP_STATS
    size_t heap_early = 0, heap_late = 0;
#endif
    Rng rng;
    rng_seed(&rng, 2);
    for (int t = 0; t < N && rc == 0; t++) {
        int id = (int)rng_below(&rng, V);
        rc = decode_forward(&b, &kv, &id, &t, 1, logits, 0);
        for (int i = 0; i < V; i++) finite &= isfinite(logits[i]);
#ifndef NO_HEAP_STATS
        if (t + 1 == 2 * CAP) heap_early = heap_in_use();
        if (t + 1 == N) heap_late = heap_in_use();
#endif
    }
    CHECK(rc == 0 && finite && kv.max_len == CAP && kv.len == CAP && kv.k == k0 && kv.v == v0,
          "stream:%d:%d: %d tokens through one cache of %d slots, logits finite (rc %d, len %d)", S, W, N, kv.max_len,
          rc, kv.len);
#ifndef NO_HEAP_STATS
    CHECK(heap_late <= heap_early, "stream: heap in use at token %d (%zu bytes) <= at token %d (%zu)", N, heap_late,
          2 * CAP, heap_early);
#endif
    kvcache_free(&kv);
    model_free(&a), model_free(&b);
}

/* e: what cannot stream says so; and the batched paths fall back to one text at a time */
static void refusals(void) {
    const char *input_schemes[] = {"learned", "sinusoidal"};
    for (int i = 0; i < 2; i++) {
        Model m;
        tiny_model(&m, input_schemes[i], 4, 1, 1);
        CHECK(pos_set_scale(&m.pos, "stream:4:28") != 0 && strstr(pelab_errmsg, "adds positions to the input") &&
                  m.pos.extend.method == NULL,
              "%s refuses stream: %s", input_schemes[i], pelab_errmsg);
        model_free(&m);
    }
    const struct {
        const char *text, *needle;
    } bad[] = {
        {"stream", "needs its arguments: stream:S:W"},
        {"stream:4", "W, the recent tokens: expected an integer"},
        {"stream:-1:8", "S, the sink tokens: expected an integer in [0,"},
        {"stream:4:0", "W, the recent tokens: expected an integer in [1,"},
        {"stream:4:8:2", "too many arguments"},
        {"stream:a:8", "S, the sink tokens"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Model m;
        tiny_model(&m, "rope", 4, 1, 1);
        CHECK(pos_set_scale(&m.pos, bad[i].text) != 0 && strstr(pelab_errmsg, bad[i].needle) &&
                  m.pos.extend.method == NULL,
              "--scale %s: '%s' (got: %s)", bad[i].text, bad[i].needle, pelab_errmsg);
        model_free(&m);
    }

    Model a, b;
    if (model_pair(&a, &b, "rope", 2, 2, 2, 6) != 0) {
        CHECK(0, "stream rope: %s", pelab_errmsg);
        return;
    }
    int tok[24], pos[24];
    random_tokens(tok, 24, 4);
    for (int i = 0; i < 24; i++) pos[i] = i;
    model_alloc_train(&b, 1, 8);
    CHECK(model_forward(&b, tok, NULL, pos, 1, 8) != 0 && strstr(pelab_errmsg, "stream:2:6 works through the KV-cache"),
          "model_forward refuses stream: %s", pelab_errmsg);
    FILE *null = fopen("/dev/null", "w");
    CHECK(null && probe_cache(&b, tok, 24, 8, null) == 1, "probe cache reports the refused full forward");
    if (null) fclose(null);
    KVCache kv;
    kvcache_init_batch(&kv, &b, 2, 12, 4);
    float logits[2 * V];
    int two[2] = {1, 2}, p2[2] = {0, 0};
    CHECK(decode_forward_batch(&b, &kv, two, p2, 1, logits, 0) != 0 && strstr(pelab_errmsg, "holds one sequence"),
          "a batched stream cache is refused: %s", pelab_errmsg);
    kvcache_free(&kv);

    /* score_texts with batch 4 scores each text on its own stream cache */
    const int *texts[3] = {tok, tok + 3, tok + 5};
    int lens[3] = {20, 9, 19};
    double nll[3], one[3];
    int rc = score_texts(&b, texts, lens, 3, 4, DYNAMIC_WINDOW, NULL, nll);
    for (int t = 0; t < 3 && rc == 0; t++) rc = score_texts(&b, texts + t, lens + t, 1, 1, DYNAMIC_WINDOW, NULL, one + t);
    CHECK(rc == 0 && nll[0] == one[0] && nll[1] == one[1] && nll[2] == one[2],
          "score_texts in stream mode: batch 4 equals each text alone (rc %d: %s)", rc, pelab_errmsg);
    /* generate_batch decodes the texts one at a time */
    Sampler sm[2];
    int buf[2][40], *gtexts[2] = {buf[0], buf[1]}, n_prompt[2] = {3, 5}, made[2];
    memcpy(buf[0], tok, sizeof(int) * 5), memcpy(buf[1], tok, sizeof(int) * 5);
    for (int i = 0; i < 2; i++) sampler_init(&sm[i], V, 1.0f, 0.9f, 0, 7);
    rc = generate_batch(&b, sm, gtexts, n_prompt, 2, 30, -1, made);
    CHECK(rc == 0 && made[0] == 30 && made[1] == 30, "generate_batch in stream mode (rc %d: %s)", rc, pelab_errmsg);
    for (int i = 0; i < 2; i++) sampler_free(&sm[i]);
    model_free(&a), model_free(&b);
}

/* f: the command line: 100 x L tokens sampled, score and eval run */
static void cli(void) {
    static char out[65536], cmd[2048];
    const char *dir = test_tmpdir();
    snprintf(cmd, sizeof cmd,
             "./pelab train --steps 3 --dim 16 --layers 1 --heads 2 --seq-len 32 --batch 2 --synth-bytes 8000 "
             "--quiet --out %s/stream.safetensors && ./pelab synth stories --bytes 3000 --seed 4 > %s/stream.txt",
             dir, dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0, "stream: a tiny model trains (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/stream.safetensors --scale stream:4:28 -n 3200 --seed 3 >/dev/null",
             dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "3200 tokens in"), "sample --scale stream:4:28 -n 3200 (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/stream.safetensors --scale stream:4:28 -n 40 --no-cache --seed 3", dir);
    expect_pelab_error(cmd, "stream:4:28 works through the KV-cache decoder");
    snprintf(cmd, sizeof cmd, "./pelab score %s/stream.safetensors %s/stream.txt --len 128 --scale stream:2:30", dir,
             dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "nll "), "score --scale stream:2:30 (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd,
             "./pelab eval %s/stream.safetensors --data %s/stream.txt --mult 1,4 --scale none,stream:2:30 --threads 1",
             dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "stream:2:30"), "eval --scale none,stream:2:30 (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/stream.safetensors --scale stream:2 -n 4", dir);
    expect_pelab_error(cmd, "W, the recent tokens");
}

void test_stream(void) {
    before_eviction();
    one_layer_reference();
    deep_reference();
    constant_memory();
    refusals();
    cli();
}
