/* test_longrope.c: LongRoPE (scale=longrope:PATH, model/pos/rope_scaling.c): per-pair
 * frequencies and the attention factor from inline HF-style JSON against hand-worked values, the
 * short and long sets on either side of the original length, the refusals, Phi-3's config when
 * ../shared is there, cached decoding against prefix forwards, and the factor search. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/longrope_search.h"
#include "../model/model.h"
#include "../model/pos/rope_scaling.h"
#include "rope_test.h"
#include "test.h"

/* writes text to a file of the test directory; the path in a static slot (4, reused in turn) */
static const char *tmp_json(const char *name, const char *text) {
    static char paths[4][256];
    static int slot;
    char *p = paths[slot++ % 4];
    snprintf(p, 256, "%s/%s", test_tmpdir(), name);
    FILE *f = fopen(p, "w");
    if (f) fputs(text, f), fclose(f);
    return p;
}

/* an HF-style config (rope_scaling inside, lengths at the top level, as Phi-3): d = 8, 4 pairs,
 * L = 8, max 32, so factor 4 */
static const char LR4_CONFIG[] =
    "{\"architectures\": [\"Phi3ForCausalLM\"], \"max_position_embeddings\": 32,\n"
    " \"original_max_position_embeddings\": 8, \"rope_theta\": 10000.0,\n"
    " \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1, 1.5, 2, 4],\n"
    "                  \"long_factor\": [2, 8, 16, 32]}}\n";
/* 2 pairs (head_dim 4, or 8 at fraction 0.5) for the tiny models */
static const char LR2_BARE[] =
    "{\"short_factor\": [1.0, 1.5], \"long_factor\": [3.0, 6.0], \"original_max_position_embeddings\": 8,"
    " \"max_position_embeddings\": 32}";

static void longrope_frequencies(void) {
    char rule[300];
    snprintf(rule, sizeof rule, "longrope:%s", tmp_json("lr4.json", LR4_CONFIG));
    RopeRule r = rule_of(rule);
    CHECK(r.def == rope_rule_find("longrope") && r.longrope.n_pairs == 4 && r.longrope.orig_len == 8 && r.longrope.factor == 4,
          "LR4: rule %s, %d pairs, L %ld, factor %g", rope_rule_def(&r)->name, r.longrope.n_pairs, r.longrope.orig_len,
          r.longrope.factor);
    CHECK(rope_rule_is_dynamic(&r) && rope_rule_length(&r, 16) == 8, "longrope is dynamic, switching at the file's L");
    /* by hand, not from the code's formula: theta_j = 10000^(-j/4) = 1, 0.1, 0.01, 0.001 divided by
     * the factors; attention factor sqrt(1 + ln 4 / ln 8) = sqrt(1 + 2/3) = sqrt(5/3) */
    static const double short_want[4] = {1, 1.0 / 15, 0.005, 0.00025}, long_want[4] = {0.5, 0.0125, 0.000625, 3.125e-5};
    const double af_want = 1.2909944487358056;
    static const long lengths[] = {1, 8, 9, 32, 100};
    for (int i = 0; i < 5; i++) {
        double f[4], af;
        rope_rule_freqs(&r, 8, 10000, 8, lengths[i], f, &af);
        const double *want = lengths[i] > 8 ? long_want : short_want;
        CHECK(rel_near_vec(f, want, 4, 1e-12) && rel_near(af, af_want, 1e-12),
              "longrope at length %ld (%s set): freqs %g %g %g %g, attention factor %.17g", lengths[i],
              lengths[i] > 8 ? "long" : "short", f[0], f[1], f[2], f[3], af);
    }
    char desc[300];
    rope_rule_describe(&r, desc, sizeof desc);
    CHECK(strcmp(desc, rule) == 0, "describe %s (got %s)", rule, desc);

    /* a bare object: no lengths, so L is the model's and the factor the file's; attention_factor wins */
    RopeRule bare, given;
    snprintf(rule, sizeof rule, "longrope:%s",
             tmp_json("lr4_bare.json",
                      "{\"short_factor\": [1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2], \"factor\": 4}"));
    bare = rule_of(rule);
    double f[4], af;
    rope_rule_freqs(&bare, 8, 10000, 16, 16, f, &af);
    CHECK(bare.longrope.orig_len == 0 && rope_rule_length(&bare, 16) == 16 && f[1] == 0.1 &&
              rel_near(af, sqrt(1.5), 1e-12), /* ln 4 / ln 16 = 1/2 */
          "bare object: L = the model's 16, short set at 16, attention factor sqrt(1.5) (got %.17g)", af);
    rope_rule_freqs(&bare, 8, 10000, 16, 17, f, &af);
    CHECK(f[1] == 0.05, "bare object: long set at 17 (freq 1 %g)", f[1]);
    snprintf(rule, sizeof rule, "longrope:%s",
             tmp_json("lr4_af.json", "{\"short_factor\": [1, 1, 1, 1], \"long_factor\": [2, 2, 2, 2], "
                                     "\"attention_factor\": 1.25, \"original_max_position_embeddings\": 8, "
                                     "\"max_position_embeddings\": 64}"));
    given = rule_of(rule);
    rope_rule_freqs(&given, 8, 10000, 8, 4, f, &af);
    CHECK(af == 1.25, "attention_factor from the file: 1.25 (got %g)", af);

    /* through the rope scheme: head_dim 8, model L 16, the file's L 8 */
    snprintf(rule, sizeof rule, "rope:scale=longrope:%s", tmp_json("lr4.json", LR4_CONFIG));
    PosCtx pc;
    if (pos_init(&pc, rule, 32, 4, 4, 1, 16) != 0) {
        CHECK(0, "%s: %s", rule, pelab_errmsg);
        return;
    }
    CHECK(pc.scheme->qk_dynamic_from(&pc) == 8, "the KV cache is told the rule follows the length past 8 (got %ld)",
          pc.scheme->qk_dynamic_from(&pc));
    /* the sets switch once, at L: a cache built past L stays exact past L (recomputed once, not per step) */
    int (*changes)(const PosCtx *, long, long) = pc.scheme->qk_transform_changes;
    CHECK(changes && !changes(&pc, 4, 8) && changes(&pc, 8, 9) && !changes(&pc, 9, 30) && changes(&pc, 30, 8),
          "longrope changes its transform only across L = 8");
    PosCtx dyn, pi;
    pos_init(&dyn, "rope:scale=dynamic-ntk", 32, 4, 4, 1, 8);
    pos_init(&pi, "xpos:scale=pi:2", 32, 4, 4, 1, 8);
    CHECK(!changes(&dyn, 3, 8) && changes(&dyn, 8, 9) && changes(&dyn, 9, 10) && !changes(&dyn, 12, 12) &&
              !pi.scheme->qk_transform_changes(&pi, 3, 30),
          "dynamic NTK changes at every length past L, pi never");
    pos_free(&dyn), pos_free(&pi);
    float at8 = pair1_after_length(&pc, 8, 5), at9 = pair1_after_length(&pc, 9, 5);
    float back = pair1_after_length(&pc, 8, 5);
    CHECK(fabsf(at8 - (float)(af_want * sin(5.0 / 15))) < 1e-6f &&
              fabsf(at9 - (float)(af_want * sin(5 * 0.0125))) < 1e-6f && at8 == back,
          "pair 1 at pos 5: sqrt(5/3) sin(5 theta_1 / 1.5) up to length 8 (%g), sqrt(5/3) sin(5 theta_1 / 8) at 9 "
          "(%g), the short set again at 8 (%g)", at8, at9, back);
    char canon[POS_SPEC_MAX];
    pos_spec(&pc, canon, sizeof canon);
    PosCtx again;
    CHECK(strstr(canon, "scale=longrope:") && pos_init(&again, canon, 32, 4, 4, 1, 16) == 0,
          "the canonical spec %s names the file and reads back (%s)", canon, pelab_errmsg);
    pos_free(&again);
    pos_free(&pc);
    /* --scale on a loaded rope model; refused when the factors do not fit, the model unchanged */
    pos_init(&pc, "rope", 32, 4, 4, 1, 16);
    CHECK(pos_set_scale(&pc, rule + strlen("rope:scale=")) == 0, "pos_set_scale %s: %s", rule, pelab_errmsg);
    snprintf(rule, sizeof rule, "longrope:%s", tmp_json("lr2.json", LR2_BARE));
    pelab_errmsg[0] = 0;
    int rc = pos_set_scale(&pc, rule);
    CHECK(rc == -1 && strstr(pelab_errmsg, "lr2.json") && strstr(pelab_errmsg, "short_factor") &&
              strstr(pelab_errmsg, "expected 4") && pc.scheme->qk_dynamic_from(&pc) == 8,
          "2 factors on 4 rotary pairs: refused naming the file, the field and the count (%s)", pelab_errmsg);
    pos_free(&pc);
}

/* each malformed file refused in one line naming the file and the field */
static void longrope_refusals(void) {
    static const struct {
        const char *name, *text, *field;
    } bad[] = {
        {"cut.json", "{\"short_factor\": [1, 2", "not valid JSON"},
        {"array.json", "[1, 2]", "expected a JSON object"},
        {"no_long.json", "{\"short_factor\": [1, 2]}", "long_factor"},
        {"negative.json", "{\"short_factor\": [1, -2], \"long_factor\": [1, 2]}", "short_factor[1]"},
        {"zero.json", "{\"short_factor\": [1, 2], \"long_factor\": [0, 2]}", "long_factor[0]"},
        {"string.json", "{\"short_factor\": [1, \"2\"], \"long_factor\": [1, 2]}", "short_factor[1]"},
        {"uneven.json", "{\"short_factor\": [1, 2], \"long_factor\": [1, 2, 3]}", "long_factor"},
        {"empty.json", "{\"short_factor\": [], \"long_factor\": []}", "short_factor"},
        {"yarn.json", "{\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4.0}}", "rope_scaling.type"},
        {"no_scaling.json", "{\"architectures\": [\"LlamaForCausalLM\"], \"rope_scaling\": null}", "rope_scaling"},
        {"orig0.json", "{\"short_factor\": [1], \"long_factor\": [1], \"original_max_position_embeddings\": 0}",
         "original_max_position_embeddings"},
        {"af.json", "{\"short_factor\": [1], \"long_factor\": [1], \"attention_factor\": -1}", "attention_factor"},
        {"in_scaling.json", "{\"rope_scaling\": {\"rope_type\": \"longrope\", \"short_factor\": [1, 2], "
                            "\"long_factor\": [1, \"x\"]}}", "rope_scaling.long_factor[1]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char rule[300];
        snprintf(rule, sizeof rule, "longrope:%s", tmp_json(bad[i].name, bad[i].text));
        RopeRule r;
        pelab_errmsg[0] = 0;
        int rc = rope_rule_parse(rule, &r);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i].name) && strstr(pelab_errmsg, bad[i].field) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s refused naming the file and '%s' (rc %d: %s)", bad[i].name, bad[i].field, rc, pelab_errmsg);
    }
    static const struct {
        const char *rule, *expect;
    } bad_path[] = {
        {"longrope", "needs the path"},
        {"longrope:", "needs the path"},
        {"longrope:/nonexistent/lr.json", "/nonexistent/lr.json"},
        {"longrope:a,b.json", "','"},
    };
    for (size_t i = 0; i < sizeof bad_path / sizeof bad_path[0]; i++) {
        RopeRule r;
        pelab_errmsg[0] = 0;
        int rc = rope_rule_parse(bad_path[i].rule, &r);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad_path[i].expect) && !strchr(pelab_errmsg, '\n'),
              "%s refused naming '%s' (got %s)", bad_path[i].rule, bad_path[i].expect, pelab_errmsg);
    }
}

/* Phi-3-mini-128k's config (../shared/data/hf-configs): 48 pairs of factors, L 4096, max 131072 */
static void longrope_phi3(void) {
    const char *data = shared_data_dir();
    char path[512], rule[600];
    snprintf(path, sizeof path, "%s/hf-configs/phi-3-mini-128k-instruct-ollama.json", data ? data : "");
    FILE *f = data ? fopen(path, "rb") : NULL;
    if (!f) {
        fprintf(stderr, "test_rope_scaling: %s absent: skipping the Phi-3 LongRoPE config\n",
                data ? path : "../shared/data");
        return;
    }
    fclose(f);
    snprintf(rule, sizeof rule, "longrope:%s", path);
    RopeRule r = rule_of(rule);
    const LongRopeFactors *lr = &r.longrope;
    CHECK(lr->n_pairs == 48 && lr->orig_len == 4096 && lr->factor == 32 && lr->short_factor[0] == 1.1 &&
              lr->long_factor[47] == 64.76000213623047,
          "Phi-3: %d pairs, L %ld, factor %g, short[0] %.17g, long[47] %.17g", lr->n_pairs, lr->orig_len, lr->factor,
          lr->short_factor[0], lr->long_factor[47]);
    double freq[48], af;
    rope_rule_freqs(&r, 96, 10000, 4096, 4097, freq, &af);
    /* HF's Phi-3 attention factor: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12) = sqrt(17/12) */
    CHECK(rel_near(af, 1.1902380714238083, 1e-12) &&
              rel_near(freq[47], pow(10000, -94.0 / 96) / 64.76000213623047, 1e-12),
          "Phi-3 at 4097: attention factor %.17g, freq 47 %.6g", af, freq[47]);
    rope_rule_freqs(&r, 96, 10000, 4096, 4096, freq, &af);
    CHECK(rel_near(freq[0], 1 / 1.1, 1e-12), "Phi-3 at 4096: the short set (freq 0 %.17g)", freq[0]);
    /* a model of Phi-3's head_dim 96 takes it; 64 does not */
    snprintf(rule, sizeof rule, "rope:scale=longrope:%s,layout=half", path);
    PosCtx pc;
    int rc = pos_init(&pc, rule, 192, 2, 2, 1, 16);
    CHECK(rc == 0 && pc.scheme->qk_dynamic_from(&pc) == 4096, "Phi-3 factors on head_dim 96: %s",
          rc ? pelab_errmsg : "ok");
    if (rc == 0) pos_free(&pc);
    pelab_errmsg[0] = 0;
    CHECK(pos_init(&pc, rule, 128, 2, 2, 1, 16) == -1 && strstr(pelab_errmsg, "expected 32"),
          "Phi-3 factors on head_dim 64 refused: %s", pelab_errmsg);
}

/* KV-cache decoding = the prefix forwards at every position, within and past L = 8 */
static void longrope_kvcache(void) {
    char spec[2][300];
    const char *path = tmp_json("lr2.json", LR2_BARE);
    snprintf(spec[0], sizeof spec[0], "rope:scale=longrope:%s,fraction=0.5", path);
    snprintf(spec[1], sizeof spec[1], "rope:scale=longrope:%s,layout=half", path);
    static const struct {
        int spec, heads, kv_heads, layers;
    } cases[] = {{0, 2, 1, 1}, {1, 4, 4, 2}, {0, 2, 1, 2}};
    for (int i = 0; i < 3; i++) {
        Model m;
        char what[400];
        snprintf(what, sizeof what, "%s heads %d kv %d layers %d", spec[cases[i].spec], cases[i].heads,
                 cases[i].kv_heads, cases[i].layers);
        if (tiny_model_shaped(&m, spec[cases[i].spec], cases[i].heads, cases[i].kv_heads, cases[i].layers, 0, 23) != 0) {
            CHECK(0, "%s: %s", what, pelab_errmsg);
            continue;
        }
        dynamic_kvcache_one(&m, what, 0);
        model_free(&m);
    }
}

/* the factor search (infer/longrope_search.h) on a tiny model: never worse than PI, the constraint
 * kept, the written file reads back to the same factors and loss */
static void longrope_search_small(void) {
    Model m;
    if (tiny_model_shaped(&m, "rope:layout=half", 4, 4, 1, 0, 29) != 0) {
        CHECK(0, "search model: %s", pelab_errmsg);
        return;
    }
    enum { LEN = 24, W = 2, V = 13 };
    int tokens[W * LEN + 1];
    for (int i = 0; i < W * LEN + 1; i++) tokens[i] = (i * 5 + i / 7) % V;
    LongRopeSearchConfig cfg = {.len = LEN, .windows = W, .population = 4, .generations = 2, .seed = 5};
    LongRopeFactors best;
    double loss, pi_loss;
    int rc = longrope_search(&m, tokens, W * LEN + 1, &cfg, &best, &loss, &pi_loss);
    int ordered = best.n_pairs == 2 && best.long_factor[0] >= 1 && best.long_factor[1] >= best.long_factor[0];
    CHECK(rc == 0 && loss <= pi_loss && ordered && best.orig_len == 8 && best.factor == 3,
          "search: loss %.6f <= PI's %.6f, factors %g <= %g (%s)", loss, pi_loss, best.long_factor[0],
          best.long_factor[1], rc ? pelab_errmsg : "ok");
    char path[300], rule[320];
    snprintf(path, sizeof path, "%s/searched.json", test_tmpdir());
    snprintf(rule, sizeof rule, "longrope:%s", path);
    RopeRule back;
    CHECK(longrope_write(path, &best) == 0 && rope_rule_parse(rule, &back) == 0 &&
              !memcmp(back.longrope.long_factor, best.long_factor, sizeof(double) * 2) &&
              back.longrope.orig_len == 8 && back.longrope.factor == 3,
          "the written factors read back exactly: %s", pelab_errmsg);
    int pos[LEN];
    for (int t = 0; t < LEN; t++) pos[t] = t;
    double again = 0;
    CHECK(pos_set_scale(&m.pos, rule) == 0, "--scale %s: %s", rule, pelab_errmsg);
    for (int w = 0; w < W; w++) {
        model_forward(&m, tokens + w * LEN, tokens + w * LEN + 1, pos, 1, LEN);
        again += m.mean_loss / W;
    }
    CHECK(fabs(again - loss) < 1e-6, "the file's loss %.6f = the search's %.6f", again, loss);
    cfg.len = 8;
    pelab_errmsg[0] = 0;
    CHECK(longrope_search(&m, tokens, W * LEN + 1, &cfg, &best, &loss, &pi_loss) == -1 && strstr(pelab_errmsg, "L 8"),
          "a target length within L refused: %s", pelab_errmsg);
    cfg.len = LEN;
    CHECK(longrope_search(&m, tokens, W * LEN, &cfg, &best, &loss, &pi_loss) == -1 && strstr(pelab_errmsg, "tokens"),
          "too few tokens refused: %s", pelab_errmsg);
    model_free(&m);
}

void test_longrope(void) {
    longrope_frequencies();
    longrope_refusals();
    longrope_phi3();
    longrope_kvcache();
    longrope_search_small();
}
