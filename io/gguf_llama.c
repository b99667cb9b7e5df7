/* gguf_llama.c: a pelab RoPE model <-> a GGUF file of llama.cpp's llama architecture (see
 * gguf_llama.h). */
#include "gguf_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "gguf.h"
#include "gguf_quant.h"
#include "gguf_rope.h"
#include "rope_target.h"

#define RUNNER "llama.cpp's llama architecture"

/* pelab tensor and its GGUF name ("%d": the layer), in the order they are written */
static const struct {
    int t;
    const char *name;
} TENSOR_MAP[] = {
    {T_TOK_EMB, "token_embd.weight"},        {T_FINAL_NORM, "output_norm.weight"},
    {T_LM_HEAD, "output.weight"},            {T_ATTN_NORM, "blk.%d.attn_norm.weight"},
    {T_WQ, "blk.%d.attn_q.weight"},          {T_WK, "blk.%d.attn_k.weight"},
    {T_WV, "blk.%d.attn_v.weight"},          {T_BQ, "blk.%d.attn_q.bias"},
    {T_BK, "blk.%d.attn_k.bias"},            {T_BV, "blk.%d.attn_v.bias"},
    {T_WO, "blk.%d.attn_output.weight"},     {T_MLP_NORM, "blk.%d.ffn_norm.weight"},
    {T_W1, "blk.%d.ffn_gate.weight"},        {T_W3, "blk.%d.ffn_up.weight"},
    {T_W2, "blk.%d.ffn_down.weight"},
};
enum { N_MAP = sizeof TENSOR_MAP / sizeof TENSOR_MAP[0] };

/* one GGUF tensor of m: entry i of the map at layer l */
typedef struct {
    char name[GGUF_MAX_NAME];
    uint32_t n_dims;
    uint64_t ne[2];
    size_t numel;
    float *data;     /* in m's parameter block; NULL for a weight a bf16-only model holds in bf16 alone */
    bf16 *data16;    /* in a bf16-only model's params_bf16 (every tensor), else NULL */
    int qk_heads;    /* heads of a q or k tensor (its rows rotate), else 0 */
} Slot;

/* the slots of m in write order; *n set; the caller frees the array */
static Slot *model_slots(const Model *m, int *n) {
    const ModelConfig *c = &m->cfg;
    Slot *s = xcalloc((size_t)N_MAP * (size_t)(c->n_layers + 1), sizeof *s);
    *n = 0;
    for (int layer = -1; layer < c->n_layers; layer++)
        for (int i = 0; i < N_MAP; i++) {
            const TensorInfo *t = &m->tensors[TENSOR_MAP[i].t];
            int stacked = strstr(TENSOR_MAP[i].name, "%d") != NULL;
            if ((stacked != (layer >= 0)) || t->numel == 0 || (TENSOR_MAP[i].t == T_LM_HEAD && c->tied)) continue;
            Slot *e = &s[(*n)++];
            snprintf(e->name, sizeof e->name, TENSOR_MAP[i].name, layer);
            e->n_dims = (uint32_t)(t->ndim - stacked);
            for (uint32_t d = 0; d < e->n_dims; d++) e->ne[d] = (uint64_t)t->shape[t->ndim - 1 - (int)d]; /* innermost first */
            e->numel = t->numel / (size_t)(stacked ? c->n_layers : 1);
            /* no block yet (model_layout): shapes only */
            size_t at = t->offset + (size_t)(stacked ? layer : 0) * e->numel;
            int only16 = m->bf16_only && model_weight_in_bf16_only(TENSOR_MAP[i].t);
            e->data = m->params_mem && !only16 ? m->params_mem + at : NULL;
            e->data16 = m->bf16_only ? m->params_bf16 + at : NULL;
            int q = TENSOR_MAP[i].t == T_WQ || TENSOR_MAP[i].t == T_BQ, k = TENSOR_MAP[i].t == T_WK || TENSOR_MAP[i].t == T_BK;
            e->qk_heads = q ? c->n_heads : k ? c->n_kv_heads : 0;
        }
    return s;
}

int gguf_weight_type_parse(const char *s, uint32_t *type) {
    static const struct {
        const char *name;
        uint32_t type;
    } t[] = {{"f32", GGML_TYPE_F32}, {"f16", GGML_TYPE_F16}, {"bf16", GGML_TYPE_BF16}, {"q8_0", GGML_TYPE_Q8_0}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(s, t[i].name)) return *type = t[i].type, 0;
    return pelab_fail("--gguf-type %.40s: expected f32, f16, bf16 or q8_0", s);
}

int gguf_check_exportable(const Model *m, const char *name) {
    if (m->cfg.pattern.n) {
        char spec[PATTERN_SPEC_MAX + 1];
        pattern_spec(&m->cfg.pattern, spec, sizeof spec);
        return pelab_fail("%s: --attn-pattern %s: %s has one attention for every layer", name, spec, RUNNER);
    }
    if (m->cfg.sliding_window)
        return pelab_fail("%s: sliding_window %d: %s attends to the whole context", name, m->cfg.sliding_window, RUNNER);
    GgufRope r;
    char note[300];
    int rc = gguf_rope_of_model(m, name, &r, note, sizeof note);
    gguf_rope_free(&r);
    return rc;
}

/* llama.cpp's general.file_type (llama.h's LLAMA_FTYPE_*) of the matrices' type */
static uint32_t file_type(uint32_t weight_type) {
    return weight_type == GGML_TYPE_F16 ? 1 : weight_type == GGML_TYPE_Q8_0 ? 7 : weight_type == GGML_TYPE_BF16 ? 32 : 0;
}

static void put_metadata(GgufWriter *w, const Model *m, const GgufRope *r, uint32_t weight_type) {
    const ModelConfig *c = &m->cfg;
    char spec[POS_SPEC_MAX];
    gguf_w_str(w, "general.architecture", "llama");
    gguf_w_str(w, "general.name", "pelab");
    gguf_w_u32(w, "general.file_type", file_type(weight_type));
    gguf_w_u32(w, "llama.context_length", (uint32_t)c->seq_len);
    gguf_w_u32(w, "llama.embedding_length", (uint32_t)c->dim);
    gguf_w_u32(w, "llama.block_count", (uint32_t)c->n_layers);
    gguf_w_u32(w, "llama.feed_forward_length", (uint32_t)c->hidden_dim);
    gguf_w_u32(w, "llama.attention.head_count", (uint32_t)c->n_heads);
    gguf_w_u32(w, "llama.attention.head_count_kv", (uint32_t)c->n_kv_heads);
    gguf_w_f32(w, "llama.attention.layer_norm_rms_epsilon", c->norm_eps);
    gguf_w_u32(w, "llama.vocab_size", (uint32_t)c->vocab_size);
    gguf_rope_put(w, r);
    pos_spec(&m->pos, spec, sizeof spec);
    gguf_w_str(w, "pelab.pos", spec);
}

int gguf_llama_write(const char *path, const Model *m, const Tokenizer *tok, uint32_t weight_type, char *note,
                     size_t note_len) {
    GgufRope r;
    char rope_note[300], tok_note[300] = "no tokenizer: llama.cpp gets ids only";
    if (m->bf16_only) return pelab_fail("%s: the model's weights are held in bf16 only: load it as fp32 to export it", path);
    if (gguf_check_exportable(m, path) != 0 || gguf_rope_of_model(m, path, &r, rope_note, sizeof rope_note) != 0) return -1;
    RopeTarget t;
    rope_target_of(m, path, RUNNER, &t); /* succeeded inside gguf_rope_of_model: only the layout is read */
    GgufWriter w = {0};
    put_metadata(&w, m, &r, weight_type);
    if (tok) gguf_tok_put(&w, tok, m->cfg.vocab_size, tok_note, sizeof tok_note);
    else gguf_w_str(&w, "tokenizer.ggml.model", "none");
    int n, kept_f16 = 0;
    Slot *s = model_slots(m, &n);
    float **copies = xcalloc((size_t)n + 1, sizeof *copies);
    for (int i = 0; i < n; i++) {
        const float *src = s[i].data;
        if (s[i].qk_heads && t.half) { /* llama.cpp rotates interleaved pairs: the rows in that order */
            copies[i] = xmalloc(sizeof(float) * s[i].numel);
            memcpy(copies[i], src, sizeof(float) * s[i].numel);
            rotary_rows_permute(copies[i], s[i].qk_heads, m->head_dim, s[i].n_dims == 1 ? 1 : (int)s[i].ne[0], 0);
            src = copies[i];
        }
        uint32_t type = s[i].n_dims == 1 ? GGML_TYPE_F32 : weight_type;
        if (type == GGML_TYPE_Q8_0 && s[i].ne[0] % GGML_QK) type = GGML_TYPE_F16, kept_f16++;
        if (r.n_divisors && !strncmp(s[i].name, "blk.", 4) && !strncmp(s[i].name + 4, "0.attn_norm", 11)) {
            uint64_t ne = (uint64_t)r.n_divisors; /* the rule's divisors after the model-wide tensors */
            gguf_w_tensor(&w, "rope_freqs.weight", 1, &ne, GGML_TYPE_F32, r.divisor);
        }
        gguf_w_tensor(&w, s[i].name, s[i].n_dims, s[i].ne, type, src);
    }
    int rc = gguf_write(path, &w);
    snprintf(note, note_len, "%s%s%s", tok_note, rope_note[0] ? "; " : "", rope_note);
    if (kept_f16)
        snprintf(note + strlen(note), note_len - strlen(note), "; %d matrices with rows not a multiple of 32 kept F16", kept_f16);
    for (int i = 0; i < n; i++) free(copies[i]);
    free(copies), free(s);
    gguf_w_free(&w);
    gguf_rope_free(&r);
    return rc;
}

/* ---- reading ---- */

enum { U32_REQUIRED = 1, U32_ZERO_OK = 2 };
/* a uint32 of the llama keys, 1..2^30 when present (0 too with U32_ZERO_OK): a 0 is never taken
 * as the key's absence (llama.cpp refuses it, or reads it as 0) */
static int need_u32(const GgufFile *g, const char *key, uint32_t *v, int flags) {
    int got = gguf_get_u32(g, key, v);
    if (got < 0) return -1;
    if (!got && (flags & U32_REQUIRED)) return pelab_fail("%s: metadata %s: missing (llama.cpp's llama needs it)", g->name, key);
    if (got && ((*v == 0 && !(flags & U32_ZERO_OK)) || *v > (1u << 30)))
        return pelab_fail("%s: metadata %s: %u: expected %d to 2^30", g->name, key, *v, flags & U32_ZERO_OK ? 0 : 1);
    return 0;
}

static int read_config(const GgufFile *g, ModelConfig *c) {
    uint32_t ctx = 0, dim = 0, layers = 0, ff = 0, heads = 0, kv = 0, vocab = 0, experts = 0, key_len = 0, val_len = 0;
    memset(c, 0, sizeof *c);
    if (!gguf_str_is(g, "general.architecture", "llama")) {
        const unsigned char *a;
        size_t n;
        int got = gguf_get_str(g, "general.architecture", &a, &n);
        if (got < 0) return -1;
        int show = got && n < 40;
        for (size_t i = 0; show && i < n; i++) show = a[i] >= 0x20 && a[i] < 0x7f;
        return pelab_fail("%s: general.architecture %s%.*s%s: pelab imports llama only", g->name, show ? "\"" : "",
                          show ? (int)n : -1, show ? (const char *)a : got ? "(not printable)" : "missing", show ? "\"" : "");
    }
    if (need_u32(g, "llama.context_length", &ctx, U32_REQUIRED) || need_u32(g, "llama.embedding_length", &dim, U32_REQUIRED) ||
        need_u32(g, "llama.block_count", &layers, U32_REQUIRED) || need_u32(g, "llama.feed_forward_length", &ff, U32_REQUIRED) ||
        need_u32(g, "llama.attention.head_count", &heads, U32_REQUIRED) || need_u32(g, "llama.attention.head_count_kv", &kv, 0) ||
        need_u32(g, "llama.vocab_size", &vocab, 0) || need_u32(g, "llama.expert_count", &experts, U32_ZERO_OK) ||
        need_u32(g, "llama.attention.key_length", &key_len, 0) || need_u32(g, "llama.attention.value_length", &val_len, 0))
        return -1;
    int got = gguf_get_f32(g, "llama.attention.layer_norm_rms_epsilon", &c->norm_eps);
    if (got <= 0) return got < 0 ? -1 : pelab_fail("%s: metadata llama.attention.layer_norm_rms_epsilon: missing", g->name);
    if (!(c->norm_eps > 0 && c->norm_eps < 1))
        return pelab_fail("%s: metadata llama.attention.layer_norm_rms_epsilon: %g: expected 0 < eps < 1", g->name, c->norm_eps);
    if (experts) return pelab_fail("%s: llama.expert_count %u: a mixture of experts; pelab's MLP is one SwiGLU", g->name, experts);
    const GgufTensor *emb = gguf_find_tensor(g, "token_embd.weight");
    if (!emb || emb->n_dims != 2) return pelab_fail("%s: tensor token_embd.weight: missing or not 2-D", g->name);
    if (vocab && vocab != emb->ne[1])
        return pelab_fail("%s: llama.vocab_size %u, but token_embd.weight has %llu rows", g->name, vocab, (unsigned long long)emb->ne[1]);
    c->seq_len = (int)ctx, c->dim = (int)dim, c->n_layers = (int)layers, c->hidden_dim = (int)ff; /* at most 2^30 */
    c->n_heads = (int)heads, c->n_kv_heads = (int)(kv ? kv : heads);
    c->vocab_size = emb->ne[1] > (1u << 30) ? -1 : (int)emb->ne[1];
    c->tied = gguf_find_tensor(g, "output.weight") == NULL;
    c->qkv_bias = gguf_find_tensor(g, "blk.0.attn_q.bias") != NULL;
    if (config_validate(c) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: %s", g->name, why);
    }
    uint32_t hd = (uint32_t)(c->dim / c->n_heads);
    if ((key_len && key_len != hd) || (val_len && val_len != hd))
        return pelab_fail("%s: llama.attention.key_length %u / value_length %u: pelab's heads are embedding_length / head_count = %u",
                          g->name, key_len, val_len, hd);
    return 0;
}

/* every weight at the fewest bytes a type can give it or more (Q2_K's 84 bytes a block of 256): a
 * forged config cannot make pelab allocate a model its file cannot hold */
static int check_size(const GgufFile *g, const ModelConfig *c) {
    double D = c->dim, kv = (double)c->n_kv_heads * (c->dim / c->n_heads);
    double n = (double)c->vocab_size * D + c->n_layers * (2 * D * D + 2 * kv * D + 3.0 * c->hidden_dim * D);
    if (n * ggml_min_bytes_per_weight() > (double)g->len)
        return pelab_fail("%s: %zu bytes, too small for the %.0f weights its metadata describes", g->name, g->len, n);
    return 0;
}

/* the position spec: pelab.pos when the file has it (never a rule that reads a file), else the
 * one the llama keys describe */
static int read_spec(const GgufFile *g, const GgufRope *r, char *spec, size_t n) {
    const unsigned char *s;
    size_t len;
    int got = gguf_get_str(g, "pelab.pos", &s, &len);
    if (got < 0) return -1;
    if (!got) return gguf_rope_spec(r, g->name, spec, n);
    int ok = len > 0 && len < n && len < POS_SPEC_MAX;
    for (size_t i = 0; ok && i < len; i++) ok = s[i] >= 0x20 && s[i] < 0x7f;
    if (!ok) return pelab_fail("%s: pelab.pos: expected a position spec of printable ASCII, under %d bytes", g->name, POS_SPEC_MAX);
    memcpy(spec, s, len), spec[len] = 0;
    if (strncmp(spec, "rope", 4) || (spec[4] && spec[4] != ':' && spec[4] != '+')) /* before any table is built */
        return pelab_fail("%s: pelab.pos %s: %s computes RoPE only", g->name, spec, RUNNER);
    char rule[POS_SPEC_MAX];
    spec_option(spec, "scale", rule, sizeof rule);
    rule[strcspn(rule, ":")] = 0;
    const RopeRuleDef *d = rope_rule_find(rule);
    if (d && d->arg == ROPE_ARG_CUSTOM)
        return pelab_fail("%s: pelab.pos %s: a rule that reads a file is not taken from a GGUF file", g->name, spec);
    return 0;
}

/* one slot's tensor in the file's table, its shape checked; NULL with one line */
static const GgufTensor *slot_tensor(const GgufFile *g, const Slot *e) {
    const GgufTensor *t = gguf_find_tensor(g, e->name);
    if (!t) {
        pelab_fail("%s: tensor %s: missing", g->name, e->name);
        return NULL;
    }
    int same = t->n_dims == e->n_dims;
    for (uint32_t d = 0; same && d < e->n_dims; d++) same = t->ne[d] == e->ne[d];
    if (!same) {
        char want[64];
        if (e->n_dims == 2) snprintf(want, sizeof want, "{%llu, %llu}", (unsigned long long)e->ne[0], (unsigned long long)e->ne[1]);
        else snprintf(want, sizeof want, "{%llu}", (unsigned long long)e->ne[0]);
        pelab_fail("%s: tensor %s: %u dims {%llu, %llu, ...}, expected %s", g->name, e->name, t->n_dims,
                   (unsigned long long)t->ne[0], (unsigned long long)t->ne[1], want);
        return NULL;
    }
    return t;
}

/* every tensor of m (laid out, not yet allocated) in the table with its shape: before the model's
 * memory is allocated from the metadata's config */
static int check_table(const GgufFile *g, const Model *m) {
    int n, rc = 0;
    Slot *s = model_slots(m, &n);
    for (int i = 0; i < n && rc == 0; i++) rc = slot_tensor(g, &s[i]) ? 0 : -1;
    free(s);
    return rc;
}

/* float32s a piece of a slot decodes at a time (rows of whole heads of a q or k matrix, whose rows
 * reorder within a head): pieces decode in parallel, and a bf16-only model's goes through a
 * buffer this size, never a float32 copy of the tensor */
enum { PIECE_FLOATS = 1 << 14 };

/* 1 when no x[i] is an inf or a NaN: their exponent bits all set, or'd without an early exit (a
 * loop that vectorizes; the first such element is searched for only when there is one) */
static int all_finite(const float *x, size_t n) {
    uint32_t inf_nan = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        inf_nan |= (u & 0x7f800000u) == 0x7f800000u;
    }
    return !inf_nan;
}

/* one slot's tensor from the file: widened into the model (float32, or rounded to bf16 where it
 * keeps the weight in bf16 alone), finite; a piece at a time, the pieces in parallel */
static int load_slot(const GgufFile *g, const Slot *e, int head_dim, int half, unsigned char *used) {
    const GgufTensor *t = slot_tensor(g, e);
    if (!t) return -1;
    used[t - g->tensors] = 1;
    /* a 1-D tensor (a norm, a bias) is one piece of one row; a bias's q/k entries rotate as rows of 1 */
    size_t cols = e->n_dims == 1 ? e->numel : (size_t)e->ne[0], rows = e->numel / cols;
    size_t unit = e->n_dims == 2 && e->qk_heads ? (size_t)head_dim : 1;
    size_t piece = PIECE_FLOATS / cols / unit * unit, row_bytes = cols / (size_t)ggml_block_size(t->type) * (size_t)ggml_block_bytes(t->type);
    if (piece < unit) piece = unit;
    long n_pieces = (long)((rows + piece - 1) / piece);
    size_t bad = (size_t)-1; /* the first element that is not finite, in file order */
    float bad_value = 0;
#pragma omp parallel if (n_pieces > 1)
    {
        float *buf = e->data ? NULL : xmalloc(sizeof(float) * piece * cols);
#pragma omp for schedule(dynamic, 1)
        for (long p = 0; p < n_pieces; p++) {
            size_t r0 = (size_t)p * piece, nr = rows - r0 < piece ? rows - r0 : piece, n = nr * cols;
            float *x = buf ? buf : e->data + r0 * cols;
            ggml_decode(t->type, t->data + r0 * row_bytes, n, x);
            size_t i = n;
            if (!all_finite(x, n))
                for (i = 0; isfinite(x[i]);) i++;
            if (i < n) {
#pragma omp critical(gguf_bad)
                if (r0 * cols + i < bad) bad = r0 * cols + i, bad_value = x[i];
                continue;
            }
            if (e->qk_heads && half)
                rotary_rows_permute(x, e->n_dims == 1 ? e->qk_heads : (int)(nr / unit), head_dim, e->n_dims == 1 ? 1 : (int)cols, 1);
            if (e->data16) bf16_convert(e->data16 + r0 * cols, x, n);
        }
        free(buf);
    }
    if (bad != (size_t)-1)
        return pelab_fail("%s: tensor %s: element %zu is %g, expected a finite number", g->name, e->name, bad, bad_value);
    return 0;
}

static int load_tensors(const GgufFile *g, Model *m) {
    int n, rc = 0, half = pos_rotary_half(&m->pos);
    Slot *s = model_slots(m, &n);
    unsigned char *used = xcalloc((size_t)g->n_tensors + 1, 1);
    for (int i = 0; i < n && rc == 0; i++) rc = load_slot(g, &s[i], m->head_dim, half, used);
    const GgufTensor *freqs = gguf_find_tensor(g, "rope_freqs.weight");
    if (freqs) used[freqs - g->tensors] = 1; /* read by gguf_rope_read */
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++)
        if (!used[i])
            rc = pelab_fail("%s: tensor %s: not a weight of this model (a bias outside q/k/v, a layer past block_count, "
                            "or another architecture's)", g->name, g->tensors[i].name);
    free(used), free(s);
    return rc;
}

int gguf_llama_parse(const unsigned char *buf, size_t len, const char *name, Precision precision, Model *m,
                     GgufTokImage *tok) {
    memset(m, 0, sizeof *m);
    memset(tok, 0, sizeof *tok);
    GgufFile g;
    ModelConfig c;
    GgufRope have = {0}, want = {0};
    char spec[POS_SPEC_MAX], note[300];
    if (gguf_parse(&g, buf, len, name) != 0) return -1;
    int rc = read_config(&g, &c);
    if (rc == 0) rc = check_size(&g, &c);
    if (rc == 0) rc = gguf_rope_read(&g, (uint32_t)c.seq_len, &have);
    if (rc == 0) rc = read_spec(&g, &have, spec, sizeof spec);
    if (rc == 0 && model_layout(m, &c, spec) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        rc = pelab_fail("%s: position spec %s: %s", name, spec, why);
        model_free(m);
    }
    int laid_out = rc == 0;
    if (rc == 0) rc = check_table(&g, m);
    if (rc == 0 && (precision == PRECISION_BF16 ? model_alloc_params_bf16(m) : model_alloc_params(m)) != 0) { /* frees m */
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        rc = pelab_fail("%s: %s", name, why);
        laid_out = 0;
    }
    /* what pelab computes must be what llama.cpp reads from the same file */
    if (rc == 0) rc = gguf_rope_of_model(m, name, &want, note, sizeof note);
    if (rc == 0) rc = gguf_rope_same(&want, &have, name);
    if (rc == 0) rc = load_tensors(&g, m);
    if (rc == 0) rc = gguf_tok_read(&g, c.vocab_size, tok);
    gguf_rope_free(&have), gguf_rope_free(&want);
    gguf_free(&g);
    if (rc != 0 && laid_out) model_free(m);
    if (rc != 0) free(tok->image), memset(tok, 0, sizeof *tok);
    return rc;
}

int gguf_llama_read(const char *path, Precision precision, Model *m, GgufTokImage *tok) {
    MappedFile f; /* the header parsed and checked first; only the tensors' pages are read after */
    memset(m, 0, sizeof *m);
    memset(tok, 0, sizeof *tok);
    if (map_file(path, &f) != 0) return -1;
    int rc = gguf_llama_parse(f.data ? f.data : (const unsigned char *)"", f.len, path, precision, m, tok);
    unmap_file(&f);
    return rc;
}
