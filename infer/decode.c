#include "decode.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../model/layers.h"

int kvcache_layer_rows(const Model *m, int l, int max_len, int chunk) {
    PosCachePolicy policy = pos_cache_policy(&m->pos);
    if (policy.capacity) return policy.capacity;
    if (chunk > max_len) chunk = max_len;
    const PosCtx *pc = model_layer_pos(m, l);
    LayerAttn kind = model_layer_attn(m, l);
    long span = layer_span(&kind);
    /* CoPE counts over keys outside the window, FoX's running sums are cached per key of the whole
     * sequence: those layers keep every row */
    if (span < 0 || (pc->scheme->content_row && pos_layer_active(pc, l)) || pos_has_gate(&m->pos, l)) return max_len;
    return span + chunk < max_len ? (int)(span + chunk) : max_len;
}

size_t kvcache_layer_bytes(const Model *m, int l, int n_seq, int max_len, int chunk) {
    size_t rows = (size_t)n_seq * kvcache_layer_rows(m, l, max_len, chunk), kvdim = (size_t)m->cfg.n_kv_heads * m->head_dim;
    size_t elem = m->kv_cache_bf16 ? sizeof(bf16) : sizeof(float);
    return rows * kvdim * (2 * elem + (pos_key_copies(&m->pos) > 1 ? sizeof(float) : 0));
}

void kvcache_init_batch(KVCache *c, const Model *m, int n_seq, int max_len, int chunk) {
    const ModelConfig *cfg = &m->cfg;
    memset(c, 0, sizeof *c);
    c->policy = pos_cache_policy(&m->pos);
    if (c->policy.capacity) max_len = c->policy.capacity;
    if (chunk > max_len) chunk = max_len;
    c->max_len = max_len;
    c->chunk = chunk;
    c->n_seq = n_seq;
    c->n_layers = cfg->n_layers;
    c->kvdim = cfg->n_kv_heads * m->head_dim;
    c->cap = xmalloc(cfg->n_layers * sizeof(int));
    c->dropped = xcalloc(cfg->n_layers, sizeof(int));
    c->layer_at = xmalloc((cfg->n_layers + 1) * sizeof(size_t));
    c->layer_at[0] = 0;
    for (int l = 0; l < cfg->n_layers; l++) {
        c->cap[l] = kvcache_layer_rows(m, l, max_len, chunk);
        c->trim |= c->cap[l] < max_len;
        c->layer_at[l + 1] = c->layer_at[l] + (size_t)n_seq * c->cap[l];
    }
    if (c->trim) {
        c->kpos = xmalloc(c->layer_at[cfg->n_layers] * sizeof(int));
        c->layer_start = xcalloc(n_seq, sizeof(int));
    }
    size_t D = cfg->dim, F = cfg->hidden_dim, qdim = (size_t)cfg->n_heads * m->head_dim;
    size_t rows = (size_t)n_seq * chunk, cache = c->layer_at[cfg->n_layers] * c->kvdim;
    if (m->kv_cache_bf16) {
        c->k16 = xmalloc(cache * sizeof(bf16));
        c->v16 = xmalloc(cache * sizeof(bf16));
    } else {
        c->k = xmalloc(cache * sizeof(float));
        c->v = xmalloc(cache * sizeof(float));
    }
    c->pos = xmalloc((size_t)n_seq * max_len * sizeof(int));
    c->tokens = xmalloc((size_t)n_seq * max_len * sizeof(int));
    c->key_start = xcalloc(n_seq, sizeof(int));
    c->x = xmalloc(rows * D * sizeof(float));
    c->ln = xmalloc(rows * D * sizeof(float));
    c->q = xmalloc(rows * qdim * sizeof(float));
    c->att_out = xmalloc(rows * qdim * sizeof(float));
    c->res_mid = xmalloc(rows * D * sizeof(float));
    c->gate = xmalloc(rows * F * sizeof(float));
    c->up = xmalloc(rows * F * sizeof(float));
    c->act = xmalloc(rows * F * sizeof(float));
    c->lnf = xmalloc(rows * D * sizeof(float));
    /* new keys and values go through scratch rows into each head's own cache rows */
    c->knew = xmalloc(rows * c->kvdim * sizeof(float));
    c->vnew = xmalloc(rows * c->kvdim * sizeof(float));
    if (n_seq > 1) {
        c->chunk_tokens = xmalloc(rows * sizeof(int));
        c->chunk_pos = xmalloc(rows * sizeof(int));
    }
    if (pos_key_copies(&m->pos) > 1) {
        c->k2 = xmalloc(cache * sizeof(float));
        c->q2 = xmalloc(rows * qdim * sizeof(float));
        c->knew2 = xmalloc(rows * c->kvdim * sizeof(float));
        c->copy_pos = xmalloc(rows * sizeof(int));
    }
    if (pos_has_gate(&m->pos, -1)) {
        c->fgates = xmalloc((size_t)cfg->n_layers * n_seq * max_len * cfg->n_heads * sizeof(float));
        c->fnew = xmalloc(rows * cfg->n_heads * sizeof(float));
    }
    const PosScheme *ps = m->pos.scheme;
    c->dynamic_from = ps->qk_dynamic_from ? ps->qk_dynamic_from(&m->pos) : -1;
    if (c->policy.slot_positions) { /* keys are mapped again at every call: no prefix to recompute */
        c->dynamic_from = -1;
        c->kmap = xmalloc((size_t)max_len * c->kvdim * sizeof(float));
        c->krows = xmalloc((size_t)max_len * c->kvdim * sizeof(float));
        for (size_t i = 0; i < (size_t)n_seq * max_len; i++) c->pos[i] = (int)(i % max_len);
    }
}

void kvcache_init(KVCache *c, const Model *m, int max_len, int chunk) { kvcache_init_batch(c, m, 1, max_len, chunk); }

void kvcache_reset(KVCache *c) { c->len = 0; }

int kvcache_truncate(KVCache *c, int len) {
    if (len < 0 || len > c->len) return pelab_fail("KV cache: cannot go back to %d tokens of %d cached", len, c->len);
    if (c->n_seq != 1) return pelab_fail("KV cache: a batch of %d sequences cannot drop its last tokens", c->n_seq);
    if (c->policy.capacity)
        return pelab_fail("KV cache: a sliding cache cannot drop its last tokens (its evicted ones are gone)");
    /* past a dynamic rule's length the cached keys follow the longest length fed, not the cache's */
    for (int i = 0; c->dynamic_from >= 0 && i < c->len; i++)
        if (c->pos[i] + 1 > c->dynamic_from)
            return pelab_fail("KV cache: past position %ld the dynamic rule's keys follow the length fed, so the "
                              "cache cannot drop its last tokens", c->dynamic_from);
    c->len = len; /* the rows past len are written again by the next call (a trimmed layer drops only
                   * keys no later query sees, and the next queries are no earlier) */
    return 0;
}

void kvcache_free(KVCache *c) {
    void *bufs[] = {c->k, c->v, c->k16, c->v16, c->pos, c->x, c->ln, c->q, c->att_out, c->res_mid, c->gate, c->up, c->act,
                    c->lnf, c->tokens, c->key_start, c->knew, c->vnew, c->chunk_tokens, c->chunk_pos,
                    c->chunk_logits, c->k2, c->q2, c->knew2, c->copy_pos, c->kmap, c->krows,
                    c->cap, c->dropped, c->layer_at, c->kpos, c->layer_start, c->fgates, c->fnew};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    memset(c, 0, sizeof *c);
}

/* layer l's block of the cache's keys (float, or bf16: c->k16) */
static void *cache_keys(const KVCache *c, int l) {
    size_t at = c->layer_at[l] * c->kvdim;
    return c->k16 ? (void *)(c->k16 + at) : (void *)(c->k + at);
}

/* slot positions: layer l attends to kmap, its cached unmapped keys mapped at their slots (taken
 * token-major through krows, the layout the scheme's map reads); block_forward stores the new
 * rows' mapped keys there too, and their unmapped ones in krows' first rows for the cache */
static void slot_keys(const Model *m, KVCache *c, int l, LayerActs *a) {
    int KVH = m->cfg.n_kv_heads, hd = m->head_dim;
    kv_heads_to_rows(c->krows, cache_keys(c, l), c->k16 != NULL, c->max_len, 0, a->past, KVH, hd);
    pos_map_keys(&m->pos, l, c->krows, c->pos, a->past);
    kv_rows_to_heads(c->kmap, 0, c->max_len, 0, c->krows, a->past, KVH, hd);
    a->keys = c->kmap, a->keys16 = NULL; /* the values stay where they are, float or bf16 */
    a->k_unmapped = c->krows;
}

/* a full sliding cache: drop the oldest token after the kept first ones; the later ones move up
 * one slot in every head's rows */
static void evict_one(const Model *m, KVCache *c) {
    size_t size = c->k16 ? sizeof(bf16) : sizeof(float), row = m->head_dim * size; /* bytes of one head's row */
    size_t S = c->policy.keep_first, keep = c->len - S - 1;
    char *k = c->k16 ? (char *)c->k16 : (char *)c->k, *v = c->v16 ? (char *)c->v16 : (char *)c->v;
    for (size_t block = 0; block < (size_t)c->n_layers * m->cfg.n_kv_heads; block++) { /* one (layer, head) */
        size_t head = block * c->max_len * row;
        memmove(k + head + S * row, k + head + (S + 1) * row, keep * row);
        memmove(v + head + S * row, v + head + (S + 1) * row, keep * row);
    }
    memmove(c->tokens + S, c->tokens + S + 1, keep * sizeof(int));
    c->len--;
}

/* one chunk of nb <= chunk tokens of every sequence (tokens, pos: [n_seq, nb]): every layer
 * appends their keys and values after the cached ones. logits: all_logits: [n_seq * nb, V]; else
 * [n_seq, V] for each sequence's last token (NULL: none) */
/* trim: layer l's view of the cache for nb new tokens at pos [n_seq, nb] after `start` cached ones:
 * when they would not fit in its rows, the keys no new query sees dropped first (the fewest any
 * sequence can lose: its padding and the keys before its first new query's earliest visible
 * position); the new positions written after the kept keys. -1 if they still do not fit (the
 * positions do not ascend). */
static int trim_layer(const Model *m, KVCache *c, int l, int start, const int *pos, int nb, LayerActs *a) {
    int S = c->n_seq, cap = c->cap[l], past = start - c->dropped[l], hd = m->head_dim, KVH = m->cfg.n_kv_heads;
    int *kpos = c->kpos + c->layer_at[l];
    LayerAttn kind = model_layer_attn(m, l);
    if (past + nb > cap) {
        int drop = past;
        for (int b = 0; b < S && drop > 0; b++) {
            long first = layer_first_visible(&kind, pos[(size_t)b * nb]);
            int pad = c->key_start[b] - c->dropped[l], d = pad > 0 ? (pad < past ? pad : past) : 0;
            while (d < past && kpos[(size_t)b * cap + d] < first) d++;
            drop = d < drop ? d : drop;
        }
        if (past - drop + nb > cap)
            return pelab_fail("KV cache: layer %d keeps %d keys and %d new ones do not fit in its %d rows (positions "
                              "must ascend)", l, past - drop, nb, cap);
        size_t elem = c->k16 ? sizeof(bf16) : sizeof(float), row = (size_t)hd * elem, keep = (size_t)(past - drop);
        char *blocks[3] = {c->k16 ? (char *)c->k16 : (char *)c->k, c->v16 ? (char *)c->v16 : (char *)c->v, (char *)c->k2};
        for (int t = 0; t < 3 && drop; t++) {
            if (!blocks[t]) continue;
            size_t row_t = t == 2 ? (size_t)hd * sizeof(float) : row; /* the second key copy stays float32 */
            char *base = blocks[t] + c->layer_at[l] * c->kvdim * (t == 2 ? sizeof(float) : elem);
            for (size_t bh = 0; bh < (size_t)S * KVH; bh++) /* one (sequence, kv head) block of cap rows */
                memmove(base + bh * cap * row_t, base + (bh * cap + drop) * row_t, keep * row_t);
        }
        for (int b = 0; b < S && drop; b++) memmove(kpos + (size_t)b * cap, kpos + (size_t)b * cap + drop, keep * sizeof(int));
        c->dropped[l] += drop, past -= drop;
    }
    for (int b = 0; b < S; b++) {
        memcpy(kpos + (size_t)b * cap + past, pos + (size_t)b * nb, nb * sizeof(int));
        int ks = c->key_start[b] - c->dropped[l];
        c->layer_start[b] = ks > 0 ? ks : 0;
    }
    size_t at = c->layer_at[l] * c->kvdim;
    a->keys = c->k ? c->k + at : NULL, a->values = c->v ? c->v + at : NULL;
    a->keys16 = c->k16 ? c->k16 + at : NULL, a->values16 = c->v16 ? c->v16 + at : NULL;
    if (c->k2) a->keys2 = c->k2 + at;
    a->key_pos = kpos, a->n_keys = past + nb, a->past = past, a->key_stride = cap, a->key_start = c->layer_start;
    return 0;
}

static int decode_chunk(Model *m, KVCache *c, const int *tokens, const int *pos, int nb, float *logits,
                        int all_logits) {
    const ModelConfig *cfg = &m->cfg;
    const ParamTensors *p = &m->params;
    int D = cfg->dim, V = cfg->vocab_size, start = c->len, S = c->n_seq;
    if (start == 0) memset(c->dropped, 0, cfg->n_layers * sizeof(int)); /* a fresh (or recomputed) cache */

    for (int b = 0; b < S; b++) { /* may already be in place (recomputation) */
        memmove(c->pos + (size_t)b * c->max_len + start, pos + (size_t)b * nb, nb * sizeof(int));
        memmove(c->tokens + (size_t)b * c->max_len + start, tokens + (size_t)b * nb, nb * sizeof(int));
    }
    model_embed(m, c->x, tokens, pos, S * nb); // (S*nb) tokens -> (S*nb, D)

    /* the residual stream enters and leaves every layer in c->x; no rstd kept */
    LayerActs layer = {.n_seq = S, .n = nb, .pos = pos, .in = c->x, .ln1 = c->ln, .q = c->q, .k = c->knew,
                       .v = c->vnew, .key_pos = c->pos, .n_keys = start + nb, .past = start,
                       .key_stride = c->max_len, .kv_head_major = 1,
                       .key_start = c->key_start, .att_out = c->att_out, .res_mid = c->res_mid, .ln2 = c->ln,
                       .gate = c->gate, .up = c->up, .act = c->act, .res_out = c->x};
    for (int l = 0; l < cfg->n_layers; l++) {
        size_t at = c->layer_at[l] * c->kvdim;
        layer.keys = c->k ? c->k + at : NULL, layer.values = c->v ? c->v + at : NULL;
        layer.keys16 = c->k16 ? c->k16 + at : NULL;
        layer.values16 = c->v16 ? c->v16 + at : NULL;
        if (c->k2) /* the second key copy beside the first */
            layer.q2 = c->q2, layer.keys2 = c->k2 + at, layer.copy_pos = c->copy_pos, layer.k2 = c->knew2;
        if (c->fgates)
            layer.fgate = c->fnew, layer.key_fgates = c->fgates + (size_t)l * S * c->max_len * cfg->n_heads;
        if (c->trim && trim_layer(m, c, l, start, pos, nb, &layer) != 0) return -1;
        if (c->policy.slot_positions) slot_keys(m, c, l, &layer);
        block_forward(m, l, &layer); /* stores the new rows in keys, values (keys2) */
        if (c->policy.slot_positions) /* the cache keeps the new keys unmapped */
            kv_rows_to_heads(cache_keys(c, l), c->k16 != NULL, c->max_len, start, c->krows, nb, cfg->n_kv_heads,
                             m->head_dim);
    }
    c->len = start + nb;
    if (all_logits) {
        rmsnorm_forward(c->lnf, NULL, c->x, p->final_norm, S * nb, D, cfg->norm_eps);
        matmul_forward(logits, c->lnf, p->lm_head, model_w16(m, p->lm_head), S * nb, D, V); // -> (S*nb, V)
        return model_check_logits(m, logits, S * nb, pos, 1);
    } else if (logits) {
        for (int b = 0; b < S; b++) /* each sequence's last row */
            rmsnorm_forward(c->lnf + (size_t)b * D, NULL, c->x + ((size_t)b * nb + nb - 1) * D, p->final_norm, 1, D,
                            cfg->norm_eps);
        matmul_forward(logits, c->lnf, p->lm_head, model_w16(m, p->lm_head), S, D, V); // (S, D) -> (S, V)
        return model_check_logits(m, logits, S, pos + nb - 1, nb);
    }
    return 0;
}

/* Threads for a decoding call of n new tokens per sequence: a token's products are a handful of
 * matrix-vector products, and on a small model each parallel region (OpenBLAS's and ours) costs
 * more in fork, barrier and wake-up than it saves (S on 2 threads sampled at 0.56x its 1-thread
 * speed). The work is the call's multiply-adds: every weight once per new token, plus q.k and
 * p.v against the cached keys; below DECODE_PAR_MIN_MACS per thread it runs on fewer threads. */
enum { DECODE_PAR_MIN_MACS = 2 << 20 };

static int decode_threads(const Model *m, const KVCache *c, int n) {
    /* every weight but the embedding table, which a token only reads a row of; a tied head reads it all */
    size_t weights = m->n_params - m->tensors[T_TOK_EMB].numel + (m->cfg.tied ? m->tensors[T_TOK_EMB].numel : 0);
    size_t attention = 2 * (size_t)m->cfg.n_layers * (c->len + n) * m->cfg.n_heads * m->head_dim;
    size_t macs = (size_t)c->n_seq * n * (weights + attention);
    int most = omp_get_max_threads(), want = (int)(macs / DECODE_PAR_MIN_MACS);
    return want < 1 ? 1 : want < most ? want : most;
}

/* decode_threads for one call: OpenBLAS (OpenMP build) follows omp_get_max_threads() too */
static int threads_begin(const Model *m, const KVCache *c, int n) {
    int saved = omp_get_max_threads(), want = decode_threads(m, c, n);
    if (want != saved) omp_set_num_threads(want);
    return saved;
}

static void threads_end(int saved) {
    if (omp_get_max_threads() != saved) omp_set_num_threads(saved);
}

static int check_tokens(const Model *m, const int *tokens, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->cfg.vocab_size)
            return pelab_fail("token id %d: expected 0..%d", tokens[i], m->cfg.vocab_size - 1);
    return 0;
}

/* a cache built before an extension method was set (or unset) keeps other key copies or another policy */
static int check_policy(const Model *m, const KVCache *c) {
    PosCachePolicy now = pos_cache_policy(&m->pos);
    if ((pos_key_copies(&m->pos) > 1) != (c->k2 != NULL) || memcmp(&now, &c->policy, sizeof now) != 0)
        return pelab_fail("KV cache built before the model's extension method changed: build it again");
    return 0;
}

static int decode_forward_threads(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits,
                                  int all_logits);

int decode_forward(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits, int all_logits) {
    int saved = threads_begin(m, c, n);
    int rc = decode_forward_threads(m, c, tokens, pos, n, logits, all_logits);
    threads_end(saved);
    return rc;
}

/* where a block's logits go: the caller's rows, its last row's, or the sink's scratch (decode.h) */
static float *block_logits(const Model *m, KVCache *c, float *logits, int all_logits, int done, int last_block) {
    if (all_logits && !logits && c->logits_sink) {
        if (!c->chunk_logits) c->chunk_logits = xmalloc((size_t)c->chunk * m->cfg.vocab_size * sizeof(float));
        return c->chunk_logits;
    }
    return all_logits ? logits + (size_t)done * m->cfg.vocab_size : (last_block ? logits : NULL);
}

/* a sliding cache: a block while it has room, else one token after an eviction; positions are
 * the slots (c->pos), and reserve() sees the cache's length, never the stream's */
static int slide_forward(Model *m, KVCache *c, const int *tokens, int n, float *logits, int all_logits) {
    int filled = c->len + n < c->max_len ? c->len + n : c->max_len;
    if (model_check_positions(m, c->pos, filled) != 0) return -1;
    for (int done = 0; done < n;) {
        if (c->len == c->max_len) evict_one(m, c);
        int nb = n - done, room = c->max_len - c->len;
        nb = nb < room ? nb : room;
        nb = nb < c->chunk ? nb : c->chunk;
        float *out = block_logits(m, c, logits, all_logits, done, done + nb == n);
        int saved = threads_begin(m, c, nb); /* past a full cache, blocks of one token: one thread */
        int rc = decode_chunk(m, c, tokens + done, c->pos + c->len, nb, out, all_logits);
        threads_end(saved);
        if (rc != 0) return -1;
        if (all_logits && !logits && c->logits_sink) c->logits_sink(c->sink_ctx, done, nb, out);
        done += nb;
    }
    return 0;
}

static int decode_forward_threads(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits,
                                  int all_logits) {
    if (n < 1) return pelab_fail("decode_forward: no tokens");
    if (c->n_seq != 1) return pelab_fail("decode_forward: a cache of %d sequences (decode_forward_batch)", c->n_seq);
    if (check_tokens(m, tokens, n) != 0 || check_policy(m, c) != 0) return -1;
    if (c->policy.capacity) return slide_forward(m, c, tokens, n, logits, all_logits);
    if (c->len + n > c->max_len)
        return pelab_fail("KV cache full: %d cached + %d new tokens exceeds its capacity of %d", c->len, n,
                          c->max_len);
    /* a dynamic rule past its length changes the transform of every position, so every layer of
     * the cache is stale: recompute the prefix under the new length (same table for all rows) */
    long cached = 0, longest;
    for (int i = 0; i < c->len; i++) cached = c->pos[i] + 1 > cached ? c->pos[i] + 1 : cached;
    longest = cached;
    for (int i = 0; i < n; i++) longest = pos[i] + 1 > longest ? pos[i] + 1 : longest;
    /* the cache was built at length `cached`: stale if the transform at `longest` is another */
    const PosScheme *ps = m->pos.scheme;
    int changes = !ps->qk_transform_changes || ps->qk_transform_changes(&m->pos, cached, longest);
    if (c->dynamic_from >= 0 && !c->stale_dynamic && longest > c->dynamic_from && c->len > 0 && changes) {
        int old = c->len;
        memcpy(c->pos + old, pos, n * sizeof(int)); /* all positions in one array for the check */
        if (model_check_positions(m, c->pos, (size_t)old + n) != 0) return -1;
        c->len = 0;
        for (int done = 0; done < old; done += c->chunk) {
            int nb = old - done < c->chunk ? old - done : c->chunk;
            if (decode_chunk(m, c, c->tokens + done, c->pos + done, nb, NULL, 0) != 0) return -1;
        }
    } else if (model_check_positions(m, pos, n) != 0) {
        return -1;
    }
    for (int done = 0; done < n; done += c->chunk) {
        int nb = n - done < c->chunk ? n - done : c->chunk;
        int last_block = done + nb == n;
        float *out = block_logits(m, c, logits, all_logits, done, last_block);
        if (decode_chunk(m, c, tokens + done, pos + done, nb, out, all_logits) != 0) return -1;
        if (all_logits && !logits && c->logits_sink) c->logits_sink(c->sink_ctx, done, nb, out);
    }
    return 0;
}

int decode_forward_batch(Model *m, KVCache *c, const int *tokens, const int *pos, int n, float *logits,
                         int all_logits) {
    if (c->n_seq == 1) return decode_forward(m, c, tokens, pos, n, logits, all_logits);
    int S = c->n_seq;
    if (n < 1) return pelab_fail("decode_forward_batch: no tokens");
    if (c->policy.one_sequence) return pos_cache_refuse_batch(&m->pos, S);
    if (c->len + n > c->max_len)
        return pelab_fail("KV cache full: %d cached + %d new tokens exceeds its capacity of %d", c->len, n,
                          c->max_len);
    if (check_tokens(m, tokens, (size_t)S * n) != 0 || check_policy(m, c) != 0 ||
        model_check_positions(m, pos, (size_t)S * n) != 0)
        return -1;
    if (c->dynamic_from >= 0)
        for (size_t i = 0; i < (size_t)S * n; i++)
            if (pos[i] + 1 > c->dynamic_from)
                return pelab_fail("position %d is past %ld, where the dynamic rule follows each sequence's own "
                                  "length: decode these sequences one at a time",
                                  pos[i], c->dynamic_from);
    int saved = threads_begin(m, c, n), rc = 0;
    for (int done = 0; done < n; done += c->chunk) {
        int nb = n - done < c->chunk ? n - done : c->chunk;
        for (int b = 0; b < S; b++) { /* gather the chunk of every sequence: [S, nb] */
            memcpy(c->chunk_tokens + (size_t)b * nb, tokens + (size_t)b * n + done, nb * sizeof(int));
            memcpy(c->chunk_pos + (size_t)b * nb, pos + (size_t)b * n + done, nb * sizeof(int));
        }
        if (!all_logits) {
            rc = decode_chunk(m, c, c->chunk_tokens, c->chunk_pos, nb, done + nb == n ? logits : NULL, 0);
            if (rc != 0) break;
            continue;
        }
        size_t V = m->cfg.vocab_size;
        if (!c->chunk_logits) c->chunk_logits = xmalloc((size_t)S * c->chunk * V * sizeof(float));
        if ((rc = decode_chunk(m, c, c->chunk_tokens, c->chunk_pos, nb, c->chunk_logits, 1)) != 0) break;
        for (int b = 0; b < S; b++) /* rows [S, nb] of the chunk into [S, n] */
            memcpy(logits + ((size_t)b * n + done) * V, c->chunk_logits + (size_t)b * nb * V, nb * V * sizeof(float));
    }
    threads_end(saved);
    return rc;
}
