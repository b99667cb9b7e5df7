/* decode.h: the KV-cache decoder. Feeds n new tokens (a prompt chunk, or one token) at explicit
 * positions, appending their keys and values to the cache; attention per head and per block of
 * queries, so memory grows linearly with the cached length (no activations are kept).
 * A cache may hold n_seq sequences decoded side by side (batched sampling): every sequence gets
 * the same number of new tokens per call, each at its own position ids; a sequence that starts
 * later is left-padded, its padding keys masked (key_start), its first real token at position 0.
 *
 * A sliding cache (the model's pos_cache_policy: StreamingLLM's --scale stream:S:W, extend.h) holds
 * at most policy.capacity tokens whatever max_len, so memory stays constant however long the
 * stream: when full, a new token evicts the oldest after the first keep_first. Positions are then
 * the slots, the caller's position ids are not read: a cached key's position changes as the window
 * slides, so the cache keeps keys before the scheme's q/k map and every call maps them again, one
 * layer at a time, at their current slots (bias schemes read the slots as key positions). The
 * hidden states of cached tokens are never recomputed: in layers past the first, a key or value
 * still carries the context its token had when it entered (as StreamingLLM's cache). One sequence
 * only (decode_forward_batch refuses a batch). */
#ifndef PELAB_DECODE_H
#define PELAB_DECODE_H

#include "../model/model.h"

typedef struct {
    int max_len;   /* capacity in tokens, per sequence (a sliding cache: policy.capacity) */
    int len;       /* tokens cached so far, per sequence (padding included) */
    int chunk;     /* queries processed per block */
    int n_seq;     /* sequences side by side (1: decode_forward) */
    int n_layers, kvdim;
    /* keys after the q/k transform (slot positions: before) laid out per head, [L, n_seq, KVH,
     * max_len, hd]: one head's keys are contiguous rows, so decoding a head reads only its own
     * bytes (Attention's kv_head_major) */
    float *k;
    int *tokens;   /* [n_seq, max_len] every cached token id (to recompute the prefix) */
    long dynamic_from; /* -1, or the length past which the scheme's transform follows the length */
    int stale_dynamic; /* 0 (default): past dynamic_from, recompute the whole prefix at every call so
                        * decoding equals a full forward over the sequence; 1: keep the cache as
                        * computed at each token's own step (what HF does; an experiment toggle) */
    float *v;      /* [L, n_seq, KVH, max_len, hd] */
    /* the model's kv_cache_bf16 (--kv-cache bf16): k16, v16 hold the keys and values in bf16 (the
     * same layout; k, v NULL), rounded once as they enter; the far branch's k2 stays float32 */
    bf16 *k16, *v16;
    /* pos_key_copies 2 (Self-Extend, ReRoPE), NULL otherwise: every cached key a second time under
     * the position pipeline's second map [L, n_seq, KVH, max_len, hd] (a key's far position depends
     * on the key alone, so it is computed once, as the near one), and per-chunk scratch */
    float *k2, *q2, *knew2;
    int *copy_pos;
    int *pos;      /* [n_seq, max_len] position id of every cached token */
    /* a gate scheme (FoX), NULL otherwise: every cached key's running sum of log forget gates
     * [L, n_seq, max_len, H], and the new rows' [n_seq * chunk, H] */
    float *fgates, *fnew;
    int *key_start; /* [n_seq]: sequence b's cache entries before key_start[b] are padding (0: none);
                     * set before the first call, never attended */
    /* NULL, or what decode_forward hands each block's logits to when all_logits is set and logits is
     * NULL: rows [first, first + n) of the call, [n, V] in scratch valid during the call (a long
     * window's [n, V] need never exist: 16k tokens of a 49k vocabulary would be 3.2 GB) */
    void (*logits_sink)(void *ctx, int first, int n, float *rows);
    void *sink_ctx;
    PosCachePolicy policy; /* the model's at kvcache_init; slot_positions: pos holds the slots 0..max_len-1 */
    float *kmap;   /* slot positions: [KVH, max_len, hd] one layer's cached keys mapped at their slots */
    float *krows;  /* slot positions: [max_len, kvdim] scratch: cached keys token-major for the map,
                    * then the new rows' unmapped keys */
    /* per-chunk scratch, reused by every layer (see LayerActs) */
    float *x;         /* [n_seq * chunk, D] the residual stream */
    float *ln, *q, *att_out, *res_mid, *gate, *up, *act;
    float *knew, *vnew; /* [n_seq * chunk, kvdim]: the new keys and values before the cache */
    int *chunk_tokens, *chunk_pos; /* [n_seq * chunk]: one chunk of every sequence, gathered */
    /* per-layer rows (trim: some layer keeps fewer than max_len): a window or chunk layer keeps only
     * what its next queries may see, its span (pattern.h) + chunk rows per sequence; when a call's
     * tokens would not fit, the keys no new query sees are dropped from the front (one move, the
     * keys stay contiguous and in order). Layer l's block of k, v (k16, v16, k2) starts at row
     * layer_at[l] ([n_seq, KVH, cap[l], hd]); its row j of sequence b is the cached token
     * dropped[l] + j, at position kpos[layer_at[l] + b * cap[l] + j]. Without trim every cap is
     * max_len and key positions are read from pos. */
    int trim;
    int *cap, *dropped; /* [L] */
    size_t *layer_at;   /* [L + 1] rows (of kvdim) before layer l's block; layer_at[L]: all */
    int *kpos;          /* trim: [layer_at[L] / 1] each layer's key positions (see above) */
    int *layer_start;   /* trim: [n_seq] key_start less a layer's dropped tokens */
    float *lnf;       /* [n_seq * chunk, D] */
    float *chunk_logits; /* [n_seq * chunk, V], allocated by the first all_logits batch call */
} KVCache;

void kvcache_init(KVCache *c, const Model *m, int max_len, int chunk);
/* the rows per sequence that layer l of a cache of max_len tokens, fed in blocks of up to chunk,
 * keeps: max_len, or a window or chunk layer's span + chunk when smaller (not under a sliding cache
 * policy, nor a content bias, which reads every key before its query) */
int kvcache_layer_rows(const Model *m, int l, int max_len, int chunk);
/* bytes of keys and values (the second key copy included) layer l of such a cache holds, n_seq sequences */
size_t kvcache_layer_bytes(const Model *m, int l, int n_seq, int max_len, int chunk);
/* n_seq sequences of up to max_len tokens each */
void kvcache_init_batch(KVCache *c, const Model *m, int n_seq, int max_len, int chunk);
void kvcache_reset(KVCache *c);
/* forget the cache's tokens past the first len (a one-sequence cache; speculative decoding's
 * rejected drafts). -1 with pelab_errmsg for a sliding cache, a batch, or keys past a dynamic
 * rule's length (they were computed for the longest length fed). */
int kvcache_truncate(KVCache *c, int len);
void kvcache_free(KVCache *c);

/* Run n tokens at positions pos through the model, attending to everything cached before them
 * (a cache of one sequence). Under a dynamic rule past its length, every call recomputes the
 * cached prefix (exact, and quadratic in the length), unless stale_dynamic is set.
 * logits: if all_logits, [n, V] (one row per new token), or NULL to hand them block by block to
 * c->logits_sink; else [V] for the last token only.
 * -1 with pelab_errmsg if the cache is full or a position is not accepted by the scheme.
 * A sliding cache is never full: the tokens go in as one block while they fit, then one at a time,
 * each after evicting one, so every token's query sees the cache as it is when the token enters;
 * pos is not read (may be NULL). */
int decode_forward(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits, int all_logits);

/* The same for every sequence of a batched cache at once: tokens and pos [n_seq, n] (a padding
 * token may be any valid id at any accepted position: it is never attended); logits [n_seq, V],
 * the last new token of each sequence, or with all_logits [n_seq, n, V]. A dynamic rule past its
 * length is refused (its transform would follow each sequence's own length: decode those one at
 * a time), and so is a one-sequence cache policy (a sliding cache). */
int decode_forward_batch(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits,
                         int all_logits);

#endif
