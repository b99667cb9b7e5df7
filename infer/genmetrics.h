/* genmetrics.h: how a model fails when it writes past its training length L (the long-generation view of EXPERIMENTS.md section 6.4).
 *
 *   repetition: for n-grams ending at positions [lo, hi) of one token array, the share already seen
 *               earlier in the same array (repeated-n rate) and the share that are unique within the
 *               range (distinct-n = unique n-grams / n-grams); pure functions of the tokens.
 *   own loss:   the model's mean NLL of the tokens it generated, scored with full context (one window,
 *               positions 0..T-1), by position range.
 *   loss jump:  on held-out text in windows of 2L (positions from 0), mean loss at target positions
 *               (L, 2L] minus at (L/2, L] (query positions [L, 2L) minus [L/2, L)).
 * `pelab compare`, `pelab eval --gen-tokens` and `pelab demo` print these. */
#ifndef PELAB_GENMETRICS_H
#define PELAB_GENMETRICS_H

#include <stddef.h>

#include "../model/model.h"

typedef struct {
    size_t ngrams;   /* n-grams ending in the range */
    size_t repeated; /* of them, also ending somewhere earlier in the array */
    size_t distinct; /* of them, different from every earlier one ending in the range */
} NgramStats;

/* adds the n-grams (length ngram >= 1) ending at positions [lo, hi) of tokens[0..n) to s; an
 * n-gram ends at i >= ngram - 1. Pure: no model, no state. */
void ngram_stats(const int *tokens, int n, int ngram, int lo, int hi, NgramStats *s);
/* repeated / ngrams and distinct / ngrams; NaN when there is no n-gram */
double ngram_repeat_rate(const NgramStats *s);
double ngram_distinct_rate(const NgramStats *s);

/* sampling of the generated texts: documented with every result */
typedef struct {
    float temperature, top_p;
    unsigned long long seed;
} GenSampling;
#define GEN_TEMPERATURE 0.8f
#define GEN_TOP_P 0.9f

/* one generated text: the prompt then the model's tokens, positions 0..n-1 */
typedef struct {
    int n_prompt, n;
    int *tokens;     /* [n] */
    float *logprob;  /* [n] log p(tokens[t] | tokens[<t]) from one full-context forward; [0] = 0 */
} GenText;

/* the longest text (prompt included) the model can write and score within max_len: a learned
 * table stops at its size, a scheme's computable limit likewise */
int gen_text_limit(const Model *m, int max_len);
/* Writes n_prompt prompt tokens continued to n_total tokens in all (capped by gen_text_limit; the
 * KV-cache decoder; fewer if a stop is drawn) and scores the whole text with full context.
 * Free with gen_text_free. -1 with pelab_errmsg. */
int gen_text(Model *m, const int *prompt, int n_prompt, int n_total, const GenSampling *s, GenText *g);
void gen_text_free(GenText *g);

/* the generated part of g at positions [lo, hi): n-grams ending there and the own NLL of the
 * targets there, added to r (pooled over texts) */
typedef struct {
    NgramStats ng;
    double nll_sum;
    size_t n_nll;
} GenRange;
void gen_range(const GenText *g, int ngram, int lo, int hi, GenRange *r);
double gen_range_loss(const GenRange *r); /* mean own NLL, NaN when empty */

/* the texts of one model from n_prompts prompts of L/4 tokens, evenly spaced over held-out tokens,
 * each continued to text_len tokens (sampling s, seed s->seed + prompt index), summarised by
 * position buckets of `width` (a multiple of L, at most GEN_MAX_BUCKETS of them) and before / after L */
enum { GEN_MAX_BUCKETS = 16 };
typedef struct {
    int n_texts, text_len, n_prompt, width, n_buckets, ngram; /* text_len: the longest text written */
    GenRange bucket[GEN_MAX_BUCKETS];
    GenRange before, after; /* positions [0, L) and [L, text_len) */
    /* the reference: the held-out text that follows each prompt, in the same buckets (n-grams only:
     * how repetitive the data itself is there, so that a model's rate can be read against it) */
    NgramStats data_bucket[GEN_MAX_BUCKETS];
    NgramStats data_before, data_after; /* the same over positions [0, L) and [L, text_len) */
} GenSummary;
/* keep (may be NULL) receives the first text (free with gen_text_free). -1 with pelab_errmsg. */
int gen_summary(Model *m, const int *held, size_t n_held, int L, int text_len, int n_prompts, int ngram,
                const GenSampling *s, GenSummary *out, GenText *keep);

/* the loss jump at L from per-query-position NLL sums and counts over positions 0..2L-1 (pure);
 * NaN when a side has no prediction */
double loss_jump(const double *sum, const size_t *count, int L);
/* the same on held-out text: non-overlapping windows of 2L. *jump is NaN when the model refuses
 * positions past L (a learned table): status 1, not an error. -1 with pelab_errmsg. */
int loss_jump_on_text(Model *m, const int *tokens, size_t n, int L, double *jump, int *refused);

#endif
