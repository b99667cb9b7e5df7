/* head_view.h: one head of one sequence, the one view that attention (model/attention.c) computes
 * its blocks of scores from and the position pipeline (pipeline.h) adjusts them through: the same
 * struct, never re-packed between the two. */
#ifndef PELAB_POS_HEAD_VIEW_H
#define PELAB_POS_HEAD_VIEW_H

#include <stdint.h>

/* nq queries against nk keys. Query i sits at key index q_offset + i and sees keys kstart ..
 * q_offset + i (q_offset >= nk: every key, no causal mask). A query that sees no key (a padding
 * row) gets an output of zeros, so padding stays finite and never leaks. */
typedef struct {
    const float *q;          /* [nq, hd], row stride ldq */
    const float *k, *v;      /* [nk, hd] each, row stride ldkv */
    const uint16_t *k16, *v16; /* NULL, or a bf16 cache's keys, values (model/bf16.h): read in place of k, v */
    float *wide;             /* with k16 or v16: room for 2 x nk x hd floats (a block of queries widens them) */
    float *out;              /* [nq, hd], row stride ldq: probs @ v */
    float *probs;            /* NULL, or [nq, nk] softmax rows kept; entries past the causal limit exactly 0 */
    float *stats;            /* NULL, or [nq, 2]: each row's score max and 1/sum(exp), for the backward */
    float *scratch;          /* without probs: room for min(nq, ATT_QBLOCK) x nk floats */
    int ldq, ldkv;
    const int *qpos, *kpos;  /* [nq], [nk] position ids, for the bias hooks */
    /* NULL, or the position pipeline's second copy of q and k (pos_key_copies 2; strides ldq, ldkv)
     * and room for min(nq, ATT_QBLOCK) x nk of its scores: pos_score_block merges them */
    const float *q2, *k2;
    float *copy_scratch;
    int nq, nk, q_offset;
    int kstart;              /* keys before this index are padding (left-padded batches): never attended */
    /* NULL, or a gate scheme's (FoX's) running sums c of this head, one per key (stride ldg; query
     * i's own at key index q_offset + i): pos_score_block adds c_i - c_j; dgate (NULL: not wanted,
     * same layout) += the scores' gradient with respect to them */
    const float *gate;
    float *dgate;
    int ldg;
    int window;              /* > 0: a query sees only keys fewer than this many positions behind it
                              * (qpos - kpos < window: Mistral's sliding window); 0: all */
    int chunk;               /* > 0: a query sees only keys of its own chunk of this many positions
                              * (kpos >= floor(qpos / chunk) * chunk: Llama 4's chunked attention); 0: all */
    int hd, head, layer;
} AttnHead;

/* the end of query i's visible keys: its own index + 1, or every key when q_offset >= nk */
static inline int head_visible_end(const AttnHead *h, int i) {
    return h->q_offset + i + 1 < h->nk ? h->q_offset + i + 1 : h->nk;
}

/* A block of one head's scores: queries i0..i1-1 (rows of S, stride lds) against keys
 * 0..n_keys-1, the block's last causal limit; raw (NULL: not wanted) receives the scores before a
 * content bias, which its backward needs. */
typedef struct {
    int i0, i1, n_keys;
    float *S;
    int lds;
    float *raw;
} ScoreBlock;

#endif
