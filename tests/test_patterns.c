/* test_patterns.c: per-layer attention patterns (model/pattern.h). The spec parses, writes back
 * canonically and refuses bad input in one line; in every layer the weights on future keys and on
 * keys outside the layer's window or chunk are exactly 0 and the rest sum to 1; blocks never touch
 * the keys behind their window (NaN keys there leave the output finite); the KV-cache decoder, whose
 * window and chunk layers keep only their span, equals the full forward in every chunking, batched
 * and left-padded too; gradients pass the finite-difference check through windowed and chunked
 * layers (rotary, bias and per-layer-base layers); a per-layer base equals the scheme's own base=,
 * a pattern's NoPE equals +nope@; the pattern survives a checkpoint (version 2; files without one
 * stay version 1); the cache of a windowed layer is its span, not the context. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/decode.h"
#include "../io/checkpoint.h"
#include "../io/hf_config.h"
#include "../io/hf_llama.h"
#include "../io/llama2c.h"
#include "../model/attention.h"
#include "../model/model.h"
#include "test.h"

static void spec_round_trip(void) {
    const char *cases[][2] = {
        {"5*window=512,base=1e4:global,base=1e6", "5*window=512,base=10000:global,base=1000000"},
        {"window=128:global,nope", "window=128:global,nope"},
        {"3*chunk=8192:global,nope", "3*chunk=8192:global,nope"},
        {"global:global:global:nope", "3*global:global,nope"},
        {"window=4,chunk=8:window=4,chunk=8", "2*window=4,chunk=8"},
        {"none", "none"},
        {"", "none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        AttnPattern p, q;
        char a[PATTERN_SPEC_MAX + 1], b[PATTERN_SPEC_MAX + 1];
        int rc = pattern_parse(&p, cases[i][0]);
        pattern_spec(&p, a, sizeof a);
        int rc2 = pattern_parse(&q, a);
        pattern_spec(&q, b, sizeof b);
        CHECK(rc == 0 && rc2 == 0 && !strcmp(a, cases[i][1]) && !strcmp(a, b),
              "pattern '%s' -> '%s' (expected '%s'), and back the same", cases[i][0], a, cases[i][1]);
    }
    AttnPattern p;
    pattern_parse(&p, "5*window=512,base=1e4:global,base=1e6");
    LayerAttn l5 = pattern_layer(&p, 0, 5), l6 = pattern_layer(&p, 0, 6), l11 = pattern_layer(&p, 0, 11);
    CHECK(p.n == 6 && l5.window == 0 && l5.base == 1e6 && l6.window == 512 && l6.base == 1e4 && l11.base == 1e6,
          "5 local : 1 global cycles over the layers (layers 5, 11 global at base 1e6, 6 local at 1e4)");
    LayerAttn w = {.window = 4}, c = {.chunk = 8}, both = {.window = 4, .chunk = 8};
    CHECK(layer_first_visible(&w, 10) == 7 && layer_first_visible(&c, 10) == 8 && layer_first_visible(&c, 15) == 8 &&
              layer_first_visible(&c, 16) == 16 && layer_first_visible(&both, 9) == 8 &&
              layer_first_visible(&both, 14) == 11 && layer_span(&w) == 3 && layer_span(&c) == 7 &&
              layer_span(&both) == 3 && layer_span(&(LayerAttn){0}) == -1,
          "earliest visible position and span of windows and chunks");
    const char *bad[][2] = {
        {"window=0", "expected window=W with W in 1..16777216"},
        {"window=x", "expected window=W"},
        {"chunk=-3", "expected chunk=C"},
        {"window=4,window=5", "given twice in one group"},
        {"global,window=4", "global attends to every key"},
        {"global,nope,base=1e4", "a NoPE layer has no base"},
        {"base=1", "expected base=B with 1.0001 <= B <= 1e12"},
        {"65*global", "expected N* with N in 1..64"},
        {"40*global:30*global", "at most 64"},
        {"window=4::global", "an empty group"},
        {"window=4,", "a group ends in ','"},
        {"local=4", "expected global, window=W, chunk=C, base=B or nope"},
        {"0*global", "expected N*"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = pattern_parse(&p, bad[i][0]);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i][1]) && !strchr(pelab_errmsg, '\n') && p.n == 0,
              "pattern '%s' refused in one line with '%s' (%s)", bad[i][0], bad[i][1], pelab_errmsg);
    }
    Model m;
    ModelConfig cfg = {.vocab_size = 13, .dim = 16, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .hidden_dim = 20,
                       .seq_len = 8, .norm_eps = 1e-5f};
    pattern_parse(&cfg.pattern, "window=3,base=500:global");
    CHECK(model_create(&m, &cfg, "alibi") == -1 && strstr(pelab_errmsg, "the alibi scheme has no base= option"),
          "a per-layer base needs a scheme with base= (%s)", pelab_errmsg);
    pattern_parse(&cfg.pattern, "global,nope:global");
    CHECK(model_create(&m, &cfg, "learned") == -1 && strstr(pelab_errmsg, "no per-layer hook"),
          "a NoPE kind needs per-layer hooks (%s)", pelab_errmsg);
    cfg.sliding_window = 4;
    CHECK(model_create(&m, &cfg, "rope") == -1 && strstr(pelab_errmsg, "give the windows in the pattern alone"),
          "a pattern beside sliding_window is refused (%s)", pelab_errmsg);
    expect_pelab_error("./pelab train --data synth:stories --steps 1 --out x.st --attn-pattern window=0",
                       "--attn-pattern window=0: 'window=0': expected window=W");
}

enum { T = 12 };

static void forward(Model *m, const int *pos, float *logits) {
    int in[T];
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 2) % m->cfg.vocab_size;
    model_alloc_train(m, 1, T);
    CHECK(model_forward(m, in, NULL, pos, 1, T) == 0, "forward: %s", pelab_errmsg);
    if (logits) memcpy(logits, m->acts.logits, sizeof(float) * T * m->cfg.vocab_size);
}

/* layer l of a 4-layer model: window 3, chunk 4, global, window 5 and chunk 4 */
static const char *const four = "window=3:chunk=4:global:window=5,chunk=4";

static void weights_exactly_zero(const char *spec, int first_pos) {
    Model m;
    tiny_attn_pattern = four;
    int rc = tiny_model_shaped(&m, spec, 4, 2, 4, 0, 31);
    tiny_attn_pattern = NULL;
    if (rc != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    int pos[T];
    for (int t = 0; t < T; t++) pos[t] = first_pos + t;
    model_keep_attention(&m, 1);
    forward(&m, pos, NULL);
    int H = m.cfg.n_heads, bad_zero = 0, bad_seen = 0, cut = 0;
    double worst_sum = 0;
    for (int l = 0; l < m.cfg.n_layers; l++) {
        LayerAttn k = model_layer_attn(&m, l);
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                const float *row = m.acts.att_probs + (((size_t)l * H + h) * T + i) * T;
                double sum = 0;
                for (int j = 0; j < T; j++) {
                    /* written from the definitions, not from layer_first_visible */
                    int in_window = !k.window || pos[i] - pos[j] < k.window;
                    int in_chunk = !k.chunk || pos[i] / k.chunk == pos[j] / k.chunk;
                    int seen = j <= i && in_window && in_chunk;
                    cut += j <= i && !seen;
                    bad_zero += !seen && row[j] != 0.0f;
                    bad_seen += seen && !(row[j] > 0.0f);
                    sum += row[j];
                }
                worst_sum = worse(worst_sum, fabs(sum - 1.0));
            }
    }
    CHECK(bad_zero == 0 && cut > 0,
          "%s, %s from position %d: every weight on a future key or one outside the layer's window or chunk is "
          "exactly 0 (%d are not; %d past keys cut)", spec, four, first_pos, bad_zero, cut);
    CHECK(bad_seen == 0 && worst_sum < 1e-5, "%s: the visible keys share each row (%d at 0, |sum - 1| <= %.2g)", spec,
          bad_seen, worst_sum);
    model_free(&m);
}

/* the keys behind a window or before a chunk are never multiplied: NaN there, a finite output */
static void blocks_skip_hidden_keys(void) {
    enum { HD = 8, NK = 300 };
    const int cases[][4] = {{1, 299, 8, 0}, {64, 236, 8, 0}, {64, 236, 0, 100}, {1, 299, 0, 64}}; /* nq, q_offset, W, C */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int nq = cases[c][0], off = cases[c][1], W = cases[c][2], C = cases[c][3];
        float *q = xmalloc(sizeof(float) * nq * HD), *k = xmalloc(sizeof(float) * NK * HD);
        float *v = xmalloc(sizeof(float) * NK * HD), *out = xmalloc(sizeof(float) * nq * HD);
        int *qpos = xmalloc(sizeof(int) * nq), *kpos = xmalloc(sizeof(int) * NK);
        for (int j = 0; j < NK; j++) kpos[j] = j;
        for (int i = 0; i < nq; i++) qpos[i] = off + i;
        LayerAttn kind = {.window = W, .chunk = C};
        long first = layer_first_visible(&kind, off); /* the earliest any query sees */
        for (int j = 0; j < NK * HD; j++) {
            int hidden = kpos[j / HD] < first;
            k[j] = hidden ? NAN : 0.1f * (float)((j * 7) % 11 - 5);
            v[j] = hidden ? NAN : 0.1f * (float)((j * 3) % 13 - 6);
        }
        for (int j = 0; j < nq * HD; j++) q[j] = 0.1f * (float)((j * 5) % 9 - 4);
        Attention a = {.q = q, .k = k, .v = v, .out = out, .qpos = qpos, .kpos = kpos, .n_seq = 1, .nq = nq,
                       .nk = NK, .q_offset = off, .window = W, .chunk = C, .n_heads = 1, .n_kv_heads = 1,
                       .head_dim = HD};
        attention_forward(&a, NULL);
        int finite = 1;
        for (int j = 0; j < nq * HD; j++) finite &= isfinite(out[j]) != 0;
        CHECK(finite, "%d queries at %d.. under window %d, chunk %d: the %ld keys no query sees are never read",
              nq, off, W, C, first);
        free(q), free(k), free(v), free(out), free(qpos), free(kpos);
    }
}

static void decode_equals_full(const char *spec, const char *pattern) {
    tiny_attn_pattern = pattern;
    kvcache_check(spec, 2);
    Model m;
    int rc = tiny_model_shaped(&m, spec, 4, 2, 4, 0, 17);
    tiny_attn_pattern = NULL;
    if (rc != 0) {
        CHECK(0, "%s %s: %s", spec, pattern, pelab_errmsg);
        return;
    }
    int V = m.cfg.vocab_size, pos[T];
    static float full[T * 13], dec[T * 13];
    for (int t = 0; t < T; t++) pos[t] = 3 + t; /* chunks not aligned with the sequence's start */
    forward(&m, pos, full);
    int in[T];
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 2) % V;
    const int steps[] = {1, 2, 3, 5, T};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        KVCache kv;
        kvcache_init(&kv, &m, T, 4);
        int trimmed = 0;
        for (int l = 0; l < m.cfg.n_layers; l++) trimmed += kv.cap[l] < T;
        rc = 0;
        for (int t = 0; t < T && rc == 0; t += steps[s]) {
            int n = T - t < steps[s] ? T - t : steps[s];
            rc = decode_forward(&m, &kv, in + t, pos + t, n, dec + (size_t)t * V, 1);
        }
        kvcache_free(&kv);
        float diff = max_abs_diff(full, dec, T * V);
        CHECK(rc == 0 && diff <= 1e-5f && (trimmed > 0) == (strcmp(spec, "cope") != 0 && strcmp(spec, "fox") != 0),
              "%s %s: decoder in steps of %d (%d layers keep only their span; CoPE and FoX keep every row) = full forward (max |diff| %.3g; %s)",
              spec, pattern, steps[s], trimmed, diff, rc ? pelab_errmsg : "ok");
    }
    /* a batch of 2, the second left-padded by 3: each sequence as decoded alone */
    enum { PAD = 3, N = T - PAD };
    int bt[2 * T], bp[2 * T];
    for (int t = 0; t < T; t++) {
        bt[t] = in[t], bp[t] = pos[t];
        bt[T + t] = t < PAD ? 0 : in[t - PAD], bp[T + t] = t < PAD ? 0 : pos[t - PAD];
    }
    KVCache kb, k1;
    kvcache_init_batch(&kb, &m, 2, T, 4);
    kb.key_start[1] = PAD;
    static float batch[2 * 13], alone[13];
    float worst = 0;
    rc = 0;
    for (int t = 0; t < T && rc == 0; t++) { /* one token a step: the windowed layers drop keys as they go */
        int tok[2] = {bt[t], bt[T + t]}, p2[2] = {bp[t], bp[T + t]};
        rc = decode_forward_batch(&m, &kb, tok, p2, 1, batch, 0);
        if (t >= PAD) { /* sequence 1's real token t - PAD, against the second one decoded alone */
            if (t == PAD) kvcache_init(&k1, &m, T, 4);
            rc |= decode_forward(&m, &k1, &bt[T + t], &bp[T + t], 1, alone, 0);
            worst = max_abs_diff(batch + V, alone, V) > worst ? max_abs_diff(batch + V, alone, V) : worst;
        }
    }
    CHECK(rc == 0 && worst <= 1e-5f,
          "%s %s: batched decoding with left padding = each sequence alone (max |diff| %.3g; %s)", spec, pattern,
          worst, rc ? pelab_errmsg : "ok");
    kvcache_free(&kb), kvcache_free(&k1);
    model_free(&m);
}

/* a bf16 cache, and a second key copy (Self-Extend), through the layers that drop keys: decoding in
 * steps of 1 and of 5 agree (bf16: the same rounded keys either way), Self-Extend also with its full
 * forward */
static void decode_variants(void) {
    Model m;
    tiny_attn_pattern = "window=3,base=500:chunk=4:global";
    int rc = tiny_model_shaped(&m, "rope", 4, 2, 3, 0, 12);
    tiny_attn_pattern = NULL;
    if (rc != 0) {
        CHECK(0, "decode_variants: %s", pelab_errmsg);
        return;
    }
    int V = m.cfg.vocab_size, in[T], pos[T];
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 2) % V, pos[t] = t; /* forward()'s tokens */
    static float full[T * 13], one[T * 13], five[T * 13];
    for (int variant = 0; variant < 2; variant++) {
        if (variant == 0) m.kv_cache_bf16 = 1;
        else {
            m.kv_cache_bf16 = 0;
            CHECK(pos_set_scale(&m.pos, "selfextend:2:4") == 0, "selfextend on a pattern model: %s", pelab_errmsg);
            forward(&m, pos, full);
        }
        float *outs[2] = {one, five};
        const int steps[2] = {1, 5};
        rc = 0;
        for (int s = 0; s < 2; s++) {
            KVCache kv;
            kvcache_init(&kv, &m, T, 4);
            for (int t = 0; t < T && rc == 0; t += steps[s]) {
                int n = T - t < steps[s] ? T - t : steps[s];
                rc = decode_forward(&m, &kv, in + t, pos + t, n, outs[s] + (size_t)t * V, 1);
            }
            rc |= !kv.trim || (variant == 0 && !kv.k16) || (variant == 1 && !kv.k2);
            kvcache_free(&kv);
        }
        float d = max_abs_diff(one, five, T * V), df = variant ? max_abs_diff(one, full, T * V) : 0;
        CHECK(rc == 0 && d <= 1e-4f && df <= 1e-4f, "%s cache through dropping layers: steps of 1 = steps of 5 (%.3g)%s (%.3g)",
              variant ? "Self-Extend's two-copy" : "a bf16", d, variant ? " = full forward" : "", df);
    }
    model_free(&m);
}

static void bases_and_nope(void) {
    Model a, b;
    int pos[T];
    for (int t = 0; t < T; t++) pos[t] = t;
    static float la[T * 13], lb[T * 13];
    tiny_attn_pattern = "window=3,base=500:global,base=500";
    tiny_model(&a, "rope", 2, 0, 8);
    tiny_attn_pattern = "window=3:global";
    tiny_model(&b, "rope:base=500", 2, 0, 8);
    tiny_attn_pattern = NULL;
    forward(&a, pos, la), forward(&b, pos, lb);
    CHECK(memcmp(la, lb, sizeof la) == 0 && a.n_base_pos == 1, "base=500 in every layer = rope:base=500, bit for bit");
    model_free(&b);
    tiny_attn_pattern = "window=3:global";
    tiny_model(&b, "rope", 2, 0, 8);
    tiny_attn_pattern = NULL;
    forward(&b, pos, lb);
    CHECK(max_abs_diff(la, lb, T * 13) > 1e-4f, "and differs from the default base 10000");
    model_free(&a), model_free(&b);
    tiny_attn_pattern = "window=3:global,nope";
    tiny_model(&a, "rope", 2, 0, 8);
    tiny_attn_pattern = "window=3:global";
    tiny_model(&b, "rope+nope@1", 2, 0, 8);
    tiny_attn_pattern = NULL;
    forward(&a, pos, la), forward(&b, pos, lb);
    char spec[POS_SPEC_MAX];
    pos_spec(&a.pos, spec, sizeof spec);
    CHECK(memcmp(la, lb, sizeof la) == 0 && strstr(spec, "+nope@1"),
          "the pattern's nope = +nope@1, bit for bit (the spec says %s)", spec);
    model_free(&a), model_free(&b);
    /* a --scale rule set on the loaded model reaches the per-layer base contexts */
    tiny_attn_pattern = "global,base=500";
    tiny_model(&a, "rope", 2, 0, 8);
    tiny_attn_pattern = NULL;
    tiny_model(&b, "rope:base=500,scale=pi:2", 2, 0, 8);
    CHECK(pos_set_scale(&a.pos, "pi:2") == 0, "--scale pi:2 on a per-layer base model");
    forward(&a, pos, la), forward(&b, pos, lb);
    CHECK(memcmp(la, lb, sizeof la) == 0, "its per-layer base contexts follow the rule (bit for bit)");
    model_free(&a), model_free(&b);
}

static void checkpoint_round_trip(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/pattern.safetensors", test_tmpdir());
    Model m, back;
    tiny_attn_pattern = "window=3,base=500:chunk=4:global,nope";
    tiny_model_shaped(&m, "rope", 4, 2, 3, 0, 44);
    tiny_attn_pattern = NULL;
    int pos[T];
    for (int t = 0; t < T; t++) pos[t] = t;
    static float a[T * 13], b[T * 13];
    forward(&m, pos, a);
    CkptMeta meta = {0};
    int rc = checkpoint_save(path, &m, NULL, NULL, NULL) == 0 && checkpoint_load(path, &back, &meta, NULL, NULL) == 0;
    char pa[PATTERN_SPEC_MAX + 1] = "", pb[PATTERN_SPEC_MAX + 1] = "";
    if (rc) {
        pattern_spec(&m.cfg.pattern, pa, sizeof pa), pattern_spec(&back.cfg.pattern, pb, sizeof pb);
        forward(&back, pos, b);
    }
    CHECK(rc && !strcmp(pa, pb) && !strcmp(meta_get(&meta, "format_version"), "2") &&
              !strcmp(meta_get(&meta, "attn_pattern"), "window=3,base=500:chunk=4:global,nope") &&
              !memcmp(a, b, sizeof a),
          "the pattern survives a checkpoint (%s -> %s, version 2) and so do the logits (%s)", pa, pb, pelab_errmsg);
    meta_free(&meta);
    if (rc) model_free(&back);
    /* the formats with one attention for every layer refuse it rather than drop it */
    char dir[600], l2c[600];
    snprintf(dir, sizeof dir, "%s/pattern-hf", test_tmpdir());
    snprintf(l2c, sizeof l2c, "%s/pattern.bin", test_tmpdir());
    char note[200];
    CHECK(hf_llama_write(dir, &m, note, sizeof note) == -1 && strstr(pelab_errmsg, "one attention for every layer"),
          "export --hf refuses a pattern (%s)", pelab_errmsg);
    CHECK(llama2c_write_model(l2c, &m) == -1 && strstr(pelab_errmsg, "per-layer attention pattern"),
          "export --llama2c refuses a pattern (%s)", pelab_errmsg);
    model_free(&m);
    tiny_model(&m, "rope", 2, 0, 44);
    CkptMeta plain = {0};
    rc = checkpoint_save(path, &m, NULL, NULL, NULL) == 0 && checkpoint_load(path, &back, &plain, NULL, NULL) == 0;
    CHECK(rc && !strcmp(meta_get(&plain, "format_version"), "1") && !meta_get(&plain, "attn_pattern") &&
              back.cfg.pattern.n == 0,
          "a model without a pattern stays a version 1 file");
    meta_free(&plain);
    if (rc) model_free(&back);
    model_free(&m);
}

static void cache_bytes(void) {
    Model m, full;
    ModelConfig cfg = {.vocab_size = 13, .dim = 16, .n_layers = 16, .n_heads = 4, .n_kv_heads = 2, .hidden_dim = 20,
                       .seq_len = 8, .norm_eps = 1e-5f};
    pattern_parse(&cfg.pattern, "5*window=512,base=1e4:global,base=1e6");
    CHECK(model_create(&m, &cfg, "rope") == 0, "a 16-layer 5:1 model: %s", pelab_errmsg);
    cfg.pattern.n = 0;
    model_create(&full, &cfg, "rope");
    size_t row = 2 * 2 * 4 * sizeof(float), total = 0, total_full = 0; /* k and v, 2 kv heads of 4 dims */
    int ok = 1;
    for (int l = 0; l < 16; l++) {
        size_t bytes = kvcache_layer_bytes(&m, l, 1, 8192, 64), want = (l % 6 == 5 ? 8192 : 511 + 64) * row;
        ok &= bytes == want && kvcache_layer_bytes(&full, l, 1, 8192, 64) == 8192 * row;
        total += bytes, total_full += kvcache_layer_bytes(&full, l, 1, 8192, 64);
    }
    CHECK(ok && total == (2 * 8192 + 14 * 575) * row,
          "the cache at 8192 tokens: a window-512 layer keeps 511 + 64 rows, a global one 8192 (%zu of %zu bytes)",
          total, total_full);
    KVCache kv; /* what the decoder allocates is what is reported */
    kvcache_init(&kv, &m, 8192, 64);
    CHECK(kv.trim && kv.layer_at[16] * kv.kvdim * 2 * sizeof(float) == total && kv.cap[0] == 575 && kv.cap[5] == 8192,
          "a cache of 8192 tokens allocates those %zu bytes (%zu)", total, kv.layer_at[16] * kv.kvdim * 2 * sizeof(float));
    kvcache_free(&kv);
    model_free(&m), model_free(&full);
}

/* the pattern of a config text, rc of hf_config_pattern */
static int pattern_of(const char *json, char *spec, size_t n, HfConfig *c) {
    if (hf_config_parse(json, strlen(json), "cfg", c) != 0) return -2;
    return hf_config_pattern(c, spec, n, NULL);
}

static void hf_configs(void) {
    static const struct { const char *file, *want; } files[] = {
        {"tests/configs/gemma3-like.json", "5*window=512,base=10000:global,base=1000000"},
        {"tests/configs/gemma3-pattern-like.json", "5*window=512,base=10000:global,base=1000000"},
        {"tests/configs/gpt-oss-like.json", "window=128:global"},
        {"tests/configs/llama4-like.json", "3*chunk=8192:global,nope"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        HfConfig c;
        char spec[PATTERN_SPEC_MAX + 1] = "", cmd[300], out[16384];
        int rc = hf_config_read(files[i].file, &c) == 0 ? hf_config_pattern(&c, spec, sizeof spec, NULL) : -2;
        CHECK(rc == 1 && !strcmp(spec, files[i].want) && c.n_warn == 0, "%s: --attn-pattern %s (expected %s, %d warnings)",
              files[i].file, spec, files[i].want, c.n_warn);
        snprintf(cmd, sizeof cmd, "./pelab inspect %s", files[i].file);
        char line[PATTERN_SPEC_MAX + 40];
        snprintf(line, sizeof line, "pelab: --attn-pattern %s\n", files[i].want);
        CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, line) && strstr(out, "attention per layer"),
              "inspect %s shows the layers and the pattern", files[i].file);
    }
    HfConfig c;
    char spec[PATTERN_SPEC_MAX + 1], cmd[700], out[16384];
    CHECK(run_pelab("./pelab inspect tests/configs/gemma3-like.json", out, sizeof out) == 0 &&
              strstr(out, "  layers 0,1,2,3,4,6,7,8,9,10,12,13,14,15,16: window 512, base 10000\n") &&
              strstr(out, "  layers 5,11,17: global, base 1000000\n"),
          "inspect lists every layer of each kind: %s", out);
    /* a Gemma-3 pattern runs: a model from it builds and its windows hold */
    Model m;
    ModelConfig cfg = {.vocab_size = 13, .dim = 16, .n_layers = 6, .n_heads = 4, .n_kv_heads = 1, .hidden_dim = 20,
                       .seq_len = 8, .norm_eps = 1e-5f};
    CHECK(pattern_parse(&cfg.pattern, files[0].want) == 0 && model_create(&m, &cfg, "rope:base=1e6,layout=half") == 0 &&
              model_layer_attn(&m, 0).window == 512 && model_layer_pos(&m, 0) != &m.pos && model_layer_pos(&m, 5) != &m.pos,
          "the imported Gemma 3 pattern builds a model (%s)", pelab_errmsg);
    model_free(&m);
    /* the odd and the refused: one warning, or one line */
    CHECK(pattern_of("{\"rope_theta\": 10000, \"num_attention_heads\": 2, \"num_hidden_layers\": 2, \"sliding_window\": 4, \"layer_types\": [\"sliding_attention\", 7]}",
                     spec, sizeof spec, &c) == 1 && !strcmp(spec, "window=4:global") && c.n_warn == 1 &&
              strstr(c.warn[0], "layer_types[1]: number"),
          "a layer type that is not a string: full, one warning (%s)", c.n_warn ? c.warn[0] : "none");
    char big[4096] = "{\"num_hidden_layers\": 70, \"sliding_window\": 8, \"layer_types\": [";
    for (int l = 0; l < 70; l++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s\"%s\"", l ? ", " : "",
                 l == 69 ? "full_attention" : "sliding_attention");
    strcat(big, "]}");
    CHECK(pattern_of(big, spec, sizeof spec, &c) == -1 && strstr(pelab_errmsg, "no cycle of 64 or fewer") &&
              !strchr(pelab_errmsg, '\n'),
          "70 layers without a cycle of <= 64: refused in one line (%s)", pelab_errmsg);
    CHECK(pattern_of("{\"num_hidden_layers\": 2, \"sliding_window\": 99999999999, \"layer_types\": "
                     "[\"sliding_attention\", \"full_attention\"]}", spec, sizeof spec, &c) == -1 &&
              strstr(pelab_errmsg, "go up to 16777216"),
          "a window past pelab's: refused (%s)", pelab_errmsg);
    CHECK(pattern_of("{\"model_type\": \"mistral\", \"num_hidden_layers\": 2, \"sliding_window\": 4096}", spec,
                     sizeof spec, &c) == 0 && !spec[0],
          "Mistral's one window for every layer: no pattern (import --sliding-window applies it)");
    CHECK(pattern_of("{\"rope_theta\": 10000, \"num_attention_heads\": 2, \"num_hidden_layers\": 3, \"sliding_window\": 4, \"layer_types\": \"sliding\"}", spec,
                     sizeof spec, &c) == 0 && c.n_warn == 1,
          "layer_types not an array: one warning, no pattern");
    const char *data = shared_data_dir();
    if (!data) {
        fprintf(stderr, "  test_patterns: no ../shared/data: the real gpt-oss and Gemma 2 configs are skipped\n");
        return;
    }
    static const struct { const char *file, *want; } real[] = {{"gpt-oss-120b.json", "window=128:global"},
                                                               {"gemma2-2b-it-finetune.json", "window=4096:global"}};
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/hf-configs/%s", data, real[i].file);
        FILE *f = fopen(path, "rb");
        if (!f) {
            fprintf(stderr, "  test_patterns: %s absent: skipped\n", path);
            continue;
        }
        fclose(f);
        int rc = hf_config_read(path, &c) == 0 ? hf_config_pattern(&c, spec, sizeof spec, NULL) : -2;
        snprintf(cmd, sizeof cmd, "./pelab inspect %s", path);
        CHECK(rc == 1 && !strcmp(spec, real[i].want) && run_pelab(cmd, out, sizeof out) == 0 &&
                  strstr(out, real[i].want),
              "%s: --attn-pattern %s (expected %s)", real[i].file, spec, real[i].want);
    }
}

void test_patterns(void) {
    hf_configs();
    spec_round_trip();
    weights_exactly_zero("rope", 0);
    weights_exactly_zero("alibi", 5);
    blocks_skip_hidden_keys();
    decode_equals_full("rope", four);
    decode_equals_full("t5", "window=2:chunk=3");
    decode_equals_full("rope", "window=3,base=500:chunk=5:global,nope");
    decode_equals_full("cope", "window=3:chunk=4");
    /* FoX's gates follow the keys a window skips; a sink joins every windowed row */
    decode_equals_full("fox", "window=3:chunk=4");
    decode_equals_full("rope+sinks", "window=3:chunk=4");
    decode_variants();
    bases_and_nope();
    checkpoint_round_trip();
    cache_bytes();
    /* rotary, a learned bias (its gradient through the skipped keys), per-layer bases */
    const char *grads[][2] = {{"rope", "window=3:chunk=4"}, {"t5", "chunk=3:window=2,chunk=4"},
                              {"rope", "window=2,base=300:chunk=4,base=2e5"}, {"fox", "window=3:chunk=4"},
                              {"alibi+sinks", "window=2:chunk=3"}};
    for (size_t i = 0; i < sizeof grads / sizeof grads[0]; i++) {
        tiny_attn_pattern = grads[i][1];
        gradcheck(grads[i][0], 2, 0);
        tiny_attn_pattern = NULL;
    }
}
