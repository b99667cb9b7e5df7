/* hf_llama.c: a pelab RoPE model <-> a Hugging Face Llama checkpoint directory (see hf_llama.h). */
#include "hf_llama.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "hf_config.h"
#include "hf_index.h"
#include "rope_target.h"
#include "safetensors.h"

/* what HF's config says about m's rotation: rope_target_of's, the rule one HF has a rope_type or a
 * base for */
static int hf_rope_of(const Model *m, const char *name, RopeTarget *r) {
    if (rope_target_of(m, name, "HF's LlamaForCausalLM", r) != 0) return -1;
    const RopeRuleDef *d = rope_rule_def(&r->rule);
    if (!rope_rule_is_none(&r->rule) && !d->hf_scaling && !d->hf_theta) {
        char rule[POS_SPEC_MAX];
        rope_rule_describe(&r->rule, rule, sizeof rule);
        return pelab_fail("%s: scale=%s: HF has no rope_type for %s (a pelab-only rule)", name, rule, d->title);
    }
    return 0;
}

/* rope_theta, max_position_embeddings and rope_scaling of the config: what the rule's definition
 * says HF calls it (rope_scaling.h) */
static void put_rope(StrBuf *b, const Model *m, const RopeTarget *r, char *note, size_t note_len) {
    const RopeRule *u = &r->rule;
    const RopeRuleDef *d = rope_rule_def(u);
    double base = r->base;
    long max_pos = m->cfg.seq_len;
    note[0] = 0;
    if (d->hf_theta) base = d->hf_theta(u, r->base, m->head_dim, note, note_len);
    if (d->hf_l_is_max_pos) max_pos = r->orig_len;
    sb_printf(b, "  \"rope_theta\": %.17g,\n  \"max_position_embeddings\": %ld,\n", base, max_pos);
    if (d->hf_scaling) d->hf_scaling(u, rope_rule_length(u, r->orig_len), b);
    else sb_printf(b, "  \"rope_scaling\": null,\n");
}

static void config_json(StrBuf *b, const Model *m, const RopeTarget *r, int as_bf16, char *note, size_t note_len) {
    const ModelConfig *c = &m->cfg;
    char spec[POS_SPEC_MAX];
    pos_spec(&m->pos, spec, sizeof spec);
    /* q/k/v biases: Qwen2's decoder (Llama's attention_bias would bias o_proj too) */
    /* q/k/v biases: Qwen2; a sliding window: Mistral (Llama's decoder with its window) */
    sb_printf(b, "{\n  \"architectures\": [\"%s\"],\n  \"model_type\": \"%s\",\n",
              c->qkv_bias ? "Qwen2ForCausalLM" : c->sliding_window ? "MistralForCausalLM" : "LlamaForCausalLM",
              c->qkv_bias ? "qwen2" : c->sliding_window ? "mistral" : "llama");
    if (c->sliding_window) sb_printf(b, "  \"sliding_window\": %d,\n", c->sliding_window);
    sb_printf(b, "  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n  \"num_attention_heads\": %d,\n"
                 "  \"num_key_value_heads\": %d,\n  \"num_hidden_layers\": %d,\n  \"head_dim\": %d,\n"
                 "  \"rms_norm_eps\": %.9g,\n  \"vocab_size\": %d,\n",
              c->dim, c->hidden_dim, c->n_heads, c->n_kv_heads, c->n_layers, m->head_dim, c->norm_eps, c->vocab_size);
    put_rope(b, m, r, note, note_len);
    /* pelab_*: what HF ignores but a re-import restores exactly (the layout the rows were in, L) */
    if (!c->qkv_bias) sb_printf(b, "  \"attention_bias\": false,\n  \"mlp_bias\": false,\n");
    else sb_printf(b, "  \"use_sliding_window\": false,\n");
    sb_printf(b, "  \"tie_word_embeddings\": %s,\n  \"hidden_act\": \"silu\",\n"
                 "  \"attention_dropout\": 0.0,\n  \"torch_dtype\": \"%s\",\n"
                 "  \"pelab_seq_len\": %d,\n  \"pelab_layout\": \"%s\"\n}\n",
              c->tied ? "true" : "false", as_bf16 ? "bfloat16" : "float32", c->seq_len, r->half ? "half" : "interleaved");
}

/* pelab tensor and its HF name ("%d": the layer) */
static const struct {
    int t;
    const char *hf;
} tensor_map[] = {
    {T_TOK_EMB, "model.embed_tokens.weight"},
    {T_ATTN_NORM, "model.layers.%d.input_layernorm.weight"},
    {T_WQ, "model.layers.%d.self_attn.q_proj.weight"},
    {T_WK, "model.layers.%d.self_attn.k_proj.weight"},
    {T_WV, "model.layers.%d.self_attn.v_proj.weight"},
    {T_WO, "model.layers.%d.self_attn.o_proj.weight"},
    {T_MLP_NORM, "model.layers.%d.post_attention_layernorm.weight"},
    {T_W1, "model.layers.%d.mlp.gate_proj.weight"},
    {T_W3, "model.layers.%d.mlp.up_proj.weight"},
    {T_W2, "model.layers.%d.mlp.down_proj.weight"},
    {T_FINAL_NORM, "model.norm.weight"},
    {T_LM_HEAD, "lm_head.weight"},
    {T_BQ, "model.layers.%d.self_attn.q_proj.bias"}, /* Qwen2's; absent (no tensor) in Llama */
    {T_BK, "model.layers.%d.self_attn.k_proj.bias"},
    {T_BV, "model.layers.%d.self_attn.v_proj.bias"},
};
enum { N_MAP = sizeof tensor_map / sizeof tensor_map[0] };

/* the HF tensors of m in file order: one per layer for stacked tensors (names, per-layer shapes,
 * pointers into the parameter block, NULL before it is allocated); *n set; the caller frees the array */
static StTensor *hf_tensors(const Model *m, int *n) {
    StTensor *t = xcalloc((size_t)(N_MAP * m->cfg.n_layers + N_MAP), sizeof *t);
    *n = 0;
    for (int i = 0; i < N_MAP; i++) {
        const TensorInfo *info = &m->tensors[tensor_map[i].t];
        if ((tensor_map[i].t == T_LM_HEAD && m->cfg.tied) || info->numel == 0) continue;
        int stacked = strstr(tensor_map[i].hf, "%d") != NULL, layers = stacked ? m->cfg.n_layers : 1;
        for (int l = 0; l < layers; l++) {
            StTensor *e = &t[(*n)++];
            snprintf(e->name, sizeof e->name, tensor_map[i].hf, l);
            e->info.ndim = info->ndim - stacked;
            memcpy(e->info.shape, info->shape + stacked, sizeof(int) * (size_t)e->info.ndim);
            e->info.numel = info->numel / (size_t)layers;
            e->data = m->params_mem ? m->params_mem + info->offset + (size_t)l * e->info.numel : NULL;
        }
    }
    return t;
}

/* the heads of a q or k projection's rows (the rows the rotation pairs), 0 for other tensors */
static int qk_heads(const Model *m, const char *hf_name) {
    if (strstr(hf_name, ".q_proj.")) return m->cfg.n_heads;
    if (strstr(hf_name, ".k_proj.")) return m->cfg.n_kv_heads;
    return 0;
}

/* tensors t[0..n) as shards of at most shard_bytes of data (a tensor past it gets a shard of its own)
 * and the index naming them: model-0000K-of-0000N.safetensors, as HF's save_pretrained names them */
static int write_shards(const char *dir, const StTensor *t, int n, size_t shard_bytes, int as_bf16) {
    int *first = xmalloc(sizeof(int) * (size_t)(n + 1)), n_shards = 0;
    size_t used = 0, total = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = t[i].info.numel * (as_bf16 ? sizeof(bf16) : sizeof(float));
        if (i == 0 || used + bytes > shard_bytes) first[n_shards++] = i, used = 0;
        used += bytes, total += bytes;
    }
    first[n_shards] = n;
    StrBuf index = {0}, path = {0};
    sb_printf(&index, "{\n  \"metadata\": {\"total_size\": %zu},\n  \"weight_map\": {", total);
    int rc = 0;
    for (int k = 0; k < n_shards && rc == 0; k++) {
        char file[64];
        snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", k + 1, n_shards);
        path.len = 0;
        sb_printf(&path, "%s/%s", dir, file);
        rc = st_write(sb_str(&path), t + first[k], first[k + 1] - first[k], "pt", as_bf16);
        for (int i = first[k]; i < first[k + 1]; i++)
            sb_printf(&index, "%s\n    \"%s\": \"%s\"", i ? "," : "", t[i].name, file);
    }
    sb_puts(&index, "\n  }\n}\n");
    path.len = 0;
    sb_printf(&path, "%s/model.safetensors.index.json", dir);
    if (rc == 0) rc = write_bytes_atomic(sb_str(&path), index.s, index.len);
    free(first);
    sb_free(&index), sb_free(&path);
    return rc;
}

int hf_llama_write(const char *dir, const Model *m, char *note, size_t note_len) {
    return hf_llama_write_sharded(dir, m, 0, 0, note, note_len);
}

int hf_llama_write_sharded(const char *dir, const Model *m, size_t shard_bytes, int as_bf16, char *note, size_t note_len) {
    RopeTarget r;
    if (m->cfg.pattern.n) {
        char spec[PATTERN_SPEC_MAX + 1];
        pattern_spec(&m->cfg.pattern, spec, sizeof spec);
        return pelab_fail("%s: --attn-pattern %s: a Llama/Mistral/Qwen2 config has one attention for every layer", dir, spec);
    }
    if (m->cfg.sliding_window && m->cfg.qkv_bias)
        return pelab_fail("%s: a sliding window with q/k/v biases: HF's Qwen2 windows only its layers past "
                          "max_window_layers, pelab every layer", dir);
    if (hf_rope_of(m, dir, &r) != 0 || make_dirs(dir) != 0) return -1;
    StrBuf cfg = {0}, path = {0};
    config_json(&cfg, m, &r, as_bf16, note, note_len);
    int n;
    StTensor *t = hf_tensors(m, &n);
    float *copies[2 * POS_MAX_LAYERS] = {0};
    int n_copies = 0;
    for (int i = 0; i < n && !r.half; i++) { /* HF rotates halves: reorder copies of the q and k rows */
        int heads = qk_heads(m, t[i].name);
        if (!heads) continue;
        float *w = xmalloc(t[i].info.numel * sizeof(float));
        memcpy(w, t[i].data, t[i].info.numel * sizeof(float));
        rotary_rows_permute(w, heads, m->head_dim, t[i].info.ndim == 1 ? 1 : m->cfg.dim, 1); /* a bias: one column */
        t[i].data = copies[n_copies++] = w;
    }
    /* the tensors first: a failed write leaves no config.json that names a missing model.safetensors.
     * One form only: the other's file from an earlier export would be read instead (import takes
     * model.safetensors first) or point at old shards */
    size_t bytes = 0;
    for (int i = 0; i < n; i++) bytes += t[i].info.numel * (as_bf16 ? sizeof(bf16) : sizeof(float));
    int sharded = shard_bytes > 0 && bytes > shard_bytes;
    sb_printf(&path, "%s/%s", dir, sharded ? "model.safetensors" : "model.safetensors.index.json");
    if (unlink(sb_str(&path)) != 0 && errno != ENOENT) {
        int rc = pelab_fail("%s: cannot remove the earlier export's file: %s", sb_str(&path), strerror(errno));
        for (int i = 0; i < n_copies; i++) free(copies[i]);
        free(t);
        sb_free(&cfg), sb_free(&path);
        return rc;
    }
    path.len = 0;
    sb_printf(&path, "%s/model.safetensors", dir);
    int rc = sharded ? write_shards(dir, t, n, shard_bytes, as_bf16) : st_write(sb_str(&path), t, n, "pt", as_bf16);
    path.len = 0;
    sb_printf(&path, "%s/config.json", dir);
    if (rc == 0) rc = write_bytes_atomic(sb_str(&path), cfg.s, cfg.len);
    for (int i = 0; i < n_copies; i++) free(copies[i]);
    free(t);
    sb_free(&cfg), sb_free(&path);
    return rc;
}

/* a config's count as an int; -1 (which config_validate refuses) past INT_MAX */
static int as_int(long v) { return v > INT_MAX ? -1 : (int)v; }

/* the pelab model config.json describes; -1 naming the field HF's Llama has and pelab does not */
static int model_of_config(const HfConfig *h, const char *name, ModelConfig *c) {
    /* Mistral is Llama's decoder with a sliding window (reported by the caller, not applied) */
    int llama = !strcmp(h->model_type, "llama") || !strcmp(h->arch, "LlamaForCausalLM");
    int mistral = !strcmp(h->model_type, "mistral") || !strcmp(h->arch, "MistralForCausalLM");
    int qwen2 = !strcmp(h->model_type, "qwen2") || !strcmp(h->arch, "Qwen2ForCausalLM"); /* + q/k/v biases */
    if (!llama && !mistral && !qwen2)
        return pelab_fail("%s: model_type \"%s\": pelab imports LlamaForCausalLM, MistralForCausalLM and "
                          "Qwen2ForCausalLM checkpoints only", name, h->model_type);
    if (h->hidden_act[0] && strcmp(h->hidden_act, "silu") != 0)
        return pelab_fail("%s: hidden_act \"%s\": pelab's MLP is SwiGLU (silu)", name, h->hidden_act);
    if (h->attention_bias || h->mlp_bias) return pelab_fail("%s: attention_bias / mlp_bias: pelab's layers have no bias", name);
    if (h->head_dim_given && h->n_heads && h->head_dim * h->n_heads != h->hidden_size)
        return pelab_fail("%s: head_dim %ld x num_attention_heads %ld != hidden_size %ld: pelab's heads split the width",
                          name, h->head_dim, h->n_heads, h->hidden_size);
    if (h->fraction != 1) return pelab_fail("%s: partial_rotary_factor %g: HF's Llama rotates whole heads", name, h->fraction);
    if (h->sliding_window && !mistral && !qwen2)
        return pelab_fail("%s: sliding_window %ld: pelab attends to the whole context", name, h->sliding_window);
    if (h->n_sliding_layers) return pelab_fail("%s: layer_types with sliding_attention: pelab attends to the whole context", name);
    if (h->n_nope_layers) return pelab_fail("%s: no_rope_layers: HF's Llama rotates every layer", name);
    memset(c, 0, sizeof *c);
    c->vocab_size = as_int(h->vocab_size), c->dim = as_int(h->hidden_size), c->n_layers = as_int(h->n_layers);
    c->n_heads = as_int(h->n_heads), c->n_kv_heads = as_int(h->n_kv_heads), c->hidden_dim = as_int(h->intermediate_size);
    c->seq_len = as_int(h->pelab_seq_len ? h->pelab_seq_len : h->max_pos);
    c->norm_eps = h->rms_norm_eps > 0 ? (float)h->rms_norm_eps : 1e-6f; /* LlamaConfig's default */
    c->tied = h->tied > 0; /* LlamaConfig's default: untied */
    c->qkv_bias = qwen2;
    if (config_validate(c) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: %s", name, why);
    }
    return 0;
}

/* the folder a model's files must resolve into (realpath'ed, malloc'd): dir, or for a snapshot of
 * the Hugging Face hub cache (.../snapshots/REV, whose files are symlinks to ../../blobs/HASH) the
 * repository folder two levels up; NULL (errno set) when dir does not resolve */
static char *model_root(const char *dir) {
    char *real = realpath(dir, NULL);
    if (!real) return NULL;
    char *last = strrchr(real, '/'); /* real: .../PARENT/REV */
    if (last && last > real) {
        *last = 0;
        char *prev = strrchr(real, '/'); /* real: .../REPO/PARENT */
        if (prev && prev > real && !strcmp(prev + 1, "snapshots")) *prev = 0; /* .../REPO */
        else *last = '/';
    }
    return real;
}

/* dir/name, resolved inside the model folder: mapped (map non-NULL: a shard, whose header is
 * checked before a byte of its tensors is read), else read whole up to max bytes */
static int open_model_file(const char *dir, const char *name, size_t max, const char *what, unsigned char **buf,
                           size_t *len, MappedFile *map) {
    StrBuf path = {0};
    sb_printf(&path, "%s/%s", dir, name);
    char *root = model_root(dir);
    int rc = !root ? pelab_fail("%s: cannot open: %s", sb_str(&path), strerror(errno))
             : map ? map_file_within(root, "the model folder", sb_str(&path), map)
                   : read_file_within(root, "the model folder", sb_str(&path), max, what, buf, len);
    sb_free(&path);
    free(root);
    return rc;
}

int hf_read_model_file(const char *dir, const char *name, size_t max, const char *what, unsigned char **buf, size_t *len) {
    return open_model_file(dir, name, max, what, buf, len, NULL);
}

/* the weights: model.safetensors, or the shards model.safetensors.index.json names */
typedef struct {
    int n;
    MappedFile *map;
    StFile *f;
    char **path;
    HfIndex index; /* n_files == n when sharded */
    size_t data_len;
} Shards;

/* shard k of dir (its file name in the folder: name), never a file an earlier shard was already */
static int shard_load(Shards *s, const char *dir, const char *name, dev_t *dev, ino_t *ino) {
    int k = s->n++;
    StrBuf p = {0};
    sb_printf(&p, "%s/%s", dir, name);
    s->path[k] = p.s;
    struct stat st;
    if (open_model_file(dir, name, 0, NULL, NULL, NULL, &s->map[k]) != 0) return -1;
    if (stat(s->path[k], &st) != 0) return pelab_fail("%s: cannot stat: %s", s->path[k], strerror(errno));
    for (int j = 0; j < k; j++)
        if (dev[j] == st.st_dev && ino[j] == st.st_ino)
            return pelab_fail("%s: the same file as %s (the index names one shard twice)", s->path[k],
                              strrchr(s->path[j], '/') + 1);
    dev[k] = st.st_dev, ino[k] = st.st_ino;
    if (st_open(&s->f[k], s->map[k].data ? s->map[k].data : (const unsigned char *)"", s->map[k].len, s->path[k]) != 0 || st_check_layout(&s->f[k], s->path[k]) != 0) return -1;
    s->data_len += s->f[k].data_len;
    return 0;
}

static int shards_open(Shards *s, const char *dir) {
    memset(s, 0, sizeof *s);
    StrBuf p = {0};
    sb_printf(&p, "%s/model.safetensors", dir);
    int rc = 0, n = 1;
    dev_t *dev = NULL;
    ino_t *ino = NULL;
    if (access(sb_str(&p), F_OK) != 0) { /* a dangling symlink counts as absent */
        sb_puts(&p, ".index.json");
        unsigned char *buf;
        size_t len;
        if (access(sb_str(&p), F_OK) != 0)
            rc = pelab_fail("%s: neither model.safetensors nor model.safetensors.index.json (a sharded checkpoint)", dir);
        else if ((rc = hf_read_model_file(dir, "model.safetensors.index.json", FILE_MAX_CONFIG, "a safetensors index", &buf,
                                          &len)) == 0) {
            rc = hf_index_parse(&s->index, buf, len, sb_str(&p));
            free(buf);
            n = s->index.n_files;
        }
    }
    if (rc == 0) {
        s->map = xcalloc((size_t)n, sizeof *s->map), s->f = xcalloc((size_t)n, sizeof *s->f);
        s->path = xcalloc((size_t)n, sizeof *s->path);
        dev = xcalloc((size_t)n, sizeof *dev), ino = xcalloc((size_t)n, sizeof *ino);
    }
    for (int k = 0; k < n && rc == 0; k++)
        rc = shard_load(s, dir, s->index.n_files ? s->index.files[k] : "model.safetensors", dev, ino);
    free(dev), free(ino);
    sb_free(&p);
    return rc;
}

static void shards_close(Shards *s) {
    for (int k = 0; k < s->n; k++) {
        st_close(&s->f[k]);
        unmap_file(&s->map[k]), free(s->path[k]);
    }
    free(s->map), free(s->f), free(s->path);
    hf_index_free(&s->index);
    memset(s, 0, sizeof *s);
}

/* the shard holding tensor (the only file when not sharded), -1 if the index does not name it */
static int shard_of(const Shards *s, const char *tensor) {
    return s->index.n_files ? hf_index_file_of(&s->index, tensor) : 0;
}

/* every header key is a tensor this model reads (or a rotary_emb.inv_freq table, recomputed), in
 * the shard the index names for it; every tensor the index names is in its shard */
static int check_known(const Shards *s, const StTensor *t, int n, int tied) {
    for (int k = 0; k < s->n; k++)
        for (const JsonNode *e = s->f[k].doc.root->child; e; e = e->next) {
            if (!strcmp(e->key, "__metadata__")) continue;
            int known = strstr(e->key, "rotary_emb.inv_freq") || (tied && !strcmp(e->key, "lm_head.weight"));
            for (int i = 0; i < n && !known; i++) known = !strcmp(e->key, t[i].name);
            if (!known)
                return st_fail(s->path[k], "tensor %.100s: not a weight of this model (a bias outside Qwen2's q/k/v, or another layer)", e->key);
            if (shard_of(s, e->key) != k)
                return st_fail(s->path[k], "tensor %.100s: the index places it in %s", e->key,
                               shard_of(s, e->key) < 0 ? "no shard" : s->index.files[shard_of(s, e->key)]);
        }
    for (int i = 0; i < s->index.n_tensors; i++)
        if (!json_get(s->f[s->index.file_of[i]].doc.root, s->index.tensors[i]))
            return st_fail(s->path[s->index.file_of[i]], "tensor %.100s: named by the index, not in this shard", s->index.tensors[i]);
    return 0;
}

/* the file must hold every weight at 2 bytes or more before the model is allocated from the config:
 * a forged config cannot demand a huge allocation */
static int check_file_size(const ModelConfig *c, size_t data_len, const char *name) {
    double D = c->dim, kv = (double)c->n_kv_heads * (c->dim / c->n_heads);
    double floats = (double)c->vocab_size * D + c->n_layers * (2 * D * D + 2 * kv * D + 3.0 * c->hidden_dim * D);
    if (floats * 2 > (double)data_len)
        return st_fail(name, "data section is %zu bytes, too small for the %.0f weights of its config.json", data_len,
                       floats);
    return 0;
}

/* every header tensor a weight of m (laid out, no block yet) with its dtype, shape and byte range, in
 * its shard: before the model the config.json declares is allocated */
static int check_tensors(const Shards *s, const Model *m, const char *dir) {
    int n;
    StTensor *t = hf_tensors(m, &n);
    int rc = check_known(s, t, n, m->cfg.tied);
    for (int i = 0; i < n && rc == 0; i++) {
        int k = shard_of(s, t[i].name);
        rc = k < 0 ? pelab_fail("%s: the index names no shard for tensor %s", dir, t[i].name)
                   : st_check_f32(&s->f[k], t[i].name, &t[i].info, s->path[k]);
    }
    free(t);
    return rc;
}

int hf_llama_read(const char *dir, Model *m, long *sliding_window) {
    memset(m, 0, sizeof *m);
    if (sliding_window) *sliding_window = 0;
    StrBuf cfg_path = {0};
    sb_printf(&cfg_path, "%s/config.json", dir);
    const char *cname = sb_str(&cfg_path);
    HfConfig h;
    ModelConfig cfg;
    char spec[POS_SPEC_MAX];
    Shards s = {0};
    unsigned char *cbuf;
    size_t clen;
    int rc = hf_read_model_file(dir, "config.json", FILE_MAX_CONFIG, "a config.json", &cbuf, &clen);
    if (rc == 0) {
        rc = hf_config_parse((const char *)cbuf, clen, cname, &h);
        free(cbuf);
    }
    if (rc == 0 && h.n_warn) rc = pelab_fail("%s: %s", cname, h.warn[0]);
    if (rc == 0) rc = model_of_config(&h, cname, &cfg);
    if (rc == 0 && sliding_window) *sliding_window = h.sliding_window;
    /* pelab's own export: the rows go back to their interleaved order (below), so the spec is built
     * interleaved: the same model, bit for bit (never an edit of the finished spec string) */
    if (rc == 0 && h.pelab_interleaved) h.interleaved = 1;
    if (rc == 0) rc = hf_config_pelab_spec(&h, cname, spec, sizeof spec, NULL, 0, NULL, 0);
    if (rc == 0) rc = shards_open(&s, dir);
    if (rc == 0) rc = check_file_size(&cfg, s.data_len, s.n == 1 ? s.path[0] : dir);
    /* laid out, every tensor of the files matched to it, and only then allocated */
    if (rc == 0 && model_layout(m, &cfg, spec) != 0) rc = st_fail(cname, "%s", pelab_errmsg);
    if (rc == 0) rc = check_tensors(&s, m, dir);
    if (rc == 0 && model_alloc_params(m) != 0) rc = st_fail(cname, "%s", pelab_errmsg);
    if (rc == 0) {
        int n;
        StTensor *t = hf_tensors(m, &n);
        for (int i = 0; i < n && rc == 0; i++) {
            float *dst = (float *)t[i].data; /* hf_tensors points into m's own block */
            int k = shard_of(&s, t[i].name); /* check_tensors found every one */
            rc = st_read_f32(&s.f[k], t[i].name, &t[i].info, dst, s.path[k]);
            if (rc == 0 && h.pelab_interleaved && qk_heads(m, t[i].name))
                rotary_rows_permute(dst, qk_heads(m, t[i].name), m->head_dim, t[i].info.ndim == 1 ? 1 : cfg.dim, 0);
        }
        free(t);
    }
    shards_close(&s);
    sb_free(&cfg_path);
    if (rc != 0) model_free(m);
    return rc;
}
