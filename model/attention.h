/* attention.h: causal multi-head attention with grouped-query heads and the position scheme's
 * score-bias hook. Scores are (q . k) / sqrt(head_dim) + bias; softmax over the visible keys. */
#ifndef PELAB_ATTENTION_H
#define PELAB_ATTENTION_H

#include "pos/pos.h"

/* One head's view: nq queries against nk keys. Query i sits at key index q_offset + i and sees
 * keys 0 .. q_offset + i (q_offset >= nk: every key, no causal mask). */
typedef struct {
    const float *q;          /* [nq, hd], row stride ldq */
    const float *k, *v;      /* [nk, hd] each, row stride ldkv */
    float *out;              /* [nq, hd], row stride ldq: probs @ v */
    float *probs;            /* [nq, nk] softmax rows; entries past the causal limit exactly 0 */
    int ldq, ldkv;
    const int *qpos, *kpos;  /* [nq], [nk] position ids, for the bias hook */
    int nq, nk, q_offset;
    int hd, head, layer;
} AttnHead;

/* One layer's attention over n_seq independent sequences (training: the B rows of a batch;
 * decoding: the one cached sequence). Sequence b owns rows b*nq.. of q, out and qpos, and rows
 * b*nk.. of k, v and kpos; its query i sits at key index q_offset + i. */
typedef struct {
    const float *q;          /* [n_seq*nq, H*hd] */
    const float *k, *v;      /* [n_seq*nk, KVH*hd] each; query head h reads kv head h / (H/KVH) */
    float *out;              /* [n_seq*nq, H*hd] */
    float *probs;            /* [n_seq, H, nq, nk] */
    const int *qpos, *kpos;  /* [n_seq*nq], [n_seq*nk] */
    int n_seq, nq, nk, q_offset;
    int n_heads, n_kv_heads, head_dim, layer;
} Attention;

/* the view of head h of sequence b */
AttnHead attention_head(const Attention *a, int b, int h);
void attention_head_forward(const AttnHead *a, const PosCtx *pc);

/* every head of every sequence; parallel over (sequence, head) when the work is worth a fork */
void attention_forward(const Attention *a, const PosCtx *pc);

/* Backward of attention_forward: dout, dq, dk, dv share the layout of out, q, k, v; dq, dk, dv are
 * overwritten. dscores is scratch [n_threads, nq, nk]; dpos_params (may be NULL) accumulates the
 * bias parameters' gradient. */
void attention_backward(const Attention *a, const float *dout, float *dq, float *dk, float *dv, float *dscores,
                        float *dpos_params, const PosCtx *pc);

#endif
