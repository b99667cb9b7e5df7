/* test_extend.c: the two-branch extension methods (model/pos/extend.h): Self-Extend, ReRoPE,
 * leaky ReRoPE, STRING and Dual Chunk Attention. Their texts and refusals; the relative positions they give against tables worked
 * by hand; a model's attention weights against a double-precision reference built from the
 * definition (every score q_i . R(rel(i, j)) k_j from the raw projections); KV-cache decoding
 * (token by token, in chunks, batched and left-padded) against the full forward up to 3L. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/decode.h"
#include "../model/model.h"
#include "../model/pos/extend.h"
#include "test.h"

static void extend_texts(void) {
    static const struct {
        const char *text;
        const char *method;
        int group, window, sinks;
        double leak;
    } good[] = {
        {"selfextend:4:32", "selfextend", 4, 32, 0, 0}, {"rerope:64", "rerope", 0, 64, 0, 0},
        {"leaky-rerope:64:16", "leaky-rerope", 0, 64, 0, 16}, {"leaky-rerope:4:2.5", "leaky-rerope", 0, 4, 0, 2.5},
        {"stream:4:124", "stream", 0, 124, 4, 0}, {"stream:0:8", "stream", 0, 8, 0, 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        PosExtend e;
        int rc = extend_parse(good[i].text, &e);
        char back[64];
        extend_describe(&e, back, sizeof back);
        CHECK(rc == 1 && !strcmp(e.method->name, good[i].method) && e.group == good[i].group && e.window == good[i].window &&
                  e.sinks == good[i].sinks && e.leak == good[i].leak && strcmp(back, good[i].text) == 0,
              "%s parses (rc %d, method %s, G %d, W %d, S %d, K %g) and reads back (%s)", good[i].text, rc,
              e.method ? e.method->name : "none",
              e.group, e.window, e.sinks, e.leak, back);
    }
    static const char *not_ours[] = {"pi:4", "none", "yarn:2", "selfextender:2:4", "rope"};
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++) {
        PosExtend e;
        CHECK(extend_parse(not_ours[i], &e) == 0, "%s is not an extension method", not_ours[i]);
    }
    static const struct {
        const char *text, *needle;
    } bad[] = {
        {"selfextend", "selfextend:G:W"},    {"selfextend:4", "neighbour window"}, {"selfextend:0:8", "group size"},
        {"selfextend:4:8:2", "too many"},    {"selfextend:4:6", "not a multiple of G"}, {"selfextend:3:5", "llama.cpp"},    {"rerope:0", "window"},               {"rerope:x", "window"},
        {"leaky-rerope:8", "inverse slope"}, {"leaky-rerope:8:1", "inverse slope"}, {"leaky-rerope:3:1.5", "integer"},
        {"leaky-rerope:16:642222", "at most 262144"}, {"rerope:4:", "empty argument"}, {"stream:2:4:", "empty argument"},
        {"leaky-rerope:4:2:", "empty argument"},      {"leaky-rerope:4:2:3", "too many"},
        {"stream:4", "recent tokens"},       {"stream:-1:8", "sink"},              {"stream:4:0", "recent tokens"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PosExtend e;
        int rc = extend_parse(bad[i].text, &e);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i].needle) && strstr(pelab_errmsg, bad[i].text) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s is refused in one line naming '%s' (rc %d: %s)", bad[i].text, bad[i].needle, rc, pelab_errmsg);
    }
}

/* the shared checks of every method in the table (extend.c), whatever it is: its usage with 4 for
 * every argument parses and reads back, a missing or an extra argument is refused naming the usage,
 * the lists the user reads name it (--help of score and eval, pelab info --rules), and a two-branch
 * method's far positions give its relative positions (the far branch under the model's own map) */
static void every_method_in_the_table(void) {
    static char score_help[16384], eval_help[16384], listed[16384];
    run_pelab("./pelab score --help", score_help, sizeof score_help);
    run_pelab("./pelab eval --help", eval_help, sizeof eval_help);
    run_pelab("./pelab info --rules", listed, sizeof listed);
    for (int i = 0; i < extend_count(); i++) {
        const ExtendMethod *m = extend_at(i);
        CHECK(m->name && m->usage && m->args && m->summary && m->parse && m->describe &&
                  !strncmp(m->usage, m->name, strlen(m->name)) && (!m->far_rule || m->far_usage),
              "method %d (%s): name, usage, args, summary, parse and describe", i, m->name);
        CHECK(strstr(score_help, m->usage) && strstr(eval_help, m->usage) && strstr(listed, m->usage),
              "%s: in score --help, eval --help and info --rules", m->usage);
        char text[64] = "", back[64], more[80];
        for (const char *u = m->usage; *u; u++) /* every placeholder after a ':' becomes 4 */
            if (u == m->usage || u[-1] != ':') snprintf(text + strlen(text), sizeof text - strlen(text), "%c", *u);
            else {
                snprintf(text + strlen(text), sizeof text - strlen(text), "4");
                while (u[1] && u[1] != ':') u++;
            }
        if (m->example) snprintf(text, sizeof text, "%s", m->example);
        PosExtend e, e2;
        int rc = extend_parse(text, &e);
        extend_describe(&e, back, sizeof back);
        CHECK(rc == 1 && e.method == m && extend_parse(back, &e2) == 1 && !memcmp(&e, &e2, sizeof e),
              "%s parses (%d: %s) and reads back as %s", text, rc, rc == 1 ? "" : pelab_errmsg, back);
        snprintf(more, sizeof more, "%s:4", text);
        CHECK(extend_parse(more, &e2) == -1 && strstr(pelab_errmsg, m->usage), "%s is refused naming %s (%s)", more,
              m->usage, pelab_errmsg);
        if (m->defaults) { /* its arguments from the training length, once on a model */
            CHECK(extend_parse(m->name, &e2) == 1 && e2.method == m && extend_resolve(&e2, 48) == 0 &&
                      e2.window > 0 && extend_two_branch(&e2),
                  "%s alone parses and takes its defaults from L (%s)", m->name, pelab_errmsg);
            extend_parse(m->name, &e2);
            extend_describe(&e2, back, sizeof back);
            CHECK(!strcmp(back, m->name), "%s alone reads back as %s", m->name, back);
        } else
            CHECK(extend_parse(m->name, &e2) == -1 && strstr(pelab_errmsg, m->usage), "%s alone is refused naming %s",
                  m->name, m->usage);
        if (!extend_two_branch(&e) || m->far_rule) continue;
        int bad = 0;
        for (int q = e.window; q < 40; q++)
            for (int d = e.window; d <= q; d++)
                if (!extend_near(&e, q, q - d)) /* DCA's previous chunk may still be near */
                    bad += extend_far_qpos(&e, q) - extend_far_kpos(&e, q - d) != extend_relative(&e, q, d);
        CHECK(!bad, "%s: far query minus far key is the relative position (%d wrong)", text, bad);
    }
}

/* STRING and DCA: their arguments, defaults from L, refusals; relative positions from tables worked
 * by hand from the papers (STRING: d below S, d - S + W from S; DCA, chunks of c = C - W: keys at
 * j mod c, queries at i mod c in the key's chunk, min(i mod c + c, C) in the next, min(2c - 1, C) later) */
static void string_and_dca(void) {
    PosExtend st, dca, e;
    CHECK(extend_parse("string:6:2", &st) == 1 && st.window == 6 && st.local == 2, "string:6:2: S 6, W 2");
    CHECK(extend_parse("dca:8:2", &dca) == 1 && dca.chunk == 8 && dca.local == 2 && dca.window == 6,
          "dca:8:2: C 8, W 2, chunks of 6");
    static const double st10[11] = {0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 6};
    static const double dca13[14] = {0, 1, 2, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 8};
    static const double dca16[17] = {0, 1, 2, 3, 4, 3, 4, 5, 6, 7, 8, 3, 4, 5, 6, 7, 8};
    int bad = 0, bad_far = 0;
    for (int d = 0; d <= 10; d++) {
        bad += extend_relative(&st, 10, d) != st10[d];
        bad_far += extend_near(&st, 10, 10 - d) != (d < 6);
        if (d >= 6) bad_far += extend_far_qpos(&st, 10) - extend_far_kpos(&st, 10 - d) != st10[d];
    }
    for (int d = 0; d <= 13; d++) bad += extend_relative(&dca, 13, d) != dca13[d];
    for (int d = 0; d <= 16; d++) {
        bad += extend_relative(&dca, 16, d) != dca16[d];
        if (!extend_near(&dca, 16, 16 - d))
            bad_far += extend_far_qpos(&dca, 16) - extend_far_kpos(&dca, 16 - d) != dca16[d];
    }
    /* query 13 (1 into its chunk, below W): its previous chunk is near; query 16 (4 in): it is far */
    bad_far += !extend_near(&dca, 13, 6) || extend_near(&dca, 13, 5) || extend_near(&dca, 16, 11) ||
               !extend_near(&dca, 16, 12);
    CHECK(!bad && !bad_far, "STRING and DCA relative positions match the hand tables (%d wrong, far branch %d)", bad,
          bad_far);
    /* defaults from L = 48: STRING S 16, W 3; DCA C 36, W 3; at L = 8: S 2, W 1; C 6, W 0 */
    static const struct {
        const char *name;
        int L, window, local, chunk;
    } defaults[] = {{"string", 48, 16, 3, 0}, {"dca", 48, 33, 3, 36}, {"string", 8, 2, 1, 0}, {"dca", 8, 6, 0, 6},
                    {"string", 3072, 1024, 192, 0}, {"dca", 4096, 2816, 256, 3072}};
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        int rc = extend_parse(defaults[i].name, &e) == 1 ? extend_resolve(&e, defaults[i].L) : -1;
        CHECK(rc == 0 && e.window == defaults[i].window && e.local == defaults[i].local && e.chunk == defaults[i].chunk,
              "%s at L = %d: window %d local %d chunk %d (%s)", defaults[i].name, defaults[i].L, e.window, e.local,
              e.chunk, rc ? pelab_errmsg : "");
    }
    CHECK(extend_parse("string", &e) == 1 && extend_resolve(&e, 4) == -1 && strstr(pelab_errmsg, "string:S:W"),
          "string at L = 4 is refused: %s", pelab_errmsg);
    static const struct {
        const char *text, *needle;
    } bad_texts[] = {{"string:4:4", "must be below S"}, {"string:0:1", "the shift"}, {"string:5", "local window"},
                     {"string:5:-1", "local window"},   {"dca:4:4", "must be below C"}, {"dca:0:0", "chunk size"},
                     {"dca:8", "local window"},         {"dca:8:2:1", "too many"},     {"string:6:2:", "empty"}};
    for (size_t i = 0; i < sizeof bad_texts / sizeof bad_texts[0]; i++) {
        int rc = extend_parse(bad_texts[i].text, &e);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad_texts[i].needle) && strstr(pelab_errmsg, bad_texts[i].text) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s is refused in one line naming '%s' (rc %d: %s)", bad_texts[i].text, bad_texts[i].needle, rc,
              pelab_errmsg);
    }
    /* on a model the defaults are set from its L and written out */
    Model m;
    tiny_model(&m, "rope", 2, 0, 3);
    char lengths[256];
    int rc = pos_set_scale(&m.pos, "dca");
    pos_lengths(&m.pos, lengths, sizeof lengths);
    CHECK(rc == 0 && strstr(lengths, "extension method dca:6:0"), "dca on L = 8: %s", rc ? pelab_errmsg : lengths);
    model_free(&m);
}

/* relative positions from tables worked by hand, and the far branch's positions agreeing with them */
static void extend_tables(void) {
    PosExtend se, re, lk;
    extend_parse("selfextend:2:4", &se);
    extend_parse("rerope:3", &re);
    extend_parse("leaky-rerope:4:2", &lk);
    /* Self-Extend G 2, W 4, query 10, key 10 - d: below 4 exact; else floor(10/2) - floor(j/2) + 4 - 2 */
    static const double se10[11] = {0, 1, 2, 3, 4, 5, 5, 6, 6, 7, 7};
    static const double re7[7] = {0, 1, 2, 3, 3, 3, 3};
    static const double lk9[10] = {0, 1, 2, 3, 4, 4.5, 5, 5.5, 6, 6.5};
    int bad_se = 0, bad_re = 0, bad_lk = 0, bad_far = 0;
    for (int d = 0; d <= 10; d++) {
        bad_se += extend_relative(&se, 10, d) != se10[d];
        if (d >= 4) bad_far += extend_far_qpos(&se, 10) - extend_far_kpos(&se, 10 - d) != se10[d];
        bad_far += extend_near(&se, 10, 10 - d) != (d < 4);
    }
    for (int d = 0; d < 7; d++) {
        bad_re += extend_relative(&re, 20, d) != re7[d];
        if (d >= 3) bad_far += extend_far_qpos(&re, 20) - extend_far_kpos(&re, 20 - d) != re7[d];
    }
    for (int d = 0; d < 10; d++) {
        bad_lk += extend_relative(&lk, 9, d) != lk9[d];
        /* the far branch runs under pi:2: its position difference is twice the relative position */
        if (d >= 4) bad_far += extend_far_qpos(&lk, 9) - extend_far_kpos(&lk, 9 - d) != 2 * lk9[d];
    }
    /* a query fewer than W positions in has no far key: it keeps its own position (short tables) */
    bad_far += extend_far_qpos(&se, 3) != 3 || extend_far_qpos(&re, 2) != 2 || extend_far_qpos(&lk, 3) != 3;
    CHECK(!bad_se && !bad_re && !bad_lk && !bad_far,
          "relative positions match the hand tables (Self-Extend %d, ReRoPE %d, leaky %d, far branch %d wrong)",
          bad_se, bad_re, bad_lk, bad_far);
}

/* the reference's relative position, written from the papers' formulas, not from extend.c */
static double ref_relative(const char *method, int i, int j) {
    int d = i - j;
    if (strcmp(method, "selfextend:2:4") == 0) return d < 4 ? d : i / 2 - j / 2 + 4 - 4 / 2;
    if (strcmp(method, "rerope:5") == 0) return d < 5 ? d : 5;
    if (strcmp(method, "leaky-rerope:3:4") == 0) return d < 3 ? d : 3 + (d - 3) / 4.0;
    if (strcmp(method, "string:6:2") == 0) return d < 6 ? d : d - 6 + 2; /* STRING, S 6, W 2 */
    if (strcmp(method, "dca:8:2") == 0) { /* ChunkLlama's position ids, chunk_size 8, local_window 2 */
        int c = 8 - 2, qc = i / c, kc = j / c, q_intra = i % c, q_succ = i % c + c < 8 ? i % c + c : 8;
        int q_inter = 2 * c - 1 < 8 ? 2 * c - 1 : 8;
        return (qc == kc ? q_intra : qc == kc + 1 ? q_succ : q_inter) - j % c;
    }
    return d;
}

/* One layer, queries at 0..T-1: every attention weight of the model against softmax(q_i . R(rel) k_j
 * / sqrt(hd)) in double from the layer's raw projections (rope, base 10000, both layouts, GQA). */
static void extend_reference_one(const char *spec, const char *method) {
    enum { T = 20 };
    Model m;
    if (tiny_model_shaped(&m, spec, 4, 2, 1, 1, 11) != 0 || pos_set_scale(&m.pos, method) != 0) {
        CHECK(0, "%s with %s: %s", spec, method, pelab_errmsg);
        return;
    }
    int half = strstr(spec, "half") != NULL;
    int D = m.cfg.dim, H = m.cfg.n_heads, KVH = m.cfg.n_kv_heads, hd = m.head_dim, in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 5 + 2) % m.cfg.vocab_size, pos[i] = i;
    model_keep_attention(&m, 1);
    model_alloc_train(&m, 1, T);
    int rc = model_forward(&m, in, NULL, pos, 1, T);
    /* raw q, k of every row in double */
    double *q = xmalloc(sizeof(double) * T * H * hd), *k = xmalloc(sizeof(double) * T * KVH * hd);
    for (int t = 0; t < T; t++) {
        const float *x = m.params.tok_emb + (size_t)in[t] * D;
        double ms = 0, ln[64];
        for (int d = 0; d < D; d++) ms += (double)x[d] * x[d];
        double rstd = 1.0 / sqrt(ms / D + m.cfg.norm_eps);
        for (int d = 0; d < D; d++) ln[d] = x[d] * rstd * m.params.attn_norm[d];
        for (int o = 0; o < H * hd; o++) {
            double s = 0;
            for (int d = 0; d < D; d++) s += m.params.wq[(size_t)o * D + d] * ln[d];
            q[t * H * hd + o] = s;
        }
        for (int o = 0; o < KVH * hd; o++) {
            double s = 0;
            for (int d = 0; d < D; d++) s += m.params.wk[(size_t)o * D + d] * ln[d];
            k[t * KVH * hd + o] = s;
        }
    }
    double worst = 0, moved = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++) {
            double row[T], mx = -1e300, sum = 0;
            const double *qi = q + i * H * hd + h * hd;
            for (int j = 0; j <= i; j++) {
                const double *kj = k + j * KVH * hd + (h / (H / KVH)) * hd;
                double rel = ref_relative(method, i, j), s = 0;
                for (int p = 0; p < hd / 2; p++) { /* (R(rel theta_p) q) . k for pair p */
                    int a = half ? p : 2 * p, b = half ? p + hd / 2 : 2 * p + 1;
                    double th = rel * pow(10000.0, -2.0 * p / hd), c = cos(th), sn = sin(th);
                    s += (c * qi[a] - sn * qi[b]) * kj[a] + (sn * qi[a] + c * qi[b]) * kj[b];
                }
                row[j] = s / sqrt((double)hd);
                mx = row[j] > mx ? row[j] : mx;
            }
            for (int j = 0; j <= i; j++) sum += row[j] = exp(row[j] - mx);
            const float *got = m.acts.att_probs + ((size_t)h * T + i) * T;
            for (int j = 0; j < T; j++) {
                double want = j <= i ? row[j] / sum : 0;
                worst = worse(worst, fabs(got[j] - want));
                if (j <= i && ref_relative(method, i, j) != i - j) moved = worse(moved, fabs(want));
            }
        }
    CHECK(rc == 0 && worst < 2e-5 && moved > 1e-3,
          "%s with %s: attention weights = the definition in double (max |diff| %.3g; remapped keys carry weight "
          "up to %.3g)", spec, method, worst, moved);
    free(q), free(k);
    model_free(&m);
}

static void extend_reference(void) {
    static const char *methods[] = {"selfextend:2:4", "rerope:5", "leaky-rerope:3:4", "string:6:2", "dca:8:2"};
    for (int i = 0; i < 5; i++) {
        extend_reference_one("rope", methods[i]);
        extend_reference_one("rope:layout=half", methods[i]);
    }
}

/* decoding (chunks of 1, 3 and all, and a left-padded batch of two) against the full forward over
 * the same 3L tokens, at every position */
static void extend_kvcache_one(const char *spec, const char *method) {
    enum { T = 24 }; /* 3 x the training length 8 */
    Model m;
    if (tiny_model(&m, spec, 2, 0, 5) != 0 || pos_set_scale(&m.pos, method) != 0) {
        CHECK(0, "%s with %s: %s", spec, method, pelab_errmsg);
        return;
    }
    int V = m.cfg.vocab_size, in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 7 + 3) % V, pos[i] = i;
    model_alloc_train(&m, 1, T);
    int rc = model_forward(&m, in, NULL, pos, 1, T);
    float *ref = xmalloc(sizeof(float) * T * V), *dec = xmalloc(sizeof(float) * 2 * T * V);
    memcpy(ref, m.acts.logits, sizeof(float) * T * V);
    static const int chunks[] = {1, 3, T};
    for (int c = 0; c < 3 && rc == 0; c++) {
        KVCache kv;
        kvcache_init(&kv, &m, T, chunks[c]);
        for (int t = 0; t < T && rc == 0; t += chunks[c]) {
            int n = T - t < chunks[c] ? T - t : chunks[c];
            rc = decode_forward(&m, &kv, in + t, pos + t, n, dec + (size_t)t * V, 1);
        }
        float diff = max_abs_diff(dec, ref, T * V);
        CHECK(rc == 0 && diff <= 1e-4f, "%s with %s: decoding in chunks of %d = the full forward to 3L (max |diff| "
              "%.3g) %s", spec, method, chunks[c], diff, rc ? pelab_errmsg : "");
        kvcache_free(&kv);
    }
    /* a batch: the sequence itself and its last 17 tokens left-padded by 7 (positions from 0) */
    KVCache kv;
    kvcache_init_batch(&kv, &m, 2, T, 5);
    int bin[2 * T], bpos[2 * T], pad = 7;
    for (int i = 0; i < T; i++) {
        bin[i] = in[i], bpos[i] = i;
        bin[T + i] = i < pad ? 0 : in[i], bpos[T + i] = i < pad ? 0 : i - pad;
    }
    kv.key_start[1] = pad;
    if (rc == 0) rc = decode_forward_batch(&m, &kv, bin, bpos, T, dec, 1);
    model_forward(&m, in + pad, NULL, pos, 1, T - pad); /* the padded sequence alone */
    float d0 = max_abs_diff(dec, ref, T * V), d1 = max_abs_diff(dec + (size_t)(T + pad) * V, m.acts.logits, (T - pad) * V);
    CHECK(rc == 0 && d0 <= 1e-4f && d1 <= 1e-4f, "%s with %s: a left-padded batch = each sequence alone (max |diff| "
          "%.3g, %.3g) %s", spec, method, d0, d1, rc ? pelab_errmsg : "");
    kvcache_free(&kv);
    /* and the method acts: plain decoding differs past its window */
    Model plain;
    tiny_model(&plain, spec, 2, 0, 5);
    model_alloc_train(&plain, 1, T);
    model_forward(&plain, in, NULL, pos, 1, T);
    CHECK(max_abs_diff(plain.acts.logits + (T - 1) * V, ref + (T - 1) * V, V) > 1e-3f,
          "%s with %s: the method changes the last logits", spec, method);
    model_free(&plain);
    free(ref), free(dec);
    model_free(&m);
}

static void extend_kvcache(void) {
    static const char *specs[] = {"rope", "rope:layout=half,fraction=0.5", "rope:scale=pi:2", "xpos", "fope",
                                  "rope+logn", "rope+nope@1"};
    static const char *methods[] = {"selfextend:3:6", "rerope:6", "leaky-rerope:4:3", "string:6:2", "dca:8:2"};
    for (int s = 0; s < 7; s++)
        for (int k = 0; k < 5; k++) {
            /* leaky brings pi:K: not on a model with a rule, nor on fope (no rules) */
            if (k == 2 && (strstr(specs[s], "scale") || strcmp(specs[s], "fope") == 0)) continue;
            extend_kvcache_one(specs[s], methods[k]);
        }
    extend_kvcache_one("rope", "string"); /* the defaults at L = 8: string:2:1, dca:6:0 */
    extend_kvcache_one("rope", "dca");
    extend_kvcache_one("pope", "string:6:2"); /* PoPE's map, exact at any position pair, under both */
    extend_kvcache_one("pope", "dca:8:2");
}

static void extend_refusals(void) {
    static const struct {
        const char *spec, *method, *needle;
    } bad[] = {
        {"alibi", "selfextend:2:4", "no q/k map"},
        {"t5", "rerope:4", "rotary schemes: rope"},
        {"rope:scale=dynamic-ntk", "rerope:4", "follows the sequence length"},
        {"rope:scale=pi:2", "leaky-rerope:4:2", "already has a scaling rule"},
        {"fope", "leaky-rerope:4:2", "takes no scaling rule"},
        {"learned", "stream:2:6", "adds positions to the input"},
        {"sinusoidal", "stream:2:6", "adds positions to the input"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Model m;
        tiny_model(&m, bad[i].spec, 4, 0, 3);
        int rc = pos_set_scale(&m.pos, bad[i].method);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i].needle) && strstr(pelab_errmsg, bad[i].method) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s on %s: refused in one line naming '%s' (%s)", bad[i].method, bad[i].spec, bad[i].needle, pelab_errmsg);
        model_free(&m);
    }
    /* a rule after an extension method; a cache built before the method was set */
    Model m;
    tiny_model(&m, "rope", 4, 0, 3);
    KVCache kv;
    kvcache_init(&kv, &m, 8, 8);
    pos_set_scale(&m.pos, "leaky-rerope:4:2");
    int in[2] = {1, 2}, pos[2] = {0, 1};
    float logits[13];
    CHECK(decode_forward(&m, &kv, in, pos, 2, logits, 0) == -1 && strstr(pelab_errmsg, "build it again"),
          "a cache from before the method is refused: %s", pelab_errmsg);
    CHECK(pos_set_scale(&m.pos, "pi:2") == -1 && strstr(pelab_errmsg, "set the rule first"),
          "a rule after the method is refused: %s", pelab_errmsg);
    kvcache_free(&kv);
    model_free(&m);
}

/* the methods through the command line: eval side by side, greedy sampling with and without the
 * cache, passkey, and compare refusing a bad method before training */
static void extend_cli(void) {
    static char out[65536], cmd[2048], a[4096], b[4096];
    const char *dir = test_tmpdir();
    snprintf(cmd, sizeof cmd,
             "./pelab train --steps 5 --dim 32 --layers 2 --heads 2 --seq-len 16 --batch 2 --synth-bytes 20000 "
             "--quiet --out %s/ext.safetensors && ./pelab synth stories --bytes 3000 > %s/ext.txt",
             dir, dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0, "a tiny model and text for the extension methods (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd,
             "./pelab eval %s/ext.safetensors --data %s/ext.txt --lengths 16,64 "
             "--scale none,selfextend:2:8,rerope:8,leaky-rerope:8:2 2>/dev/null", dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "selfextend:2:8") && strstr(out, "rerope:8") && strstr(out, "leaky-rerope:8:2") &&
              strstr(out, "computable unbounded; extension method leaky-rerope:8:2"),
          "eval runs the three methods side by side and names them with the lengths (exit %d): %.300s", rc, out);
    static const char *methods[] = {"selfextend:2:8", "rerope:8", "leaky-rerope:8:2"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "./pelab sample %s/ext.safetensors -n 120 --temp 0 --scale %s 2>/dev/null", dir,
                 methods[i]);
        run_pelab(cmd, a, sizeof a);
        snprintf(cmd, sizeof cmd, "./pelab sample %s/ext.safetensors -n 120 --temp 0 --scale %s --no-cache 2>/dev/null",
                 dir, methods[i]);
        run_pelab(cmd, b, sizeof b);
        CHECK(strlen(a) > 100 && strcmp(a, b) == 0, "sample --scale %s: the cache and full forwards write the same "
              "greedy text to 7.5L (%zu bytes)", methods[i], strlen(a));
    }
    snprintf(cmd, sizeof cmd, "./pelab passkey %s/ext.safetensors --lengths 48 --trials 2 --scale rerope:8", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0, "passkey --scale rerope:8 runs (exit %d): %.300s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/ext.safetensors -n 5 --scale selfextend:0:8", dir);
    expect_pelab_error(cmd, "group size");
    /* training has no backward through a far branch or a sliding cache: refused, with or without --init */
    snprintf(cmd, sizeof cmd, "./pelab train --init %s/ext.safetensors --scale rerope:8 --steps 2 --quiet "
             "--synth-bytes 20000 --out %s/ext_ft.safetensors", dir, dir);
    expect_pelab_error(cmd, "an extension method at inference");
    snprintf(cmd, sizeof cmd, "./pelab train --scale selfextend:2:8 --steps 2 --quiet --dim 16 --layers 1 --heads 2 "
             "--seq-len 16 --synth-bytes 20000 --out %s/ext_tr.safetensors", dir);
    expect_pelab_error(cmd, "an extension method at inference");
    snprintf(cmd, sizeof cmd, "./pelab compare --schemes rope --rules pi:2,selfextend:2 --steps 1 --out %s/extcmp", dir);
    expect_pelab_error(cmd, "neighbour window");
}

void test_extend(void) {
    every_method_in_the_table();
    extend_texts();
    extend_tables();
    string_and_dca();
    extend_reference();
    extend_kvcache();
    extend_refusals();
    extend_cli();
}
