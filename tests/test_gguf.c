/* test_gguf.c: GGUF export and import (io/gguf*.h). ggml's tensor types against hand-computed
 * blocks (fp16 bits, a Q8_0 block quantized by ggml's reference rule, a Q4_0 block read exactly);
 * export -> import round trips: F32 bit-exact in parameters and logits (GQA, tied and untied,
 * both pair layouts, q/k/v biases, every rule GGUF carries), F16 and BF16 within their rounding,
 * Q8_0 within half a quantization step (plus fp16's rounding of the scale); the rope metadata
 * each rule writes, checked literally, and read back without pelab.pos; the tokenizers
 * (llama2c, bpe, byte, hf) back byte for byte; models llama.cpp computes otherwise refused in one
 * line; hostile files (cut, huge counts and lengths, bad alignment, types, dimensions, offsets
 * past the end or overlapping, duplicates, wrong shapes, non-finite values) refused in one line
 * naming the file and the field; the commands. With node and node-llama-cpp (PELAB_LLAMACPP_DIR:
 * where `npm install node-llama-cpp` ran): llama.cpp itself runs the exported files and must give
 * pelab's greedy tokens and probabilities. */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/fp16.h"
#include "../core/json.h"
#include "../core/strbuf.h"
#include "../data/hf_tok_write.h"
#include "../data/tokenizer.h"
#include "../io/checkpoint.h"
#include "../io/gguf.h"
#include "../io/gguf_llama.h"
#include "../io/gguf_quant.h"
#include "../model/model.h"
#include "test.h"

/* ---- helpers ---- */

/* a model of any shape, weights ~N(0, 0.35^2), gains ~1 (as tiny_model) */
static int shaped_model(Model *m, const char *spec, int vocab, int dim, int hidden, int kv, int tied, int bias,
                        unsigned long long seed) {
    ModelConfig c = {.vocab_size = vocab, .dim = dim, .n_layers = 2, .n_heads = 4, .n_kv_heads = kv,
                     .hidden_dim = hidden, .seq_len = 16, .norm_eps = 1e-5f, .tied = tied, .qkv_bias = bias};
    if (model_create(m, &c, spec) != 0) return -1;
    model_init_weights(m, seed);
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        float *p = m->params_mem + m->tensors[t].offset;
        int gain = t == T_ATTN_NORM || t == T_MLP_NORM || t == T_FINAL_NORM;
        for (size_t i = 0; i < m->tensors[t].numel; i++) {
            unsigned long long h = (seed + i * 2654435761ULL + (unsigned long long)t * 40503ULL) % 1000003ULL;
            float u = (float)h / 1000003.0f - 0.5f; /* deterministic, uniform in [-0.5, 0.5) */
            p[i] = gain ? 1.0f + 0.4f * u : 1.2f * u;
        }
    }
    return 0;
}

enum { LOGIT_T = 24 }; /* positions the logits are compared at: past seq_len 16 */

static char *path_in_tmp(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", test_tmpdir(), name);
    return buf;
}

static int one_line(const char *s) { return s[0] && !strchr(s, '\n'); }

/* a file image: the bytes of path, or NULL */
static unsigned char *image_of(const char *path, size_t *len) {
    unsigned char *b;
    return read_file(path, &b, len) == 0 ? b : NULL;
}

/* renames a key or tensor name in an image, in place (the same length): the length prefix + name */
static int rename_in(unsigned char *img, size_t len, const char *from, const char *to) {
    size_t n = strlen(from);
    unsigned char pat[80];
    for (int i = 0; i < 8; i++) pat[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(pat + 8, from, n);
    unsigned char *at = memmem(img, len, pat, n + 8);
    if (!at || strlen(to) != n) return -1;
    memcpy(at + 8, to, n);
    return 0;
}

/* ---- ggml's types ---- */

static void types(void) {
    CHECK(fp16_from_float(1.0f) == 0x3c00 && fp16_from_float(-2.0f) == 0xc000 && fp16_from_float(65504.0f) == 0x7bff,
          "fp16 of 1, -2, 65504");
    CHECK(fp16_from_float(65520.0f) == 0x7c00 && fp16_from_float(65519.0f) == 0x7bff, "65520 rounds (to even) to inf, 65519 to 65504");
    CHECK(fp16_from_float(5.9604645e-8f) == 0x0001 && fp16_from_float(2.9802322e-8f) == 0x0000 &&
              fp16_from_float(8.940697e-8f) == 0x0002, "subnormals: 2^-24 -> 1, 2^-25 -> 0 (tie to even), 1.5 x 2^-24 -> 2");
    CHECK(fp16_from_float(1.0f + 1.0f / 2048) == 0x3c00 && fp16_from_float(1.0f + 3.0f / 2048) == 0x3c02,
          "ties to even at 1 + 2^-11 and 1 + 3 x 2^-11");
    int all = 1;
    for (uint32_t h = 0; h < 0x10000; h++)
        if ((h & 0x7c00) != 0x7c00) all &= fp16_from_float(fp16_to_float((uint16_t)h)) == h;
    CHECK(all, "every finite half survives half -> float -> half");

    /* one Q8_0 block: x_j = (j - 16) / 4, so max |x| = 4, d = 4/127 -> fp16 0x2808 (0.031494140625),
     * q_j = round(x_j * 127/4) = round((j - 16) * 7.9375) */
    float x[32], y[32];
    for (int j = 0; j < 32; j++) x[j] = (float)(j - 16) / 4;
    unsigned char b[34];
    size_t bad;
    CHECK(ggml_encode(GGML_TYPE_Q8_0, x, 32, b, &bad) == 0, "Q8_0 encodes a block");
    CHECK(b[0] == 0x08 && b[1] == 0x28, "Q8_0 scale: fp16 0x2808 (got %02x%02x)", b[1], b[0]);
    CHECK((int8_t)b[2] == -127 && (int8_t)b[3] == -119 && (int8_t)b[2 + 15] == -8 && b[2 + 16] == 0 &&
              (int8_t)b[2 + 17] == 8 && (int8_t)b[2 + 31] == 119, "Q8_0 quants -127 -119 .. -8 0 8 .. 119");
    ggml_decode(GGML_TYPE_Q8_0, b, 32, y);
    float d = 0.0314960629f, dh = 0.031494140625f, worst = 0;
    for (int j = 0; j < 32; j++) worst = fmaxf(worst, fabsf(y[j] - x[j]));
    CHECK(y[0] == -127 * dh && y[31] == 119 * dh && worst <= 0.57f * d,
          "Q8_0 decodes q x fp16(d): %g %g, max error %g <= 0.57 d", y[0], y[31], worst);
    float big[32] = {1e7f};
    CHECK(ggml_encode(GGML_TYPE_Q8_0, big, 32, b, &bad) == -1 && bad == 0, "a scale past fp16's range is refused");
    CHECK(ggml_encode(GGML_TYPE_F16, (float[]){1, 70000}, 2, b, &bad) == -1 && bad == 1, "an fp16 past 65504 is refused");

    /* one Q4_0 block by hand: d = 0.5 (fp16 0x3800), byte j = (15 - j) << 4 | j: x_j = (j - 8) / 2,
     * x_{j+16} = (7 - j) / 2 */
    unsigned char q4[18] = {0x00, 0x38};
    for (int j = 0; j < 16; j++) q4[2 + j] = (unsigned char)((15 - j) << 4 | j);
    ggml_decode(GGML_TYPE_Q4_0, q4, 32, y);
    int exact = 1;
    for (int j = 0; j < 16; j++) exact &= y[j] == (float)(j - 8) / 2 && y[j + 16] == (float)(7 - j) / 2;
    CHECK(exact, "Q4_0 block decoded exactly: low nibbles then high nibbles, (q - 8) d");
    unsigned char bf[4], h16[4];
    ggml_encode(GGML_TYPE_BF16, (float[]){1.00390625f, -3.0f}, 2, bf, &bad);
    ggml_encode(GGML_TYPE_F16, (float[]){0.1f, -3.0f}, 2, h16, &bad);
    ggml_decode(GGML_TYPE_BF16, bf, 2, y);
    ggml_decode(GGML_TYPE_F16, h16, 2, y + 2);
    CHECK(y[0] == 1.0f && y[1] == -3.0f && y[2] == 0.0999755859375f && y[3] == -3.0f,
          "BF16 rounds 1 + 2^-8 to even (1), F16 0.1 -> 0.0999755859375");
}

/* ---- round trips ---- */

/* export with type, import, compare: F32 bit-exact (parameters, spec, logits), others within their
 * rounding of each weight */
static void round_trip(Model *a, const char *what, uint32_t type) {
    char path[512], note[700];
    snprintf(path, sizeof path, "%s/rt-%s.gguf", test_tmpdir(), ggml_type_name(type));
    Model b;
    GgufTokImage tok;
    if (gguf_llama_write(path, a, NULL, type, note, sizeof note) != 0 || gguf_llama_read(path, PRECISION_FP32, &b, &tok) != 0) {
        CHECK(0, "%s %s: %s", what, ggml_type_name(type), pelab_errmsg);
        return;
    }
    char sa[POS_SPEC_MAX], sb[POS_SPEC_MAX];
    pos_spec(&a->pos, sa, sizeof sa), pos_spec(&b.pos, sb, sizeof sb);
    CHECK(!strcmp(sa, sb) && a->cfg.seq_len == b.cfg.seq_len && a->cfg.tied == b.cfg.tied && a->cfg.qkv_bias == b.cfg.qkv_bias &&
              a->cfg.norm_eps == b.cfg.norm_eps && a->cfg.n_kv_heads == b.cfg.n_kv_heads && a->n_params == b.n_params,
          "%s %s: config and spec back (%s vs %s)", what, ggml_type_name(type), sa, sb);
    if (a->n_params != b.n_params) {
        model_free(&b);
        return;
    }
    static float la[LOGIT_T * 64], lb[LOGIT_T * 64];
    if (type == GGML_TYPE_F32) {
        CHECK(!memcmp(a->params_mem, b.params_mem, sizeof(float) * a->n_params), "%s: F32 parameters bit-exact", what);
        fixed_logits(a, la, LOGIT_T), fixed_logits(&b, lb, LOGIT_T);
        CHECK(!memcmp(la, lb, sizeof(float) * LOGIT_T * (size_t)a->cfg.vocab_size),
              "%s: logits bit-exact at positions 0..%d (past seq_len %d; max diff %g)", what, LOGIT_T - 1, a->cfg.seq_len,
              max_abs_diff(la, lb, LOGIT_T * a->cfg.vocab_size));
    } else {
        /* per tensor: a norm stays F32; a matrix within its type's rounding (Q8_0: per block of 32) */
        double worst = 0;
        int ok = 1;
        for (int t = 0; t < N_PARAM_TENSORS; t++) {
            const TensorInfo *ti = &a->tensors[t];
            const float *p = a->params_mem + ti->offset, *q = b.params_mem + ti->offset;
            /* one dimension per layer (norms, biases; stacked tensors carry the layer first) */
            int is_vector = ti->ndim - (ti->ndim == 3 || (ti->ndim == 2 && t != T_TOK_EMB && t != T_LM_HEAD)) == 1;
            size_t row = ti->ndim ? (size_t)ti->shape[ti->ndim - 1] : 1;
            for (size_t i = 0; i < ti->numel && ok; i++) {
                double err = fabs((double)p[i] - q[i]), bound;
                if (is_vector) bound = 0;
                else if (type == GGML_TYPE_F16 || (type == GGML_TYPE_Q8_0 && row % 32)) bound = fabs(p[i]) / 2048 + 3e-8;
                else if (type == GGML_TYPE_BF16) bound = fabs(p[i]) / 256;
                else {
                    size_t b0 = i / 32 * 32;
                    float amax = 0;
                    for (size_t j = b0; j < b0 + 32; j++) amax = fmaxf(amax, fabsf(p[j]));
                    bound = 0.57 * amax / 127;
                }
                ok = err <= bound;
                worst = err > worst ? err : worst;
                if (!ok) fprintf(stderr, "  tensor %s element %zu: %g vs %g\n", ti->name, i, p[i], q[i]);
            }
        }
        CHECK(ok, "%s %s: every weight within its rounding (norms exact; max error %g)", what, ggml_type_name(type), worst);
        fixed_logits(a, la, LOGIT_T), fixed_logits(&b, lb, LOGIT_T);
        float diff = max_abs_diff(la, lb, LOGIT_T * a->cfg.vocab_size);
        CHECK(diff < (type == GGML_TYPE_Q8_0 ? 0.3f : type == GGML_TYPE_BF16 ? 0.3f : 0.05f), "%s %s: logits close (max diff %g)",
              what, ggml_type_name(type), diff);
    }
    free(tok.image);
    model_free(&b);
}

static void round_trips(void) {
    static const struct {
        const char *spec;
        int kv, tied, bias;
    } cases[] = {
        {"rope", 4, 1, 0},
        {"rope", 2, 0, 0},
        {"rope:layout=half", 1, 1, 0},
        {"rope:layout=half,base=500000", 2, 0, 1},
        {"rope:scale=pi:2", 2, 1, 0},
        {"rope:layout=half,scale=yarn:4", 2, 0, 0},
        {"rope:scale=llama3:8,orig_len=12", 2, 1, 0},
        {"rope:layout=half,scale=ntk:3", 4, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Model a;
        char what[200];
        snprintf(what, sizeof what, "%s kv %d %s%s", cases[i].spec, cases[i].kv, cases[i].tied ? "tied" : "untied",
                 cases[i].bias ? " qkv_bias" : "");
        if (shaped_model(&a, cases[i].spec, 40, 64, 96, cases[i].kv, cases[i].tied, cases[i].bias, 11 + i) != 0) {
            CHECK(0, "%s: %s", what, pelab_errmsg);
            continue;
        }
        round_trip(&a, what, GGML_TYPE_F32);
        if (i < 2) {
            round_trip(&a, what, GGML_TYPE_F16);
            round_trip(&a, what, GGML_TYPE_BF16);
        }
        if (i < 3 || i == 5) round_trip(&a, what, GGML_TYPE_Q8_0);
        model_free(&a);
    }
    /* rows of 16 (tiny models): Q8_0 keeps them F16, and says so */
    Model t;
    char path[512], note[700];
    tiny_model(&t, "rope", 2, 1, 3);
    CHECK(gguf_llama_write(path_in_tmp(path, sizeof path, "tiny-q8.gguf"), &t, NULL, GGML_TYPE_Q8_0, note, sizeof note) == 0 &&
              strstr(note, "kept F16"), "Q8_0 with rows of 16: F16 matrices, said in the note (%s)", note);
    round_trip(&t, "tiny rope (rows of 16)", GGML_TYPE_Q8_0);
    model_free(&t);
}

/* ---- the rope metadata of each rule, literally ---- */

static void rope_metadata(void) {
    static const struct {
        const char *spec, *type;
        float base, factor;
        uint32_t orig;
        int divisors;
    } want[] = {
        {"rope", "none", 10000, 0, 0, 0},
        {"rope:base=500000,scale=pi:4", "linear", 500000, 4, 16, 0},
        {"rope:scale=yarn:8,orig_len=12", "yarn", 10000, 8, 12, 0},
        {"rope:scale=ntk:4", "none", 0 /* 10000 x 4^(16/14), below */, 0, 0, 0},
        {"rope:scale=llama3:8", "none", 10000, 0, 16, 8},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        Model m;
        char path[512], note[700];
        snprintf(path, sizeof path, "%s/meta-%zu.gguf", test_tmpdir(), i);
        shaped_model(&m, want[i].spec, 40, 64, 96, 2, 1, 0, 5);
        size_t len;
        unsigned char *img = NULL;
        GgufFile g;
        if (gguf_llama_write(path, &m, NULL, GGML_TYPE_F32, note, sizeof note) != 0 || !(img = image_of(path, &len)) ||
            gguf_parse(&g, img, len, path) != 0) {
            CHECK(0, "%s: %s", want[i].spec, pelab_errmsg);
            free(img), model_free(&m);
            continue;
        }
        float base = 0, factor = 0;
        uint32_t orig = 0, dims = 0, ctx = 0;
        gguf_get_f32(&g, "llama.rope.freq_base", &base);
        gguf_get_f32(&g, "llama.rope.scaling.factor", &factor);
        gguf_get_u32(&g, "llama.rope.scaling.original_context_length", &orig);
        gguf_get_u32(&g, "llama.rope.dimension_count", &dims);
        gguf_get_u32(&g, "llama.context_length", &ctx);
        double ntk = 10000 * pow(4.0, 16.0 / 14.0);
        float want_base = strstr(want[i].spec, "ntk") ? (float)ntk : want[i].base;
        CHECK(gguf_str_is(&g, "llama.rope.scaling.type", want[i].type) && base == want_base && factor == want[i].factor &&
                  orig == want[i].orig && dims == 16 && ctx == 16 && gguf_str_is(&g, "general.architecture", "llama"),
              "%s: type %s, freq_base %g (want %g), factor %g, original_context_length %u, dimension_count %u", want[i].spec,
              want[i].type, base, want_base, factor, orig, dims);
        const GgufTensor *f = gguf_find_tensor(&g, "rope_freqs.weight");
        CHECK(want[i].divisors ? f && f->numel == 8 && f->type == GGML_TYPE_F32 : !f, "%s: rope_freqs.weight %s", want[i].spec,
              want[i].divisors ? "with 8 divisors" : "absent");
        if (f && want[i].divisors) { /* llama3:8, L 16, head 16: wavelength 2 pi 10000^(2j/16) */
            const float *dv = (const float *)f->data;
            int ok = 1;
            for (int j = 0; j < 8; j++) {
                double wl = 2 * M_PI * pow(10000, 2.0 * j / 16), w;
                if (wl < 16.0 / 4) w = 1;
                else if (wl > 16) w = 8;
                else {
                    double s = (16 / wl - 1) / 3;
                    w = 1 / ((1 - s) / 8 + s);
                }
                ok &= fabs(dv[j] - w) <= 1e-6 * w;
            }
            CHECK(ok && dv[7] == 8, "llama3:8: divisors 8 for wavelengths past L (pairs 1..7), smooth below (pair 0)");
        }
        /* without pelab.pos the llama keys alone give the same model */
        Model b;
        GgufTokImage tok;
        CHECK(rename_in(img, len, "pelab.pos", "pelab.poz") == 0 && write_bytes_atomic(path, img, len) == 0 &&
                  gguf_llama_read(path, PRECISION_FP32, &b, &tok) == 0, "%s: read back without pelab.pos: %s", want[i].spec, pelab_errmsg);
        if (b.params_mem) {
            static float la[LOGIT_T * 40], lb[LOGIT_T * 40];
            fixed_logits(&m, la, LOGIT_T), fixed_logits(&b, lb, LOGIT_T);
            float diff = max_abs_diff(la, lb, LOGIT_T * 40);
            char sb[POS_SPEC_MAX];
            pos_spec(&b.pos, sb, sizeof sb);
            CHECK(diff < 2e-4f, "%s: from the llama keys alone (%s), the same logits to float32 rounding (max diff %g)",
                  want[i].spec, sb, diff);
            model_free(&b);
        }
        gguf_free(&g);
        free(img);
        model_free(&m);
    }
}

/* ---- refusals ---- */

static int write_gguf(const char *path, const Model *m) {
    char note[700];
    int rc = gguf_llama_write(path, m, NULL, GGML_TYPE_F32, note, sizeof note);
    if (rc != 0 && (!strstr(pelab_errmsg, "llama.cpp") || access(path, F_OK) == 0)) { /* named, nothing written */
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        pelab_fail("%s (does not name llama.cpp, or %s was written)", why, path);
    }
    return rc;
}

static void refusals(void) {
    /* besides what every RoPE-only export refuses: every other scheme, and llama.cpp's own limits */
    static const SpecNeedle no[] = {
        {"nope", "RoPE only"},       {"t5", "RoPE only"},   {"learned", "RoPE only"},
        {"sinusoidal", "RoPE only"}, {"kerple", "RoPE only"}, {"fire", "RoPE only"},
        {"cope", "RoPE only"},       {"fox", "RoPE only"},  {"pope", "RoPE only"},
        {"fope", "RoPE only"},       {"rope+ssmax", "length-scaled attention"},
        {"rope:scale=dynamic-ntk:2", "follows the current length"},
        {"rope:scale=dynatan", "not position x frequency"},
    };
    check_export_refusals(ROPE_TARGET_REFUSED, N_ROPE_TARGET_REFUSED, "gguf", write_gguf);
    check_export_refusals(no, sizeof no / sizeof no[0], "gguf", write_gguf);
    Model m;
    char path[512], note[700];
    tiny_model(&m, "rope", 2, 1, 1);
    m.cfg.sliding_window = 4;
    CHECK(gguf_llama_write(path_in_tmp(path, sizeof path, "sw.gguf"), &m, NULL, GGML_TYPE_F32, note, sizeof note) != 0 &&
              strstr(pelab_errmsg, "sliding_window 4"), "a sliding window refused: %s", pelab_errmsg);
    m.cfg.sliding_window = 0;
    PosExtend e;
    int set = extend_parse("selfextend:2:4", &e) == 1 && pos_set_extend(&m.pos, &e) == 0;
    CHECK(set, "set selfextend: %s", pelab_errmsg);
    int rc = gguf_llama_write(path, &m, NULL, GGML_TYPE_F32, note, sizeof note);
    CHECK(rc != 0 && strstr(pelab_errmsg, "extension method selfextend"), "an extension method (selfextend) refused: %s",
          rc ? pelab_errmsg : "written");
    model_free(&m);
    tiny_attn_pattern = "window=4:global";
    if (tiny_model(&m, "rope", 2, 1, 1) == 0) {
        CHECK(gguf_llama_write(path, &m, NULL, GGML_TYPE_F32, note, sizeof note) != 0 && strstr(pelab_errmsg, "--attn-pattern"),
              "a per-layer pattern refused: %s", pelab_errmsg);
        model_free(&m);
    }
    tiny_attn_pattern = NULL;
    uint32_t type;
    CHECK(gguf_weight_type_parse("q4_0", &type) != 0 && strstr(pelab_errmsg, "f32, f16, bf16 or q8_0"),
          "--gguf-type q4_0 refused (read only): %s", pelab_errmsg);
}

/* ---- tokenizers ---- */

static void put_token(StrBuf *b, const char *piece, float score) {
    int32_t n = (int32_t)strlen(piece);
    sb_put(b, (const char *)&score, 4);
    sb_put(b, (const char *)&n, 4);
    sb_put(b, piece, (size_t)n);
}

/* <unk> <s> </s>, the 256 byte tokens, " ", "a", " a", "ab", "b". Every character of a piece is a
 * piece itself, as in SentencePiece's vocabularies: run.c's byte fallback ids never merge, where
 * SentencePiece merges characters and falls back to bytes only at the end (llama.cpp does), so the
 * two agree only on such vocabularies */
static void llama2c_image(StrBuf *b) {
    int32_t max_len = 6;
    sb_put(b, (const char *)&max_len, 4);
    put_token(b, "<unk>", 0), put_token(b, "\n<s>\n", 0), put_token(b, "\n</s>\n", 0);
    for (int i = 0; i < 256; i++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", i);
        put_token(b, piece, 0);
    }
    put_token(b, " ", -1), put_token(b, "a", -2), put_token(b, " a", -3), put_token(b, "ab", -4), put_token(b, "b", -5);
}

/* export a model of vocab_size rows with tokenizer t, import: the kind and image back */
static void tok_round_trip(Tokenizer *t, int vocab, const char *want_kind, const char *what) {
    Model a, b;
    char path[512], note[700];
    snprintf(path, sizeof path, "%s/tok-%s.gguf", test_tmpdir(), what);
    GgufTokImage tok;
    shaped_model(&a, "rope", vocab, 32, 32, 2, 1, 0, 9);
    if (gguf_llama_write(path, &a, t, GGML_TYPE_F32, note, sizeof note) != 0 || gguf_llama_read(path, PRECISION_FP32, &b, &tok) != 0) {
        CHECK(0, "%s: %s", what, pelab_errmsg);
        model_free(&a);
        return;
    }
    int same = want_kind ? tok.kind && !strcmp(tok.kind, want_kind) &&
                               (t->image ? tok.len == t->image_len && !memcmp(tok.image, t->image, tok.len) : !tok.image)
                         : !tok.kind;
    CHECK(same, "%s: tokenizer %s back%s (got %s; %s; export: %s)", what, want_kind ? want_kind : "none",
          want_kind && t->image ? " byte for byte" : "", tok.kind ? tok.kind : "none", tok.note, note);
    free(tok.image);
    model_free(&a), model_free(&b);
}

static void tokenizers(void) {
    StrBuf img = {0};
    llama2c_image(&img);
    Tokenizer l2c, bpe, byte, hf;
    CHECK(tokenizer_from_image(&l2c, "llama2c", (unsigned char *)img.s, img.len, "l2c", 0) == 0, "llama2c: %s", pelab_errmsg);
    tok_round_trip(&l2c, l2c.vocab_size, "llama2c", "llama2c");
    tok_round_trip(&l2c, l2c.vocab_size + 1, NULL, "llama2c-other-size"); /* no tokenizer written */
    /* the GGUF side: U+2581 for spaces, token types, BOS */
    {
        char path[512];
        size_t len;
        unsigned char *f = image_of(path_in_tmp(path, sizeof path, "tok-llama2c.gguf"), &len);
        GgufFile g;
        const GgufKv *tt = NULL;
        if (f && gguf_parse(&g, f, len, path) == 0) {
            CHECK(gguf_str_is(&g, "tokenizer.ggml.model", "llama") && memmem(f, len, "\x04\0\0\0\0\0\0\0\xe2\x96\x81" "a", 12) &&
                      gguf_get_array(&g, "tokenizer.ggml.token_type", GGUF_I32, &tt) == 1 && gguf_array_num(tt, 0) == 2 &&
                      gguf_array_num(tt, 1) == 3 && gguf_array_num(tt, 3 + 'A') == 6 && gguf_array_num(tt, 260) == 1,
                  "llama: \" a\" as U+2581 a; types unknown, control, byte <0x41>, normal");
            gguf_free(&g);
        } else CHECK(0, "parse the llama tokenizer file: %s", pelab_errmsg);
        free(f);
    }
    const char *text = "the cat and the hat and the bat sat on the mat; the cat ate the rat. ";
    StrBuf corpus = {0};
    for (int i = 0; i < 40; i++) sb_puts(&corpus, text);
    tokenizer_init_byte(&bpe);
    CHECK(bpe_train(&bpe.bpe, (const unsigned char *)corpus.s, corpus.len, 300) == 0, "train a BPE");
    unsigned char *bimg;
    size_t blen;
    bpe_serialize(&bpe.bpe, &bimg, &blen);
    bpe_free(&bpe.bpe);
    CHECK(tokenizer_from_image(&bpe, "bpe", bimg, blen, "bpe", 0) == 0, "bpe: %s", pelab_errmsg);
    tok_round_trip(&bpe, bpe.vocab_size, "bpe", "bpe");
    tokenizer_init_byte(&byte);
    tok_round_trip(&byte, 256, "byte", "byte");
    StrBuf json = {0};
    CHECK(hf_tok_json_from_llama2c(&l2c.l2c, &json, "l2c") == 0 &&
              tokenizer_from_image(&hf, "hf", (unsigned char *)json.s, json.len, "hf", 0) == 0, "hf: %s", pelab_errmsg);
    tok_round_trip(&hf, hf.vocab_size, "hf", "hf");
    tokenizer_free(&l2c), tokenizer_free(&bpe), tokenizer_free(&hf);
    free(bimg);
    sb_free(&img), sb_free(&corpus), sb_free(&json);
}

/* ---- hostile files ---- */

typedef struct {
    StrBuf b;
} Img;

static void u32(Img *m, uint32_t v) { sb_put(&m->b, (const char *)&v, 4); }
static void u64(Img *m, uint64_t v) { sb_put(&m->b, (const char *)&v, 8); }
static void str(Img *m, const char *s) { u64(m, strlen(s)), sb_put(&m->b, s, strlen(s)); }
static void head(Img *m, uint64_t n_tensors, uint64_t n_kv) { sb_put(&m->b, "GGUF", 4), u32(m, 3), u64(m, n_tensors), u64(m, n_kv); }
static void tensor(Img *m, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, uint64_t offset) {
    str(m, name), u32(m, n_dims);
    for (uint32_t d = 0; d < n_dims; d++) u64(m, ne[d]);
    u32(m, type), u64(m, offset);
}
static void pad_data(Img *m, size_t bytes) {
    while (m->b.len % 32) sb_put(&m->b, "", 1);
    for (size_t i = 0; i < bytes; i++) sb_put(&m->b, "\x01", 1);
}

static void refused_image(Img *m, const char *needle, const char *what) {
    GgufFile g;
    int rc = gguf_parse(&g, (const unsigned char *)m->b.s, m->b.len, "hostile.gguf");
    CHECK(rc != 0 && strstr(pelab_errmsg, needle) && strstr(pelab_errmsg, "hostile.gguf") && one_line(pelab_errmsg),
          "%s: refused naming '%s' (got %s)", what, needle, rc ? pelab_errmsg : "parsed");
    if (rc == 0) gguf_free(&g);
    sb_free(&m->b);
}

static void hostile_format(void) {
    Img m = {0};
    sb_put(&m.b, "GGUF\3\0\0\0\0\0", 10);
    refused_image(&m, "tensor count", "a header cut short");
    sb_put(&m.b, "GGML", 4), u32(&m, 3), u64(&m, 0), u64(&m, 0);
    refused_image(&m, "expected \"GGUF\"", "another magic");
    sb_put(&m.b, "GGUF", 4), u32(&m, 1), u64(&m, 0), u64(&m, 0);
    refused_image(&m, "version 1", "version 1");
    head(&m, 0, (uint64_t)1 << 60);
    refused_image(&m, "more than the file can hold", "2^60 metadata pairs");
    head(&m, (uint64_t)1 << 62, 0);
    refused_image(&m, "more than the file can hold", "2^62 tensors");
    head(&m, 0, 1), u64(&m, (uint64_t)1 << 40), sb_put(&m.b, "key and then some more bytes", 28);
    refused_image(&m, "length 1099511627776", "a 2^40-byte key");
    head(&m, 0, 1), str(&m, "k"), u32(&m, GGUF_STRING), u64(&m, UINT64_MAX);
    refused_image(&m, "length 18446744073709551615", "a 2^64 - 1 byte string value");
    head(&m, 0, 1), str(&m, "k"), u32(&m, GGUF_ARRAY), u32(&m, GGUF_U32), u64(&m, (uint64_t)1 << 61), u32(&m, 7);
    refused_image(&m, "past the end", "an array of 2^61 uint32");
    head(&m, 0, 1), str(&m, "k"), u32(&m, GGUF_ARRAY), u32(&m, GGUF_STRING), u64(&m, 3), str(&m, "a");
    refused_image(&m, "past the end", "a string array cut short");
    head(&m, 0, 1), str(&m, "k"), u32(&m, 13), u32(&m, 0);
    refused_image(&m, "value type 13", "an unknown value type");
    head(&m, 0, 1), str(&m, "k"), u32(&m, GGUF_ARRAY), u32(&m, GGUF_ARRAY), u64(&m, 1);
    refused_image(&m, "array of type 9", "an array of arrays");
    head(&m, 0, 1), str(&m, "k"), u32(&m, GGUF_BOOL), sb_put(&m.b, "\2", 1);
    refused_image(&m, "bool value 2", "a bool of 2");
    head(&m, 0, 1), str(&m, "a\nb"), u32(&m, GGUF_U8), sb_put(&m.b, "\2", 1);
    refused_image(&m, "printable ASCII", "a key with a newline");
    head(&m, 0, 2), str(&m, "k"), u32(&m, GGUF_U8), sb_put(&m.b, "\2", 1), str(&m, "k"), u32(&m, GGUF_U8), sb_put(&m.b, "\2", 1);
    refused_image(&m, "appears twice", "a duplicate key");
    head(&m, 0, 1), str(&m, "general.alignment"), u32(&m, GGUF_U32), u32(&m, 24);
    refused_image(&m, "power of two", "alignment 24");
    head(&m, 0, 1), str(&m, "general.alignment"), u32(&m, GGUF_U8), sb_put(&m.b, "\x20", 1);
    refused_image(&m, "general.alignment: a uint8", "alignment as a uint8 (never read as 4 bytes)");

    uint64_t ne[5] = {32, 2, 1, 1, 1};
    char long_name[65]; /* one byte past llama.cpp's GGML_MAX_NAME - 1 = 63 */
    memset(long_name, 'n', 64), long_name[64] = '\0';
    head(&m, 1, 0), tensor(&m, long_name, 1, ne, 0, 0), pad_data(&m, 128);
    refused_image(&m, "at most 63", "a 64-byte tensor name");
    head(&m, 1, 0), tensor(&m, "t", 5, ne, 0, 0), pad_data(&m, 128);
    refused_image(&m, "5 dimensions", "5 dimensions");
    head(&m, 1, 0), tensor(&m, "t", 2, (uint64_t[]){32, 0}, 0, 0), pad_data(&m, 128);
    refused_image(&m, "dimension 1 is 0", "a zero dimension");
    head(&m, 1, 0), tensor(&m, "t", 3, (uint64_t[]){1u << 31, 1u << 31, 1u << 31}, 0, 0), pad_data(&m, 128);
    refused_image(&m, "at most 2^62 elements", "2^93 elements");
    head(&m, 1, 0), tensor(&m, "t", 1, ne, 20, 0), pad_data(&m, 128);
    refused_image(&m, "IQ4_NL", "a type pelab does not read (IQ4_NL)");
    head(&m, 1, 0), tensor(&m, "t", 1, ne, 99, 0), pad_data(&m, 128);
    refused_image(&m, "ggml type 99", "an unknown ggml type");
    head(&m, 1, 0), tensor(&m, "t", 1, (uint64_t[]){16}, GGML_TYPE_Q8_0, 0), pad_data(&m, 128);
    refused_image(&m, "multiple of 32", "Q8_0 rows of 16");
    head(&m, 1, 0), tensor(&m, "t", 1, ne, 0, 4), pad_data(&m, 256);
    refused_image(&m, "not a multiple of the alignment", "an unaligned offset");
    head(&m, 1, 0), tensor(&m, "t", 2, ne, 0, 0), pad_data(&m, 255);
    refused_image(&m, "truncated", "a tensor past the end of the data");
    head(&m, 1, 0), tensor(&m, "t", 2, ne, 0, UINT64_MAX - 31), pad_data(&m, 256);
    refused_image(&m, "of the data section", "an offset near 2^64 (no wrap-around)");
    head(&m, 2, 0), tensor(&m, "t", 2, ne, 0, 0), tensor(&m, "u", 1, ne, 0, 224), pad_data(&m, 512);
    refused_image(&m, "overlap", "overlapping tensors");
    head(&m, 2, 0), tensor(&m, "t", 1, ne, 0, 0), tensor(&m, "t", 1, ne, 0, 128), pad_data(&m, 512);
    refused_image(&m, "tensor t appears twice", "a duplicate tensor name");
    /* the well-formed ones parse */
    head(&m, 2, 1), str(&m, "general.alignment"), u32(&m, GGUF_U32), u32(&m, 64);
    tensor(&m, "t", 2, ne, 0, 0), tensor(&m, "u", 1, ne, GGML_TYPE_Q8_0, 256);
    while (m.b.len % 64) sb_put(&m.b, "", 1);
    for (int i = 0; i < 256 + 34; i++) sb_put(&m.b, "\0", 1);
    GgufFile g;
    CHECK(gguf_parse(&g, (const unsigned char *)m.b.s, m.b.len, "fine.gguf") == 0 && g.alignment == 64 &&
              gguf_find_tensor(&g, "u")->n_bytes == 34, "a well-formed file with alignment 64 parses: %s", pelab_errmsg);
    if (g.kv) gguf_free(&g);
    sb_free(&m.b);
}

/* an exported model file changed in one place, refused by the model reader */
static void hostile_model(void) {
    Model a;
    char path[512], bad[512], note[700];
    shaped_model(&a, "rope", 40, 64, 96, 2, 0, 0, 3);
    CHECK(gguf_llama_write(path_in_tmp(path, sizeof path, "victim.gguf"), &a, NULL, GGML_TYPE_F32, note, sizeof note) == 0,
          "export the victim: %s", pelab_errmsg);
    size_t len;
    unsigned char *orig = image_of(path, &len), *img = malloc(len + 64);
    path_in_tmp(bad, sizeof bad, "bad.gguf");
    static const struct {
        const char *from, *to, *needle;
    } renames[] = {
        {"llama.context_length", "llama.context_lengtx", "llama.context_length: missing"},
        {"llama", "qwen2", "general.architecture \"qwen2\""},
        {"general.architecture", "general.architecturx", "general.architecture missing"},
        {"blk.1.ffn_norm.weight", "blk.7.ffn_norm.weight", "tensor blk.1.ffn_norm.weight: missing"},
        {"output.weight", "outpux.weight", "tensor outpux.weight: not a weight"},
        {"pelab.pos", "pelab.poz", ""}, /* fine: the llama keys alone */
    };
    for (size_t i = 0; i < sizeof renames / sizeof renames[0]; i++) {
        memcpy(img, orig, len);
        Model b;
        GgufTokImage tok;
        int rc = rename_in(img, len, renames[i].from, renames[i].to) == 0 && write_bytes_atomic(bad, img, len) == 0 ?
                 gguf_llama_read(bad, PRECISION_FP32, &b, &tok) : -2;
        if (!renames[i].needle[0]) CHECK(rc == 0, "pelab.pos renamed: read from the llama keys: %s", pelab_errmsg);
        else CHECK(rc == -1 && strstr(pelab_errmsg, renames[i].needle) && strstr(pelab_errmsg, "bad.gguf") && one_line(pelab_errmsg),
                   "%s -> %s: refused naming '%s' (got %s)", renames[i].from, renames[i].to, renames[i].needle,
                   rc == 0 ? "read" : pelab_errmsg);
        if (rc == 0) free(tok.image), model_free(&b);
    }
    GgufFile g;
    if (gguf_parse(&g, orig, len, path) == 0) {
        /* a NaN weight; a q/k/v shape swapped; pelab.pos that disagrees with the llama keys */
        const GgufTensor *t = gguf_find_tensor(&g, "token_embd.weight");
        size_t at = (size_t)(t->data - orig) + 4 * 7;
        memcpy(img, orig, len);
        memcpy(img + at, (float[]){NAN}, 4);
        Model b;
        GgufTokImage tok;
        CHECK(write_bytes_atomic(bad, img, len) == 0 && gguf_llama_read(bad, PRECISION_FP32, &b, &tok) == -1 &&
                  strstr(pelab_errmsg, "token_embd.weight: element 7") && one_line(pelab_errmsg), "a NaN weight refused: %s", pelab_errmsg);
        memcpy(img, orig, len);
        unsigned char pat[64] = "\x15\0\0\0\0\0\0\0blk.0.ffn_down.weight\2\0\0\0";
        unsigned char *info = memmem(img, len, pat, 8 + 21 + 4);
        if (info) { /* {96, 64} -> {64, 96}: the same bytes, another shape */
            uint64_t ne[2];
            memcpy(ne, info + 33, 16);
            uint64_t sw[2] = {ne[1], ne[0]};
            memcpy(info + 33, sw, 16);
        }
        CHECK(info && write_bytes_atomic(bad, img, len) == 0 && gguf_llama_read(bad, PRECISION_FP32, &b, &tok) == -1 &&
                  strstr(pelab_errmsg, "blk.0.ffn_down.weight: 2 dims {64, 96, ...}, expected {96, 64}"),
              "a transposed shape refused: %s", pelab_errmsg);
        memcpy(img, orig, len);
        unsigned char *spec = memmem(img, len, "rope:base=10000", 15);
        if (spec) memcpy(spec, "rope:base=20000", 15);
        CHECK(spec && write_bytes_atomic(bad, img, len) == 0 && gguf_llama_read(bad, PRECISION_FP32, &b, &tok) == -1 &&
                  strstr(pelab_errmsg, "llama.rope.freq_base 10000, but the model computes 20000"),
              "pelab.pos disagreeing with llama.rope.freq_base refused: %s", pelab_errmsg);
        memcpy(img, orig, len);
        spec = memmem(img, len, "rope:base=10000", 15);
        if (spec) memcpy(spec, "alibi          ", 15); /* the rest of the spec becomes alibi's options */
        CHECK(spec && write_bytes_atomic(bad, img, len) == 0 && gguf_llama_read(bad, PRECISION_FP32, &b, &tok) == -1 &&
                  strstr(pelab_errmsg, "computes RoPE only"), "pelab.pos of another scheme refused: %s", pelab_errmsg);
        for (size_t cut = 0; cut < len; cut += len / 7 + 1) { /* every cut refused, never a crash */
            int rc = write_bytes_atomic(bad, orig, cut) == 0 ? gguf_llama_read(bad, PRECISION_FP32, &b, &tok) : 0;
            CHECK(rc == -1 && one_line(pelab_errmsg), "the file cut at byte %zu refused in one line: %s", cut, pelab_errmsg);
        }
        gguf_free(&g);
    }
    free(orig), free(img);
    model_free(&a);
}

/* ---- the commands ---- */

static void commands(void) {
    const char *dir = test_tmpdir();
    static char out[1 << 15], cmd[4096], sample_a[4096];
    snprintf(cmd, sizeof cmd,
             "./pelab train --steps 60 --dim 32 --layers 2 --heads 4 --kv-heads 2 --seq-len 32 --batch 4 --synth-bytes 20000 "
             "--quiet --threads 1 --eval-windows 2 --pos rope:layout=half --untied --out %s/cli.st", dir);
    if (run_pelab(cmd, out, sizeof out) != 0) {
        CHECK(0, "train: %s", out);
        return;
    }
    snprintf(cmd, sizeof cmd, "./pelab export %s/cli.st --gguf %s/cli.gguf && ./pelab import --gguf %s/cli.gguf --out %s/cli-back.st",
             dir, dir, dir, dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "GGUF, llama architecture, matrices f32") && strstr(out, "layout=half") &&
              strstr(out, "tokenizer: bytes"), "export --gguf, import --gguf: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/cli.st --temp 0 -n 40 --prompt 'Once upon' 2>/dev/null", dir);
    run_pelab(cmd, sample_a, sizeof sample_a);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/cli-back.st --temp 0 -n 40 --prompt 'Once upon' 2>/dev/null", dir);
    run_pelab(cmd, out, sizeof out);
    CHECK(strlen(sample_a) > 20 && !strcmp(out, sample_a), "the same greedy text after export and import (%s)", sample_a);
    snprintf(cmd, sizeof cmd, "./pelab export %s/cli.st --gguf %s/cli-q8.gguf --gguf-type q8_0 && "
             "./pelab import --gguf %s/cli-q8.gguf --out %s/cli-q8.st", dir, dir, dir, dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, "matrices q8_0"), "export --gguf-type q8_0: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab export %s/cli.st --gguf %s/x.gguf --gguf-type q5_k", dir, dir);
    expect_pelab_error(cmd, "--gguf-type q5_k: expected f32, f16, bf16 or q8_0");
    snprintf(cmd, sizeof cmd, "./pelab export %s/cli.st --hf %s/x --gguf-type f16", dir, dir);
    expect_pelab_error(cmd, "--gguf-type goes with --gguf");
    snprintf(cmd, sizeof cmd, "./pelab import --gguf %s --out %s/x.st", dir, dir);
    expect_pelab_error(cmd, "not a regular file");
    snprintf(cmd, sizeof cmd, "./pelab import --gguf %s/cli.st --out %s/x.st", dir, dir);
    expect_pelab_error(cmd, "expected \"GGUF\" (not a GGUF file)");
    Model m;
    tiny_model(&m, "alibi", 2, 1, 1);
    snprintf(cmd, sizeof cmd, "%s/alibi.st", dir);
    CHECK(checkpoint_save(cmd, &m, NULL, NULL, NULL) == 0, "save alibi");
    model_free(&m);
    snprintf(cmd, sizeof cmd, "./pelab export %s/alibi.st --gguf %s/alibi.gguf", dir, dir);
    expect_pelab_error(cmd, "position scheme alibi: llama.cpp's llama architecture computes RoPE only");
}

/* ---- llama.cpp itself (node-llama-cpp's prebuilt binaries) ---- */

static int llamacpp_run(const char *gguf, const int *ids, int n_ids, int n_new, const char *text, JsonDoc *doc) {
    StrBuf cmd = {0};
    static char out[1 << 21];
    sb_printf(&cmd, "node tools/llamacpp_greedy.mjs %s ", gguf);
    for (int i = 0; i < n_ids; i++) sb_printf(&cmd, "%s%d", i ? "," : "", ids[i]);
    sb_printf(&cmd, " %d '%s' 2>&1", n_new, text); /* text: no quote inside */
    FILE *p = popen(sb_str(&cmd), "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    int rc = p ? pclose(p) : -1;
    out[n] = 0;
    sb_free(&cmd);
    if (rc != 0 || json_parse_max(doc, out, n, 1 << 21) != 0) {
        CHECK(0, "llama.cpp on %s: %.300s", gguf, out);
        return -1;
    }
    return 0;
}

/* pelab's probabilities after each of the T prompt ids, then greedy ids[T..T+n_new) */
static void pelab_side(Model *q, int *ids, int T, int n_new, float *probs) {
    int V = q->cfg.vocab_size, pos[128];
    for (int t = 0; t < T + n_new; t++) pos[t] = t;
    model_alloc_train(q, 1, T + n_new);
    model_forward(q, ids, NULL, pos, 1, T);
    for (int t = 0; t < T; t++) {
        const float *l = q->acts.logits + (size_t)t * V;
        float mx = l[0];
        double sum = 0;
        for (int v = 0; v < V; v++) mx = fmaxf(mx, l[v]);
        for (int v = 0; v < V; v++) sum += exp((double)l[v] - mx);
        for (int v = 0; v < V; v++) probs[(size_t)t * V + v] = (float)(exp((double)l[v] - mx) / sum);
    }
    for (int t = T; t < T + n_new; t++) { /* one full forward per token */
        model_forward(q, ids, NULL, pos, 1, t);
        const float *l = q->acts.logits + (size_t)(t - 1) * V;
        int best = 0;
        for (int v = 1; v < V; v++) best = l[v] > l[best] ? v : best;
        ids[t] = best;
    }
}

/* file path (loaded as q) run by llama.cpp and by pelab: the text's ids as the prompt, greedy
 * tokens, probabilities at every prompt position, llama.cpp's ids and text of the text */
static void compare_with_llamacpp(const char *path, Model *q, const Tokenizer *tk, const char *spec, uint32_t type,
                                  int own_chunks) {
    enum { MAX_PROMPT = 64, NEW = 8 };
    const char *text = "a ab aab ba ab the cat sat on the mat, the bat ate a rat";
    int V = tk->vocab_size;
    size_t n_enc;
    int *enc = tokenizer_encode_prompt(tk, (const unsigned char *)text, strlen(text), 0, &n_enc), ids[MAX_PROMPT + NEW];
    int P = n_enc < MAX_PROMPT ? (int)n_enc : MAX_PROMPT;
    memcpy(ids, enc, sizeof(int) * (size_t)P);
    float *probs = malloc(sizeof(float) * (size_t)P * (size_t)V);
    pelab_side(q, ids, P, NEW, probs);
    JsonDoc doc;
    const char *what = ggml_type_name(type), *tname = tokenizer_kind_name(tk);
    if (llamacpp_run(path, ids, P, NEW, text, &doc) == 0) {
        const JsonNode *g = json_get(doc.root, "greedy"), *p = json_get(doc.root, "probs");
        int same = g && g->n_children == NEW;
        for (int t = 0; same && t < NEW; t++) same = json_at(g, (size_t)t)->number == ids[P + t];
        double worst = 0;
        for (int t = 0; p && t < P && (size_t)t < p->n_children; t++)
            for (int v = 0; v < V; v++) {
                const JsonNode *e = json_at(json_at(p, (size_t)t), (size_t)v);
                double d = e ? fabs(e->number - probs[(size_t)t * V + v]) : 1;
                worst = d > worst ? d : worst;
            }
        /* float32 files: the same numbers up to summation order; F16, BF16 and quantized files also
         * round llama.cpp's activations in its products, pelab's stay float32 */
        double tol = type == GGML_TYPE_F32 ? 2e-5 : 2e-2;
        fprintf(stderr, "  test_gguf: llama.cpp vs pelab, %s %s %s, %d positions: greedy %s, max probability diff %.3g\n", spec,
                what, tname, P, same ? "equal" : "DIFFERENT", worst);
        if (type == GGML_TYPE_F32) CHECK(same, "%s %s: llama.cpp's greedy tokens are pelab's", spec, what);
        CHECK(p && p->n_children == (size_t)P && worst < tol, "%s %s %s: llama.cpp's probabilities at %d positions within %g "
              "of pelab's (max diff %.3g)", spec, what, tname, P, tol, worst);
        int skip = tk->bos >= 0, same_ids = 1;
        const JsonNode *lt = json_get(doc.root, "tokens"), *lx = json_get(doc.root, "text");
        if (!own_chunks) { /* pelab's BPE cuts text by its own rule, llama.cpp by its regex */
            same_ids = lt && lt->n_children == n_enc - (size_t)skip;
            for (size_t i = 0; same_ids && i + skip < n_enc; i++) same_ids = json_at(lt, i)->number == enc[i + skip];
            CHECK(same_ids, "%s: llama.cpp tokenizes \"%s\" as pelab does", tname, text);
        }
        CHECK(lx && lx->type == JSON_STRING && !strcmp(lx->str + (lx->str[0] == ' ' && text[0] != ' '), text),
              "%s: llama.cpp's text of pelab's ids is the text (%s)", tname, lx ? lx->str : "none");
        json_free(&doc);
    }
    free(enc), free(probs);
}

static void llamacpp(void) {
    const char *where = getenv("PELAB_LLAMACPP_DIR");
    char probe[600];
    snprintf(probe, sizeof probe, "%s/node_modules/node-llama-cpp/package.json", where ? where : "");
    if (!where || access(probe, F_OK) != 0 || system("node --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "  test_gguf: no node with node-llama-cpp (PELAB_LLAMACPP_DIR unset or without it): the llama.cpp "
                        "cross-check is skipped\n");
        return;
    }
    /* tokenizers: byte, llama2.c's (SentencePiece in llama.cpp), pelab's BPE */
    Tokenizer toks[3];
    StrBuf img = {0};
    llama2c_image(&img);
    tokenizer_init_byte(&toks[0]);
    tokenizer_from_image(&toks[1], "llama2c", (unsigned char *)img.s, img.len, "l2c", 0);
    tokenizer_init_byte(&toks[2]);
    StrBuf corpus = {0};
    for (int i = 0; i < 30; i++) sb_puts(&corpus, "the cat and the hat sat on the mat, the bat ate a rat. ");
    bpe_train(&toks[2].bpe, (const unsigned char *)corpus.s, corpus.len, 300);
    toks[2].kind = TOK_BPE, toks[2].vocab_size = toks[2].bpe.vocab_size;
    static const struct {
        const char *spec;
        int kv, tied, bias, tok;
        uint32_t type;
    } cases[] = {
        {"rope", 2, 1, 0, 0, GGML_TYPE_F32},
        {"rope:layout=half", 4, 0, 0, 1, GGML_TYPE_F32},
        {"rope:layout=half,base=500000", 2, 1, 1, 2, GGML_TYPE_F32},
        {"rope:scale=pi:2", 2, 1, 0, 0, GGML_TYPE_F32},
        {"rope:layout=half,scale=yarn:4", 1, 0, 0, 0, GGML_TYPE_F32},
        {"rope:scale=llama3:8,orig_len=8", 2, 1, 0, 0, GGML_TYPE_F32},
        {"rope:scale=ntk:3", 2, 0, 0, 0, GGML_TYPE_F32},
        {"rope", 2, 1, 0, 0, GGML_TYPE_Q8_0},
        {"rope:layout=half", 2, 0, 0, 0, GGML_TYPE_F16},
        {"rope", 2, 1, 0, 0, GGML_TYPE_BF16},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const Tokenizer *tk = &toks[cases[c].tok];
        int V = tk->vocab_size;
        Model a, q;
        char path[512], note[700];
        snprintf(path, sizeof path, "%s/llamacpp-%zu.gguf", test_tmpdir(), c);
        GgufTokImage tok;
        if (shaped_model(&a, cases[c].spec, V, 64, 96, cases[c].kv, cases[c].tied, cases[c].bias, 21 + c) != 0 ||
            gguf_llama_write(path, &a, tk, cases[c].type, note, sizeof note) != 0 || gguf_llama_read(path, PRECISION_FP32, &q, &tok) != 0) {
            CHECK(0, "%s: %s", cases[c].spec, pelab_errmsg);
            continue;
        }
        compare_with_llamacpp(path, &q, tk, cases[c].spec, cases[c].type, cases[c].tok == 2);
        free(tok.image);
        model_free(&a), model_free(&q);
    }
    /* a file of llama.cpp's own writer and quantizer (tools/llamacpp_quantize.py): pelab imports its
     * Q4_0 blocks and computes what llama.cpp computes from them */
    Model a, q;
    char f32[512], q4[512], cmd[1400], note[700];
    GgufTokImage tok;
    snprintf(f32, sizeof f32, "%s/llamacpp-q4-src.gguf", test_tmpdir());
    snprintf(q4, sizeof q4, "%s/llamacpp-q4.gguf", test_tmpdir());
    snprintf(cmd, sizeof cmd, "python3 tools/llamacpp_quantize.py %s %s q4_0 >/dev/null 2>&1", f32, q4);
    if (shaped_model(&a, "rope:layout=half,scale=yarn:4", 256, 64, 96, 2, 0, 0, 40) == 0 &&
        gguf_llama_write(f32, &a, &toks[0], GGML_TYPE_F32, note, sizeof note) == 0 && system(cmd) == 0) {
        size_t len;
        unsigned char *img = image_of(q4, &len);
        GgufFile g;
        int is_q4 = img && gguf_parse(&g, img, len, q4) == 0;
        CHECK(is_q4 && gguf_find_tensor(&g, "blk.0.attn_q.weight")->type == GGML_TYPE_Q4_0 &&
                  gguf_find_tensor(&g, "token_embd.weight")->type == GGML_TYPE_Q4_0,
              "llama.cpp's quantizer wrote Q4_0 matrices: %s", pelab_errmsg);
        if (is_q4) gguf_free(&g);
        free(img);
        CHECK(gguf_llama_read(q4, PRECISION_FP32, &q, &tok) == 0, "import llama.cpp's Q4_0 file: %s", pelab_errmsg);
        if (q.params_mem) {
            compare_with_llamacpp(q4, &q, &toks[0], "rope:layout=half,scale=yarn:4 (llama.cpp's quantizer)", GGML_TYPE_Q4_0, 0);
            free(tok.image);
            model_free(&q);
        }
    } else {
        fprintf(stderr, "  test_gguf: no python3 or llama.cpp's quantizer (tools/llamacpp_quantize.py): the Q4_0 file "
                        "written by llama.cpp is skipped\n");
    }
    model_free(&a);
    for (int i = 0; i < 3; i++) tokenizer_free(&toks[i]);
    sb_free(&img), sb_free(&corpus);
}

void test_gguf(void) {
    types();
    round_trips();
    rope_metadata();
    refusals();
    tokenizers();
    hostile_format();
    hostile_model();
    commands();
    llamacpp();
}
