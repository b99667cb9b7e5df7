/* pos.h: the position-scheme interface.
 *
 * Position enters the decoder in three places; a scheme implements any subset:
 *   1. input:        x[t] += p(pos[t])                (learned, sinusoidal)
 *   2. q/k transform: per-pair 2x2 map of q and k     (RoPE family, FoPE, xPos)
 *   3. score bias:   s[i][j] += b_h(pos_i, pos_j)     (ALiBi, T5, KERPLE)
 *   4. content bias: s[i][j] += c(q_i, s[i][..])       (CoPE: positions counted by gates on the scores)
 *   5. gate bias:    s[i][j] += sum_{l in (j,i]} g(x_l)  (FoX: forget gates from the layer input)
 * Every token carries an explicit position id, so training, KV-cache decoding, sliding windows
 * and randomized positions all go through the same hooks. A NULL hook means "not used".
 * A scheme declares what it is: its options (a PosOption table that the option engine, options.c,
 * parses, checks, lists and writes back) and its capabilities (POS_CAP_*); it writes no parsing code.
 * Adding a scheme = its file in model/pos/, one X(name) line in registry.c, and its
 * reference-vector test: tests/test_schemes.c runs the shared checks on every registered scheme
 * (its default spec and the test_specs it lists). */
#ifndef PELAB_POS_H
#define PELAB_POS_H

#include <stddef.h>

#include "../../core/rng.h"
#include "attn_scale.h"
#include "extend.h"
#include "rope_scaling.h"
#include "sinks.h"

typedef struct PosCtx PosCtx;

/* One option of a scheme, "name=value" in its spec. Values live in the scheme's state block
 * (state_size bytes, zeroed, defaults written) at offset: a double, an int (INT, and WORD as the
 * index of its word) or a RopeRule (RULE: the rotary scaling rule, rope_scaling.h). */
typedef enum { POS_OPT_DOUBLE, POS_OPT_INT, POS_OPT_WORD, POS_OPT_RULE } PosOptType;

enum {
    POS_OPT_TRAIN_LEN = 1, /* INT: the default is the model's training length (seq_len) */
    POS_OPT_SHORTEST = 2,  /* DOUBLE: written back in the fewest digits that read back exactly (else %.17g) */
};

typedef struct {
    const char *name;
    PosOptType type;
    size_t offset;
    double def, lo, hi;    /* default and accepted range (DOUBLE, INT); WORD: def = index of the default */
    const char *help;      /* one line, for --help */
    unsigned flags;        /* POS_OPT_* */
    const char *words[4];  /* WORD: the accepted words */
} PosOption;

/* offsetof(T, f), refusing to compile unless field f has type C (an offset alone checks nothing) */
#define POS_AT(T, f, C)                                                                                   \
    (offsetof(T, f) +                                                                                     \
     0 * sizeof(struct { int f_has_type : __builtin_types_compatible_p(__typeof__(((T *)0)->f), C) ? 1 : -1; }))
/* table rows; trailing designated initializers (.flags = ...) are passed through */
#define POS_DOUBLE(key, T, f, dflt, low, high, text, ...)                                                  \
    {.name = key, .type = POS_OPT_DOUBLE, .offset = POS_AT(T, f, double), .def = dflt, .lo = low, .hi = high, \
     .help = text, __VA_ARGS__}
#define POS_INT(key, T, f, dflt, low, high, text, ...)                                                  \
    {.name = key, .type = POS_OPT_INT, .offset = POS_AT(T, f, int), .def = dflt, .lo = low, .hi = high, \
     .help = text, __VA_ARGS__}
#define POS_WORD(key, T, f, dflt, text, ...)                                                     \
    {.name = key, .type = POS_OPT_WORD, .offset = POS_AT(T, f, int), .def = dflt, .help = text, \
     .words = {__VA_ARGS__}}
#define POS_RULE(key, T, f, text) {.name = key, .type = POS_OPT_RULE, .offset = POS_AT(T, f, RopeRule), .help = text}
/* .options and .n_options of a PosScheme from a static table */
#define POS_OPTIONS(table) .options = table, .n_options = (int)(sizeof table / sizeof table[0])

/* Capabilities, declared by each scheme (tests/test_schemes.c checks them against its hooks) */
enum {
    POS_CAP_POSITION_FREE = 1 << 0, /* no hook sees a position: unmasked attention is permutation-equivariant */
    POS_CAP_ROTARY = 1 << 1,        /* maps each (q, k) pair by position (qk_forward) */
    POS_CAP_RULES = 1 << 2,         /* takes a scaling rule (its POS_OPT_RULE option): --scale RULE */
    POS_CAP_LEARNED = 1 << 3,       /* has learned parameters (param_shape) */
    POS_CAP_DYNAMIC = 1 << 4,       /* may follow the current length past L (qk_dynamic_from) */
    POS_CAP_KINKED = 1 << 5,        /* piecewise linear in the activations (CoPE's interpolation between
                                     * integer positions): its slope jumps, so a finite difference may
                                     * straddle a kink (the gradient checks then also try one-sided ones) */
};

enum { POS_MAX_TEST_SPECS = 16 };
/* the most layers a model has (config.c), and the longest canonical spec + 1 (a checkpoint's
 * metadata value holds 447 bytes, io/checkpoint.h) */
enum { POS_MAX_LAYERS = 1024, POS_SPEC_MAX = 448 };

/* One query's row through the backward of a content bias (PosScheme.content_backward). */
typedef struct PosContentGrad {
    float *drow;         /* [nk] d(loss)/d(row after content_row); in place: d(loss)/d(row before) */
    const float *scores; /* [nk] that row before content_row, recomputed */
    const float *q;      /* [head_dim] the query, after the q/k transform */
    float *dq;           /* [head_dim] += the term's gradient with respect to q */
    float *dparams;      /* NULL: not wanted; else += its parameters' */
    int nk, head, layer;
} PosContentGrad;

typedef struct PosScheme {
    const char *name;
    unsigned caps;           /* POS_CAP_* */
    const PosOption *options; /* in canonical order: pos_spec writes them so */
    int n_options;
    size_t state_size;       /* bytes of pc->state that pos_init allocates before the options; 0: none */
    /* specs the shared tests run besides the default (layouts, options, rules) */
    const char *test_specs[POS_MAX_TEST_SPECS];
    /* after options and model shape are known: validate, precompute tables (may allocate pc->state
     * itself when state_size is 0) */
    int (*prepare)(PosCtx *pc);
    /* learned parameters: one tensor "pos.weight" of this shape; ndim 0 = none, at most 3 */
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
    /* with qk_dynamic_from: 0 when the transform at current length to_len is the one at from_len (a
     * cache built at from_len stays exact: LongRoPE switches sets once, at L), 1 when it changed;
     * NULL: it changes with every length */
    int (*qk_transform_changes)(const PosCtx *pc, long from_len, long to_len);
    /* largest position + 1 whose numbers stay finite and accurate in float32, -1 if unlimited */
    long (*computable_position)(const PosCtx *pc);
    /* after every optimizer update: project learned parameters back into their domain (clamps) */
    void (*after_update)(const PosCtx *pc, float *params);

    /* 1. input: x is [n, dim]. token_scale (NULL: 1): the token embeddings are multiplied by it
     *    before input_forward adds the positions (Vaswani et al.'s sqrt(d_model)); the model
     *    applies it, and its gradient, around the embedding lookup, and initialises the token
     *    embeddings with std 1/token_scale (fairseq's d^-1/2) instead of 0.02. */
    float (*token_scale)(const PosCtx *pc);
    void (*input_forward)(const PosCtx *pc, float *x, const int *pos, int n);
    void (*input_backward)(const PosCtx *pc, const float *dx, const int *pos, int n, float *dparams);
    /* 2. q/k transform, in place: v is [n, n_heads * head_dim], row stride n_heads*head_dim.
     *    is_key: 1 for keys, 0 for queries (schemes like xPos treat them differently). */
    void (*qk_forward)(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer);
    void (*qk_backward)(const PosCtx *pc, float *dv, const int *pos, int n, int n_heads, int is_key, int layer);
    /*    in place of qk_backward, for a map whose backward reads its own output or has parameters
     *    (PoPE: magnitudes and phases, learned phase biases): mapped = qk_forward's output for the
     *    same rows (training keeps it); dparams (NULL: not wanted) += its parameters' gradient.
     *    The queries' length scale (+logn, +temp, +ssmax) would change that output: refused. */
    void (*qk_backward_mapped)(const PosCtx *pc, float *dv, const float *mapped, const int *pos, int n, int n_heads,
                               int is_key, int layer, float *dparams);
    /* 3. score bias for one query against nk keys of one head: row[j] += b(qpos, kpos[j]) */
    void (*bias_row)(const PosCtx *pc, float *row, int qpos, const int *kpos, int nk, int head, int layer);
    /* dparams += d(loss)/d(params) given drow = d(loss)/d(row) (the softmax-input gradient) */
    void (*bias_backward)(const PosCtx *pc, const float *drow, int qpos, const int *kpos, int nk, int head,
                          int layer, float *dparams);
    /* 4. content-dependent bias (CoPE), applied before bias_row: row holds one query's scaled
     *    scores (q . k / sqrt(head_dim)) against its nk visible keys, oldest first, the query's own
     *    key last; it adds to them a term that depends on the query vector q (head_dim floats,
     *    after the q/k transform) and on the scores themselves. The hook sees no position id: order
     *    comes from the row. */
    void (*content_row)(const PosCtx *pc, float *row, const float *q, int nk, int head, int layer);
    /* the backward of content_row for one query's row (PosContentGrad) */
    void (*content_backward)(const PosCtx *pc, const struct PosContentGrad *g);
    /* 5. data-dependent gate (FoX): one log forget gate per row and head, logf[n, n_heads] (<= 0),
     *    from the rows' layer input x [n, dim] (after the attention norm, as q, k, v see it); the
     *    pipeline sums them along each sequence, c_t = sum_{l <= t} logf_l, and adds c_i - c_j =
     *    sum_{l in (j, i]} logf_l to the score of query i against key j (pipeline.h) */
    void (*gate_forward)(const PosCtx *pc, int layer, const float *x, int n, float *logf);
    /* given dlogf [n, n_heads]: dx [n, dim] += its gradient with respect to x, dparams += its own */
    void (*gate_backward)(const PosCtx *pc, int layer, const float *x, const float *dlogf, int n, float *dx,
                          float *dparams);
    /* free what prepare allocated inside the state; pos_free then frees the state block itself */
    void (*release)(PosCtx *pc);
} PosScheme;

struct PosCtx {
    const PosScheme *scheme;
    /* model shape, copied in by pos_init */
    int dim, n_heads, n_kv_heads, head_dim, n_layers, seq_len;
    const float *params; /* the scheme's learned parameters inside the model block, NULL if none */
    void *state;         /* scheme-private options and tables */
    AttnScale attn_scale; /* "+logn" / "+temp" / "+ssmax": queries scaled by their position (attn_scale.h) */
    PosSinks sinks;       /* "+sinks": a learned logit per layer and head in the softmax's denominator (sinks.h) */
    /* "+nope@L1,L2": bit l set = layer l runs without the scheme's per-layer hooks (Llama 4's
     * interleaved NoPE layers). A fixed bitset, not an allocation: PosCtx is copied by value. */
    unsigned char nope_layers[POS_MAX_LAYERS / 8];
    /* an inference-time extension method (extend.h), set by pos_set_extend; never in the spec */
    PosExtend extend;
    /* leaky-rerope: the far branch's own context (the scheme under pi:K), owned; NULL otherwise */
    struct PosCtx *extend_far;
};

/* The interface's files, one job each: registry.c (the schemes and their look-up by name),
 * options.c (the option engine), help.c (--help from the tables), spec.c (a spec parsed, its '+'
 * parts, the canonical spec), policy.c (rules, extension methods and modifiers set on a loaded
 * model), positions.c (the positions a model accepts). */

/* Registry (registry.c), in registration order */
int pos_count(void);
const PosScheme *pos_at(int i);
const PosScheme *pos_find(const char *name);
/* the scheme a spec "NAME[:k=v,...]" names, NULL if none */
const PosScheme *pos_find_spec(const char *spec);
void pos_list(char *buf, size_t n); /* "nope, learned, ..." */
/* "base=F (10000), layout=interleaved|half (interleaved), ..." or "no options" */
void pos_options_summary(const PosScheme *s, char *buf, size_t n);
/* every scheme and its options with their help, one line each, each line starting with indent */
void pos_help(char *buf, size_t n, const char *indent);

/* Parse "NAME[:k=v,...][+MODIFIER[:k=v,...]][+sinks[:init=F]][+nope@L1,L2,...]" (a later key overrides
 * an earlier one; the modifier is length-scaled attention, attn_scale.h; sinks, sinks.h; nope@ lists the 0-based layers that
 * skip the scheme's q/k transform and score bias, in any order with the modifier) and set up pc
 * for a model of this shape. */
int pos_init(PosCtx *pc, const char *spec, int dim, int n_heads, int n_kv_heads, int n_layers, int seq_len);
void pos_free(PosCtx *pc);
/* 1 when the scheme's per-layer hooks (q/k transform, score bias) apply in this layer; 0 in a
 * "+nope@" layer */
int pos_layer_active(const PosCtx *pc, int layer);
/* set the scaling rule of a scheme that takes one (POS_CAP_RULES), keeping its other options and
 * its parameter pointer: how --scale RULE reaches a loaded model; one line for the others. An
 * extension method's name (extend.h: selfextend, rerope, leaky-rerope, stream) goes to
 * pos_set_extend instead. */
int pos_set_scale(PosCtx *pc, const char *rule);
/* set an inference-time extension method (extend.h) on a loaded model, checking that its scheme
 * can take it: the two-branch methods need a q/k map (a rotary scheme) whose rule does not follow
 * the length (leaky-rerope: no rule at all, it brings pi:K), stream needs positions applied inside
 * attention (not at the input). -1 with one line naming the method and the scheme otherwise. */
int pos_set_extend(PosCtx *pc, const PosExtend *e);
/* NULL if a scheme can carry the extension method, else why not (one phrase, for messages); the
 * checks that depend on a model's options (its rule) are pos_set_extend's */
const char *pos_extend_refusal(const PosScheme *s, const PosExtend *e);
/* the context whose q/k map the far branch of a two-branch method uses (pc, or leaky's own) */
const PosCtx *pos_far_ctx(const PosCtx *pc);
/* the scaling rule of pc's scheme as the spec spells it ("yarn:4"), "none" for a scheme without rules */
void pos_rule_describe(const PosCtx *pc, char *buf, size_t n);
/* the same with a rule already parsed (a LongRoPE factor search builds its candidates in memory) */
int pos_set_rule(PosCtx *pc, const RopeRule *rule);
/* the rotary pairs of each head a scheme that takes rules maps (its fraction= option); 0 for others */
int pos_rotary_pairs(const PosCtx *pc);
/* 1 when a rotary scheme pairs dims (j, j + pairs) (layout=half), 0 for (2j, 2j+1) or no layout */
int pos_rotary_half(const PosCtx *pc);
/* replace the length-scaled attention modifier of a loaded model ("logn[:len=N]", "temp[:...]" or
 * "none"): how --attn-scale applies Qwen's logn to a model trained without it, at inference */
int pos_set_attn_scale(PosCtx *pc, const char *text);
/* largest accepted position + 1 for numbers that stay finite in float32, -1 if unlimited */
long pos_computable_position(const PosCtx *pc);
/* "training L; accepted N|unbounded; computable N|unbounded[; extension method M]" */
void pos_lengths(const PosCtx *pc, char *buf, size_t n);
/* "name:k=v,...[+modifier:k=v,...][+sinks:init=F][+nope@L1,L2]" with every option spelled out and the layers in
 * ascending order (the canonical spec stored in checkpoints; pos_init refuses a longer one than
 * POS_SPEC_MAX - 1) */
void pos_spec(const PosCtx *pc, char *buf, size_t n);
size_t pos_n_params(const PosCtx *pc);
long pos_max_position(const PosCtx *pc);
/* check every position is >= 0 and accepted; grows tables. -1 with a clear message otherwise. */
int pos_check_positions(PosCtx *pc, const int *pos, size_t n);

#endif
