/* hf_config.h: a Hugging Face config.json read for its position encoding (`pelab inspect`) and for
 * the shape of a Llama checkpoint (`pelab import --hf`, hf_llama.h). Reading never stops at a bad
 * field: each unknown, mistyped or out-of-range field becomes one warning line and is ignored; only
 * a file that is not a JSON object is an error. Field meanings follow transformers' configuration
 * classes (LlamaConfig, rope_scaling / rope_parameters of every rope_type, GPT-2's n_positions,
 * MPT's attn_config.alibi, T5's relative_attention_*). */
#ifndef PELAB_HF_CONFIG_H
#define PELAB_HF_CONFIG_H

#include <stddef.h>

#include "../model/pattern.h"

typedef enum { HF_POS_UNKNOWN, HF_POS_ROPE, HF_POS_LEARNED, HF_POS_ALIBI, HF_POS_T5 } HfPosKind;
typedef enum { HF_LAYER_FULL, HF_LAYER_SLIDING, HF_LAYER_CHUNKED } HfLayerKind;

enum { HF_MAX_WARN = 24, HF_WARN_LEN = 240, HF_MAX_LAYERS = 1024 };

typedef struct {
    char model_type[64], arch[96], hidden_act[32];
    long hidden_size, n_heads, n_kv_heads, n_layers, intermediate_size, vocab_size;
    long head_dim;         /* explicit head_dim, else hidden_size / n_heads (0: unknown) */
    int head_dim_given;
    double rms_norm_eps;   /* 0: absent */
    int tied;              /* tie_word_embeddings; -1 absent */
    int attention_bias, mlp_bias;
    long max_pos;          /* max_position_embeddings (n_positions, max_seq_len, seq_length) */
    long pelab_seq_len;    /* "pelab_seq_len" written by pelab's export; 0 absent */
    int pelab_interleaved; /* "pelab_layout": "interleaved": the rows were pelab's interleaved pairs */

    HfPosKind pos;
    /* RoPE */
    double theta;          /* rope_theta / rotary_emb_base (default 10000) */
    double fraction;       /* partial_rotary_factor / rotary_pct / rotary_dim / head_dim (1) */
    long rot_head_dim;     /* the dims a head's rotation sees (MLA: qk_rope_head_dim) */
    int interleaved;       /* 1: GPT-J style pairs (2j, 2j+1); 0: HF's rotate_half */
    int mla;               /* DeepSeek's decoupled rope head (qk_rope_head_dim) */
    const char *scaling_key; /* "rope_scaling", "rope_parameters" or NULL */
    char rope_type[32];    /* "" when there is no rule ("default") */
    double factor, beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, low_freq, high_freq;
    long orig_max;         /* original_max_position_embeddings (inside the rule or at the top level); 0 absent */
    int truncate;          /* yarn's truncate; -1 absent */
    int n_short, n_long;   /* longrope factors */
    /* bias schemes */
    long t5_buckets, t5_max_distance;
    double alibi_bias_max;
    /* what pelab's position spec does not describe */
    long sliding_window;
    int n_sliding_layers;  /* layer_types entries "sliding_attention" */
    /* per-layer attention (hf_pattern.c): each layer's HF_LAYER_* from layer_types, else from
     * sliding_window_pattern (Gemma 3: every N-th layer full), Gemma 2's alternation (even layers
     * sliding) or attention_chunk_size (Llama 4: its RoPE layers chunked); layer_pattern 0: none
     * of these (every layer alike: Mistral's window is sliding_window alone) */
    int layer_pattern;
    unsigned char layer_kind[HF_MAX_LAYERS];
    long sw_pattern;       /* sliding_window_pattern; 0 absent */
    long chunk_size;       /* attention_chunk_size (Llama 4's chunked attention); 0 absent */
    double local_theta;    /* rope_local_base_freq (Gemma 3: the sliding layers' RoPE base); 0 absent */
    int n_nope_layers;     /* layers without RoPE: no_rope_layers entries 0 (Llama 4), or every
                            * no_rope_layer_interval-th layer */
    unsigned char nope[HF_MAX_LAYERS]; /* 1: layer l skips RoPE */
    int use_logn, use_dynamic_ntk; /* Qwen 1 */
    int temp_tuning;       /* Llama 4's attn_temperature_tuning (in its NoPE layers) */
    double temp_scale;     /* attn_scale (0.1) */
    long temp_floor;       /* floor_scale (8192) */
    long logn_len;         /* Qwen 1's logn length: seq_length */

    int n_warn;
    char warn[HF_MAX_WARN][HF_WARN_LEN];
} HfConfig;

/* parse buf (a config.json); -1 with one line naming name only when it is not a JSON object */
int hf_config_parse(const char *buf, size_t len, const char *name, HfConfig *c);
int hf_config_read(const char *path, HfConfig *c);
const char *hf_pos_name(HfPosKind k);

/* The equivalent pelab position spec for a model of head_dim c->head_dim: 0 with it in spec, else -1
 * with why in pelab_errmsg (one line naming the field). path is the config's own path (LongRoPE's
 * factors are read from it: scale=longrope:PATH). freq_rule gets the pelab rule whose per-pair
 * frequencies equal HF's even where the whole spec is refused (yarn's attention factor), "" if none.
 * lengths (may be NULL) gets pos_lengths of the model the spec was checked on (a missing head count
 * or head size taken as 1 head of 64: the lengths do not depend on them), "" when refused. */
int hf_config_pelab_spec(const HfConfig *c, const char *path, char *spec, size_t n, char *freq_rule, size_t fn,
                         char *lengths, size_t ln);
/* The per-layer attention pattern (model/pattern.h) of the config: 1 with the --attn-pattern spec in
 * buf (the shortest cycle that repeats over the layers), 0 when there is none (layer_pattern 0),
 * -1 with why in pelab_errmsg (one line naming the field) when pelab cannot write it. layers (may be
 * NULL, room for HF_MAX_LAYERS) gets every layer's kind either way. */
int hf_config_pattern(const HfConfig *c, char *buf, size_t n, LayerAttn *layers);
/* HF's attention factor on cos and sin (yarn's attention_factor or mscale formula, longrope's
 * sqrt(1 + ln s / ln L)), 1 without one */
double hf_config_attention_factor(const HfConfig *c);
/* the rule's original length L (original_max_position_embeddings, else max_position_embeddings) */
long hf_config_original_length(const HfConfig *c);
/* yarn / longrope's scale s: max_position_embeddings / original_max_position_embeddings when the
 * rule names the original, else its factor */
double hf_config_scale(const HfConfig *c);

#endif
