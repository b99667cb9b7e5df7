/* generate.h: autoregressive generation, with the KV cache or by full recomputation. */
#ifndef PELAB_GENERATE_H
#define PELAB_GENERATE_H

#include "../model/model.h"
#include "sampler.h"

/* tokens holds the n_prompt prompt tokens and room for n_new more; generated ids are appended.
 * on_token (may be NULL) sees each new id as it is drawn. Positions are 0, 1, 2, ...
 * Drawing stop_id (>= 0; llama2.c's BOS) ends the text, as llama2.c's runner does: it is neither
 * kept nor shown. Returns the number of tokens generated, or -1 with pelab_errmsg if the scheme
 * rejects a position. */
int generate(Model *m, Sampler *s, int *tokens, int n_prompt, int n_new, int use_cache, int stop_id,
             void (*on_token)(int id, void *ctx), void *ctx);

/* 0, or -1 with pelab_errmsg if the scheme does not accept the positions a prompt of n_prompt
 * tokens and n_new more take (0 .. n_prompt + n_new - 2: the last is never fed back) */
int generate_check_positions(const Model *m, int n_prompt, int n_new);

/* n_seq texts side by side through one batched KV cache (decode.h): texts[b] holds n_prompt[b]
 * (>= 1) prompt tokens and room for n_new more; samplers[b] draws text b's tokens, so each text is
 * what generate() with that sampler gives it alone (up to float rounding of the batched products).
 * Shorter prompts are left-padded: position ids start at 0 at each prompt's first token and padding
 * is never attended. A text that draws stop_id ends (n_made[b] counts what it kept) while the
 * others go on. Under a dynamic rule that the texts would cross, the texts are generated one at
 * a time (the rule follows each text's own length). 0, or -1 with pelab_errmsg. */
int generate_batch(Model *m, Sampler *samplers, int **texts, const int *n_prompt, int n_seq, int n_new, int stop_id,
                   int *n_made);

#endif
