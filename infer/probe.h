/* probe.h: diagnostics for position problems (pelab probe). Each takes a loaded model and
 * prints a short report to f; the numbers are also returned for tests and reports. */
#ifndef PELAB_PROBE_H
#define PELAB_PROBE_H

#include <stdio.h>

#include "../model/model.h"

/* Distance: "The secret word was W." then neutral filler, then "The secret word was": the
 * rank of " W" among the candidate words, as the fact-to-query distance grows. Fills accuracy[k]
 * (share of trials where W ranks first) and mean_logprob[k] for each distance. */
int probe_distance(Model *m, const int *distances, int n_dist, int trials, unsigned long long seed, FILE *f,
                   double *accuracy, double *mean_logprob);

/* Permutation: segments A B C then a query segment Q, against C B A then Q: the mean KL divergence
 * of the next-token distributions over Q, and the mean |change| of the true tokens' log-probs.
 * Near zero means the order of the context is not reaching the model. */
int probe_permutation(Model *m, const int *tokens, size_t n, int seg_len, FILE *f, double *kl, double *dlogprob);

/* Attention weights of one layer and head over the first n tokens (positions 0..n-1): weights
 * [n, n], row i the query at i (zero past the diagonal); mean_dist the mean attended distance. */
int probe_attention(Model *m, const int *tokens, int n, int layer, int head, float *weights, double *mean_dist);

/* Attention sinks (Xiao et al. 2023): over `windows` windows of len tokens spread evenly over
 * tokens[0..n) (each window's first token replaced by sink_token when >= 0, as train
 * --sink-token), the attention the queries in the second half (len/2 <= i < len) give the window's
 * first token, per layer: mass[l] averaged over heads, queries and windows, head_max[l] the largest
 * head's average; uniform: what a uniform row would give it, the mean of 1/(i+1). -1 with
 * pelab_errmsg if the text is shorter than one window or a forward fails. */
int probe_sinks(Model *m, const int *tokens, size_t n, int len, int windows, int sink_token, double *mass,
                double *head_max, double *uniform);

/* A diagnosis checklist on real text; returns the number of failed checks. */
int probe_cache(Model *m, const int *tokens, size_t n, int len, FILE *f);

#endif
