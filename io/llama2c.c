/* llama2c.c: llama2.c's legacy model file <-> a pelab rope model (see llama2c.h). */
#include "llama2c.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"

enum { HEADER_INTS = 7, MAX_DIM = 1 << 20 };
#define LLAMA2C_POS "rope"      /* interleaved pairs, base 10000: run.c's rotation */
#define LLAMA2C_NORM_EPS 1e-5f  /* run.c's rmsnorm */

/* the tensors in file order, each copied whole (the classifier comes last, after freq_cis) */
static const int file_order[] = {T_TOK_EMB, T_ATTN_NORM, T_WQ, T_WK, T_WV, T_WO, T_MLP_NORM, T_W1, T_W2, T_W3,
                                 T_FINAL_NORM};
enum { N_FILE_ORDER = sizeof file_order / sizeof file_order[0] };

static size_t freq_cis_floats(const ModelConfig *c) {
    return (size_t)c->seq_len * (size_t)(c->dim / c->n_heads) / 2;
}

/* float count the file must hold after the header */
static size_t expected_floats(const Model *m) {
    size_t n = 2 * freq_cis_floats(&m->cfg);
    for (int i = 0; i < N_FILE_ORDER; i++) n += m->tensors[file_order[i]].numel;
    if (!m->cfg.tied) n += m->tensors[T_LM_HEAD].numel;
    return n;
}

static int header_config(const int32_t *h, const char *name, ModelConfig *c) {
    static const char *const field[HEADER_INTS] = {"dim", "hidden_dim", "n_layers", "n_heads",
                                                   "n_kv_heads", "vocab_size", "seq_len"};
    for (int i = 0; i < HEADER_INTS; i++) {
        long v = i == 5 ? labs((long)h[i]) : h[i];
        if (v <= 0 || v > MAX_DIM)
            return pelab_fail("%s: header field %s = %d: expected 1..%d%s", name, field[i], h[i], MAX_DIM,
                              i == 5 ? " in absolute value (negative: unshared classifier)" : "");
    }
    memset(c, 0, sizeof *c);
    c->dim = h[0], c->hidden_dim = h[1], c->n_layers = h[2], c->n_heads = h[3], c->n_kv_heads = h[4];
    c->vocab_size = h[5] < 0 ? -h[5] : h[5];
    c->tied = h[5] > 0;
    c->seq_len = h[6];
    c->norm_eps = LLAMA2C_NORM_EPS;
    if (c->dim % c->n_heads != 0)
        return pelab_fail("%s: header: dim %d is not a multiple of n_heads %d", name, c->dim, c->n_heads);
    if ((c->dim / c->n_heads) % 2 != 0)
        return pelab_fail("%s: header: head size %d is odd (RoPE rotates pairs)", name, c->dim / c->n_heads);
    if (c->n_kv_heads > c->n_heads || c->n_heads % c->n_kv_heads != 0)
        return pelab_fail("%s: header: n_heads %d is not a multiple of n_kv_heads %d", name, c->n_heads,
                          c->n_kv_heads);
    if (config_validate(c) != 0) {
        char why[sizeof pelab_errmsg]; /* pelab_errmsg cannot be both the message and an argument */
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: header: %s", name, why);
    }
    return 0;
}

/* the llama2.c field a tensor is ("wq"), for messages */
static const char *file_field(int t) {
    switch (t) {
    case T_TOK_EMB: return "token_embedding_table";
    case T_ATTN_NORM: return "rms_att_weight";
    case T_WQ: return "wq";
    case T_WK: return "wk";
    case T_WV: return "wv";
    case T_WO: return "wo";
    case T_MLP_NORM: return "rms_ffn_weight";
    case T_W1: return "w1";
    case T_W2: return "w2";
    case T_W3: return "w3";
    case T_FINAL_NORM: return "rms_final_weight";
    default: return "wcls";
    }
}

/* tensor t's values every one finite: -1 naming the llama2.c field, the layer of a stacked one, the element */
static int check_finite(const Model *m, int t, const char *name) {
    const TensorInfo *info = &m->tensors[t];
    const float *x = m->params_mem + info->offset;
    size_t per_layer = strncmp(info->name, "layers.", 7) ? 0 : info->numel / (size_t)m->cfg.n_layers; /* stacked */
    for (size_t e = 0; e < info->numel; e++) {
        if (isfinite(x[e])) continue;
        if (per_layer)
            return pelab_fail("%s: tensor %s (pelab's %s), layer %zu, element %zu is %g: expected a finite number", name,
                              file_field(t), info->name, e / per_layer, e % per_layer, x[e]);
        return pelab_fail("%s: tensor %s (pelab's %s), element %zu is %g: expected a finite number", name, file_field(t),
                          info->name, e, x[e]);
    }
    return 0;
}

int llama2c_parse_model(const unsigned char *buf, size_t len, const char *name, Model *m) {
    memset(m, 0, sizeof *m);
    if (len < HEADER_INTS * 4)
        return pelab_fail("%s: %zu bytes, too short for the 28-byte llama2.c header (truncated?)", name, len);
    int32_t h[HEADER_INTS];
    memcpy(h, buf, sizeof h);
    ModelConfig cfg;
    if (header_config(h, name, &cfg) != 0) return -1;
    /* the header's config fixes the file's exact size: checked before a weight is allocated or read,
     * so a forged header cannot demand a huge model, nor a huge file be read */
    if (model_layout(m, &cfg, LLAMA2C_POS) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        model_free(m);
        return pelab_fail("%s: %s", name, why);
    }
    size_t want = HEADER_INTS * 4 + expected_floats(m) * sizeof(float);
    if (len != want) {
        model_free(m);
        return pelab_fail("%s: %zu bytes, but its header (dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab "
                          "%d%s, seq_len %d) needs exactly %zu (legacy llama2.c format with freq_cis tables)",
                          name, len, cfg.dim, cfg.hidden_dim, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads,
                          cfg.vocab_size, cfg.tied ? "" : " unshared", cfg.seq_len, want);
    }
    if (model_alloc_params(m) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: %s", name, why);
    }
    const unsigned char *p = buf + HEADER_INTS * 4;
    for (int i = 0; i < N_FILE_ORDER + 1; i++) {
        if (i == N_FILE_ORDER) {
            p += 2 * freq_cis_floats(&cfg) * sizeof(float); /* the legacy RoPE tables: recomputed */
            if (cfg.tied) break;
        }
        int t = i < N_FILE_ORDER ? file_order[i] : T_LM_HEAD;
        const TensorInfo *info = &m->tensors[t];
        memcpy(m->params_mem + info->offset, p, info->numel * sizeof(float));
        p += info->numel * sizeof(float);
        if (check_finite(m, t, name) != 0) { /* the message first: model_free clears the names */
            model_free(m);
            return -1;
        }
    }
    return 0;
}

int llama2c_read_model(const char *path, Model *m) {
    MappedFile f;
    memset(m, 0, sizeof *m);
    if (map_file(path, &f) != 0) return -1;
    int rc = llama2c_parse_model(f.data ? f.data : (const unsigned char *)"", f.len, path, m);
    unmap_file(&f);
    return rc;
}

int llama2c_check_exportable(const Model *m, const char *name) {
    PosCtx ref;
    const ModelConfig *c = &m->cfg;
    if (c->pattern.n)
        return pelab_fail("%s: a per-layer attention pattern (--attn-pattern): llama2.c's runner attends to the whole "
                          "context in every layer", name);
    if (pos_init(&ref, LLAMA2C_POS, c->dim, c->n_heads, c->n_kv_heads, c->n_layers, c->seq_len) != 0) return -1;
    char want[512], have[512];
    pos_spec(&ref, want, sizeof want);
    pos_spec(&m->pos, have, sizeof have);
    pos_free(&ref);
    /* without a scaling rule orig_len changes nothing (a fine-tune at a new length keeps the
     * original one): compare the specs without it */
    char *cut_want = strstr(want, ",orig_len="), *cut_have = strstr(have, ",orig_len=");
    if (cut_want && cut_have && strstr(have, "scale=none")) /* only the option: a modifier or +nope@ after it stays */
        for (char *cut[2] = {cut_want, cut_have}, **c = cut; c < cut + 2; c++)
            memmove(*c, *c + 1 + strcspn(*c + 1, ",+"), strlen(*c + 1 + strcspn(*c + 1, ",+")) + 1);
    if (strcmp(want, have) != 0)
        return pelab_fail("%s: position scheme %s: llama2.c's runner computes only %s (RoPE, interleaved pairs, "
                          "base 10000, no scaling rule)",
                          name, have, want);
    if (c->qkv_bias) return pelab_fail("%s: q/k/v biases (qkv_bias): llama2.c's layers have none", name);
    if (c->norm_eps != LLAMA2C_NORM_EPS)
        return pelab_fail("%s: norm_eps %g: llama2.c's runner uses 1e-5", name, c->norm_eps);
    return 0;
}

static int write_model_body(FILE *f, const void *ctx) {
    const Model *m = ctx;
    const ModelConfig *c = &m->cfg;
    int32_t h[HEADER_INTS] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
                              c->tied ? c->vocab_size : -c->vocab_size, c->seq_len};
    if (write_all(f, h, sizeof h) != 0) return -1;
    for (int i = 0; i < N_FILE_ORDER; i++) {
        const TensorInfo *t = &m->tensors[file_order[i]];
        if (write_all(f, m->params_mem + t->offset, t->numel * sizeof(float)) != 0) return -1;
    }
    /* freq_cis_real then freq_cis_imag, [seq_len, hd/2], as llama2.c's old export wrote them */
    int hd = c->dim / c->n_heads, half = hd / 2;
    float *table = xmalloc(sizeof(float) * freq_cis_floats(c));
    for (int part = 0; part < 2; part++) {
        for (int pos = 0; pos < c->seq_len; pos++)
            for (int i = 0; i < half; i++) {
                /* float arithmetic as llama2.c's export did it (in PyTorch; its cos/sin differ from
                 * glibc's in the last bit for ~10% of entries, which no runner reads) */
                float freq = 1.0f / powf(10000.0f, (float)(2 * i) / (float)hd), angle = (float)pos * freq;
                table[(size_t)pos * half + i] = part == 0 ? cosf(angle) : sinf(angle);
            }
        if (write_all(f, table, sizeof(float) * freq_cis_floats(c)) != 0) {
            free(table);
            return -1;
        }
    }
    free(table);
    if (!c->tied) {
        const TensorInfo *t = &m->tensors[T_LM_HEAD];
        if (write_all(f, m->params_mem + t->offset, t->numel * sizeof(float)) != 0) return -1;
    }
    return 0;
}

int llama2c_write_model(const char *path, const Model *m) {
    if (llama2c_check_exportable(m, path) != 0) return -1;
    return write_file_atomic(path, write_model_body, m);
}
