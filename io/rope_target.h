/* rope_target.h: a pelab RoPE model as another runtime's Llama sees it (HF's LlamaForCausalLM,
 * llama.cpp's llama architecture): one rotation of whole heads in every layer, described by its
 * base, pair layout, scaling rule and the rule's original length; or, in one line, why that
 * runtime cannot compute the model. Both exports (io/hf_llama.c, io/gguf_rope.c) start here. */
#ifndef PELAB_ROPE_TARGET_H
#define PELAB_ROPE_TARGET_H

#include <stddef.h>

#include "../model/model.h"
#include "../model/pos/rope_scaling.h"

typedef struct {
    double base;
    int half;      /* 1: layout=half, pairs (j, j + hd/2) as HF; 0: interleaved (2j, 2j+1) as llama2.c */
    RopeRule rule;
    int orig_len;  /* the spec's orig_len */
} RopeTarget;

/* r from m's scheme; -1 with one line "NAME: ...: RUNNER ..." when the scheme is not RoPE, or RoPE
 * with anything a plain Llama rotation lacks (partial rotary, p-RoPE, HoPE, NoPE layers, sinks,
 * length-scaled attention, an extension method such as selfextend or rerope, any option this file
 * does not know). The rule itself is the caller's
 * to accept or refuse. */
int rope_target_of(const Model *m, const char *name, const char *runner, RopeTarget *r);

/* the value of option key in a spec ("rope:base=10000,layout=half,..."), "" if absent */
void spec_option(const char *spec, const char *key, char *out, size_t n);

/* q or k weight rows [n_heads * head_dim, cols] in place: interleaved pairs (2j, 2j+1) -> halves
 * (j, j + head_dim/2) when to_half, the inverse otherwise */
void rotary_rows_permute(float *w, int n_heads, int head_dim, int cols, int to_half);

#endif
