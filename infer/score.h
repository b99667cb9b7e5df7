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

#endif
