/* attention.h: causal multi-head attention with grouped-query heads and the position scheme's
 * score-bias hook. Scores are (q . k) / sqrt(head_dim) + bias; softmax over keys j <= i. */
#ifndef PELAB_ATTENTION_H
#define PELAB_ATTENTION_H

#include "pos/pos.h"

/* One head, nq queries against nk keys; query i sits at key index q_offset + i and may see keys
 * 0 .. q_offset + i (q_offset >= nk: every key, no causal mask). probs [nq, ldp] receives the softmax rows (later entries exactly 0);
 * out [nq, hd] (row stride ldo) receives probs @ v. Used by training (q_offset 0, nq = nk) and
 * by the KV-cache decoder (q_offset = cached length). */
void attention_head_forward(float *out, int ldo, float *probs, int ldp, const float *q, int ldq, int nq,
                            const float *k, int ldk, const float *v, int ldv, int nk, int q_offset,
                            const int *qpos, const int *kpos, int head, int layer, const PosCtx *pc, int hd);

/* Training forward over B rows of T tokens. q [B*T, H*hd], k/v [B*T, KVH*hd], positions [B*T];
 * probs [B, H, T, T]; out [B*T, H*hd]. */
void attention_forward(float *out, float *probs, const float *q, const float *k, const float *v, const int *pos,
                       int B, int T, int H, int KVH, int hd, int layer, const PosCtx *pc);

/* Backward: writes dq, dk, dv (overwrite); dscores is scratch [n_threads, T, T];
 * dpos_params (may be NULL) accumulates the bias parameters' gradient. */
void attention_backward(float *dq, float *dk, float *dv, float *dpos_params, float *dscores, const float *dout,
                        const float *probs, const float *q, const float *k, const float *v, const int *pos, int B,
                        int T, int H, int KVH, int hd, int layer, const PosCtx *pc);

#endif
