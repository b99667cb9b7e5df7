/* test_nope_layers.c: "+nope@L1,L2", layers that run without the scheme (Llama 4's interleaved
 * NoPE layers): the spec in either order with a modifier and its canonical form, the refusals, on
 * a model (a NoPE layer's queries are the plain projection, a rotary layer's are not; a model with
 * every layer NoPE is the nope scheme bit for bit) and a checkpoint round trip. (Gradients, KV
 * cache and causality with NoPE layers: the shared checks run rope+nope@1, t5+nope@1,
 * kerple+nope@0, alibi+temp:scale=0.2+nope@1 and xpos+nope@0+temp:layers=nope, tests/test_schemes.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../io/checkpoint.h"
#include "../model/layers.h"
#include "../model/model.h"
#include "test.h"

/* the canonical spec of spec on a 4-layer shape, or "" when refused */
static void canonical4(const char *spec, char *out, size_t n) {
    PosCtx pc;
    out[0] = 0;
    if (pos_init(&pc, spec, 16, 4, 2, 4, 8) != 0) return;
    pos_spec(&pc, out, n);
    pos_free(&pc);
}

static void specs(void) {
    char a[POS_SPEC_MAX], b[POS_SPEC_MAX], c[POS_SPEC_MAX];
    canonical4("rope+nope@3,1", a, sizeof a);
    CHECK(!strcmp(a, "rope:base=10000,layout=interleaved,fraction=1,scale=none,orig_len=8,keep=1,max_period=0+nope@1,3"),
          "layers written ascending after the options: %s", a);
    canonical4("rope+temp+nope@2", a, sizeof a);
    canonical4("rope+nope@2+temp", b, sizeof b);
    CHECK(a[0] && !strcmp(a, b) && strstr(a, "+temp:scale=0.1,floor=8+nope@2"),
          "the modifier and the layers in either order: %s | %s", a, b);
    canonical4(a, c, sizeof c);
    CHECK(!strcmp(a, c), "canonical round trip: %s -> %s", a, c);
    canonical4("alibi+nope@0+temp:layers=nope", a, sizeof a);
    CHECK(!strcmp(a, "alibi+temp:scale=0.1,floor=8,layers=nope+nope@0"), "temp:layers=nope written: %s", a);

    PosCtx pc;
    CHECK(pos_init(&pc, "t5+nope@0,2", 16, 4, 2, 4, 8) == 0, "t5+nope@0,2: %s", pelab_errmsg);
    CHECK(!pos_layer_active(&pc, 0) && pos_layer_active(&pc, 1) && !pos_layer_active(&pc, 2) &&
              pos_layer_active(&pc, 3),
          "pos_layer_active: 0 in layers 0 and 2 only");
    pos_free(&pc);
    /* --scale replaces the state, and keeps the layers (PosCtx is copied by value) */
    CHECK(pos_init(&pc, "rope+nope@1", 16, 4, 2, 4, 8) == 0 && pos_set_scale(&pc, "pi:2") == 0, "rope --scale pi:2");
    pos_spec(&pc, a, sizeof a);
    CHECK(strstr(a, "scale=pi:2") && strstr(a, "+nope@1") && !pos_layer_active(&pc, 1), "--scale keeps +nope@: %s", a);
    pos_free(&pc);
    /* the most layers: a bit per layer up to 1023 */
    CHECK(pos_init(&pc, "rope+nope@1023,3", 16, 4, 2, 1024, 8) == 0 && !pos_layer_active(&pc, 1023) &&
              pos_layer_active(&pc, 1022),
          "layer 1023 of 1024: %s", pelab_errmsg);
    pos_free(&pc);

    static const char *bad[][2] = {
        {"rope+nope@", "expected 0-based layer numbers"},  {"rope+nope@4", "layer 4: expected 0..3"},
        {"rope+nope@1,1", "layer 1 given twice"},           {"rope+nope@x", "+nope@x: expected"},
        {"rope+nope@-1", "+nope@-1: expected"},             {"rope+nope@1,", "+nope@1,: expected"},
        {"rope+nope@1,,2", "expected 0-based"},            {"learned+nope@0", "added once, at the input"},
        {"sinusoidal+nope@0", "added once, at the input"},  {"nope+nope@0", "nope has no per-layer hook"},
        {"cope+nope@1", "cope has no per-layer hook"},
        {"rope+nope", "expected +nope@L1,L2"},              {"rope+nope@1+nope@2", "+nope@ given twice"},
        {"rope+", "empty '+' part"},                        {"rope+logn+ssmax", "one attention modifier at most"},
        {"rope+temp:layers=nope", "no NoPE layers"},        {"rope+temp:layers=x+nope@1", "layers=x: expected all or nope"},
        {"rope+ssmax:layers=nope+nope@1", "unknown option 'layers'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pelab_errmsg[0] = 0;
        int rc = pos_init(&pc, bad[i][0], 16, 4, 2, 4, 8);
        CHECK(rc != 0 && strstr(pelab_errmsg, bad[i][1]) && strstr(pelab_errmsg, bad[i][0]) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s refused in one line naming it: %s", bad[i][0], pelab_errmsg);
        if (rc == 0) pos_free(&pc);
    }
    /* a list that fits the parser but whose canonical spec (every option spelled out) would not fit
     * a checkpoint's field */
    char many[POS_SPEC_MAX] = "rope+nope@";
    for (int l = 100; l < 200; l++) snprintf(many + strlen(many), sizeof many - strlen(many), l > 100 ? ",%d" : "%d", l);
    CHECK(strlen(many) < POS_SPEC_MAX - 1 && pos_init(&pc, many, 16, 4, 2, 1024, 8) != 0 &&
              strstr(pelab_errmsg, "canonical spec is longer than"),
          "a canonical spec past %d characters refused: %s", POS_SPEC_MAX - 1, pelab_errmsg);
}

/* rope+nope@1 on the 2-layer tiny model: layer 1's queries and keys are the plain projections of
 * its normed input, layer 0's are rotated (rows past position 0, where RoPE is the identity) */
static void on_a_model(void) {
    Model m;
    CHECK(tiny_model(&m, "rope+nope@1", 2, 1, 5) == 0, "rope+nope@1 model: %s", pelab_errmsg);
    enum { T = 6 };
    int in[T], pos[T], D = m.cfg.dim, qdim = m.cfg.n_heads * m.head_dim, kvdim = m.cfg.n_kv_heads * m.head_dim;
    for (int i = 0; i < T; i++) in[i] = (3 * i + 1) % m.cfg.vocab_size, pos[i] = i + 2;
    model_alloc_train(&m, 1, T);
    CHECK(model_forward(&m, in, NULL, pos, 1, T) == 0, "forward: %s", pelab_errmsg);
    float q[T * 16], k[T * 16];
    for (int l = 0; l < 2; l++) {
        const float *ln1 = m.acts.ln1 + (size_t)l * T * D;
        matmul_forward(q, ln1, m.params.wq + (size_t)l * qdim * D, NULL, T, D, qdim);
        matmul_forward(k, ln1, m.params.wk + (size_t)l * kvdim * D, NULL, T, D, kvdim);
        float dq = max_abs_diff(q, m.acts.q + (size_t)l * T * qdim, T * qdim);
        float dk = max_abs_diff(k, m.acts.k + (size_t)l * T * kvdim, T * kvdim);
        if (l == 1) CHECK(dq == 0 && dk == 0, "NoPE layer 1: q, k untransformed (|diff| %g, %g)", dq, dk);
        else CHECK(dq > 1e-3 && dk > 1e-3, "RoPE layer 0: q, k rotated (|diff| %g, %g)", dq, dk);
    }
    model_free(&m);

    /* every layer NoPE: the nope scheme, bit for bit (rope and alibi have no parameters: same weights) */
    const char *all_nope[] = {"rope+nope@0,1", "alibi+nope@1,0"};
    Model ref;
    tiny_model(&ref, "nope", 2, 1, 5);
    model_alloc_train(&ref, 1, T);
    model_forward(&ref, in, NULL, pos, 1, T);
    for (int s = 0; s < 2; s++) {
        tiny_model(&m, all_nope[s], 2, 1, 5);
        model_alloc_train(&m, 1, T);
        model_forward(&m, in, NULL, pos, 1, T);
        CHECK(memcmp(m.acts.logits, ref.acts.logits, sizeof(float) * T * m.cfg.vocab_size) == 0,
              "%s: the logits of the nope scheme, bit for bit", all_nope[s]);
        model_free(&m);
    }
    model_free(&ref);

    /* temp:layers=nope: the temperature in the NoPE layer 1 only (Llama 4); the same weights */
    tiny_model(&m, "rope+nope@1", 2, 1, 5);
    tiny_model(&ref, "rope+nope@1+temp:floor=2,layers=nope", 2, 1, 5);
    model_alloc_train(&m, 1, T), model_alloc_train(&ref, 1, T);
    model_forward(&m, in, NULL, pos, 1, T), model_forward(&ref, in, NULL, pos, 1, T);
    CHECK(memcmp(m.acts.q, ref.acts.q, sizeof(float) * T * qdim) == 0 &&
              max_abs_diff(m.acts.q + T * qdim, ref.acts.q + T * qdim, T * qdim) > 1e-3,
          "temp:layers=nope: rotary layer 0's queries unscaled, NoPE layer 1's scaled");
    model_free(&m), model_free(&ref);
}

/* the canonical spec is the checkpoint's "pos": the layers and the learned SSMax s come back */
static void checkpoint_round_trip(void) {
    Model m, l;
    const char *spec = "rope+ssmax:init=0.5+nope@1";
    CHECK(tiny_model(&m, spec, 2, 1, 8) == 0, "%s: %s", spec, pelab_errmsg);
    char path[512], a[POS_SPEC_MAX], b[POS_SPEC_MAX];
    snprintf(path, sizeof path, "%s/nope_layers.safetensors", test_tmpdir());
    CHECK(checkpoint_save(path, &m, NULL, NULL, NULL) == 0, "save %s: %s", spec, pelab_errmsg);
    CHECK(checkpoint_load(path, &l, NULL, NULL, NULL) == 0, "load %s: %s", spec, pelab_errmsg);
    pos_spec(&m.pos, a, sizeof a);
    pos_spec(&l.pos, b, sizeof b);
    CHECK(!strcmp(a, b) && !pos_layer_active(&l.pos, 1) && l.tensors[T_ATTN_SCALE].numel == 2 * 4 &&
              l.pos.attn_scale.s == l.params.attn_scale,
          "the spec comes back (%s), with s [2, 4] in place", b);
    CHECK(memcmp(m.params_mem, l.params_mem, m.n_params * sizeof(float)) == 0, "the parameters come back, s included");
    enum { T = 6 };
    int in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (5 * i + 2) % m.cfg.vocab_size, pos[i] = i;
    model_alloc_train(&m, 1, T), model_alloc_train(&l, 1, T);
    model_forward(&m, in, NULL, pos, 1, T), model_forward(&l, in, NULL, pos, 1, T);
    CHECK(memcmp(m.acts.logits, l.acts.logits, sizeof(float) * T * m.cfg.vocab_size) == 0,
          "the loaded model's logits, bit for bit");
    model_free(&m), model_free(&l);
    remove(path);
}

void test_nope_layers(void) {
    specs();
    on_a_model();
    checkpoint_round_trip();
}
