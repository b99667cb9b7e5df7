/* pipeline.h: everything position does inside one decoder layer, in the order the layer runs it.
 * The model and the decoders call these and nothing else of the scheme's per-layer hooks, the
 * "+nope@" layers, the attention-scale modifiers (attn_scale.h) or the extension methods (extend.h):
 *   pos_layer_map      q, k = the layer's projections mapped by position: the scheme's q/k map
 *                      (not in a NoPE layer), an extension method's second copy (the far branch of
 *                      Self-Extend and ReRoPE, extend.h), the queries' length scale (+logn, +temp,
 *                      +ssmax); pos_key_copies says how many copies of the keys a cache keeps
 *   pos_score_block    a block of one head's scores adjusted: far-branch scores merged in, the
 *                      content bias (CoPE), the score bias (ALiBi, T5, KERPLE, FIRE)
 *   pos_gate_forward   a gate scheme's running sums of log forget gates (FoX), whose differences
 *                      pos_score_block adds to the scores
 *   pos_sink_logit     the learned sink's logit in a head's softmax denominator (+sinks)
 *   pos_layer_backward the gradient of pos_layer_map's queries and keys (one copy: training)
 *   pos_cache_policy   what a KV cache must do for the extension method (StreamingLLM's slide)
 * Adding an extension method touches model/pos alone: extend.c names its positions, these
 * functions route them. */
#ifndef PELAB_POS_PIPELINE_H
#define PELAB_POS_PIPELINE_H

#include "head_view.h"
#include "pos.h"

/* the most key copies a layer keeps: the scheme's own map, and one remapped branch */
enum { POS_MAX_COPIES = 2 };

/* One layer's queries and keys through the position pipeline. q, k hold the projections on entry
 * and copy 0 (the scheme's map) on return; with pos_key_copies 2, q2, k2 receive copy 1 (the same
 * projections under the far branch's map) and copy_pos is scratch for its position ids. */
typedef struct {
    float *q;             /* [n, n_heads * head_dim] */
    float *k;             /* [n, n_kv_heads * head_dim] */
    float *k_unmapped;    /* NULL, or [n, n_kv_heads * head_dim]: receives k before any map (a
                           * cache that maps its keys again at every call, pos_cache_policy) */
    float *q2, *k2;       /* copy 1 (pos_key_copies 2), NULL otherwise */
    int *copy_pos;        /* [n] scratch with copy 1 */
    const int *pos;       /* [n] the rows' position ids */
    int n, n_heads, n_kv_heads, head_dim;
} PosLayerRows;

/* 1, or 2 when an extension method scores far keys under a second map (every layer of the model
 * then keeps a second copy of its keys: pos_layer_map's k2, a cache's second key block) */
int pos_key_copies(const PosCtx *pc);
/* the copies layer `layer` maps and scores: 1 in a NoPE layer, whatever pos_key_copies */
int pos_layer_copies(const PosCtx *pc, int layer);
/* q, k (and q2, k2) mapped for layer `layer`, in place: the scheme's map unless a NoPE layer,
 * then the queries' length scale */
void pos_layer_map(const PosCtx *pc, int layer, const PosLayerRows *r);
/* keys alone, as pos_layer_map maps k: n rows [n, n_kv_heads * head_dim] at positions pos */
void pos_map_keys(const PosCtx *pc, int layer, float *k, const int *pos, int n);

/* 1 when the backward of pos_layer_map in this layer needs the queries as projected (q before its
 * map: +ssmax's learned scale takes its gradient from them) */
int pos_backward_needs_q(const PosCtx *pc, int layer);
/* The gradients of one layer's pos_layer_map (copy 0, training) on their way back to the projections. */
typedef struct {
    float *dq;            /* [n, n_heads * head_dim]: of the mapped queries; in place, of the projections */
    float *dk;            /* [n, n_kv_heads * head_dim]: the same for the keys */
    float *q_proj;        /* the projected queries (pos_backward_needs_q, else unused; clobbered: mapped in place) */
    float *d_attn_scale;  /* the layer's +ssmax gradient [n_heads] (accumulated when learned) */
    const float *q_mapped, *k_mapped; /* the forward's mapped q, k (a scheme's qk_backward_mapped; else unused) */
    float *dpos;          /* NULL, or += the scheme's parameters' gradient (qk_backward_mapped) */
    const int *pos;       /* [n] the rows' position ids */
    int n, n_heads, n_kv_heads, head_dim;
} PosLayerGrads;

void pos_layer_backward(const PosCtx *pc, int layer, const PosLayerGrads *g);

/* The block b of head h's scores (head_view.h: scaled q.k, as attention lays them out) adjusted
 * for position: far keys' scores replaced by copy 1's (h->q2, h->k2, scaled alike), the content
 * bias, the score bias; b->raw (NULL: not wanted) receives the scores before a content bias.
 * Entries a row does not see are left as they are. */
void pos_score_block(const PosCtx *pc, const AttnHead *h, const ScoreBlock *b);

/* 1 when pos_score_block's raw scores are needed for the backward in this layer (a content bias;
 * layer -1: in any layer) */
int pos_score_needs_raw(const PosCtx *pc, int layer);
/* 1 when the score adjustments have learned parameters (pos_score_row_backward's dpos) */
int pos_score_has_grad(const PosCtx *pc);
/* The backward of pos_score_block's bias and content terms for one query's row. */
typedef struct {
    int i, first, n;  /* query i's n visible keys from key first (kstart, or past it under a sliding
                       * window: the keys before it have no weight) */
    float *drow;      /* [n] d(loss)/d(adjusted scores); in place: d(loss)/d(scores before the content bias) */
    const float *raw; /* NULL unless pos_score_needs_raw: [n] the scores before it */
    float *dq;        /* NULL unless pos_score_needs_raw: += its gradient with respect to query i (hd floats) */
    float *dpos;      /* NULL: not wanted; else += the parameters' gradient */
} PosRowGrad;

void pos_score_row_backward(const PosCtx *pc, const AttnHead *h, const PosRowGrad *g);

/* the learned sink logit of one head of one layer (+sinks, sinks.h): attention adds exp of it to
 * every softmax denominator of that head; -INFINITY without sinks (pc NULL too). The sink's
 * gradient from one query's row is -sum_j drow[j] (drow: d(loss)/d(scores), PosRowGrad's). */
float pos_sink_logit(const PosCtx *pc, int layer, int head);

/* A gate scheme (FoX, the scheme's gate_forward): 1 when layer `layer` has one */
int pos_has_gate(const PosCtx *pc, int layer);
/* one sequence's n rows: c[t, h] = prev[h] + sum_{l <= t} logf[l, h] with logf from the rows' layer
 * input x [n, dim]; prev NULL: 0 (the sequence starts here), else the running sums of the key
 * before the rows (a KV cache's last). The first n_pad rows are left padding: their gates count as
 * open (log f = 0), so the real rows' sums are bit for bit those of the sequence alone. */
void pos_gate_forward(const PosCtx *pc, int layer, const float *x, int n, int n_pad, const float *prev, float *c);
/* its backward for one whole sequence (training: prev NULL): dc [n, H] the gradient of the sums,
 * clobbered; dx [n, dim] += the inputs' gradient, dparams += the parameters' */
void pos_gate_backward(const PosCtx *pc, int layer, const float *x, int n, float *dc, float *dx, float *dparams);

/* What a KV cache does for the model's extension method (PosCachePolicy, extend.h). */
PosCachePolicy pos_cache_policy(const PosCtx *pc);
/* -1 with one line: a one_sequence cache was asked for n_seq sequences */
int pos_cache_refuse_batch(const PosCtx *pc, int n_seq);
/* -1 with one line when the model cannot run a full forward (no cache to slide) */
int pos_check_full_forward(const PosCtx *pc);

#endif
