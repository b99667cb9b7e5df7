/* score.h: negative log-likelihood of a token stream in non-overlapping windows, position ids
 * restarting at 0 in every window, through the KV-cache decoder (memory linear in the window). */
#ifndef PELAB_SCORE_H
#define PELAB_SCORE_H

#include <stdio.h>

#include "../model/model.h"
#include "decode.h"

typedef struct {
    double nll_sum;   /* nats */
    size_t n_scored;  /* predicted tokens */
    size_t n_windows;
} ScoreResult;

/* How a dynamic rule (a scheme whose qk_dynamic_from >= 0: rope:scale=dynamic-ntk) sets the length
 * a scored window is rotated for; every other scheme scores the same under both, bit for bit.
 *   DYNAMIC_WINDOW: one forward over the window, every position under the window's length (HF's
 *                   full forward over the window).
 *   DYNAMIC_PREFIX: token t's logits from a forward over the window's tokens 0..t, under length
 *                   t + 1: what KV-cache decoding (`sample`) assigns. Prefixes up to the rule's
 *                   length L share one rotation (one forward); past L one forward per token, each
 *                   recomputing its prefix: O(T^2) token-forwards per window of T > L. */
typedef enum { DYNAMIC_WINDOW, DYNAMIC_PREFIX } DynamicLength;
extern const char *const dynamic_length_names[2]; /* "window", "prefix" */
/* "window" or "prefix"; anything else: -1 with pelab_errmsg naming flag */
int dynamic_length_parse(const char *flag, const char *text, DynamicLength *out);

/* The logits [n, V] of a window of n tokens at positions pos (0, 1, ..., n-1) from a fresh
 * single-sequence cache (reset here), under the mode; rows before `first` (not scored) may be left
 * unwritten. -1 with pelab_errmsg if the model refuses a position. */
int score_window_logits(Model *m, KVCache *kv, const int *tokens, const int *pos, int n, int first,
                        DynamicLength dynamic, float *logits);

/* Window w holds tokens [w*len, w*len + len] and scores the len predictions inside it, so every
 * token after the first is predicted exactly once. per_token (may be NULL) gets CSV rows
 * "window,position,token,logprob". -1 with pelab_errmsg if the model rejects a position. */
int score_tokens(Model *m, const int *tokens, size_t n, int len, DynamicLength dynamic, FILE *per_token,
                 ScoreResult *r);

/* Texts scored each on its own from position 0 (its first token is context, every later one is
 * predicted), `batch` of them side by side through one left-padded KV cache (decode.h); texts
 * are grouped by length so that a batch pads little. logprob (may be NULL) gets every predicted
 * token's log-prob, text after text in the given order (lens[t] - 1 per text); nll[t] (may be
 * NULL) each text's summed negative log-likelihood. Equal, within float rounding of the batched
 * products, to scoring each text alone. A dynamic rule is scored one text at a time (it follows
 * each text's own length, or under DYNAMIC_PREFIX each token's prefix). -1 with pelab_errmsg naming the text if one is shorter than 2 tokens
 * or needs a position the scheme does not accept. */
int score_texts(Model *m, const int *const *texts, const int *lens, int n_texts, int batch, DynamicLength dynamic,
                float *logprob, double *nll);

#endif
