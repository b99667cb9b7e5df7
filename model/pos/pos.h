/* pos.h: the position-scheme interface.
 *
 * Position enters the decoder in three places; a scheme implements any subset:
 *   1. input:        x[t] += p(pos[t])                (learned, sinusoidal)
 *   2. q/k transform: per-pair 2x2 map of q and k     (RoPE family, FoPE, xPos)
 *   3. score bias:   s[i][j] += b_h(pos_i, pos_j)     (ALiBi, T5, KERPLE)
 * Every token carries an explicit position id, so training, KV-cache decoding, sliding windows
 * and randomized positions all go through the same hooks. A NULL hook means "not used".
 * Adding a scheme = one file in model/pos/, one line in pos_registry.c, its tests. */
#ifndef PELAB_POS_H
#define PELAB_POS_H

#include <stddef.h>

#include "../../core/rng.h"

typedef struct PosCtx PosCtx;

typedef struct PosScheme {
    const char *name;
    const char *options_help; /* one line: "base=F (10000), layout=interleaved|half" */
    /* allocate pc->state with defaults (may be NULL when the scheme has no state) */
    int (*create)(PosCtx *pc);
    /* one key=value option; -1 with pelab_errmsg naming the option and what was expected */
    int (*set_option)(PosCtx *pc, const char *key, const char *val);
    /* after options and model shape are known: validate, precompute tables */
    int (*prepare)(PosCtx *pc);
    /* canonical options, "k=v,k=v" (all options, defaults included); "" if none */
    void (*describe)(const PosCtx *pc, char *buf, size_t n);
    /* learned parameters: one tensor "pos.weight" of this shape; ndim 0 = none */
    void (*param_shape)(const PosCtx *pc, int *ndim, int shape[4]);
    void (*init_params)(const PosCtx *pc, float *params, Rng *rng);
    /* largest accepted position + 1 (learned: table size), or -1 if unbounded */
    long (*max_position)(const PosCtx *pc);
    /* make tables valid for a sequence of positions < n_positions (dynamic rules also take it as
     * the current length); called before any parallel hook call */
    int (*reserve)(PosCtx *pc, long n_positions);
    /* -1, or the length past which the q/k transform of every position depends on the current
     * length (dynamic NTK): a cache built at a shorter length is then stale in every layer, and
     * the KV-cache decoder recomputes the prefix to stay exact */
    long (*qk_dynamic_from)(const PosCtx *pc);
    /* largest position + 1 whose numbers stay finite and accurate in float32, -1 if unlimited */
    long (*computable_position)(const PosCtx *pc);
    /* after every optimizer update: project learned parameters back into their domain (clamps) */
    void (*after_update)(const PosCtx *pc, float *params);

    /* 1. input: x is [n, dim] */
    void (*input_forward)(const PosCtx *pc, float *x, const int *pos, int n);
    void (*input_backward)(const PosCtx *pc, const float *dx, const int *pos, int n, float *dparams);
    /* 2. q/k transform, in place: v is [n, n_heads * head_dim], row stride n_heads*head_dim.
     *    is_key: 1 for keys, 0 for queries (schemes like xPos treat them differently). */
    void (*qk_forward)(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer);
    void (*qk_backward)(const PosCtx *pc, float *dv, const int *pos, int n, int n_heads, int is_key, int layer);
    /* 3. score bias for one query against nk keys of one head: row[j] += b(qpos, kpos[j]) */
    void (*bias_row)(const PosCtx *pc, float *row, int qpos, const int *kpos, int nk, int head, int layer);
    /* dparams += d(loss)/d(params) given drow = d(loss)/d(row) (the softmax-input gradient) */
    void (*bias_backward)(const PosCtx *pc, const float *drow, int qpos, const int *kpos, int nk, int head,
                          int layer, float *dparams);
    void (*destroy)(PosCtx *pc);
} PosScheme;

struct PosCtx {
    const PosScheme *scheme;
    /* model shape, copied in by pos_init */
    int dim, n_heads, n_kv_heads, head_dim, n_layers, seq_len;
    const float *params; /* the scheme's learned parameters inside the model block, NULL if none */
    void *state;         /* scheme-private options and tables */
};

/* Registry */
const PosScheme *pos_find(const char *name);
void pos_list(char *buf, size_t n); /* "nope, learned, ..." */

/* Parse "NAME[:k=v,...]" and set up pc for a model of this shape. */
int pos_init(PosCtx *pc, const char *spec, int dim, int n_heads, int n_kv_heads, int n_layers, int seq_len);
void pos_free(PosCtx *pc);
/* Re-create pc with extra options appended to its current spec (a later key overrides an earlier
 * one), keeping its parameter pointer: how --scale RULE reaches a loaded model. */
int pos_add_options(PosCtx *pc, const char *extra);
/* set a rotary scheme's scaling rule; a clear error for schemes without one */
int pos_set_scale(PosCtx *pc, const char *rule);
/* largest accepted position + 1 for numbers that stay finite in float32, -1 if unlimited */
long pos_computable_position(const PosCtx *pc);
/* "training L; accepted N|unbounded; computable N|unbounded" */
void pos_lengths(const PosCtx *pc, char *buf, size_t n);
/* "name:k=v,..." with every option spelled out */
void pos_spec(const PosCtx *pc, char *buf, size_t n);
size_t pos_n_params(const PosCtx *pc);
long pos_max_position(const PosCtx *pc);
/* check every position is >= 0 and accepted; grows tables. -1 with a clear message otherwise. */
int pos_check_positions(PosCtx *pc, const int *pos, size_t n);

/* option parsing helpers for scheme files */
int pos_parse_double(const char *scheme, const char *key, const char *val, double lo, double hi, double *out);
int pos_parse_int(const char *scheme, const char *key, const char *val, long lo, long hi, int *out);

#endif
