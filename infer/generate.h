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

#endif
