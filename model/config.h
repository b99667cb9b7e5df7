/* config.h: the model's shape. */
#ifndef PELAB_CONFIG_H
#define PELAB_CONFIG_H

#include "pattern.h"

typedef struct {
    int vocab_size;
    int dim;
    int n_layers;
    int n_heads;
    int n_kv_heads; /* grouped-query attention: n_heads is a multiple of n_kv_heads */
    int hidden_dim; /* SwiGLU inner width */
    int seq_len;    /* training length L */
    float norm_eps;
    int tied;       /* 1: the output head is the token embedding */
    int qkv_bias;   /* 1: the q, k and v projections add a bias (Qwen2); 0: none (Llama) */
    int sliding_window; /* > 0: each query attends to the keys fewer than this many positions behind
                         * it, itself included (Mistral's sliding_window); 0: the whole context */
    AttnPattern pattern; /* per-layer windows, chunks, RoPE bases, NoPE (pattern.h); n 0: every layer
                          * as sliding_window says */
} ModelConfig;

/* -1 with pelab_errmsg naming the field and what was expected */
int config_validate(const ModelConfig *c);
int config_head_dim(const ModelConfig *c);

#endif
