/* extend.h: inference-time extension methods that change which relative positions a trained model
 * sees, set on a loaded model by --scale (pos_set_scale) like a scaling rule, never trained with:
 *
 *   selfextend:G:W   Self-Extend (Jin et al. 2024, arXiv 2401.01325; llama.cpp --grp-attn-n G
 *                    --grp-attn-w W): a key fewer than W positions behind the query keeps its exact
 *                    relative position; a farther one is seen at floor(i/G) - floor(j/G) + W -
 *                    floor(W/G) (query i, key j), groups of G positions sharing one, shifted so that
 *                    the two regions meet at W. W must be a multiple of G (as llama.cpp asserts:
 *                    otherwise the official prefill and decode remap differently).
 *   rerope:W         ReRoPE (Su 2023): relative position min(i - j, W).
 *   leaky-rerope:W:K Leaky ReRoPE (Su 2023): i - j below W, else W + (i - j - W) / K.
 *   string[:S:W]     STRING (An et al. 2024, arXiv 2410.18745; their shifted_offset S and
 *                    small_local_value W): a key fewer than S positions behind the query keeps its
 *                    exact relative position; a farther one is seen at i - j - S + W, so the well-
 *                    trained distances W .. overwrite the rarely trained ones past S (the largest
 *                    distances, L - S and more, are dropped). Defaults: S = floor(L / 3) (the paper's
 *                    N / 3, 0.33 L in its code) and W = max(1, L / 16) (the paper's W = 128 at
 *                    TinyLlama's L = 2048, the length it pretrains at; at Llama 3.1's 128K W stays 128).
 *                    W < S.
 *   dca[:C:W]        Dual Chunk Attention (An et al. 2024, arXiv 2402.17463, ChunkLlama; Qwen2.5-1M's
 *                    dual_chunk_attention_config chunk_size C and local_size W): positions in chunks of
 *                    c = C - W tokens; every key at position j mod c; a query at i in the key's own chunk
 *                    at i mod c (intra-chunk: exact), in the next chunk at min(i mod c + c, C)
 *                    (successive-chunk), any later chunk at min(2c - 1, C) (inter-chunk). Defaults from
 *                    the authors' code: C = floor(3L / 4), W = floor(L / 16) (Qwen2.5-1M ships C = L,
 *                    W = L / 32: dca:L:L/32). 0 <= W < C.
 *   stream:S:W       StreamingLLM (Xiao et al. 2023, arXiv 2309.17453; its start_size S and
 *                    recent_size W): the KV cache keeps the first S tokens (attention sinks) and the
 *                    last W before the query, which sees those S + W keys and its own; positions are
 *                    the slots (0 .. S + W), not the stream's; memory stays constant however long
 *                    the stream (decode.h).
 *
 * All but stream are "two-branch" methods: every score is q_i . k_j under the scheme's own q/k map
 * at the real positions when the key is near (i - j < W; STRING: < S; DCA: the query's own chunk, or
 * the previous one while i mod c < W), else under the map at the far positions below (the far
 * branch), whose difference is the remapped relative position:
 *   selfextend    query floor(i/G) + W - floor(W/G), key floor(j/G)
 *   rerope        query W, key 0
 *   leaky-rerope  query i + W (K - 1), key j, both under the frequencies divided by K (the rule pi:K:
 *                 (i + W(K - 1) - j) / K = W + (i - j - W) / K), so W (K - 1) must be an integer
 *   string        query i - S + W, key j
 *   dca           query min(2c - 1, C), key j mod c. The near branch at real positions gives DCA's
 *                 intra-chunk scores ((i mod c) - (j mod c) = i - j in one chunk) and its
 *                 successive-chunk ones while i mod c < W (then min(i mod c + c, C) - (j mod c) = i - j);
 *                 past that the successive query sits at C = min(2c - 1, C), the inter-chunk one, so
 *                 two copies of q and k carry all three of DCA's cases.
 * A key's far position depends on the key alone, so the KV cache keeps a second, far-mapped copy
 * of the keys and stays equal to a full forward.
 *
 * Each method is one entry of the table in extend.c (its ExtendMethod): what it parses and writes
 * back, its far positions, what it needs of a scheme and what a KV cache must do for it. Adding a
 * method is adding its entry there, and its tests; policy.c and pipeline.c route every
 * method through these entries and name none. */
#ifndef PELAB_EXTEND_H
#define PELAB_EXTEND_H

#include <stddef.h>

#include "rope_scaling.h"

/* leaky-rerope's W (K - 1), the far query's shift: the rotary tables are built that far */
enum { EXTEND_MAX_SHIFT = 1 << 18 };

typedef struct ExtendMethod ExtendMethod;

typedef struct {
    const ExtendMethod *method; /* NULL: no method */
    int window;  /* W: Self-Extend's neighbour window, ReRoPE's window, StreamingLLM's recent tokens */
    int group;   /* Self-Extend's G */
    double leak; /* Leaky ReRoPE's K (> 1) */
    int sinks;   /* StreamingLLM's S */
    int local;   /* STRING's W (window holds its S), DCA's W (window holds its chunk length C - W) */
    int chunk;   /* DCA's C */
} PosExtend;

/* What a KV cache does for a method (pipeline.h's pos_cache_policy); all 0: nothing special. */
typedef struct {
    int capacity;     /* 0: as the caller sizes it; else the most tokens it holds (StreamingLLM: S + W + 1) */
    int keep_first;   /* a full cache evicts the token after its first keep_first (the sinks) */
    int slot_positions; /* positions are the cache slots, not the caller's: cached keys are stored
                         * unmapped and mapped again at every call (pos_map_keys) */
    int one_sequence; /* the cache holds one sequence: batches go one text at a time */
} PosCachePolicy;

/* One extension method, declared by its entry in extend.c. NULL hooks take the defaults beside them. */
struct ExtendMethod {
    const char *name;    /* "selfextend": what --scale spells */
    const char *usage;   /* "selfextend:G:W", as the help lists it */
    const char *args;    /* what the arguments are, for messages: "group size G >= 1, ..." */
    const char *summary; /* one phrase for --help: "Self-Extend: exact within W, groups of G past it" */
    const char *example; /* NULL, or a valid text for the tests where 4 for every argument is not one */
    /* the arguments after "NAME:" from *p (text: the whole, for messages) into e, *p left after
     * what it read; -1 with one line */
    int (*parse)(const char *text, const char **p, PosExtend *e);
    void (*describe)(const PosExtend *e, char *buf, size_t n); /* "NAME:..." as parse reads it */
    /* a two-branch method: the far branch's positions of a query at pos >= W and of a key, and the
     * relative position it gives a key d >= W behind a query at i; NULL far_qpos: not two-branch
     * (far_kpos NULL: the key's own position) */
    int (*far_qpos)(const PosExtend *e, int pos);
    int (*far_kpos)(const PosExtend *e, int pos);
    double (*far_relative)(const PosExtend *e, int i, int d);
    /* a two-branch method's near test of key position kpos <= qpos; NULL: qpos - kpos < window. For any
     * method the far keys of a query are those before some position that never falls as qpos grows. */
    int (*near)(const PosExtend *e, int qpos, int kpos);
    /* non-NULL: the arguments may be left out ("NAME" alone), and this sets them from the model's
     * training length L when the method reaches a model (pos_set_extend); -1 with one line */
    int (*defaults)(PosExtend *e, int train_len);
    /* the far branch's own scaling rule in place of the model's (leaky-rerope: pi:K; far_usage
     * names it in messages); NULL: the model's q/k map. The model must then have no rule. */
    void (*far_rule)(const PosExtend *e, RopeRule *r);
    const char *far_usage;
    PosCachePolicy (*cache_policy)(const PosExtend *e); /* NULL: all 0 */
    int cache_only;          /* 1: only the KV-cache decoder runs it (a full forward has no cache to slide) */
    /* non-NULL: the method is refused on a scheme that adds positions to the input (resp. takes no
     * scaling rule), and this is why, after "the SCHEME scheme " */
    const char *refuse_input, *refuse_no_rules;
};

/* the methods, in help order */
int extend_count(void);
const ExtendMethod *extend_at(int i);
/* the usages joined by sep; with_summary: each summary in parentheses after its usage */
void extend_list(char *buf, size_t n, const char *sep, int with_summary);

/* 1 if text names an extension method ("selfextend", "rerope", "leaky-rerope", "string", "dca",
 * "stream", with or without arguments) and parses into e; 0 if it names none (a scaling rule, say); -1 with one
 * line naming what was expected when the name is one but the arguments are wrong */
int extend_parse(const char *text, PosExtend *e);
/* "selfextend:4:32", "rerope:64", "leaky-rerope:64:16", "string:21:4", "dca:48:4", "stream:4:124", "none"
 * ("string", "dca" before their defaults are set) */
void extend_describe(const PosExtend *e, char *buf, size_t n);
/* 1 for the two-branch methods (selfextend, rerope, leaky-rerope, string, dca) */
int extend_two_branch(const PosExtend *e);
/* two-branch methods: whether query position qpos sees key position kpos through the near branch */
int extend_near(const PosExtend *e, int qpos, int kpos);
/* a method parsed without its arguments ("string") gets them from the training length L (its
 * defaults hook); 0 when it needs none or has them, -1 with one line */
int extend_resolve(PosExtend *e, int train_len);
/* the far branch's positions of a query and of a key (a query at pos < W has no far key: its own
 * position, which is never used) */
int extend_far_qpos(const PosExtend *e, int pos);
int extend_far_kpos(const PosExtend *e, int pos);
/* the relative position the method gives a key d >= 0 positions behind a query at position i (the
 * definition above; Self-Extend's depends on i, not on d alone) */
double extend_relative(const PosExtend *e, int i, int d);
/* what a KV cache must do for the method (all 0 without one) */
PosCachePolicy extend_cache_policy(const PosExtend *e);

#endif
