/* lookup.h: prompt-lookup decoding (Saxena 2023; llama.cpp's lookup example), a speculative
 * decoder whose draft is the text itself: the tokens that followed the latest earlier occurrence
 * of the text's last few tokens are proposed, and one forward over them checks them all. A token
 * on a small model is read-bound (every weight once), so checking k drafted tokens costs little
 * more than one; each accepted draft is a token that did not read the weights again.
 * Greedy: the same tokens as generate() (up to float rounding of the block's products against the
 * one-token ones). Sampling: each token distributed exactly as generate()'s (sampler_check), by
 * other draws of the generator. */
#ifndef PELAB_LOOKUP_H
#define PELAB_LOOKUP_H

#include "../model/model.h"
#include "sampler.h"

/* the shortest and longest n-gram matched (the longest that occurs is preferred) */
enum { LOOKUP_NGRAM_MIN = 2, LOOKUP_NGRAM_MAX = 8 };

typedef struct {
    long forwards; /* calls of the decoder after the prompt's */
    long drafted;  /* tokens proposed */
    long accepted; /* of them, kept */
} LookupStats;

/* the draft for the text t[0..len): up to k_max tokens that followed the latest earlier
 * occurrence of its last g tokens, for the longest g in [LOOKUP_NGRAM_MIN, LOOKUP_NGRAM_MAX] that
 * has one; their count (0: no occurrence) */
int lookup_draft(const int *t, int len, int k_max, int *draft);

/* generate() with up to draft_max (1..64) drafted tokens checked per forward; the same contract
 * (tokens, n_prompt, n_new, stop_id, on_token), the KV cache always. stats may be NULL. -1 with
 * pelab_errmsg where the scheme rejects a position, or the model's cache cannot drop rejected
 * drafts (a sliding cache; a dynamic rule the text would cross). */
int generate_lookup(Model *m, Sampler *s, int *tokens, int n_prompt, int n_new, int draft_max, int stop_id,
                    void (*on_token)(int id, void *ctx), void *ctx, LookupStats *stats);

#endif
