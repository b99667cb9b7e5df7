/* attention.h: causal multi-head attention with grouped-query heads and the position scheme's
 * score-bias hook. Scores are (q . k) / sqrt(head_dim) + bias; softmax over the visible keys.
 *
 * Memory is linear in the length (the FlashAttention-2 scheme, on the CPU): queries go in blocks
 * of ATT_QBLOCK rows, each block's scores live only in a per-thread scratch of ATT_QBLOCK x nk,
 * and the forward keeps per row only the softmax max and 1/sum. The backward recomputes each
 * block's scores and probabilities from them (bit for bit the forward's) instead of reading a
 * stored [T, T] matrix. A block stops at its last query's causal limit, so the causal half of the
 * score matrix is mostly never computed; under a window or a chunk (pattern.h) a block also starts at
 * its first query's earliest visible key, so the keys behind it are never multiplied. Softmax rows are kept only where asked (probes, tests). */
#ifndef PELAB_ATTENTION_H
#define PELAB_ATTENTION_H

#include "bf16.h"
#include "pos/pipeline.h"

enum { ATT_QBLOCK = 64 }; /* queries per block: sgemm-sized, and the scratch per thread is 64 x nk */

/* One head's view (AttnHead) is model/pos/head_view.h's: the position pipeline reads the same struct. */

/* One layer's attention over n_seq independent sequences (training: the B rows of a batch;
 * decoding: the cached sequences). Sequence b owns rows b*nq.. of q, out and qpos, and rows
 * b*nk.. of k, v and kpos (or its block of a head-major cache); its query i sits at key index
 * q_offset + i. A block of one query (decoding a token) runs without BLAS (dot_rows.h). */
typedef struct {
    const float *q;          /* [n_seq*nq, H*hd] */
    const float *k, *v;      /* [n_seq*nk, KVH*hd] each; query head h reads kv head h / (H/KVH) */
    float *out;              /* [n_seq*nq, H*hd] */
    float *probs;            /* NULL, or [n_seq, H, nq, nk] softmax rows kept */
    float *stats;            /* NULL, or [n_seq, H, nq, 2] (required by attention_backward) */
    const int *qpos, *kpos;  /* [n_seq*nq], [n_seq*nk] */
    /* NULL, or the position pipeline's second copy of q [n_seq*nq, H*hd] and k [n_seq*nk, KVH*hd]
     * (pos_layer_map; forward only: attention_backward takes neither) */
    const float *q2, *k2;
    int n_seq, nq, nk, q_offset;
    int kv_stride;           /* rows from one sequence's keys (and kpos) to the next's; 0: nk */
    /* 0: k, v, k2 as above (token-major rows of every head); 1: a KV cache's layout, head-major:
     * [n_seq, KVH, kv_stride, hd], so kv head h of sequence b reads its own contiguous [nk, hd]
     * rows (row stride hd) and nothing of the other heads' (kpos keeps [n_seq, kv_stride]) */
    int kv_head_major;
    /* NULL, or a bf16 KV cache (kv_head_major): the keys (k16) or values (v16) in bf16, read in
     * place of k, v, widened to float32 as they are loaded */
    const bf16 *k16, *v16;
    const int *kstart;       /* NULL, or [n_seq]: sequence b's keys before kstart[b] are padding */
    int window, chunk;       /* as AttnHead's (keys in ascending position order, as every caller has them) */
    float *d_sinks;          /* NULL, or [n_heads]: attention_backward adds the layer's sink gradients (+sinks) */
    /* NULL, or a gate scheme's (FoX's) running sums [n_seq*nk, H] per key (laid out as kpos: row
     * stride H, kv_stride rows a sequence), and dgate (backward; NULL: not wanted) += their gradient */
    const float *gate;
    float *dgate;
    int n_heads, n_kv_heads, head_dim, layer;
} Attention;

/* the view of head h of sequence b (scratch unset) */
AttnHead attention_head(const Attention *a, int b, int h);
/* every query block of one head, in order (the scratch, when probs is NULL, comes from the caller) */
void attention_head_forward(const AttnHead *a, const PosCtx *pc);

/* every head of every sequence; parallel over (sequence, head, query block) when the work is
 * worth a fork, so one long sequence uses every core */
void attention_forward(const Attention *a, const PosCtx *pc);

/* Backward of attention_forward, from a->stats (probs are not read): dout, dq, dk, dv share the
 * layout of out, q, k, v; dq, dk, dv are overwritten. dpos_params (may be NULL) accumulates the
 * bias parameters' gradient. Scratch: 2 x ATT_QBLOCK x nk floats per thread, allocated here. */
void attention_backward(const Attention *a, const float *dout, float *dq, float *dk, float *dv, float *dpos_params,
                        const PosCtx *pc);

#endif
