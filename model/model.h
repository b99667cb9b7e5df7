/* model.h: the llama-style decoder: parameters, gradients and activations, each one contiguous
 * block reached through a struct of pointers (llm.c style). Stacked tensors hold all layers:
 * wq is [n_layers, n_heads*head_dim, dim], layer l at wq + l*(n_heads*head_dim*dim). */
#ifndef PELAB_MODEL_H
#define PELAB_MODEL_H

#include <stddef.h>

#include "bf16.h"
#include "config.h"
#include "pos/pipeline.h"

enum {
    T_TOK_EMB, T_POS, T_ATTN_SCALE, T_ATTN_NORM, T_WQ, T_WK, T_WV, T_WO, T_MLP_NORM, T_W1, T_W2, T_W3,
    T_FINAL_NORM, T_LM_HEAD, T_BQ, T_BK, T_BV, T_SINKS, N_PARAM_TENSORS
};

typedef struct {
    float *tok_emb;    /* [V, D] */
    float *pos;        /* position scheme's parameters (may be empty) */
    float *attn_scale; /* [L, H] SSMax's learned s (+ssmax; empty otherwise) */
    float *attn_norm;  /* [L, D] */
    float *wq;         /* [L, H*hd, D] */
    float *wk;         /* [L, KVH*hd, D] */
    float *wv;         /* [L, KVH*hd, D] */
    float *wo;         /* [L, D, H*hd] */
    float *mlp_norm;   /* [L, D] */
    float *w1;         /* [L, F, D]  gate */
    float *w2;         /* [L, D, F]  down */
    float *w3;         /* [L, F, D]  up */
    float *final_norm; /* [D] */
    float *lm_head;    /* [V, D]; points at tok_emb when tied */
    float *bq;         /* [L, H*hd] q projection bias (qkv_bias; empty otherwise) */
    float *bk;         /* [L, KVH*hd] */
    float *bv;         /* [L, KVH*hd] */
    float *sinks;      /* [L, H] learned attention sinks (+sinks, pos/sinks.h; empty otherwise) */
} ParamTensors;

typedef struct {
    const char *name; /* safetensors name, e.g. "layers.wq" */
    int ndim;
    int shape[4];
    size_t numel;     /* 0 for an absent tensor (untied head, parameter-free scheme) */
    size_t offset;    /* in floats, within the parameter block */
    int decay;        /* 1: AdamW applies weight decay */
} TensorInfo;

/* Training activations for a [B, T] batch. */
typedef struct {
    float *x0;        /* [B*T, D] embedded input (+ input position encoding) */
    float *ln1;       /* [L, BT, D] */
    float *ln1_rstd;  /* [L, BT] */
    float *q;         /* [L, BT, H*hd]   after the q/k transform */
    float *k;         /* [L, BT, KVH*hd] after the q/k transform */
    float *v;         /* [L, BT, KVH*hd] */
    float *att_probs; /* NULL, or [L, B, H, T, T] softmax rows (model_keep_attention); future entries 0 */
    float *att_stats; /* [L, B, H, T, 2] each softmax row's max and 1/sum: the backward recomputes
                       * the rows from them, so training memory is linear in T */
    float *att_out;   /* [L, BT, H*hd] probs @ v, before the output projection */
    float *res_mid;   /* [L, BT, D] residual after attention */
    float *ln2;       /* [L, BT, D] */
    float *ln2_rstd;  /* [L, BT] */
    float *h_gate;    /* [L, BT, F] w1 x */
    float *h_up;      /* [L, BT, F] w3 x */
    float *h_act;     /* [L, BT, F] silu(gate) * up */
    float *res_out;   /* [L, BT, D] residual after the MLP (input of the next layer) */
    float *lnf;       /* [BT, D] */
    float *lnf_rstd;  /* [BT] */
    float *logits;    /* [BT, V]; after backward starts, holds d(loss)/d(logits) */
    float *losses;    /* [BT] per-token negative log-likelihood */
    float *fgate;     /* [L, BT, H] a gate scheme's (FoX's) running sums of log forget gates; empty otherwise */
} ActTensors;

/* Scratch for the backward pass: one layer's worth of activation gradients, reused. */
typedef struct {
    float *d_res;      /* [BT, D] gradient of the residual stream */
    float *d_ln;       /* [BT, D] */
    float *d_q;        /* [BT, H*hd] */
    float *d_k;        /* [BT, KVH*hd] */
    float *d_v;        /* [BT, KVH*hd] */
    float *d_att_out;  /* [BT, H*hd] */
    float *d_gate;     /* [BT, F] */
    float *d_up;       /* [BT, F] */
    float *d_act;      /* [BT, F] */
    float *d_fgate;    /* [BT, H] a gate scheme's running sums' gradient (empty otherwise) */
} GradScratch;

/* Where one decoder layer reads and writes (block_forward, block_backward). Its N = n_seq * n rows
 * are n_seq sequences of n new tokens. Training: the B x T batch, every activation in layer l's
 * slice of ActTensors, kept for the backward. Decoding: one chunk of new tokens in scratch rows
 * that the next layer reuses (no rstd kept: ln1_rstd, ln2_rstd NULL; ln2 may be ln1, res_out may
 * be in), its keys and values written into the KV cache after the cached prefix. */
typedef struct {
    int n_seq, n;               /* training B, T; decoding 1, the chunk's length */
    const int *pos;             /* [N] position ids of the rows */
    const float *in;            /* [N, D] residual stream entering the layer */
    float *ln1, *ln1_rstd;      /* [N, D], [N] */
    float *q;                   /* [N, H*hd]   after the q/k transform */
    float *k, *v;               /* [N, KVH*hd] the rows' own keys (after the transform), values */
    float *k_unmapped;          /* NULL, or [N, KVH*hd]: the keys before the transform (a cache
                                 * that maps them again at every call, pos_cache_policy) */
    /* what the queries attend to, per sequence: n_keys keys, the rows' own at index past.. past+n-1
     * (training: k, v themselves with past 0; decoding: the layer's cache, past = cached length) */
    const float *keys, *values; /* [n_seq*n_keys, KVH*hd] (row stride of a sequence: key_stride) */
    const int *key_pos;         /* [n_seq*n_keys] (the same stride) */
    int n_keys, past;
    /* a batched KV cache: 0, or the rows from one sequence's keys to the next's (its capacity); k
     * and v are then scratch rows [N, KVH*hd] that block_forward copies to row past of each
     * sequence in keys, values (which it may write) */
    int key_stride;
    /* 0: keys, values, keys2 token-major as above; 1: a KV cache's head-major layout [n_seq, KVH,
     * key_stride, hd] (Attention's kv_head_major), written from the scratch rows k, v, k2 */
    int kv_head_major;
    /* NULL, or a bf16 KV cache (kv_head_major): keys16 or values16 are written and read in place of
     * keys or values (which are then NULL) */
    bf16 *keys16, *values16;
    /* the position pipeline's second copy (pos_key_copies 2; all NULL otherwise, and in training):
     * q2, k2 [N, H*hd], [N, KVH*hd] the rows' queries and keys under its map (k2, like k, is
     * scratch that a batched cache copies into keys2), keys2 the keys the queries see under it
     * (laid out as keys), copy_pos [N] scratch for its position ids */
    float *q2, *k2;
    const float *keys2;
    int *copy_pos;
    const int *key_start;       /* NULL, or [n_seq]: sequence b's keys before key_start[b] are padding */
    float *att_probs;           /* NULL, or [n_seq, H, n, n_keys] softmax rows kept */
    float *att_stats;           /* NULL, or [n_seq, H, n, 2] softmax max and 1/sum (for the backward) */
    float *att_out;             /* [N, H*hd] probs @ v, before the output projection */
    float *res_mid;             /* [N, D] residual after attention */
    float *ln2, *ln2_rstd;      /* [N, D], [N] */
    float *gate, *up, *act;     /* [N, F] w1 x, w3 x, silu(gate) * up */
    float *res_out;             /* [N, D] residual after the MLP */
    /* a gate scheme (FoX; NULL otherwise): the rows' running sums of log forget gates [N, H], and
     * the keys' (laid out as key_pos, row stride H; training: fgate itself, a KV cache: its block,
     * which block_forward extends by the new rows' and reads the last cached one's from) */
    float *fgate, *key_fgates;
} LayerActs;

/* what the weight products run in: float32, or bf16 operands with float32 accumulation (bf16.h) */
typedef enum { PRECISION_FP32, PRECISION_BF16 } Precision;

typedef struct Model {
    ModelConfig cfg;
    PosCtx pos;
    int head_dim;

    TensorInfo tensors[N_PARAM_TENSORS];
    size_t n_params;
    float *params_mem;
    ParamTensors params;

    Precision precision;
    int kv_cache_bf16; /* --kv-cache bf16: KV caches built for this model (decode.h) keep keys and
                        * values in bf16, half the bytes a decoded token reads; 0: float32 */
    bf16 *params_bf16; /* bf16: the parameter block rounded (model_sync_bf16), the products' weights */
    /* bf16 weights only (model_create_bf16): params_mem is a reservation (core/mem.h) of which only
     * the tensors kept in float32 (model_weight_in_bf16_only) are committed; the products and the
     * embedding read params_bf16. params_reserved: its size in bytes, 0 for a malloc'd block */
    int bf16_only;
    size_t params_reserved;

    float *grads_mem; /* NULL until model_alloc_train */
    ParamTensors grads;
    /* NULL, or [MODEL_SHARDS - 1, n_params]: the gradients of batch shards 1.. (model_shards), summed
     * into grads_mem in shard order at the end of model_backward */
    float *shard_grads_mem;

    int B, T;         /* allocated activation sizes, 0 until model_alloc_train */
    int keep_att_probs; /* model_keep_attention: the next allocation keeps every softmax row */
    int acts_have_probs; /* the allocated activations include att_probs */
    int cur_B, cur_T; /* the last forward's batch (<= B, <= T) */
    float *acts_mem;
    ActTensors acts;
    float *scratch_mem;
    GradScratch scratch;
    int *inputs, *targets, *positions; /* [B*T] copies for the backward */
    /* a second key copy in a full forward (pos_key_copies 2): one layer's q2 and k2 [B*T, H*hd +
     * KVH*hd] and their positions [B*T], reused by every layer (inference only: no backward) */
    float *copy_mem;
    int *copy_pos;
    float mean_loss;
    /* per-layer RoPE bases (cfg.pattern's base=): the scheme again under each other base, built from
     * pos's canonical spec and extension method (layer_pos_from: both, as text) */
    PosCtx *base_pos;
    int n_base_pos;
    signed char kind_pos[PATTERN_MAX]; /* per kind of the pattern: its index in base_pos, -1: pos */
    char layer_pos_from[POS_SPEC_MAX + 80];
    char source[512]; /* the file the weights came from (checkpoint_load), for messages; "" if built here */
} Model;

/* A training batch of a small float32 model runs in up to MODEL_SHARDS shards of whole sequences,
 * each through the whole forward and backward on one thread (its own rows of the activations and
 * scratch, its own gradient block), the shards in parallel: at these sizes one OpenMP region per
 * pass beats a parallel BLAS call and a fork per layer. The shards depend on the batch alone, never
 * on the thread count, and their gradients are summed in shard order: the result is the same on any
 * number of threads (and in a `train --seeds` batch, where each seed runs on one thread). */
enum { MODEL_SHARDS = 4, MODEL_SHARD_MAX_PARAMS = 2000000 };
/* the shards a [B, T] batch runs in (1: the whole batch at once, BLAS and loops parallel inside) */
int model_shards(const Model *m, int B);

/* Set the per-layer attention pattern (pattern.h; n 0: none) of a built model: its NoPE kinds join
 * the scheme's +nope@ layers, its bases get their own contexts. -1 with one line (a base for a
 * scheme without base=, NoPE for one without per-layer hooks, a pattern beside sliding_window). */
int model_set_pattern(Model *m, const AttnPattern *p);
/* layer l's kind of attention (its window, chunk, base) and its position context */
LayerAttn model_layer_attn(const Model *m, int l);
const PosCtx *model_layer_pos(const Model *m, int l);
/* the contexts of the per-layer bases rebuilt if pos changed since (a --scale rule, an extension
 * method set on a loaded model); model_forward and the decoder call it. -1 with one line. */
int model_pattern_sync(Model *m);
/* pos_check_positions on every context of the model (the per-layer bases' too) */
int model_check_positions(Model *m, const int *pos, size_t n);

/* Build a model of this shape and scheme; parameters are allocated but not initialised. */
int model_create(Model *m, const ModelConfig *cfg, const char *pos_spec);
/* model_create in two steps, for loaders that check a file's tensors against the shapes before a
 * forged header can make them allocate: model_layout fills cfg, pos, tensors and n_params (no
 * parameter block: model_free frees it), model_alloc_params then allocates the block */
int model_layout(Model *m, const ModelConfig *cfg, const char *pos_spec);
int model_alloc_params(Model *m);
/* model_alloc_params with the caller's block of n_params floats (which m then owns), the config's
 * attention pattern applied; -1 with m freed */
int model_attach_params(Model *m, float *block);
void model_init_weights(Model *m, unsigned long long seed);
/* Allocate gradients and activations for batches of [B, T]. */
void model_alloc_train(Model *m, int B, int T);
/* Keep every softmax row of the next forwards in acts.att_probs ([L, B, H, T, T]: quadratic in T),
 * for probes and tests that read attention weights; training never needs them. Takes effect at
 * the next model_alloc_train. */
void model_keep_attention(Model *m, int keep);
void model_free(Model *m);

/* --precision: bf16 rounds the weights into params_bf16 and runs every weight product (q, k, v,
 * o, the MLP, the output head) in bf16 with float32 accumulation; master weights, gradients,
 * optimizer state, norms, attention (scores, softmax, position maps and biases) and the loss stay
 * float32. -1 with the missing instruction set named where the CPU cannot. */
int model_set_precision(Model *m, Precision precision);
/* after every change of the float32 weights (an optimizer step): round them again, once */
void model_sync_bf16(Model *m);
/* the bf16 twin of weight w (a pointer into params_mem), NULL under float32 */
const bf16 *model_w16(const Model *m, const float *w);
const char *precision_name(Precision p);
/* points params_mem (n_params floats), m->params and the scheme's parameters at block */
void model_set_param_block(Model *m, float *block);

/* The weights kept in bf16 alone, for inference from a bf16 file (model/weights16.c): the model
 * model_create builds, but only the norms, biases and position parameters in float32; the matrix
 * products' weights and the embedding exist only in params_bf16, which the caller fills. Reading
 * their float32 slots faults (they are never committed). precision is BF16 and cannot change. */
int model_create_bf16(Model *m, const ModelConfig *cfg, const char *pos_spec);
/* its second step on a model_layout'ed m (a loader checks the file's tensors in between); -1 with m freed */
int model_alloc_params_bf16(Model *m);
/* 1 if tensor t (T_*) lives only in params_bf16 in such a model: the products' weights and the embedding */
int model_weight_in_bf16_only(int t);
/* bytes the weights take: float32 block (committed part), plus the bf16 block when there is one */
size_t model_weight_bytes(const Model *m);
/* the largest |weight| of the model and its tensor's name (NULL for a model of zeros), for messages */
float model_largest_weight(const Model *m, const char **tensor);
/* 0, or -1 with one line naming the model's source, the position (pos_of_row[r * pos_step] of the
 * first bad row) and the largest weight: a logit of the rows [rows, vocab] is not finite, or a row
 * spans more than float32 holds (its log-softmax would be -inf). A number made of an overflow is
 * never printed as a result (a NaN row's greedy pick is token 0; its loss prints nan). */
int model_check_logits(const Model *m, const float *logits, int rows, const int *pos_of_row, int pos_step);
/* 1 if every weight is a bf16 value (a bf16 file widened): stored as bf16, nothing is lost */
int model_weights_bf16_exact(const Model *m);
int precision_parse(const char *s, Precision *out); /* "fp32" | "bf16"; -1 with one line otherwise */

/* Forward over B rows of T tokens with explicit positions [B*T]. With targets, also the
 * mean loss (returned in m->mean_loss) and per-token losses. -1 if a position is not accepted,
 * or under --scale stream:S:W (only the KV-cache decoder can slide its window, decode.h). */
int model_forward(Model *m, const int *inputs, const int *targets, const int *positions, int B, int T);
void model_zero_grad(Model *m);
/* Backward of the last forward (which must have had targets and no extension method: the far
 * branch of Self-Extend / ReRoPE has no backward; `train` refuses them); accumulates into grads. */
void model_backward(Model *m);

/* The residual stream's start, for training and decoding alike: x [n, D] = token embeddings
 * (times the scheme's token_scale) + the scheme's input encoding at pos. */
void model_embed(const Model *m, float *x, const int *tokens, const int *pos, int n);

/* One decoder layer, the sequence both the training forward and the KV-cache decoder run:
 *   res_mid = in + wo attn(q, k, v),   q, k = transform(wq x, wk x), v = wv x,  x = rmsnorm(in)
 *   res_out = res_mid + w2 (silu(w1 x) * w3 x),                    x = rmsnorm(res_mid)
 * block_backward takes the training layout (past 0, keys = k) and accumulates into m->grads;
 * m->scratch.d_res holds the gradient of res_out on entry and that of in on return. */
void block_forward(const Model *m, int layer, const LayerActs *a);
void block_backward(Model *m, int layer, const LayerActs *a);

/* A head-major KV cache block ([n_kv_heads, capacity, hd]: kv_head_major) of float, or of bf16
 * when is_bf16 (rounded to nearest even), and token-major float rows [n, n_kv_heads * hd]: rows
 * into cache rows at .. at + n - 1 of every head, and back. */
void kv_rows_to_heads(void *dst, int is_bf16, size_t capacity, size_t at, const float *rows, int n, int n_kv_heads,
                      int hd);
void kv_heads_to_rows(float *rows, const void *src, int is_bf16, size_t capacity, size_t at, int n, int n_kv_heads,
                      int hd);

#endif
