#include "model.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/sys.h"
#include "attention.h"
#include "layers.h"

static void set_tensor(TensorInfo *t, const char *name, int decay, int ndim, int s0, int s1, int s2) {
    t->name = name;
    t->decay = decay;
    t->ndim = ndim;
    int s[3] = {s0, s1, s2};
    t->numel = ndim ? 1 : 0;
    for (int i = 0; i < 4; i++) t->shape[i] = i < ndim ? s[i] : 0;
    for (int i = 0; i < ndim; i++) t->numel *= (size_t)s[i];
}

/* pointers into a block laid out like m->tensors */
static void point_tensors(const Model *m, float *block, ParamTensors *p) {
    float **slot[N_PARAM_TENSORS] = {&p->tok_emb, &p->pos, &p->attn_scale, &p->attn_norm, &p->wq, &p->wk, &p->wv, &p->wo,
                                     &p->mlp_norm, &p->w1, &p->w2, &p->w3, &p->final_norm, &p->lm_head,
                                     &p->bq, &p->bk, &p->bv, &p->sinks};
    for (int i = 0; i < N_PARAM_TENSORS; i++) *slot[i] = block + m->tensors[i].offset;
    if (m->cfg.tied) p->lm_head = p->tok_emb;
}

int model_layout(Model *m, const ModelConfig *cfg, const char *pos_spec) {
    memset(m, 0, sizeof *m);
    if (config_validate(cfg) != 0) return -1;
    m->cfg = *cfg;
    int V = cfg->vocab_size, D = cfg->dim, L = cfg->n_layers, F = cfg->hidden_dim;
    int hd = m->head_dim = config_head_dim(cfg);
    int qdim = cfg->n_heads * hd, kvdim = cfg->n_kv_heads * hd;
    if (pos_init(&m->pos, pos_spec, D, cfg->n_heads, cfg->n_kv_heads, L, cfg->seq_len) != 0) return -1;

    TensorInfo *t = m->tensors;
    set_tensor(&t[T_TOK_EMB], "tok_emb", 1, 2, V, D, 0);
    int pnd = 0, ps[4] = {0};
    if (m->pos.scheme->param_shape) m->pos.scheme->param_shape(&m->pos, &pnd, ps);
    if (pnd < 0 || pnd > 3) { /* set_tensor takes three dimensions */
        pos_free(&m->pos);
        return pelab_fail("--pos %s: its parameter tensor has %d dimensions (at most 3)", m->pos.scheme->name, pnd);
    }
    set_tensor(&t[T_POS], "pos.weight", 0, pnd, ps[0], ps[1], ps[2]);
    /* +ssmax: s per layer and head, no weight decay (a temperature, not a weight) */
    set_tensor(&t[T_ATTN_SCALE], "pos.attn_scale", 0, attn_scale_learned(&m->pos.attn_scale) ? 2 : 0, L,
               cfg->n_heads, 0);
    set_tensor(&t[T_ATTN_NORM], "layers.attn_norm", 0, 2, L, D, 0);
    set_tensor(&t[T_WQ], "layers.wq", 1, 3, L, qdim, D);
    set_tensor(&t[T_WK], "layers.wk", 1, 3, L, kvdim, D);
    set_tensor(&t[T_WV], "layers.wv", 1, 3, L, kvdim, D);
    set_tensor(&t[T_WO], "layers.wo", 1, 3, L, D, qdim);
    set_tensor(&t[T_MLP_NORM], "layers.mlp_norm", 0, 2, L, D, 0);
    set_tensor(&t[T_W1], "layers.w1", 1, 3, L, F, D);
    set_tensor(&t[T_W2], "layers.w2", 1, 3, L, D, F);
    set_tensor(&t[T_W3], "layers.w3", 1, 3, L, F, D);
    set_tensor(&t[T_FINAL_NORM], "final_norm", 0, 1, D, 0, 0);
    if (cfg->tied) set_tensor(&t[T_LM_HEAD], "lm_head", 1, 0, 0, 0, 0);
    else set_tensor(&t[T_LM_HEAD], "lm_head", 1, 2, V, D, 0);
    /* Qwen2's q/k/v biases: after the head, so a model without them keeps its layout; no decay */
    int nb = cfg->qkv_bias ? 2 : 0;
    set_tensor(&t[T_BQ], "layers.bq", 0, nb, L, qdim, 0);
    set_tensor(&t[T_BK], "layers.bk", 0, nb, L, kvdim, 0);
    set_tensor(&t[T_BV], "layers.bv", 0, nb, L, kvdim, 0);
    /* +sinks: one logit per layer and head, last so a model without them keeps its layout; no decay */
    set_tensor(&t[T_SINKS], "pos.sinks", 0, m->pos.sinks.on ? 2 : 0, L, cfg->n_heads, 0);

    size_t off = 0;
    for (int i = 0; i < N_PARAM_TENSORS; i++) {
        t[i].offset = off;
        off += t[i].numel;
    }
    m->n_params = off;
    return 0;
}

int model_alloc_params(Model *m) { return model_attach_params(m, xcalloc(m->n_params, sizeof(float))); }

int model_attach_params(Model *m, float *block) {
    AttnPattern pattern = m->cfg.pattern; /* a copy: model_set_pattern writes m->cfg.pattern */
    model_set_param_block(m, block);
    if (pattern.n && model_set_pattern(m, &pattern) != 0) {
        char why[sizeof pelab_errmsg];
        memcpy(why, pelab_errmsg, sizeof why);
        model_free(m);
        return pelab_fail("%s", why);
    }
    return 0;
}

int model_create(Model *m, const ModelConfig *cfg, const char *pos_spec) {
    return model_layout(m, cfg, pos_spec) != 0 ? -1 : model_alloc_params(m);
}

void model_set_param_block(Model *m, float *block) {
    m->params_mem = block;
    point_tensors(m, block, &m->params);
    m->pos.params = m->tensors[T_POS].numel ? m->params.pos : NULL;
    m->pos.attn_scale.s = m->tensors[T_ATTN_SCALE].numel ? m->params.attn_scale : NULL;
    m->pos.sinks.logit = m->tensors[T_SINKS].numel ? m->params.sinks : NULL;
    for (int i = 0; i < m->n_base_pos; i++) m->base_pos[i].params = m->pos.params, m->base_pos[i].attn_scale.s = m->pos.attn_scale.s,
                                              m->base_pos[i].sinks.logit = m->pos.sinks.logit;
}

void model_init_weights(Model *m, unsigned long long seed) {
    Rng rng;
    rng_seed(&rng, seed);
    const float std = 0.02f;
    /* GPT-2: projections that write into the residual stream shrink with depth */
    const float resid_std = std / sqrtf(2.0f * m->cfg.n_layers);
    for (int i = 0; i < N_PARAM_TENSORS; i++) {
        TensorInfo *t = &m->tensors[i];
        float *p = m->params_mem + t->offset;
        if (t->numel == 0) continue;
        if (i == T_POS) {
            if (m->pos.scheme->init_params) m->pos.scheme->init_params(&m->pos, p, &rng);
        } else if (i == T_ATTN_SCALE) {
            for (size_t j = 0; j < t->numel; j++) p[j] = (float)m->pos.attn_scale.init;
        } else if (i == T_SINKS) {
            for (size_t j = 0; j < t->numel; j++) p[j] = (float)m->pos.sinks.init;
        } else if (i == T_ATTN_NORM || i == T_MLP_NORM || i == T_FINAL_NORM) {
            for (size_t j = 0; j < t->numel; j++) p[j] = 1.0f;
        } else if (i == T_BQ || i == T_BK || i == T_BV) {
            memset(p, 0, t->numel * sizeof(float)); /* as torch's Linear bias starts near 0 */
        } else {
            float s = (i == T_WO || i == T_W2) ? resid_std : std;
            /* a scheme that scales the tokens (sinusoidal:tokens=sqrt_dim) follows fairseq's recipe
             * whole: embeddings of std 1/scale, so the scaled tokens start at std 1, level with
             * sines of amplitude 1 */
            float token_scale = m->pos.scheme->token_scale ? m->pos.scheme->token_scale(&m->pos) : 1.0f;
            if (i == T_TOK_EMB && token_scale != 1.0f) s = 1.0f / token_scale;
            for (size_t j = 0; j < t->numel; j++) p[j] = s * rng_normal(&rng);
        }
    }
}

void model_keep_attention(Model *m, int keep) { m->keep_att_probs = keep != 0; }

void model_alloc_train(Model *m, int B, int T) {
    const ModelConfig *c = &m->cfg;
    if (!m->grads_mem) {
        m->grads_mem = xcalloc(m->n_params, sizeof(float));
        point_tensors(m, m->grads_mem, &m->grads);
    }
    if (m->acts_mem && m->B == B && m->T == T && m->acts_have_probs == m->keep_att_probs) return;
    free(m->acts_mem);
    free(m->scratch_mem);
    free(m->inputs);
    free(m->copy_mem), free(m->copy_pos); /* sized for the old [B, T] */
    m->copy_mem = NULL, m->copy_pos = NULL;
    m->B = B;
    m->T = T;
    size_t BT = (size_t)B * T, D = c->dim, L = c->n_layers, F = c->hidden_dim, V = c->vocab_size;
    size_t qdim = (size_t)c->n_heads * m->head_dim, kvdim = (size_t)c->n_kv_heads * m->head_dim;
    size_t att = m->keep_att_probs ? (size_t)B * c->n_heads * T * T : 0, rows = BT * c->n_heads;
    size_t sizes[] = {BT * D,       L * BT * D,    L * BT,        L * BT * qdim, L * BT * kvdim,
                      L * BT * kvdim, L * att,     L * rows * 2,  L * BT * qdim, L * BT * D,    L * BT * D,
                      L * BT,       L * BT * F,    L * BT * F,    L * BT * F,    L * BT * D,
                      BT * D,       BT,            BT * V,        BT,
                      pos_has_gate(&m->pos, -1) ? L * BT * c->n_heads : 0};
    float **slots[] = {&m->acts.x0,      &m->acts.ln1,      &m->acts.ln1_rstd, &m->acts.q,       &m->acts.k,
                       &m->acts.v,       &m->acts.att_probs, &m->acts.att_stats, &m->acts.att_out, &m->acts.res_mid,
                       &m->acts.ln2,     &m->acts.ln2_rstd, &m->acts.h_gate,  &m->acts.h_up,     &m->acts.h_act,
                       &m->acts.res_out, &m->acts.lnf,     &m->acts.lnf_rstd, &m->acts.logits,   &m->acts.losses,
                       &m->acts.fgate};
    int n = sizeof sizes / sizeof sizes[0];
    size_t total = 0;
    for (int i = 0; i < n; i++) total += sizes[i];
    m->acts_mem = xcalloc(total, sizeof(float));
    float *p = m->acts_mem;
    for (int i = 0; i < n; i++) {
        *slots[i] = p;
        p += sizes[i];
    }
    if (!att) m->acts.att_probs = NULL;
    m->acts_have_probs = m->keep_att_probs;

    size_t ssizes[] = {BT * D, BT * D, BT * qdim, BT * kvdim, BT * kvdim, BT * qdim, BT * F, BT * F, BT * F,
                       pos_has_gate(&m->pos, -1) ? BT * c->n_heads : 0};
    float **sslots[] = {&m->scratch.d_res, &m->scratch.d_ln,      &m->scratch.d_q,    &m->scratch.d_k,
                        &m->scratch.d_v,   &m->scratch.d_att_out, &m->scratch.d_gate, &m->scratch.d_up,
                        &m->scratch.d_act, &m->scratch.d_fgate};
    n = sizeof ssizes / sizeof ssizes[0];
    total = 0;
    for (int i = 0; i < n; i++) total += ssizes[i];
    m->scratch_mem = xcalloc(total, sizeof(float));
    p = m->scratch_mem;
    for (int i = 0; i < n; i++) {
        *sslots[i] = p;
        p += ssizes[i];
    }
    m->inputs = xmalloc(3 * BT * sizeof(int));
    m->targets = m->inputs + BT;
    m->positions = m->inputs + 2 * BT;
}

int model_set_precision(Model *m, Precision precision) {
    if (m->bf16_only) /* the float32 weights were never there */
        return precision == PRECISION_BF16 ? 0 : pelab_fail("--precision fp32: this model's weights are held in bf16 only");
    if (precision == PRECISION_BF16) { /* every CPU: natively, or widened (bf16_native) */
        if (!m->params_bf16) m->params_bf16 = xmalloc(m->n_params * sizeof(bf16));
        m->precision = PRECISION_BF16;
        model_sync_bf16(m);
        return 0;
    }
    free(m->params_bf16);
    m->params_bf16 = NULL;
    m->precision = PRECISION_FP32;
    return 0;
}

void model_sync_bf16(Model *m) {
    if (m->params_bf16 && !m->bf16_only) bf16_convert(m->params_bf16, m->params_mem, m->n_params);
}

const char *precision_name(Precision p) { return p == PRECISION_BF16 ? "bf16" : "fp32"; }

int precision_parse(const char *s, Precision *out) {
    if (strcmp(s, "fp32") == 0) *out = PRECISION_FP32;
    else if (strcmp(s, "bf16") == 0) *out = PRECISION_BF16;
    else return pelab_fail("--precision %s: expected fp32 or bf16", s);
    return 0;
}

void model_free(Model *m) {
    free(m->params_bf16);
    if (m->params_reserved) mem_release(m->params_mem, m->params_reserved);
    else free(m->params_mem);
    free(m->grads_mem);
    free(m->shard_grads_mem);
    free(m->acts_mem);
    free(m->scratch_mem);
    free(m->inputs);
    free(m->copy_mem), free(m->copy_pos);
    pos_free(&m->pos);
    for (int i = 0; i < m->n_base_pos; i++) pos_free(&m->base_pos[i]);
    free(m->base_pos);
    memset(m, 0, sizeof *m);
}

void model_zero_grad(Model *m) {
    if (m->grads_mem) memset(m->grads_mem, 0, m->n_params * sizeof(float));
}

/* layer l's slice of a stacked parameter block (the weights, or their gradients) */
typedef struct {
    float *attn_norm, *wq, *wk, *wv, *wo, *mlp_norm, *w1, *w2, *w3;
    float *bq, *bk, *bv; /* NULL without qkv_bias */
} LayerWeights;

static LayerWeights layer_weights(const Model *m, const ParamTensors *p, int l) {
    const ModelConfig *c = &m->cfg;
    size_t D = c->dim, F = c->hidden_dim, qdim = (size_t)c->n_heads * m->head_dim;
    size_t kvdim = (size_t)c->n_kv_heads * m->head_dim;
    int b = c->qkv_bias;
    return (LayerWeights){.attn_norm = p->attn_norm + l * D, .wq = p->wq + l * qdim * D, .wk = p->wk + l * kvdim * D,
                          .wv = p->wv + l * kvdim * D, .wo = p->wo + l * D * qdim, .mlp_norm = p->mlp_norm + l * D,
                          .w1 = p->w1 + l * F * D, .w2 = p->w2 + l * D * F, .w3 = p->w3 + l * F * D,
                          .bq = b ? p->bq + l * qdim : NULL, .bk = b ? p->bk + l * kvdim : NULL,
                          .bv = b ? p->bv + l * kvdim : NULL};
}

/* y [N, n] += bias on every row (a projection's bias, before RoPE as in HF's Qwen2) */
static void bias_forward(float *y, const float *bias, int N, int n) {
    if (!bias) return;
#pragma omp parallel for
    for (int i = 0; i < N; i++)
        for (int j = 0; j < n; j++) y[(size_t)i * n + j] += bias[j];
}

/* dbias [n] += the column sums of dy [N, n] */
static void bias_backward(float *dbias, const float *dy, int N, int n) {
    if (!dbias) return;
#pragma omp parallel for
    for (int j = 0; j < n; j++) {
        float s = 0.0f;
        for (int i = 0; i < N; i++) s += dy[(size_t)i * n + j];
        dbias[j] += s;
    }
}


const bf16 *model_w16(const Model *m, const float *w) {
    return m->params_bf16 ? m->params_bf16 + (w - m->params_mem) : NULL;
}

/* the layer's attention: its queries against the keys the view names */
static Attention layer_attention(const Model *m, int layer, const LayerActs *a) {
    int two = a->q2 && pos_layer_copies(model_layer_pos(m, layer), layer) > 1;
    LayerAttn kind = model_layer_attn(m, layer);
    return (Attention){.q = a->q, .k = a->keys, .v = a->values, .out = a->att_out, .probs = a->att_probs,
                       .q2 = two ? a->q2 : NULL, .k2 = two ? a->keys2 : NULL, .stats = a->att_stats,
                       .qpos = a->pos, .kpos = a->key_pos, .n_seq = a->n_seq, .nq = a->n, .nk = a->n_keys,
                       .q_offset = a->past, .kv_stride = a->key_stride, .kv_head_major = a->kv_head_major,
                       .k16 = a->keys16, .v16 = a->values16,
                       .kstart = a->key_start,
                       .window = kind.window, .chunk = kind.chunk,
                       .gate = pos_has_gate(&m->pos, layer) ? a->key_fgates : NULL,
                       .n_heads = m->cfg.n_heads, .n_kv_heads = m->cfg.n_kv_heads, .head_dim = m->head_dim,
                       .layer = layer};
}

void kv_rows_to_heads(void *dst, int is_bf16, size_t capacity, size_t at, const float *rows, int n, int n_kv_heads,
                      int hd) {
    size_t kvdim = (size_t)n_kv_heads * hd;
    for (int h = 0; h < n_kv_heads; h++)
        for (int i = 0; i < n; i++) {
            const float *src = rows + i * kvdim + (size_t)h * hd;
            size_t to = ((size_t)h * capacity + at + i) * hd;
            if (is_bf16) bf16_convert((bf16 *)dst + to, src, hd);
            else memcpy((float *)dst + to, src, hd * sizeof(float));
        }
}

void kv_heads_to_rows(float *rows, const void *src, int is_bf16, size_t capacity, size_t at, int n, int n_kv_heads,
                      int hd) {
    size_t kvdim = (size_t)n_kv_heads * hd;
    for (int h = 0; h < n_kv_heads; h++)
        for (int i = 0; i < n; i++) {
            float *dst = rows + i * kvdim + (size_t)h * hd;
            size_t from = ((size_t)h * capacity + at + i) * hd;
            if (!is_bf16) memcpy(dst, (const float *)src + from, hd * sizeof(float));
            else
                for (int d = 0; d < hd; d++) dst[d] = bf16_to_float(((const bf16 *)src)[from + d]);
        }
}

/* a KV cache (key_stride set): each sequence's new key rows (every copy) and value rows after its
 * cached ones, token-major or into each kv head's own rows (kv_head_major) */
static void store_new_rows(const Model *m, int layer, const LayerActs *a) {
    if (!a->key_stride) return;
    int two = a->q2 && pos_layer_copies(model_layer_pos(m, layer), layer) > 1, hd = m->head_dim, KVH = m->cfg.n_kv_heads;
    size_t kvdim = (size_t)KVH * hd, cap = a->key_stride;
    for (int b = 0; b < a->n_seq; b++) {
        size_t src = (size_t)b * a->n * kvdim, seq = (size_t)b * cap * kvdim; /* both layouts: cap rows a sequence */
        if (a->kv_head_major) {
            void *keys = a->keys16 ? (void *)(a->keys16 + seq) : (void *)(a->keys + seq);
            void *values = a->values16 ? (void *)(a->values16 + seq) : (void *)(a->values + seq);
            kv_rows_to_heads(keys, a->keys16 != NULL, cap, a->past, a->k + src, a->n, KVH, hd);
            kv_rows_to_heads(values, a->values16 != NULL, cap, a->past, a->v + src, a->n, KVH, hd);
            if (two) kv_rows_to_heads((float *)a->keys2 + seq, 0, cap, a->past, a->k2 + src, a->n, KVH, hd);
            continue;
        }
        size_t row = seq + (size_t)a->past * kvdim, bytes = (size_t)a->n * kvdim * sizeof(float);
        memcpy((float *)a->keys + row, a->k + src, bytes);
        memcpy((float *)a->values + row, a->v + src, bytes);
        if (two) memcpy((float *)a->keys2 + row, a->k2 + src, bytes);
    }
}

/* a gate scheme (FoX): each sequence's running sums from its rows' normed input, continuing the
 * last cached key's; a KV cache keeps the new rows' after its cached ones */
static void gate_rows(const Model *m, int layer, const LayerActs *a) {
    int H = m->cfg.n_heads, D = m->cfg.dim;
    size_t stride = a->key_stride ? (size_t)a->key_stride : (size_t)a->n_keys;
    for (int b = 0; b < a->n_seq; b++) {
        float *keys = a->key_fgates + (size_t)b * stride * H, *rows = a->fgate + (size_t)b * a->n * H;
        int n_pad = a->key_start && a->key_start[b] > a->past ? a->key_start[b] - a->past : 0; /* left padding */
        pos_gate_forward(&m->pos, layer, a->ln1 + (size_t)b * a->n * D, a->n, n_pad,
                         a->past ? keys + (size_t)(a->past - 1) * H : NULL, rows);
        if (a->key_stride) memcpy(keys + (size_t)a->past * H, rows, (size_t)a->n * H * sizeof(float));
    }
}

void block_forward(const Model *m, int layer, const LayerActs *a) {
    const ModelConfig *c = &m->cfg;
    int N = a->n_seq * a->n, D = c->dim, F = c->hidden_dim, H = c->n_heads, KVH = c->n_kv_heads;
    int qdim = H * m->head_dim, kvdim = KVH * m->head_dim;
    LayerWeights w = layer_weights(m, &m->params, layer);

    // attention: res_mid = in + wo attn(q, k, v), x = rmsnorm(in)
    rmsnorm_forward(a->ln1, a->ln1_rstd, a->in, w.attn_norm, N, D, c->norm_eps); // (N, D) -> (N, D)
    MatmulJob qkv[3] = {{a->q, w.wq, model_w16(m, w.wq), qdim},     // (N, D) -> (N, H*hd)
                        {a->k, w.wk, model_w16(m, w.wk), kvdim},    // (N, D) -> (N, KVH*hd)
                        {a->v, w.wv, model_w16(m, w.wv), kvdim}};   // (N, D) -> (N, KVH*hd)
    matmul_forward_shared(qkv, 3, a->ln1, N, D);
    bias_forward(a->q, w.bq, N, qdim), bias_forward(a->k, w.bk, N, kvdim), bias_forward(a->v, w.bv, N, kvdim);
    if (pos_has_gate(&m->pos, layer)) gate_rows(m, layer, a); // (N, D) -> (N, H) running sums
    const PosCtx *pc = model_layer_pos(m, layer);
    pos_layer_map(pc, layer, &(PosLayerRows){.q = a->q, .k = a->k, .k_unmapped = a->k_unmapped, .q2 = a->q2,
                                                  .k2 = a->k2, .copy_pos = a->copy_pos, .pos = a->pos, .n = N,
                                                  .n_heads = H, .n_kv_heads = KVH, .head_dim = m->head_dim});
    store_new_rows(m, layer, a);
    Attention att = layer_attention(m, layer, a);
    attention_forward(&att, pc);                                              // -> att_out (N, H*hd)
    matmul_forward(a->res_mid, a->att_out, w.wo, model_w16(m, w.wo), N, qdim, D); // (N, H*hd) -> (N, D)
    residual_forward(a->res_mid, a->res_mid, a->in, (size_t)N * D);

    // MLP: res_out = res_mid + w2 (silu(w1 x) * w3 x), x = rmsnorm(res_mid)
    rmsnorm_forward(a->ln2, a->ln2_rstd, a->res_mid, w.mlp_norm, N, D, c->norm_eps);
    MatmulJob gate_up[2] = {{a->gate, w.w1, model_w16(m, w.w1), F}, {a->up, w.w3, model_w16(m, w.w3), F}}; // -> (N, F)
    matmul_forward_shared(gate_up, 2, a->ln2, N, D);
    swiglu_forward(a->act, a->gate, a->up, (size_t)N * F);
    matmul_forward(a->res_out, a->act, w.w2, model_w16(m, w.w2), N, F, D); // (N, F) -> (N, D)
    residual_forward(a->res_out, a->res_out, a->res_mid, (size_t)N * D);
}

static void block_backward_into(const Model *m, int layer, const LayerActs *a, const ParamTensors *grads,
                                const GradScratch *s);

void block_backward(Model *m, int layer, const LayerActs *a) { block_backward_into(m, layer, a, &m->grads, &m->scratch); }

/* block_backward into these gradients, with this scratch (a batch shard's rows) */
static void block_backward_into(const Model *m, int layer, const LayerActs *a, const ParamTensors *grads,
                                const GradScratch *s) {
    const ModelConfig *c = &m->cfg;
    int N = a->n_seq * a->n, D = c->dim, F = c->hidden_dim, H = c->n_heads, KVH = c->n_kv_heads;
    int qdim = H * m->head_dim, kvdim = KVH * m->head_dim;
    LayerWeights w = layer_weights(m, &m->params, layer), dw = layer_weights(m, grads, layer);
    Attention att = layer_attention(m, layer, a);
    float *dpos = m->tensors[T_POS].numel ? grads->pos : NULL;
    att.d_sinks = m->tensors[T_SINKS].numel ? grads->sinks + (size_t)layer * H : NULL;
    int gated = pos_has_gate(&m->pos, layer);
    if (gated) memset(s->d_fgate, 0, (size_t)N * H * sizeof(float)), att.dgate = s->d_fgate;
    const PosCtx *pc = model_layer_pos(m, layer);

    // MLP; d_res flows through the residual unchanged, rmsnorm_backward adds the branch's share
    // (N, D) -> (N, F); -> 2 x (N, F); (N, F) -> (N, D), twice, the second added
    matmul_backward(&(MatmulGrads){s->d_act, dw.w2, 0}, s->d_res, a->act, w.w2, model_w16(m, w.w2), N, F, D);
    swiglu_backward(s->d_gate, s->d_up, s->d_act, a->gate, a->up, (size_t)N * F);
    matmul_backward(&(MatmulGrads){s->d_ln, dw.w1, 0}, s->d_gate, a->ln2, w.w1, model_w16(m, w.w1), N, D, F);
    matmul_backward(&(MatmulGrads){s->d_ln, dw.w3, 1}, s->d_up, a->ln2, w.w3, model_w16(m, w.w3), N, D, F);
    rmsnorm_backward(s->d_res, dw.mlp_norm, s->d_ln, a->res_mid, w.mlp_norm, a->ln2_rstd, N, D);

    // attention: d res_mid (N, D) -> d att_out (N, H*hd)
    matmul_backward(&(MatmulGrads){s->d_att_out, dw.wo, 0}, s->d_res, a->att_out, w.wo, model_w16(m, w.wo), N, qdim, D);
    // (N, H*hd) -> dq (N, H*hd), dk and dv (N, KVH*hd)
    attention_backward(&att, s->d_att_out, s->d_q, s->d_k, s->d_v, dpos, pc);
    float *q_proj = NULL;
    if (pos_backward_needs_q(pc, layer)) { /* into d_att_out, free once attention_backward is done */
        q_proj = s->d_att_out;
        matmul_forward(q_proj, a->ln1, w.wq, model_w16(m, w.wq), N, D, qdim);
        bias_forward(q_proj, w.bq, N, qdim);
    }
    pos_layer_backward(pc, layer, &(PosLayerGrads){.dq = s->d_q, .dk = s->d_k, .q_proj = q_proj,
                                                        .d_attn_scale = grads->attn_scale + (size_t)layer * H,
                                                        .q_mapped = a->q, .k_mapped = a->k, .dpos = dpos,
                                                        .pos = a->pos, .n = N, .n_heads = H, .n_kv_heads = KVH,
                                                        .head_dim = m->head_dim}); // d(mapped q, k) -> d(projections)
    bias_backward(dw.bq, s->d_q, N, qdim), bias_backward(dw.bk, s->d_k, N, kvdim), bias_backward(dw.bv, s->d_v, N, kvdim);
    // (N, H*hd), (N, KVH*hd) x2 -> (N, D), summed
    matmul_backward(&(MatmulGrads){s->d_ln, dw.wq, 0}, s->d_q, a->ln1, w.wq, model_w16(m, w.wq), N, D, qdim);
    matmul_backward(&(MatmulGrads){s->d_ln, dw.wk, 1}, s->d_k, a->ln1, w.wk, model_w16(m, w.wk), N, D, kvdim);
    matmul_backward(&(MatmulGrads){s->d_ln, dw.wv, 1}, s->d_v, a->ln1, w.wv, model_w16(m, w.wv), N, D, kvdim);
    for (int b = 0; gated && b < a->n_seq; b++) // (n, H) sums -> (n, D) added to d ln1, and pos.weight's
        pos_gate_backward(&m->pos, layer, a->ln1 + (size_t)b * a->n * D, a->n, s->d_fgate + (size_t)b * a->n * H,
                          s->d_ln + (size_t)b * a->n * D, dpos);
    rmsnorm_backward(s->d_res, dw.attn_norm, s->d_ln, a->in, w.attn_norm, a->ln1_rstd, N, D);
}

/* layer l's slices of the training activations for sequences b0..b0+nb-1 of the current batch */
static LayerActs train_layer_acts(const Model *m, int l, int b0, int nb) {
    const ModelConfig *c = &m->cfg;
    const ActTensors *a = &m->acts;
    int B = m->cur_B, T = m->cur_T;
    size_t BT = (size_t)B * T, D = c->dim, F = c->hidden_dim, H = c->n_heads, r0 = (size_t)b0 * T;
    size_t qdim = H * m->head_dim, kvdim = (size_t)c->n_kv_heads * m->head_dim;
    float *k = a->k + l * BT * kvdim + r0 * kvdim, *v = a->v + l * BT * kvdim + r0 * kvdim;
    const int *pos = m->positions + r0;
    /* each row attends to its own sequence's rows: keys are the layer's k, v themselves */
    return (LayerActs){.n_seq = nb, .n = T, .pos = pos,
                       .in = l == 0 ? a->x0 + r0 * D : a->res_out + (l - 1) * BT * D + r0 * D,
                       .ln1 = a->ln1 + (l * BT + r0) * D, .ln1_rstd = a->ln1_rstd + l * BT + r0,
                       .q = a->q + (l * BT + r0) * qdim, .k = k, .v = v, .keys = k, .values = v, .key_pos = pos,
                       .n_keys = T, .past = 0,
                       .att_probs = a->att_probs ? a->att_probs + (l * BT + r0) * H * T : NULL,
                       .att_stats = a->att_stats + (l * BT + r0) * H * 2, .att_out = a->att_out + (l * BT + r0) * qdim,
                       .res_mid = a->res_mid + (l * BT + r0) * D, .ln2 = a->ln2 + (l * BT + r0) * D,
                       .ln2_rstd = a->ln2_rstd + l * BT + r0, .gate = a->h_gate + (l * BT + r0) * F,
                       .up = a->h_up + (l * BT + r0) * F, .act = a->h_act + (l * BT + r0) * F,
                       .res_out = a->res_out + (l * BT + r0) * D,
                       .fgate = pos_has_gate(&m->pos, l) ? a->fgate + (l * BT + r0) * H : NULL,
                       .key_fgates = pos_has_gate(&m->pos, l) ? a->fgate + (l * BT + r0) * H : NULL};
}

int model_shards(const Model *m, int B) {
    if (m->precision != PRECISION_FP32 || pos_key_copies(&m->pos) > 1 || m->n_params > MODEL_SHARD_MAX_PARAMS)
        return 1; /* bf16's workspaces are shared; a second key copy's scratch too; a large model's products scale */
    return B < MODEL_SHARDS ? B : MODEL_SHARDS;
}

/* shard s of n_shards: its first sequence and count (whole sequences, as even as B allows) */
static void shard_rows(int B, int n_shards, int s, int *b0, int *nb) {
    *b0 = (int)((long)B * s / n_shards);
    *nb = (int)((long)B * (s + 1) / n_shards) - *b0;
}

/* runs fn for every shard: in parallel when there are threads to spare and no region around us (a
 * `train --seeds` batch runs each seed's shards in turn on its thread: the same operations) */
static void for_each_shard(Model *m, int n_shards, void (*fn)(Model *m, int s, int n_shards, void *ctx), void *ctx) {
    int threads = omp_get_max_threads();
    if (n_shards > 1 && threads > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads < n_shards ? threads : n_shards)
        for (int s = 0; s < n_shards; s++) fn(m, s, n_shards, ctx);
    } else
        for (int s = 0; s < n_shards; s++) fn(m, s, n_shards, ctx);
}

void model_embed(const Model *m, float *x, const int *tokens, const int *pos, int n) {
    int D = m->cfg.dim;
    const PosScheme *ps = m->pos.scheme;
    if (m->bf16_only) embedding_forward_bf16(x, tokens, model_w16(m, m->params.tok_emb), n, D);
    else embedding_forward(x, tokens, m->params.tok_emb, n, D);
    float token_scale = ps->token_scale ? ps->token_scale(&m->pos) : 1.0f;
    if (token_scale != 1.0f)
        for (size_t i = 0; i < (size_t)n * D; i++) x[i] *= token_scale;
    if (ps->input_forward) ps->input_forward(&m->pos, x, pos, n);
}

/* the forward of one batch shard: embedding, every layer, the final norm, logits and losses */
static void forward_shard(Model *m, int s, int n_shards, void *ctx) {
    const ModelConfig *c = &m->cfg;
    int b0, nb, T = m->cur_T, D = c->dim, V = c->vocab_size, with_targets = *(const int *)ctx;
    shard_rows(m->cur_B, n_shards, s, &b0, &nb);
    size_t BT = (size_t)m->cur_B * T, r0 = (size_t)b0 * T;
    int n = nb * T;
    const ParamTensors *p = &m->params;
    ActTensors *a = &m->acts;
    model_embed(m, a->x0 + r0 * D, m->inputs + r0, m->positions + r0, n); // (n) tokens -> (n, D)
    for (int l = 0; l < c->n_layers; l++) {
        LayerActs layer = train_layer_acts(m, l, b0, nb);
        if (pos_key_copies(&m->pos) > 1) { /* one shard (model_shards): the whole batch */
            layer.q2 = m->copy_mem;
            layer.k2 = m->copy_mem + BT * c->n_heads * m->head_dim;
            layer.keys2 = layer.k2, layer.copy_pos = m->copy_pos;
        }
        block_forward(m, l, &layer);
    }
    const float *last = a->res_out + ((c->n_layers - 1) * BT + r0) * D;
    rmsnorm_forward(a->lnf + r0 * D, a->lnf_rstd + r0, last, p->final_norm, n, D, c->norm_eps);
    matmul_forward(a->logits + r0 * V, a->lnf + r0 * D, p->lm_head, model_w16(m, p->lm_head), n, D, V); // -> (n, V)
    if (with_targets) crossentropy_losses(a->losses + r0, a->logits + r0 * V, m->targets + r0, n, V);  // -> (n)
}

int model_forward(Model *m, const int *inputs, const int *targets, const int *positions, int B, int T) {
    const ModelConfig *c = &m->cfg;
    if (pos_check_full_forward(&m->pos) != 0) return -1;
    if (!m->acts_mem || B < 1 || T < 1 || B > m->B || T > m->T)
        return pelab_fail("model_forward: batch [%d, %d] exceeds the allocated [%d, %d]", B, T, m->B, m->T);
    m->cur_B = B;
    m->cur_T = T;
    size_t BT = (size_t)B * T;
    for (size_t i = 0; i < BT; i++)
        if (inputs[i] < 0 || inputs[i] >= c->vocab_size)
            return pelab_fail("token id %d at index %zu: expected 0..%d", inputs[i], i, c->vocab_size - 1);
    if (targets)
        for (size_t i = 0; i < BT; i++)
            if (targets[i] < -1 || targets[i] >= c->vocab_size)
                return pelab_fail("target id %d at index %zu: expected -1 (ignored) or 0..%d", targets[i], i,
                                  c->vocab_size - 1);
    if (model_check_positions(m, positions, BT) != 0) return -1;
    memcpy(m->inputs, inputs, BT * sizeof(int));
    memcpy(m->positions, positions, BT * sizeof(int));
    if (targets) memcpy(m->targets, targets, BT * sizeof(int));

    if (pos_key_copies(&m->pos) > 1 && !m->copy_mem) { /* inference only, allocated on the first such forward */
        size_t rows = (size_t)m->B * m->T;
        m->copy_mem = xmalloc(rows * ((size_t)c->n_heads + c->n_kv_heads) * m->head_dim * sizeof(float));
        m->copy_pos = xmalloc(rows * sizeof(int));
    }
    int with_targets = targets != NULL;
    for_each_shard(m, model_shards(m, B), forward_shard, &with_targets);
    m->mean_loss = targets ? crossentropy_mean(m->acts.losses, m->targets, (int)BT) : 0.0f;
    /* with targets the loss carries a bad logit (train stops at a non-finite loss); without, the
     * logits are the result (probes, tests) */
    return targets ? 0 : model_check_logits(m, m->acts.logits, (int)BT, positions, 1);
}

/* the gradient scratch rows of a batch shard that starts at row r0 */
static GradScratch scratch_rows(const Model *m, size_t r0) {
    const ModelConfig *c = &m->cfg;
    const GradScratch *s = &m->scratch;
    size_t D = c->dim, F = c->hidden_dim, qdim = (size_t)c->n_heads * m->head_dim;
    size_t kvdim = (size_t)c->n_kv_heads * m->head_dim;
    return (GradScratch){.d_res = s->d_res + r0 * D, .d_ln = s->d_ln + r0 * D, .d_q = s->d_q + r0 * qdim,
                         .d_k = s->d_k + r0 * kvdim, .d_v = s->d_v + r0 * kvdim, .d_att_out = s->d_att_out + r0 * qdim,
                         .d_gate = s->d_gate + r0 * F, .d_up = s->d_up + r0 * F, .d_act = s->d_act + r0 * F,
                         .d_fgate = s->d_fgate + r0 * c->n_heads};
}

/* the backward of one batch shard, into m->grads (shard 0) or the shard's own zeroed block */
static void backward_shard(Model *m, int s, int n_shards, void *ctx) {
    const ModelConfig *c = &m->cfg;
    int b0, nb, T = m->cur_T, D = c->dim, V = c->vocab_size;
    shard_rows(m->cur_B, n_shards, s, &b0, &nb);
    size_t BT = (size_t)m->cur_B * T, r0 = (size_t)b0 * T;
    int n = nb * T;
    const PosScheme *ps = m->pos.scheme;
    const ParamTensors *p = &m->params;
    ParamTensors g = m->grads;
    if (s > 0) {
        float *block = m->shard_grads_mem + (size_t)(s - 1) * m->n_params;
        memset(block, 0, m->n_params * sizeof(float));
        point_tensors(m, block, &g);
    }
    ActTensors *a = &m->acts;
    GradScratch gs = scratch_rows(m, r0);
    float *logits = a->logits + r0 * V; /* now to hold dlogits */
    crossentropy_backward_rows(logits, m->targets + r0, n, V, *(const float *)ctx);             // (n, V)
    // (n, V) -> (n, D)
    matmul_backward(&(MatmulGrads){gs.d_ln, g.lm_head, 0}, logits, a->lnf + r0 * D, p->lm_head, model_w16(m, p->lm_head),
                    n, D, V);
    const float *last = a->res_out + ((c->n_layers - 1) * BT + r0) * D;
    memset(gs.d_res, 0, (size_t)n * D * sizeof(float));
    rmsnorm_backward(gs.d_res, g.final_norm, gs.d_ln, last, p->final_norm, a->lnf_rstd + r0, n, D);
    for (int l = c->n_layers - 1; l >= 0; l--) {
        LayerActs layer = train_layer_acts(m, l, b0, nb);
        block_backward_into(m, l, &layer, &g, &gs);
    }
    if (ps->input_backward && m->tensors[T_POS].numel)
        ps->input_backward(&m->pos, gs.d_res, m->positions + r0, n, g.pos);
    float token_scale = ps->token_scale ? ps->token_scale(&m->pos) : 1.0f;
    if (token_scale != 1.0f) /* x0 = token_scale * emb + p: d emb = token_scale * d x0 */
        for (size_t i = 0; i < (size_t)n * D; i++) gs.d_res[i] *= token_scale;
    embedding_backward(g.tok_emb, gs.d_res, m->inputs + r0, n, D);
}

void model_backward(Model *m) {
    size_t BT = (size_t)m->cur_B * m->cur_T;
    int counted = 0;
    for (size_t i = 0; i < BT; i++) counted += m->targets[i] >= 0;
    float scale = counted ? 1.0f / counted : 0.0f; /* the mean is over the whole batch's counted rows */
    int n_shards = model_shards(m, m->cur_B);
    if (n_shards > 1 && !m->shard_grads_mem)
        m->shard_grads_mem = xmalloc((size_t)(MODEL_SHARDS - 1) * m->n_params * sizeof(float));
    for_each_shard(m, n_shards, backward_shard, &scale);
    /* the shards' gradients in shard order, whatever the thread count */
    size_t np = m->n_params;
    float *g = m->grads_mem;
    const float *sg = m->shard_grads_mem;
    PAR_FOR(np * (n_shards - 1) >= 8 * PAR_MIN_WORK && !omp_in_parallel(), size_t, i, np,
        for (int s = 1; s < n_shards; s++) g[i] += sg[(size_t)(s - 1) * np + i];
    );
}

float model_largest_weight(const Model *m, const char **tensor) {
    float largest = 0.0f;
    *tensor = NULL;
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        const TensorInfo *ti = &m->tensors[t];
        int in_bf16 = m->bf16_only && model_weight_in_bf16_only(t); /* its float32 slots are never committed */
        for (size_t i = 0; i < ti->numel; i++) {
            float w = in_bf16 ? bf16_to_float(m->params_bf16[ti->offset + i]) : m->params_mem[ti->offset + i];
            if (fabsf(w) > largest) largest = fabsf(w), *tensor = ti->name;
        }
    }
    return largest;
}

/* A non-finite logit, or a row whose logits span more than float32 holds (its log-softmax would be
 * -inf), is an error, never a number: an activation overflowed, which only weights far outside any
 * trained model's range do (a sampler would pick token 0 of a NaN row, a loss would print nan).
 * Costs 1/dim of the head's product. */
int model_check_logits(const Model *m, const float *logits, int rows, const int *pos_of_row, int pos_step) {
    size_t V = (size_t)m->cfg.vocab_size;
    for (int r = 0; r < rows; r++) {
        const float *row = logits + (size_t)r * V;
        float lo = row[0], hi = row[0];
        size_t bad = V;
        for (size_t i = 0; i < V; i++) {
            if (!isfinite(row[i])) {
                bad = i;
                break;
            }
            lo = row[i] < lo ? row[i] : lo, hi = row[i] > hi ? row[i] : hi;
        }
        if (bad == V && isfinite(hi - lo)) continue;
        const char *tensor;
        float largest = model_largest_weight(m, &tensor);
        char what[96];
        if (bad < V)
            snprintf(what, sizeof what, "the logit of token %zu is %s", bad,
                     isnan(row[bad]) ? "nan" : row[bad] > 0 ? "inf" : "-inf");
        else snprintf(what, sizeof what, "the logits span %g to %g, more than float32 holds", lo, hi);
        return pelab_fail("%s%sposition %d: %s: an activation overflowed float32 (the largest weight is %g, in %s)",
                          m->source, m->source[0] ? ": " : "", pos_of_row[(size_t)r * pos_step], what, largest,
                          tensor ? tensor : "none");
    }
    return 0;
}
