/* test_attn_scale.c: length-scaled attention (model/pos/attn_scale.h), a modifier on any scheme:
 * the factors against their definitions (Qwen's logn, Llama 4's temperature tuning, SSMax's
 * s log n) computed by hand, the canonical spec, refusals, and on a model: a position before the
 * threshold is untouched and a later one is not; SSMax's queries against rope's, and its d loss/d s
 * by central differences. (Gradients of every tensor, KV cache and causality with a modifier: the
 * shared scheme checks run rope+temp, alibi+logn, rope+ssmax, alibi+temp:scale=0.2+nope@1,
 * tests/test_schemes.c; an ssmax checkpoint round trip: tests/test_nope_layers.c.) */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../model/model.h"
#include "../model/pos/pos.h"
#include "test.h"

static void factors(void) {
    AttnScale a;
    /* logn, len 8: 1 up to position 7 (8 tokens); position 63 (64 tokens) -> log 64 / log 8 = 2 */
    CHECK(attn_scale_parse(&a, "logn", 8) == 0 && a.len == 8, "logn defaults to the training length");
    CHECK(attn_scale_factor(&a, 0) == 1.0 && attn_scale_factor(&a, 7) == 1.0, "logn: 1 within len");
    CHECK(fabs(attn_scale_factor(&a, 63) - 2.0) < 1e-12 && fabs(attn_scale_factor(&a, 8) - log(9) / log(8)) < 1e-12,
          "logn: log(pos + 1) / log(len) past len (%.15g)", attn_scale_factor(&a, 63));
    /* temp, scale 0.1, floor 8: floor((p + 1) / 8) = 0 for p < 7 -> 1; p = 7 -> 0.1 log 2 + 1;
     * p = 23 -> 0.1 log 4 + 1 */
    CHECK(attn_scale_parse(&a, "temp:floor=8", 64) == 0 && a.scale == 0.1 && a.floor_len == 8, "temp: scale 0.1 default");
    CHECK(attn_scale_factor(&a, 6) == 1.0 && fabs(attn_scale_factor(&a, 7) - (0.1 * log(2.0) + 1)) < 1e-12 &&
              fabs(attn_scale_factor(&a, 23) - (0.1 * log(4.0) + 1)) < 1e-12,
          "temp: scale log(floor((pos + 1) / floor) + 1) + 1");
    CHECK(attn_scale_parse(&a, "temp", 64) == 0 && a.floor_len == 64, "temp: floor defaults to the training length");
    const char *bad[][2] = {{"cope", "+cope: unknown (expected logn, temp or ssmax)"}, {"logn:len=1", "len=1"},
                            {"temp:scale=-1", "scale=-1"}, {"temp:len=4", "unknown option 'len'"},
                            {"logn:len", "expected key=value"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(attn_scale_parse(&a, bad[i][0], 8) != 0 && strstr(pelab_errmsg, bad[i][1]), "+%s refused: %s", bad[i][0],
              pelab_errmsg);
}

static void specs(void) {
    PosCtx pc;
    char spec[512];
    CHECK(pos_init(&pc, "alibi+temp:scale=0.5,floor=3", 16, 2, 2, 1, 8) == 0, "alibi+temp parses: %s", pelab_errmsg);
    pos_spec(&pc, spec, sizeof spec);
    CHECK(!strcmp(spec, "alibi+temp:scale=0.5,floor=3"), "canonical spec keeps the modifier: %s", spec);
    pos_free(&pc);
    CHECK(pos_init(&pc, "rope:base=500+logn", 16, 2, 2, 1, 8) == 0, "rope options then +logn: %s", pelab_errmsg);
    pos_spec(&pc, spec, sizeof spec);
    CHECK(strstr(spec, "rope:base=500,") && strstr(spec, ",keep=1,max_period=0+logn:len=8"), "%s", spec);
    CHECK(pos_find_spec("rope+logn") == pos_find("rope"), "pos_find_spec cuts at the '+'");
    pos_free(&pc);
    CHECK(pos_init(&pc, "rope+logn+temp", 16, 2, 2, 1, 8) != 0 && strstr(pelab_errmsg, "+logn+temp"),
          "two modifiers refused: %s", pelab_errmsg);
}

/* SSMax: f = s log(pos + 1), s per layer and head, 1 / log L at the start */
static void ssmax_factors(void) {
    AttnScale a;
    CHECK(attn_scale_parse(&a, "ssmax", 8) == 0 && fabs(a.init - 1 / log(8.0)) < 1e-15, "ssmax: init 1/log L");
    CHECK(fabs(attn_scale_head_factor(&a, 7, 0, 0, 1) - 1.0) < 1e-12 && attn_scale_head_factor(&a, 0, 0, 0, 1) == 0.0,
          "ssmax at init: f = 1 at n = L, 0 at n = 1 (one key: any logit gives weight 1)");
    float s[2 * 3] = {0.5f, -1.0f, 2.0f, 0.25f, 3.0f, 0.0f}; /* [2 layers, 3 heads] */
    a.s = s;
    CHECK(fabs(attn_scale_head_factor(&a, 9, 1, 1, 3) - 3.0 * log(10.0)) < 1e-6 &&
              fabs(attn_scale_head_factor(&a, 4, 0, 1, 3) + log(5.0)) < 1e-6 && attn_scale_factor(&a, 4) == log(5.0),
          "ssmax: s[layer, head] log(pos + 1) (%.9g)", attn_scale_head_factor(&a, 9, 1, 1, 3));
    /* apply: each head's slice of a row times its own factor */
    float rows[2 * 3 * 2] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
    int pos[2] = {1, 3};
    attn_scale_apply(&a, rows, pos, 2, 3, 2, 1);
    CHECK(rows[0] == (float)(0.25 * log(2.0)) && rows[3] == (float)(3.0 * log(2.0)) && rows[5] == 0.0f &&
              rows[6] == 2.0f * (float)(0.25 * log(4.0)),
          "ssmax apply: per row and head");
    char spec[64];
    CHECK(attn_scale_parse(&a, "ssmax:init=0.3", 8) == 0, "ssmax:init=0.3");
    attn_scale_spec(&a, spec, sizeof spec);
    CHECK(!strcmp(spec, "+ssmax:init=0.3"), "ssmax spec: %s", spec);
    const char *bad[][2] = {{"ssmax:init=x", "init=x: expected a number"}, {"ssmax:len=4", "unknown option 'len' (expected init)"},
                            {"ssmax:init", "expected key=value"}, {"ssmax:init=1e9", "init=1e9"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(attn_scale_parse(&a, bad[i][0], 8) != 0 && strstr(pelab_errmsg, bad[i][1]), "+%s refused: %s", bad[i][0],
              pelab_errmsg);
    PosCtx pc;
    CHECK(pos_init(&pc, "rope+logn+ssmax", 16, 2, 2, 1, 8) != 0 && strstr(pelab_errmsg, "+logn and +ssmax"),
          "two modifiers refused: %s", pelab_errmsg);
    /* SSMax scales the whole logit vector: with a score bias, scaling q alone is another method */
    static const char *biased[] = {"alibi+ssmax", "t5+ssmax", "kerple+ssmax", "fire+ssmax", "cope+ssmax",
                                   "alibi+ssmax+nope@0"};
    for (size_t i = 0; i < sizeof biased / sizeof biased[0]; i++) {
        int rc = pos_init(&pc, biased[i], 16, 2, 2, 2, 8);
        CHECK(rc != 0 && strstr(pelab_errmsg, "whole logit vector") && !strchr(pelab_errmsg, '\n'),
              "%s refused in one line: %s", biased[i], rc ? pelab_errmsg : "accepted");
        if (rc == 0) pos_free(&pc);
    }
}

/* on a model: the queries are s log(pos + 1) times rope's; d loss / d s by central differences;
 * --attn-scale neither adds nor replaces a learned modifier */
static void ssmax_on_a_model(void) {
    Model a, b;
    tiny_model(&a, "rope", 4, 1, 3);
    tiny_model(&b, "rope+ssmax", 4, 1, 3);
    CHECK(b.tensors[T_ATTN_SCALE].numel == 2 * 4 && !strcmp(b.tensors[T_ATTN_SCALE].name, "pos.attn_scale") &&
              !b.tensors[T_ATTN_SCALE].decay && a.tensors[T_ATTN_SCALE].numel == 0,
          "pos.attn_scale [layers, heads], no decay, only with +ssmax");
    for (int t = 0; t < N_PARAM_TENSORS; t++) /* the same weights */
        if (t != T_ATTN_SCALE)
            memcpy(b.params_mem + b.tensors[t].offset, a.params_mem + a.tensors[t].offset, a.tensors[t].numel * sizeof(float));
    enum { T = 8 };
    int in[T], tg[T], pos[T], H = 4, hd = a.head_dim, qdim = H * hd;
    for (int i = 0; i < T; i++) in[i] = (5 * i + 2) % 13, tg[i] = (3 * i + 1) % 13, pos[i] = i;
    model_alloc_train(&a, 1, T), model_alloc_train(&b, 1, T);
    model_forward(&a, in, tg, pos, 1, T), model_forward(&b, in, tg, pos, 1, T);
    int exact = 1;
    for (int r = 0; r < T; r++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < hd; i++) {
                float f = (float)(b.params.attn_scale[h] * log(r + 1.0));
                exact &= b.acts.q[r * qdim + h * hd + i] == f * a.acts.q[r * qdim + h * hd + i];
            }
    CHECK(exact, "layer 0's queries: s[0, h] log(pos + 1) times rope's, bit for bit");

    model_zero_grad(&b);
    model_forward(&b, in, tg, pos, 1, T);
    model_backward(&b);
    double worst = 0, norm = 0;
    for (int i = 0; i < 8; i++) {
        float *s = b.params.attn_scale + i, saved = *s, eps = 1e-3f;
        *s = saved + eps;
        model_forward(&b, in, tg, pos, 1, T);
        double lp = b.mean_loss;
        *s = saved - eps;
        model_forward(&b, in, tg, pos, 1, T);
        double lm = b.mean_loss, numeric = (lp - lm) / (2.0 * eps);
        *s = saved;
        double d = fabs(numeric - b.grads.attn_scale[i]);
        worst = d > worst ? d : worst;
        norm += numeric * numeric;
    }
    CHECK(worst < 2e-3 + 2e-2 * sqrt(norm) && norm > 0, "d loss / d s against central differences: worst %.3g (|g| %.3g)",
          worst, sqrt(norm));
    CHECK(pos_set_attn_scale(&a.pos, "ssmax") != 0 && strstr(pelab_errmsg, "learned"), "--attn-scale ssmax refused: %s",
          pelab_errmsg);
    CHECK(pos_set_attn_scale(&b.pos, "logn") != 0 && strstr(pelab_errmsg, "trained with +ssmax"),
          "an ssmax model's modifier is not replaced: %s", pelab_errmsg);
    model_free(&a), model_free(&b);
}

/* rope+logn:len=4 against rope: the same logits for the first 4 positions, different after */
static void on_a_model(void) {
    Model a, b;
    tiny_model(&a, "rope", 4, 1, 3);
    tiny_model(&b, "rope+logn:len=4", 4, 1, 3);
    enum { T = 8 };
    int in[T], pos[T], V = a.cfg.vocab_size;
    for (int i = 0; i < T; i++) in[i] = (5 * i + 2) % V, pos[i] = i;
    model_alloc_train(&a, 1, T), model_alloc_train(&b, 1, T);
    model_forward(&a, in, NULL, pos, 1, T), model_forward(&b, in, NULL, pos, 1, T);
    CHECK(memcmp(a.acts.logits, b.acts.logits, sizeof(float) * 4 * V) == 0,
          "+logn:len=4 leaves positions 0-3 bit for bit as they are");
    CHECK(max_abs_diff(a.acts.logits + 4 * V, b.acts.logits + 4 * V, 4 * V) > 1e-4,
          "+logn:len=4 changes the logits from position 4 on");
    model_free(&a), model_free(&b);
}

void test_attn_scale(void) {
    factors();
    specs();
    on_a_model();
    ssmax_factors();
    ssmax_on_a_model();
}
