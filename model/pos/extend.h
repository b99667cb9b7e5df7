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
 *   stream:S:W       StreamingLLM (Xiao et al. 2023, arXiv 2309.17453; its start_size S and
 *                    recent_size W): the KV cache keeps the first S tokens (attention sinks) and the
 *                    last W before the query, which sees those S + W keys and its own; positions are
 *                    the slots (0 .. S + W), not the stream's; memory stays constant however long
 *                    the stream (decode.h).
 *
 * The first three are "two-branch" methods: every score is q_i . k_j under the scheme's own q/k map
 * at the real positions when i - j < W (the near branch), else under the map at the far positions
 * below (the far branch), whose difference is the remapped relative position:
 *   selfextend    query floor(i/G) + W - floor(W/G), key floor(j/G)
 *   rerope        query W, key 0
 *   leaky-rerope  query i + W (K - 1), key j, both under the frequencies divided by K (the rule pi:K:
 *                 (i + W(K - 1) - j) / K = W + (i - j - W) / K), so W (K - 1) must be an integer
 * A key's far position depends on the key alone, so the KV cache keeps a second, far-mapped copy
 * of the keys and stays equal to a full forward. */
#ifndef PELAB_EXTEND_H
#define PELAB_EXTEND_H

#include <stddef.h>

/* leaky-rerope's W (K - 1), the far query's shift: the rotary tables are built that far */
enum { EXTEND_MAX_SHIFT = 1 << 18 };

typedef enum { EXTEND_NONE, EXTEND_SELF_EXTEND, EXTEND_REROPE, EXTEND_LEAKY_REROPE, EXTEND_STREAM } ExtendKind;

typedef struct {
    ExtendKind kind;
    int window;  /* W: Self-Extend's neighbour window, ReRoPE's window, StreamingLLM's recent tokens */
    int group;   /* Self-Extend's G */
    double leak; /* Leaky ReRoPE's K (> 1) */
    int sinks;   /* StreamingLLM's S */
} PosExtend;

/* 1 if text names an extension method ("selfextend", "rerope", "leaky-rerope", "stream", with or
 * without arguments) and parses into e; 0 if it names none (a scaling rule, say); -1 with one
 * line naming what was expected when the name is one but the arguments are wrong */
int extend_parse(const char *text, PosExtend *e);
/* "selfextend:4:32", "rerope:64", "leaky-rerope:64:16", "stream:4:124", "none" */
void extend_describe(const PosExtend *e, char *buf, size_t n);
/* 1 for the two-branch methods (selfextend, rerope, leaky-rerope) */
int extend_two_branch(const PosExtend *e);
/* two-branch methods: whether query position qpos sees key position kpos through the near branch */
static inline int extend_near(const PosExtend *e, int qpos, int kpos) { return qpos - kpos < e->window; }
/* the far branch's positions of a query and of a key (a query at pos < W has no far key: its own
 * position, which is never used) */
int extend_far_qpos(const PosExtend *e, int pos);
int extend_far_kpos(const PosExtend *e, int pos);
/* the relative position the method gives a key d >= 0 positions behind a query at position i (the
 * definition above; Self-Extend's depends on i, not on d alone) */
double extend_relative(const PosExtend *e, int i, int d);

#endif
