/* test_model.c: the checks every scheme gets (tests/test_schemes.c runs them on the registry):
 * finite-difference gradient checks of every parameter tensor, KV-cache decoding vs the full
 * forward, causality; and the learned table's hard limit, fast_expf, robustness. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../infer/decode.h"
#include "../model/fastmath.h"
#include "../model/model.h"
#include "test.h"

/* a tiny model whose weights are large enough that every gradient path is exercised */
int tiny_qkv_bias;
const char *tiny_attn_pattern;

int tiny_model_shaped(Model *m, const char *spec, int n_heads, int n_kv_heads, int n_layers, int tied,
                      unsigned long long seed) {
    ModelConfig c = {.vocab_size = 13, .dim = 16, .n_layers = n_layers, .n_heads = n_heads, .n_kv_heads = n_kv_heads,
                     .hidden_dim = 20, .seq_len = 8, .norm_eps = 1e-5f, .tied = tied, .qkv_bias = tiny_qkv_bias};
    if (tiny_attn_pattern && pattern_parse(&c.pattern, tiny_attn_pattern) != 0) return -1;
    if (model_create(m, &c, spec) != 0) return -1;
    model_init_weights(m, seed);
    Rng rng;
    rng_seed(&rng, seed + 1);
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        float *p = m->params_mem + m->tensors[t].offset;
        int is_norm = t == T_ATTN_NORM || t == T_MLP_NORM || t == T_FINAL_NORM;
        for (size_t i = 0; i < m->tensors[t].numel; i++)
            p[i] = is_norm ? 1.0f + 0.2f * rng_normal(&rng) : 0.35f * rng_normal(&rng);
    }
    return 0;
}

int tiny_model(Model *m, const char *spec, int n_kv_heads, int tied, unsigned long long seed) {
    return tiny_model_shaped(m, spec, 4, n_kv_heads, 2, tied, seed);
}

void fixed_logits(Model *m, float *out, int T) {
    int *in = xmalloc(sizeof(int) * (size_t)T), *pos = xmalloc(sizeof(int) * (size_t)T);
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 3) % m->cfg.vocab_size, pos[t] = t;
    model_alloc_train(m, 1, T);
    model_forward(m, in, NULL, pos, 1, T);
    memcpy(out, m->acts.logits, sizeof(float) * (size_t)T * m->cfg.vocab_size);
    free(in), free(pos);
}

/* what rope_target_of refuses for every runtime (HF's Llama, llama.cpp's llama) */
const SpecNeedle ROPE_TARGET_REFUSED[] = {
    {"alibi", "RoPE only"},
    {"xpos", "RoPE only"},
    {"learned:max_len=16", "RoPE only"}, /* GPT-2's table past L: not a Llama */
    {"rope:fraction=0.5", "partial rotary"},
    {"rope:keep=0.5", "p-RoPE"},
    {"rope:max_period=4", "HoPE"},
    {"rope+logn", "length-scaled attention"},
    {"rope+nope@1", "NoPE layers"},
    {"rope+sinks", "attention sinks"},
};
const size_t N_ROPE_TARGET_REFUSED = sizeof ROPE_TARGET_REFUSED / sizeof ROPE_TARGET_REFUSED[0];

void check_export_refusals(const SpecNeedle *no, size_t n, const char *what, int (*write)(const char *path, const Model *m)) {
    for (size_t i = 0; i < n; i++) {
        Model m;
        if (tiny_model(&m, no[i].spec, 4, 1, 1) != 0) {
            CHECK(0, "%s: %s", no[i].spec, pelab_errmsg);
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/refused-%s-%zu", test_tmpdir(), what, i);
        int rc = write(path, &m);
        CHECK(rc != 0 && strstr(pelab_errmsg, no[i].needle) && !strchr(pelab_errmsg, '\n'),
              "%s export of %s: refused naming '%s' (got %s)", what, no[i].spec, no[i].needle, rc ? pelab_errmsg : "written");
        model_free(&m);
    }
}

static double loss_at(Model *m, const int *in, const int *tg, const int *pos, int B, int T) {
    model_forward(m, in, tg, pos, B, T);
    return m->mean_loss;
}

/* Central differences, eps 2e-3 on float32 weights of size ~0.35. Tolerance, per tensor:
 * ||analytic - numeric|| <= 2e-2 * ||numeric|| + 1e-4 * sqrt(n), and every element within
 * 3e-3 + 5e-2 * |numeric|. A wrong backward (sign, transpose, missing term) fails by O(1).
 * A scheme that declares POS_CAP_KINKED (FIRE: its MLP's ReLU; CoPE: linear interpolation
 * between integer positions, whose slope jumps where a p crosses an integer, in its own layer or,
 * through the residual stream, in a later one) has no central difference across a kink. For it,
 * where the one-sided differences disagree by more than 1e-3 + 2e-2 |numeric|, numeric may
 * instead be a one-sided difference (at eps or eps / 8: kinks on both sides) nearer the analytic
 * value, which must then match that side's derivative; a wrong backward, off by O(1), matches no
 * side. Only for those schemes: a smooth loss's one-sided differences differ by its curvature,
 * which must not loosen its check.
 * mask_every > 0: every mask_every-th target is -1 (a prompt token of a task: no loss).
 * Row 0 is at positions first_pos.., row 1 two further (first_pos > 0: past the training length). */
static void gradcheck_masked(const char *spec, int n_kv_heads, int tied, int mask_every, int window, int first_pos) {
    Model m;
    if (tiny_model(&m, spec, n_kv_heads, tied, 42) != 0) {
        CHECK(0, "gradcheck %s: model_create failed: %s", spec, pelab_errmsg);
        return;
    }
    m.cfg.sliding_window = window; /* 0: none */
    enum { B = 2, T = 6 };
    int in[B * T], tg[B * T], pos[B * T];
    Rng rng;
    rng_seed(&rng, 7);
    for (int i = 0; i < B * T; i++) {
        in[i] = (int)rng_below(&rng, 13);
        tg[i] = mask_every > 0 && i % mask_every == 0 ? -1 : (int)rng_below(&rng, 13);
        pos[i] = first_pos + (i % T) + (i / T) * 2; /* row 1 starts 2 further: explicit ids matter */
    }
    model_alloc_train(&m, B, T);
    model_zero_grad(&m);
    int rc = model_forward(&m, in, tg, pos, B, T);
    CHECK(rc == 0, "gradcheck %s: forward failed: %s", spec, pelab_errmsg);
    model_backward(&m);
    float *analytic = xmalloc(m.n_params * sizeof(float));
    memcpy(analytic, m.grads_mem, m.n_params * sizeof(float));

    const double eps = getenv("GC_EPS") ? atof(getenv("GC_EPS")) : 2e-3;
    const double l0 = loss_at(&m, in, tg, pos, B, T);
    int kinks = 0, kinked = (m.pos.scheme->caps & POS_CAP_KINKED) != 0;
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        const TensorInfo *ti = &m.tensors[t];
        if (!ti->numel) continue;
        double err2 = 0, num2 = 0, worst = 0;
        size_t worst_i = 0;
        int elem_ok = 1;
        for (size_t i = 0; i < ti->numel; i++) {
            float *p = m.params_mem + ti->offset + i, saved = *p;
            *p = saved + (float)eps;
            double lp = loss_at(&m, in, tg, pos, B, T);
            *p = saved - (float)eps;
            double lm = loss_at(&m, in, tg, pos, B, T);
            *p = saved;
            double numeric = (lp - lm) / (2 * eps), a = analytic[ti->offset + i];
            double ahead = (lp - l0) / eps, behind = (l0 - lm) / eps;
            if (kinked && fabs(ahead - behind) > 1e-3 + 2e-2 * fabs(numeric)) { /* a kink within eps, maybe */
                /* and the one-sided differences at eps / 8, for a second kink on the other side */
                *p = saved + (float)(eps / 8);
                double near_ahead = (loss_at(&m, in, tg, pos, B, T) - l0) / (eps / 8);
                *p = saved - (float)(eps / 8);
                double near_behind = (l0 - loss_at(&m, in, tg, pos, B, T)) / (eps / 8);
                *p = saved;
                double sides[4] = {ahead, behind, near_ahead, near_behind};
                for (int k = 0; k < 4; k++)
                    if (fabs(a - sides[k]) < fabs(a - numeric)) numeric = sides[k];
                kinks++;
            }
            double d = fabs(a - numeric);
            err2 += d * d;
            num2 += numeric * numeric;
            if (d > 3e-3 + 5e-2 * fabs(numeric)) elem_ok = 0;
            if (d > worst) worst = d, worst_i = i;
        }
        double rel_ok = sqrt(err2) <= 2e-2 * sqrt(num2) + 1e-4 * sqrt((double)ti->numel);
        CHECK(rel_ok && elem_ok && num2 > 0,
              "gradcheck %s kv=%d tied=%d mask 1/%d tensor %s: |err| %.3g vs |grad| %.3g, worst element %zu off by "
              "%.3g (%d one-sided so far)",
              spec, n_kv_heads, tied, mask_every, ti->name, sqrt(err2), sqrt(num2), worst_i, worst, kinks);
    }
    free(analytic);
    model_free(&m);
}

void gradcheck(const char *spec, int n_kv_heads, int tied) { gradcheck_masked(spec, n_kv_heads, tied, 0, 0, 0); }
void gradcheck_window(const char *spec, int window) { gradcheck_masked(spec, 2, 0, 0, window, 0); }

/* Training on answers only: targets < 0 carry no loss and no gradient, and the mean is over the
 * counted tokens. The masked loss equals the mean of the unmasked run's per-token losses over the
 * kept tokens; an all-masked batch has loss 0 and zero gradients; the masked gradient passes the
 * central-difference check (every 3rd target masked, rope and alibi). */
static void masked_loss_check(void) {
    enum { B = 2, T = 6 };
    Model m;
    if (tiny_model(&m, "rope", 2, 1, 9) != 0) {
        CHECK(0, "masked loss: %s", pelab_errmsg);
        return;
    }
    int in[B * T], tg[B * T], masked[B * T], none[B * T], pos[B * T];
    for (int i = 0; i < B * T; i++) {
        in[i] = (i * 5 + 1) % 13, tg[i] = (i * 3 + 2) % 13, pos[i] = i % T;
        masked[i] = i % T < 4 ? -1 : tg[i]; /* a prompt of 4 tokens, an answer of 2, per row */
        none[i] = -1;
    }
    model_alloc_train(&m, B, T);
    model_forward(&m, in, tg, pos, B, T);
    double kept = 0;
    for (int i = 0; i < B * T; i++)
        if (masked[i] >= 0) kept += m.acts.losses[i];
    kept /= 4;
    model_forward(&m, in, masked, pos, B, T);
    CHECK(fabs(m.mean_loss - kept) < 1e-6, "masked loss = mean over the 4 answer tokens: %.7f vs %.7f", m.mean_loss,
          kept);
    model_zero_grad(&m);
    model_forward(&m, in, none, pos, B, T);
    model_backward(&m);
    float worst = 0;
    for (size_t i = 0; i < m.n_params; i++) worst = fabsf(m.grads_mem[i]) > worst ? fabsf(m.grads_mem[i]) : worst;
    CHECK(m.mean_loss == 0.0f && worst == 0.0f, "all targets masked: loss %g, largest gradient %g (both 0)",
          m.mean_loss, worst);
    model_free(&m);
    gradcheck_masked("rope", 2, 0, 3, 0, 0);
    gradcheck_masked("alibi", 4, 1, 3, 0, 0);
}

/* KV-cache decoding in several chunkings equals the full (training) forward at every position */
void kvcache_check(const char *spec, int n_kv_heads) {
    Model m;
    char learned_long[] = "learned:max_len=16"; /* the table must cover the 12 decoded positions */
    if (strcmp(spec, "learned") == 0) spec = learned_long;
    if (tiny_model(&m, spec, n_kv_heads, 0, 5) != 0) {
        CHECK(0, "kvcache %s: %s", spec, pelab_errmsg);
        return;
    }
    enum { T = 12 };
    int V = m.cfg.vocab_size, in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 7 + 3) % V, pos[i] = i;
    model_alloc_train(&m, 1, T);
    CHECK(model_forward(&m, in, NULL, pos, 1, T) == 0, "kvcache %s: full forward: %s", spec, pelab_errmsg);
    float *full = m.acts.logits, *dec = xmalloc(sizeof(float) * T * V);
    int chunkings[][3] = {{1, 1, 0}, {5, 1, 0}, {4, 4, 1}, {12, 12, 1}}; /* first block, then step; all_logits */
    for (size_t c = 0; c < sizeof chunkings / sizeof chunkings[0]; c++) {
        KVCache kv;
        kvcache_init(&kv, &m, T, chunkings[c][2] ? 4 : 8);
        int done = 0, rc = 0;
        while (done < T && rc == 0) {
            int n = done == 0 ? chunkings[c][0] : chunkings[c][1];
            if (n > T - done) n = T - done;
            if (chunkings[c][2]) rc = decode_forward(&m, &kv, in + done, pos + done, n, dec + done * V, 1);
            else {
                rc = decode_forward(&m, &kv, in + done, pos + done, n, dec + (done + n - 1) * V, 0);
                /* only the last row of each call is produced: compare those rows */
                for (int i = done; i < done + n - 1; i++) memcpy(dec + i * V, full + i * V, sizeof(float) * V);
            }
            done += n;
        }
        float diff = max_abs_diff(full, dec, T * V);
        CHECK(rc == 0 && diff <= 1e-4f, "kvcache %s kv=%d chunking %zu: max |diff| %.3g (%s)", spec, n_kv_heads, c,
              diff, rc ? pelab_errmsg : "ok");
        kvcache_free(&kv);
    }
    /* batch vs single: two rows in one batch give the same logits as each alone */
    int in2[2 * T], pos2[2 * T];
    for (int i = 0; i < T; i++) in2[i] = in[i], in2[T + i] = (i * 5 + 1) % V, pos2[i] = pos2[T + i] = i;
    float *single = xmalloc(sizeof(float) * T * V);
    model_alloc_train(&m, 2, T);
    model_forward(&m, in2 + T, NULL, pos2, 1, T);
    memcpy(single, m.acts.logits, sizeof(float) * T * V);
    model_forward(&m, in2, NULL, pos2, 2, T);
    CHECK(max_abs_diff(single, m.acts.logits + T * V, T * V) <= 1e-5f, "batch vs single %s", spec);
    free(single);
    free(dec);
    model_free(&m);
}

/* changing token t changes no logit before t; future attention weights are exactly zero */
void causality_check(const char *spec) {
    Model m;
    tiny_model(&m, spec, 2, 1, 9);
    enum { T = 8 };
    int V = m.cfg.vocab_size, in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (3 * i + 1) % V, pos[i] = i;
    model_keep_attention(&m, 1);
    model_alloc_train(&m, 1, T);
    model_forward(&m, in, NULL, pos, 1, T);
    float *before = xmalloc(sizeof(float) * T * V);
    memcpy(before, m.acts.logits, sizeof(float) * T * V);
    int future_nonzero = 0;
    size_t per_layer = (size_t)m.cfg.n_heads * T * T;
    for (int l = 0; l < m.cfg.n_layers; l++)
        for (int h = 0; h < m.cfg.n_heads; h++)
            for (int i = 0; i < T; i++)
                for (int j = i + 1; j < T; j++)
                    future_nonzero += m.acts.att_probs[l * per_layer + ((size_t)h * T + i) * T + j] != 0.0f;
    CHECK(future_nonzero == 0, "causality %s: %d future attention weights are not exactly 0", spec, future_nonzero);
    for (int t = 1; t < T; t++) {
        in[t] = (in[t] + 5) % V;
        model_forward(&m, in, NULL, pos, 1, T);
        CHECK(memcmp(before, m.acts.logits, sizeof(float) * t * V) == 0,
              "causality %s: changing token %d changed an earlier logit", spec, t);
        int later_changed = memcmp(before + t * V, m.acts.logits + t * V, sizeof(float) * V) != 0;
        CHECK(later_changed, "causality %s: changing token %d did not change its own logits", spec, t);
        memcpy(before, m.acts.logits, sizeof(float) * T * V);
    }
    free(before);
    model_free(&m);
}

/* a learned table of `rows` rows (the training length 8, or longer): positions up to rows - 1 are
 * accepted in the forward and the cached decoder, position rows is an error naming it */
static void learned_table_limit(const char *spec, int rows) {
    Model m;
    tiny_model(&m, spec, 2, 1, 1);
    int in[17] = {0}, pos[17];
    for (int i = 0; i <= rows; i++) pos[i] = i;
    model_alloc_train(&m, 1, rows + 1);
    CHECK(model_forward(&m, in, NULL, pos, 1, rows) == 0, "%s: positions 0..%d accepted: %s", spec, rows - 1,
          pelab_errmsg);
    pelab_errmsg[0] = 0;
    char past[64];
    snprintf(past, sizeof past, "position %d is past the end", rows);
    CHECK(model_forward(&m, in, NULL, pos, 1, rows + 1) == -1 && strstr(pelab_errmsg, past),
          "%s: position %d rejected with a clear message (got '%s')", spec, rows, pelab_errmsg);
    KVCache kv;
    kvcache_init(&kv, &m, 32, 4);
    float logits[13];
    CHECK(decode_forward(&m, &kv, in, pos, rows, logits, 0) == 0, "%s: decode within the table", spec);
    CHECK(decode_forward(&m, &kv, in, pos + rows, 1, logits, 0) == -1 && strstr(pelab_errmsg, "learned"),
          "%s: decode past the table rejected: '%s'", spec, pelab_errmsg);
    int neg = -1;
    CHECK(decode_forward(&m, &kv, in, &neg, 1, logits, 0) == -1, "%s: negative position rejected", spec);
    kvcache_free(&kv);
    model_free(&m);
}

static void learned_limit_check(void) {
    learned_table_limit("learned", 8); /* table of seq_len = 8 rows */
    learned_table_limit("learned:max_len=16", 16); /* GPT-2's setting: rows past L */
    /* the gradient of rows past L, reached by positions 6..13 (the training length is 8) */
    gradcheck_masked("learned:max_len=16", 2, 0, 0, 0, 6);
}

/* targets are validated; the score-gradient scratch follows the thread count */
static void robustness(void) {
    Model m;
    tiny_model(&m, "rope", 2, 1, 4);
    int in[4] = {1, 2, 3, 4}, tg[4] = {2, 3, 4, 13}, pos[4] = {0, 1, 2, 3};
    int saved_threads = omp_get_max_threads();
    omp_set_num_threads(1);
    model_alloc_train(&m, 1, 4);
    CHECK(model_forward(&m, in, tg, pos, 1, 4) == -1 && strstr(pelab_errmsg, "target id 13"),
          "a target past the vocabulary is refused: %s", pelab_errmsg);
    tg[3] = 5;
    model_zero_grad(&m);
    model_forward(&m, in, tg, pos, 1, 4);
    model_backward(&m);
    float *one = xmalloc(m.n_params * sizeof(float));
    memcpy(one, m.grads_mem, m.n_params * sizeof(float));
    omp_set_num_threads(4); /* more threads than at allocation */
    model_zero_grad(&m);
    model_forward(&m, in, tg, pos, 1, 4);
    model_backward(&m);
    CHECK(max_abs_diff(one, m.grads_mem, (int)m.n_params) < 1e-5f, "backward after the thread count grew");
    omp_set_num_threads(saved_threads);
    free(one);
    model_free(&m);
}

/* fast_expf against libm: relative error within 2 ulp over the whole range, the edges exact */
static void fast_exp_check(void) {
    double worst = 0;
    float worst_x = 0;
    for (int i = 0; i <= 2000000; i++) {
        float x = -87.3f + (88.7f + 87.3f) * (float)i / 2000000.0f;
        double rel = fabs((double)fast_expf(x) - expf(x)) / expf(x);
        if (rel > worst) worst = rel, worst_x = x;
    }
    CHECK(worst < 2.5e-7, "fast_expf relative error %.3g at x = %g (limit 2.5e-7, about 2 ulp)", worst, worst_x);
    CHECK(fast_expf(0.0f) == 1.0f && fast_expf(-100.0f) == 0.0f && fast_expf(-INFINITY) == 0.0f &&
              isinf(fast_expf(100.0f)) && isnan(fast_expf(NAN)),
          "fast_expf: e^0 = 1, underflow to exactly 0, overflow to inf, NaN stays NaN");
}

/* sinusoidal:tokens=sqrt_dim (Vaswani et al.'s recipe): the residual stream starts at sqrt(dim)
 * times the token embedding plus the sines, in training and in decoding alike */
static void token_scale_check(void) {
    Model plain, scaled;
    if (tiny_model(&plain, "sinusoidal:scale=0", 4, 1, 3) != 0 ||
        tiny_model(&scaled, "sinusoidal:scale=0,tokens=sqrt_dim", 4, 1, 3) != 0) {
        CHECK(0, "token scale models: %s", pelab_errmsg);
        return;
    }
    int in[4] = {1, 5, 7, 2}, pos[4] = {0, 1, 2, 3};
    model_alloc_train(&plain, 1, 4), model_alloc_train(&scaled, 1, 4);
    model_forward(&plain, in, NULL, pos, 1, 4);
    model_forward(&scaled, in, NULL, pos, 1, 4);
    float worst = 0, r = sqrtf(16.0f);
    for (int i = 0; i < 4 * 16; i++) worst = fmaxf(worst, fabsf(scaled.acts.x0[i] - r * plain.acts.x0[i]));
    float x[16];
    model_embed(&scaled, x, in + 2, pos + 2, 1);
    CHECK(worst == 0.0f && max_abs_diff(x, scaled.acts.x0 + 2 * 16, 16) == 0.0f,
          "tokens=sqrt_dim: x0 = 4 x the embedding (dim 16), off by %g; decoding's start equals training's", worst);
    model_free(&plain), model_free(&scaled);
}

/* Qwen2's q/k/v biases: every bias tensor passes the central-difference check (with GQA, tied and
 * not, rope and a NoPE scheme), the KV cache equals the full forward, and a zero bias is the
 * model without one */
static void qkv_bias_check(void) {
    tiny_qkv_bias = 1;
    gradcheck("rope", 2, 0);
    gradcheck("rope:layout=half", 4, 1);
    kvcache_check("rope", 2);
    kvcache_check("rope:layout=half", 1);
    Model a, b;
    int ok = tiny_model(&a, "rope", 2, 1, 11) == 0;
    tiny_qkv_bias = 0;
    ok = ok && tiny_model(&b, "rope", 2, 1, 11) == 0;
    CHECK(ok && a.tensors[T_BQ].numel == 2 * 16 && a.tensors[T_BK].numel == 2 * 8 && b.tensors[T_BQ].numel == 0,
          "layers.bq [2, 16], layers.bk [2, 8]; none without qkv_bias");
    if (!ok) return;
    memcpy(a.params_mem, b.params_mem, sizeof(float) * b.n_params); /* the same weights: biases come after them */
    memset(a.params_mem + a.tensors[T_BQ].offset, 0, sizeof(float) * (a.n_params - b.n_params));
    enum { T = 6 };
    int in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 4 + 1) % 13, pos[i] = i;
    model_alloc_train(&a, 1, T), model_alloc_train(&b, 1, T);
    model_forward(&a, in, NULL, pos, 1, T), model_forward(&b, in, NULL, pos, 1, T);
    CHECK(a.n_params == b.n_params + 2 * (16 + 8 + 8) && memcmp(a.acts.logits, b.acts.logits, sizeof(float) * T * 13) == 0,
          "zero biases: the logits of the model without them, bit for bit");
    model_free(&a), model_free(&b);
}

void test_model(void) {
    qkv_bias_check();
    token_scale_check();
    masked_loss_check();
    fast_exp_check();
    learned_limit_check();
    robustness();
    Model m;
    CHECK(tiny_model(&m, "bogus", 2, 1, 1) == -1 && strstr(pelab_errmsg, "unknown position scheme"),
          "unknown scheme rejected: %s", pelab_errmsg);
    CHECK(tiny_model(&m, "rope:layout=diagonal", 2, 1, 1) == -1 && strstr(pelab_errmsg, "layout"),
          "bad rope layout rejected: %s", pelab_errmsg);
    CHECK(tiny_model(&m, "rope:base", 2, 1, 1) == -1, "option without value rejected: %s", pelab_errmsg);
    CHECK(tiny_model(&m, "rope", 3, 1, 1) == -1 && strstr(pelab_errmsg, "kv-heads"), "kv-heads 3 of 4 rejected: %s",
          pelab_errmsg);
}
