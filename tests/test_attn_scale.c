/* test_attn_scale.c: length-scaled attention (model/pos/attn_scale.h), a modifier on any scheme:
 * the factors against their definitions (Qwen's logn, Llama 4's temperature tuning) computed by
 * hand, the canonical spec, refusals, and on a model: a position before the threshold is untouched
 * and a later one is not. (Gradients, KV cache and causality with a modifier: the shared scheme
 * checks run rope+temp and alibi+logn, tests/test_schemes.c.) */
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
    CHECK(strstr(spec, "rope:base=500,") && strstr(spec, ",keep=1+logn:len=8"), "%s", spec);
    CHECK(pos_find_spec("rope+logn") == pos_find("rope"), "pos_find_spec cuts at the '+'");
    pos_free(&pc);
    CHECK(pos_init(&pc, "rope+logn+temp", 16, 2, 2, 1, 8) != 0 && strstr(pelab_errmsg, "+logn+temp"),
          "two modifiers refused: %s", pelab_errmsg);
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
}
