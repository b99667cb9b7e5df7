/* decode.h: the KV-cache decoder. Feeds n new tokens (a prompt chunk, or one token) at explicit
 * positions, appending their keys and values to the cache; attention per head and per block of
 * queries, so memory grows linearly with the cached length (no activations are kept). */
#ifndef PELAB_DECODE_H
#define PELAB_DECODE_H

#include "../model/model.h"

typedef struct {
    int max_len;   /* capacity in tokens */
    int len;       /* tokens cached so far */
    int chunk;     /* queries processed per block */
    int n_layers, kvdim;
    float *k;      /* [L, max_len, kvdim] keys after the q/k transform */
    int *tokens;   /* [max_len] every cached token id (to recompute the prefix) */
    long dynamic_from; /* -1, or the length past which the scheme's transform follows the length */
    int stale_dynamic; /* 0 (default): past dynamic_from, recompute the whole prefix at every call so
                        * decoding equals a full forward over the sequence; 1: keep the cache as
                        * computed at each token's own step (what HF does; an experiment toggle) */
    float *v;      /* [L, max_len, kvdim] */
    int *pos;      /* [max_len] position id of every cached token */
    /* per-chunk scratch, reused by every layer (see LayerActs) */
    float *x;         /* [chunk, D] the residual stream */
    float *ln, *q, *att_out, *res_mid, *gate, *up, *act;
    float *lnf;       /* [chunk, D] */
} KVCache;

void kvcache_init(KVCache *c, const Model *m, int max_len, int chunk);
void kvcache_reset(KVCache *c);
void kvcache_free(KVCache *c);

/* Run n tokens at positions pos through the model, attending to everything cached before them.
 * Under a dynamic rule past its length, every call recomputes the cached prefix (exact, and
 * quadratic in the length), unless stale_dynamic is set.
 * logits: if all_logits, [n, V] (one row per new token); else [V] for the last token only.
 * -1 with pelab_errmsg if the cache is full or a position is not accepted by the scheme. */
int decode_forward(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits, int all_logits);

#endif
