/* gguf_rope.h: a pelab RoPE model's rotation as the metadata llama.cpp's llama architecture reads
 * (src/llama-model.cpp: load_hparams, get_rope_factors; ggml's rope_yarn), and back.
 *
 * llama.cpp rotates interleaved pairs (GGML_ROPE_TYPE_NORM) of whole heads by
 * pos * freq_base^(-2j/d) / divisor_j * freq_scale, with YaRN's ramp and cos/sin factor
 * 0.1 ln(1/freq_scale) + 1 under scaling type yarn (beta_fast 32, beta_slow 1, original length
 * from rope.scaling.original_context_length). pelab's rules map so:
 *   none                      rope.scaling.type none
 *   a rule with a gguf_type   that type, rope.scaling.factor S (pi: linear, yarn: yarn)
 *   ntk:S                     none, its base written as rope.freq_base (the same frequencies)
 *   another static rule with attention factor 1 (llama3:S)
 *                             none, and its per-pair divisors as the tensor rope_freqs.weight
 * Refused: a rule whose frequencies follow the current length (dynamic-ntk, longrope: llama.cpp's
 * are fixed, or chosen once from the context size), one that is not position x frequency (dynatan)
 * or that scales cos and sin without being YaRN. Every rule with a length writes it as
 * rope.scaling.original_context_length. */
#ifndef PELAB_GGUF_ROPE_H
#define PELAB_GGUF_ROPE_H

#include <stddef.h>
#include <stdint.h>

#include "../model/model.h"
#include "gguf.h"

typedef struct {
    float freq_base;   /* llama.rope.freq_base */
    uint32_t dim_count; /* llama.rope.dimension_count */
    char type[12];     /* llama.rope.scaling.type: "none", "linear", "yarn" */
    float factor;      /* llama.rope.scaling.factor (type none: 0) */
    uint32_t orig_ctx; /* llama.rope.scaling.original_context_length, 0: not written */
    int n_divisors;    /* rope_freqs.weight: one per pair, 0: none */
    float *divisor;
} GgufRope;

/* r for m (every field; r->divisor malloc'd); -1 with one line naming the scheme or rule and why
 * llama.cpp cannot compute it. note gets a line on a rule written in another form ("" otherwise) */
int gguf_rope_of_model(const Model *m, const char *name, GgufRope *r, char *note, size_t note_len);
/* the metadata keys of r (its rope_freqs.weight is the caller's tensor) */
void gguf_rope_put(GgufWriter *w, const GgufRope *r);
/* r as file g says (llama.cpp's defaults for absent keys, its rope_freqs.weight read; ctx_len:
 * llama.context_length); -1 for a value llama.cpp's llama reads that pelab does not compute
 * (rope.scaling.type longrope, rope.scaling.attn_factor) */
int gguf_rope_read(const GgufFile *g, uint32_t ctx_len, GgufRope *r);
/* the pelab spec (layout=interleaved, the order of GGUF's q/k rows) computing r; -1 with one line */
int gguf_rope_spec(const GgufRope *r, const char *name, char *spec, size_t n);
/* 0 when a model with rotation want computes what file name's have says; -1 naming the first field
 * that differs (divisors to 1e-6 relative: float32 in the file) */
int gguf_rope_same(const GgufRope *want, const GgufRope *have, const char *name);
void gguf_rope_free(GgufRope *r);

#endif
