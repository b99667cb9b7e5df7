/* hf_config.c: a Hugging Face config.json, read for its position encoding (see hf_config.h). */
#include "hf_config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/json.h"

static void warn(HfConfig *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(HfConfig *c, const char *fmt, ...) {
    if (c->n_warn >= HF_MAX_WARN) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->warn[c->n_warn++], HF_WARN_LEN, fmt, ap);
    va_end(ap);
}

/* A number member >= lo into *out: 1 if set, 0 if absent or null, -1 (one warning) if unusable */
static int get_num(HfConfig *c, const JsonNode *obj, const char *prefix, const char *key, double lo, double *out) {
    const JsonNode *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type != JSON_NUMBER) {
        warn(c, "%s%s: expected a number, got %s (ignored)", prefix, key, json_type_name(v->type));
        return -1;
    }
    if (!isfinite(v->number) || v->number < lo) {
        warn(c, "%s%s: %s: expected a number >= %g (ignored)", prefix, key, v->str, lo);
        return -1;
    }
    *out = v->number;
    return 1;
}

/* a positive integer member (lengths, counts) */
static int get_long(HfConfig *c, const JsonNode *obj, const char *prefix, const char *key, long *out) {
    const JsonNode *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type != JSON_NUMBER || !v->is_int || v->int_value < 1 || v->int_value > (1LL << 40)) {
        warn(c, "%s%s: %s: expected a positive integer (ignored)", prefix, key,
             v->type == JSON_NUMBER ? v->str : json_type_name(v->type));
        return -1;
    }
    *out = (long)v->int_value;
    return 1;
}

static int get_bool(HfConfig *c, const JsonNode *obj, const char *prefix, const char *key, int *out) {
    const JsonNode *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type != JSON_TRUE && v->type != JSON_FALSE) {
        warn(c, "%s%s: expected true or false, got %s (ignored)", prefix, key, json_type_name(v->type));
        return -1;
    }
    *out = v->type == JSON_TRUE;
    return 1;
}

static void get_str(HfConfig *c, const JsonNode *obj, const char *key, char *out, size_t n) {
    const JsonNode *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) return;
    if (v->type != JSON_STRING) warn(c, "%s: expected a string, got %s (ignored)", key, json_type_name(v->type));
    else snprintf(out, n, "%s", v->str);
}

/* the fields a rope_scaling / rope_parameters object may hold, across every rope_type */
static const char *const rule_keys[] = {"type", "rope_type", "factor", "original_max_position_embeddings",
                                        "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor",
                                        "truncate", "low_freq_factor", "high_freq_factor", "short_factor",
                                        "long_factor", "short_mscale", "long_mscale", "rope_theta",
                                        "partial_rotary_factor"};
static const char *const rule_types[] = {"default", "linear", "dynamic", "yarn", "longrope", "llama3"};

static void count_factors(HfConfig *c, const JsonNode *obj, const char *prefix, const char *key, int *n) {
    const JsonNode *a = json_get(obj, key);
    if (!a || a->type == JSON_NULL) return;
    if (a->type != JSON_ARRAY) {
        warn(c, "%s%s: expected an array of numbers, got %s (ignored)", prefix, key, json_type_name(a->type));
        return;
    }
    int i = 0;
    for (const JsonNode *e = a->child; e; e = e->next, i++)
        if (e->type != JSON_NUMBER || !(e->number > 0)) {
            warn(c, "%s%s[%d]: expected a number > 0 (the factors are ignored)", prefix, key, i);
            return;
        }
    *n = i;
}

static void read_rule(HfConfig *c, const JsonNode *root) {
    const JsonNode *r = json_get(root, "rope_scaling");
    c->scaling_key = "rope_scaling";
    if (!r || r->type == JSON_NULL) r = json_get(root, "rope_parameters"), c->scaling_key = "rope_parameters";
    if (!r || r->type == JSON_NULL) {
        c->scaling_key = NULL;
        return;
    }
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s.", c->scaling_key);
    if (r->type != JSON_OBJECT) {
        warn(c, "%s: expected an object or null, got %s (ignored)", c->scaling_key, json_type_name(r->type));
        c->scaling_key = NULL;
        return;
    }
    for (const JsonNode *f = r->child; f; f = f->next) {
        size_t k = 0;
        while (k < sizeof rule_keys / sizeof rule_keys[0] && strcmp(f->key, rule_keys[k]) != 0) k++;
        if (k == sizeof rule_keys / sizeof rule_keys[0]) warn(c, "%s%s: unknown field (ignored)", prefix, f->key);
    }
    const JsonNode *t = json_get(r, "rope_type");
    if (!t) t = json_get(r, "type");
    if (!t) {
        warn(c, "%s: no \"rope_type\" or \"type\" (treated as no rule)", c->scaling_key);
        return;
    }
    if (t->type != JSON_STRING) {
        warn(c, "%s%s: expected a string, got %s (treated as no rule)", prefix, t->key, json_type_name(t->type));
        return;
    }
    size_t k = 0;
    while (k < sizeof rule_types / sizeof rule_types[0] && strcmp(t->str, rule_types[k]) != 0) k++;
    if (k == sizeof rule_types / sizeof rule_types[0]) {
        warn(c, "%s%s: \"%.40s\": unknown rope type (expected default, linear, dynamic, yarn, longrope or llama3)",
             prefix, t->key, t->str);
        snprintf(c->rope_type, sizeof c->rope_type, "?%.30s", t->str);
        return;
    }
    if (k > 0) snprintf(c->rope_type, sizeof c->rope_type, "%s", t->str);
    get_num(c, r, prefix, "rope_theta", 1, &c->theta);
    get_num(c, r, prefix, "partial_rotary_factor", 1e-9, &c->fraction);
    get_num(c, r, prefix, "factor", 1e-9, &c->factor);
    get_num(c, r, prefix, "beta_fast", 0, &c->beta_fast);
    get_num(c, r, prefix, "beta_slow", 0, &c->beta_slow);
    get_num(c, r, prefix, "mscale", 0, &c->mscale);
    get_num(c, r, prefix, "mscale_all_dim", 0, &c->mscale_all_dim);
    get_num(c, r, prefix, "attention_factor", 1e-9, &c->attention_factor);
    get_num(c, r, prefix, "low_freq_factor", 1e-9, &c->low_freq);
    get_num(c, r, prefix, "high_freq_factor", 1e-9, &c->high_freq);
    get_bool(c, r, prefix, "truncate", &c->truncate);
    /* Phi-3 keeps it at the top level */
    if (get_long(c, r, prefix, "original_max_position_embeddings", &c->orig_max) == 0)
        get_long(c, root, "", "original_max_position_embeddings", &c->orig_max);
    count_factors(c, r, prefix, "short_factor", &c->n_short);
    count_factors(c, r, prefix, "long_factor", &c->n_long);
    int needs_factor = strcmp(c->rope_type, "longrope") != 0 && c->rope_type[0];
    if (needs_factor && c->factor == 0) warn(c, "%sfactor: missing (type %s needs it)", prefix, c->rope_type);
    if (!strcmp(c->rope_type, "llama3") && !c->orig_max)
        warn(c, "%soriginal_max_position_embeddings: missing (type llama3 needs it)", prefix);
    if (!strcmp(c->rope_type, "longrope") && (c->n_short == 0 || c->n_short != c->n_long))
        warn(c, "%sshort_factor / long_factor: expected two arrays of the same length (%d and %d)", prefix,
             c->n_short, c->n_long);
}

/* the rotary layout, partial rotary and head size of a RoPE model */
static void read_rotary(HfConfig *c, const JsonNode *root) {
    long rotary_dim = 0, rope_head = 0;
    int from_dim = 0;
    if (get_num(c, root, "", "rope_theta", 1, &c->theta) == 0) get_num(c, root, "", "rotary_emb_base", 1, &c->theta);
    if (get_num(c, root, "", "partial_rotary_factor", 1e-9, &c->fraction) == 0)
        get_num(c, root, "", "rotary_pct", 1e-9, &c->fraction);
    get_long(c, root, "", "rotary_dim", &rotary_dim);
    if (get_long(c, root, "", "qk_rope_head_dim", &rope_head) == 1) c->mla = 1;
    c->rot_head_dim = c->mla ? rope_head : c->head_dim;
    if (rotary_dim && !json_get(root, "partial_rotary_factor") && !json_get(root, "rotary_pct") && c->head_dim)
        c->fraction = (double)rotary_dim / c->head_dim, from_dim = 1;
    /* clamped after rotary_dim became a fraction: a rotary_dim past the head is as wrong as a factor past 1 */
    if (c->fraction > 1) {
        if (from_dim) warn(c, "rotary_dim %ld: more than head_dim %ld (taken as the whole head)", rotary_dim, c->head_dim);
        else warn(c, "partial_rotary_factor: %g: expected at most 1 (taken as 1)", c->fraction);
        c->fraction = 1;
    }
    /* GPT-J and CodeGen rotate adjacent pairs (rotate_every_two); HF's Llama family rotates halves */
    c->interleaved = !strcmp(c->model_type, "gptj") || !strcmp(c->model_type, "codegen");
    read_rule(c, root);
}

/* which mechanism: explicit markers first, then the model type's */
static void detect_position(HfConfig *c, const JsonNode *root) {
    const JsonNode *attn = json_get(root, "attn_config");
    int alibi = 0, learned_pos = 0;
    if (attn && attn->type == JSON_OBJECT) get_bool(c, attn, "attn_config.", "alibi", &alibi);
    get_bool(c, root, "", "alibi", &alibi); /* Falcon */
    if (!strcmp(c->model_type, "bloom")) alibi = 1;
    get_bool(c, root, "", "learned_pos_emb", &learned_pos); /* MPT */
    if (attn && attn->type == JSON_OBJECT) get_num(c, attn, "attn_config.", "alibi_bias_max", 1e-9, &c->alibi_bias_max);
    if (alibi) {
        c->pos = HF_POS_ALIBI;
        if (learned_pos) warn(c, "learned_pos_emb: true besides ALiBi: pelab has one position scheme per model");
        return;
    }
    if (json_get(root, "relative_attention_num_buckets")) {
        c->pos = HF_POS_T5;
        c->t5_buckets = 32, c->t5_max_distance = 128; /* T5Config's defaults */
        get_long(c, root, "", "relative_attention_num_buckets", &c->t5_buckets);
        get_long(c, root, "", "relative_attention_max_distance", &c->t5_max_distance);
        return;
    }
    static const char *const learned_types[] = {"gpt2", "gpt_bigcode", "opt", "gpt_neo", "biogpt", "xglm"};
    for (size_t i = 0; i < sizeof learned_types / sizeof learned_types[0]; i++)
        if (!strcmp(c->model_type, learned_types[i])) c->pos = HF_POS_LEARNED;
    if (learned_pos || (json_get(root, "n_positions") && !json_get(root, "rotary_dim"))) c->pos = HF_POS_LEARNED;
    if (c->pos == HF_POS_LEARNED) return;
    static const char *const rope_keys[] = {"rope_theta", "rotary_emb_base", "rope_scaling", "rope_parameters",
                                            "rotary_pct", "partial_rotary_factor", "rotary_dim", "qk_rope_head_dim"};
    static const char *const rope_types[] = {"llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2",
                                             "gemma3_text", "phi", "phi3", "qwen", "gpt_neox", "gptj", "falcon", "olmo",
                                             "starcoder2", "stablelm", "cohere", "deepseek_v3", "gpt_oss", "llama4_text"};
    for (size_t i = 0; i < sizeof rope_keys / sizeof rope_keys[0]; i++)
        if (json_get(root, rope_keys[i])) c->pos = HF_POS_ROPE;
    for (size_t i = 0; i < sizeof rope_types / sizeof rope_types[0]; i++)
        if (!strcmp(c->model_type, rope_types[i])) c->pos = HF_POS_ROPE;
    if (c->pos == HF_POS_ROPE) read_rotary(c, root);
    else warn(c, "model_type \"%.40s\": no position mechanism recognised (no rope_theta, n_positions, alibi or "
                 "relative_attention_num_buckets)", c->model_type);
}

/* sliding windows and NoPE layers: per-layer structure pelab's spec partly describes */
static void read_layers(HfConfig *c, const JsonNode *root) {
    int use_sw = 1;
    get_bool(c, root, "", "use_sliding_window", &use_sw);
    get_long(c, root, "", "sliding_window", &c->sliding_window);
    if (!use_sw) c->sliding_window = 0;
    const JsonNode *lt = json_get(root, "layer_types");
    int l = 0, odd_type = 0;
    if (lt && lt->type == JSON_ARRAY) {
        c->layer_pattern = 1;
        for (const JsonNode *e = lt->child; e; e = e->next, l++) {
            int sliding = e->type == JSON_STRING && strcmp(e->str, "sliding_attention") == 0;
            int chunked = e->type == JSON_STRING && strcmp(e->str, "chunked_attention") == 0;
            int full = e->type == JSON_STRING && strcmp(e->str, "full_attention") == 0;
            c->n_sliding_layers += sliding;
            if (!sliding && !chunked && !full && !odd_type++)
                warn(c, "layer_types[%d]: %s: expected \"sliding_attention\", \"chunked_attention\" or "
                        "\"full_attention\" (read as full)", l, e->type == JSON_STRING ? e->str : json_type_name(e->type));
            if (l < HF_MAX_LAYERS) c->layer_kind[l] = sliding ? HF_LAYER_SLIDING : chunked ? HF_LAYER_CHUNKED : HF_LAYER_FULL;
        }
        if ((long)lt->n_children != c->n_layers)
            warn(c, "layer_types: %zu entries for num_hidden_layers %ld (the missing ones read as full)",
                 (size_t)lt->n_children, c->n_layers);
    } else if (lt && lt->type != JSON_NULL) warn(c, "layer_types: expected an array, got %s", json_type_name(lt->type));
    get_long(c, root, "", "sliding_window_pattern", &c->sw_pattern);
    get_long(c, root, "", "attention_chunk_size", &c->chunk_size);
    get_num(c, root, "", "rope_local_base_freq", 1.0001, &c->local_theta);
    /* Llama 4: no_rope_layers[l] = 0 skips RoPE in layer l; without the list, every
     * no_rope_layer_interval-th layer ((l + 1) % interval == 0) */
    const JsonNode *nr = json_get(root, "no_rope_layers");
    long interval = 0;
    l = 0;
    if (nr && nr->type == JSON_ARRAY) {
        for (const JsonNode *e = nr->child; e && l < HF_MAX_LAYERS; e = e->next, l++)
            c->nope[l] = l < c->n_layers && e->type == JSON_NUMBER && e->number == 0; /* only layers that exist */
        if ((long)nr->n_children != c->n_layers)
            warn(c, "no_rope_layers: %zu entries for num_hidden_layers %ld (only the first %ld read)",
                 (size_t)nr->n_children, c->n_layers, (long)nr->n_children < c->n_layers ? (long)nr->n_children : c->n_layers);
    } else if (nr && nr->type != JSON_NULL)
        warn(c, "no_rope_layers: expected an array, got %s (ignored)", json_type_name(nr->type));
    else if (get_long(c, root, "", "no_rope_layer_interval", &interval) == 1)
        for (l = 0; l < c->n_layers && l < HF_MAX_LAYERS; l++) c->nope[l] = (l + 1) % interval == 0;
    for (l = 0; l < c->n_layers && l < HF_MAX_LAYERS; l++) c->n_nope_layers += c->nope[l];
    /* without layer_types: Gemma 3's sliding_window_pattern ((l + 1) % N != 0: sliding), Gemma 2's
     * alternation (even layers sliding), Llama 4's chunks in its RoPE layers */
    int gemma2 = !strcmp(c->model_type, "gemma2") && c->sliding_window;
    if (!c->layer_pattern && ((c->sw_pattern && c->sliding_window) || gemma2 || c->chunk_size)) {
        c->layer_pattern = 1;
        for (l = 0; l < c->n_layers && l < HF_MAX_LAYERS; l++)
            c->layer_kind[l] = c->sw_pattern && c->sliding_window ? ((l + 1) % c->sw_pattern ? HF_LAYER_SLIDING : HF_LAYER_FULL)
                               : gemma2                        ? (l % 2 == 0 ? HF_LAYER_SLIDING : HF_LAYER_FULL)
                               : !c->nope[l]                   ? HF_LAYER_CHUNKED
                                                               : HF_LAYER_FULL;
    }
    if (c->local_theta && !c->layer_pattern) c->layer_pattern = 1; /* per-layer bases alone (every layer full) */
    /* Llama 4 scales the queries of its NoPE layers: log(floor((pos + 1) / floor_scale) + 1) attn_scale + 1 */
    c->temp_scale = 0.1, c->temp_floor = 8192; /* Llama4TextConfig's defaults */
    const JsonNode *tt = json_get(root, "attn_temperature_tuning");
    if (tt && tt->type == JSON_NUMBER) c->temp_tuning = tt->number != 0; /* some configs write 4 */
    else get_bool(c, root, "", "attn_temperature_tuning", &c->temp_tuning);
    get_num(c, root, "", "attn_scale", 1e-9, &c->temp_scale);
    get_long(c, root, "", "floor_scale", &c->temp_floor);
    if (get_bool(c, root, "", "use_logn_attn", &c->use_logn) == 1 && c->use_logn) {
        c->logn_len = c->max_pos;
        get_long(c, root, "", "seq_length", &c->logn_len);
    }
    get_bool(c, root, "", "use_dynamic_ntk", &c->use_dynamic_ntk);
}

static void read_shape(HfConfig *c, const JsonNode *root) {
    get_str(c, root, "model_type", c->model_type, sizeof c->model_type);
    const JsonNode *a = json_get(root, "architectures");
    if (a && a->type == JSON_ARRAY && a->child && a->child->type == JSON_STRING)
        snprintf(c->arch, sizeof c->arch, "%s", a->child->str);
    get_str(c, root, "hidden_act", c->hidden_act, sizeof c->hidden_act);
    /* the names differ by family: GPT-2's n_embd / n_head / n_layer, MPT's d_model / n_heads / n_layers,
     * T5's d_model / num_heads / num_layers */
    if (get_long(c, root, "", "hidden_size", &c->hidden_size) == 0 && get_long(c, root, "", "n_embd", &c->hidden_size) == 0)
        get_long(c, root, "", "d_model", &c->hidden_size);
    static const char *const head_keys[] = {"num_attention_heads", "n_head", "n_heads", "num_heads"},
                             *const layer_keys[] = {"num_hidden_layers", "n_layer", "n_layers", "num_layers"};
    for (size_t i = 0; i < 4 && !c->n_heads; i++) get_long(c, root, "", head_keys[i], &c->n_heads);
    for (size_t i = 0; i < 4 && !c->n_layers; i++) get_long(c, root, "", layer_keys[i], &c->n_layers);
    c->n_kv_heads = c->n_heads;
    get_long(c, root, "", "num_key_value_heads", &c->n_kv_heads);
    get_long(c, root, "", "intermediate_size", &c->intermediate_size);
    get_long(c, root, "", "vocab_size", &c->vocab_size);
    get_num(c, root, "", "rms_norm_eps", 1e-30, &c->rms_norm_eps);
    get_bool(c, root, "", "tie_word_embeddings", &c->tied);
    get_bool(c, root, "", "attention_bias", &c->attention_bias);
    get_bool(c, root, "", "mlp_bias", &c->mlp_bias);
    get_long(c, root, "", "pelab_seq_len", &c->pelab_seq_len);
    char layout[16] = "";
    get_str(c, root, "pelab_layout", layout, sizeof layout);
    c->pelab_interleaved = strcmp(layout, "interleaved") == 0;
    static const char *const len_keys[] = {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"};
    for (size_t i = 0; i < sizeof len_keys / sizeof len_keys[0] && !c->max_pos; i++)
        get_long(c, root, "", len_keys[i], &c->max_pos);
    if (get_long(c, root, "", "head_dim", &c->head_dim) == 1) c->head_dim_given = 1;
    else if (c->hidden_size && c->n_heads) {
        if (c->hidden_size % c->n_heads) warn(c, "hidden_size %ld is not a multiple of num_attention_heads %ld",
                                              c->hidden_size, c->n_heads);
        c->head_dim = c->hidden_size / c->n_heads;
    }
    if (!c->n_heads) warn(c, "num_attention_heads: missing (the head size, and so the rotary pairs, are unknown)");
    if (c->n_heads && c->n_kv_heads && c->n_heads % c->n_kv_heads)
        warn(c, "num_key_value_heads %ld does not divide num_attention_heads %ld", c->n_kv_heads, c->n_heads);
}

int hf_config_parse(const char *buf, size_t len, const char *name, HfConfig *c) {
    memset(c, 0, sizeof *c);
    c->tied = -1, c->truncate = -1, c->theta = 10000, c->fraction = 1;
    JsonDoc doc;
    if (json_parse(&doc, buf, len) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: not valid JSON: %s", name, why);
    }
    if (doc.root->type != JSON_OBJECT) {
        pelab_fail("%s: expected a JSON object (a Hugging Face config.json), got %s", name,
                   json_type_name(doc.root->type));
        json_free(&doc);
        return -1;
    }
    read_shape(c, doc.root);
    detect_position(c, doc.root);
    read_layers(c, doc.root);
    json_free(&doc);
    return 0;
}

int hf_config_read(const char *path, HfConfig *c) {
    unsigned char *buf;
    size_t len;
    memset(c, 0, sizeof *c);
    if (read_file_max(path, FILE_MAX_CONFIG, "a config.json", &buf, &len) != 0) return -1;
    int rc = hf_config_parse((const char *)buf, len, path, c);
    free(buf);
    return rc;
}

const char *hf_pos_name(HfPosKind k) {
    static const char *const names[] = {"unknown", "RoPE", "learned absolute", "ALiBi", "T5 relative buckets"};
    return names[k];
}
