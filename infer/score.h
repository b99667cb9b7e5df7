/* score.h: negative log-likelihood of a token stream in non-overlapping windows, position ids
 * restarting at 0 in every window, through the KV-cache decoder (memory linear in the window). */
#ifndef PELAB_SCORE_H
#define PELAB_SCORE_H

#include <stdio.h>

#include "../model/model.h"

typedef struct {
    double nll_sum;   /* nats */
    size_t n_scored;  /* predicted tokens */
    size_t n_windows;
} ScoreResult;

/* Window w holds tokens [w*len, w*len + len] and scores the len predictions inside it, so every
 * token after the first is predicted exactly once. per_token (may be NULL) gets CSV rows
 * "window,position,token,logprob". -1 with pelab_errmsg if the model rejects a position. */
int score_tokens(Model *m, const int *tokens, size_t n, int len, FILE *per_token, ScoreResult *r);

/* Texts scored each on its own from position 0 (its first token is context, every later one is
 * predicted), `batch` of them side by side through one left-padded KV cache (decode.h); texts
 * are grouped by length so that a batch pads little. logprob (may be NULL) gets every predicted
 * token's log-prob, text after text in the given order (lens[t] - 1 per text); nll[t] (may be
 * NULL) each text's summed negative log-likelihood. Equal, within float rounding of the batched
 * products, to scoring each text alone. A dynamic rule is scored one text at a time (it follows
 * each text's own length). -1 with pelab_errmsg naming the text if one is shorter than 2 tokens
 * or needs a position the scheme does not accept. */
int score_texts(Model *m, const int *const *texts, const int *lens, int n_texts, int batch, float *logprob,
                double *nll);

#endif
