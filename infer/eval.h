/* eval.h: loss by evaluation length under both protocols of docs/position-encodings.md section 10.1,
 * and loss by position, through the KV-cache decoder (memory linear in the length).
 *
 *   non-overlapping: windows of len tokens at 0, len, 2len, ...; positions restart at 0 in
 *                    every window; every token after the first is predicted once (= score_tokens).
 *   sliding, stride S: windows of len tokens at 0, S, 2S, ...; the first window scores all its
 *                    predictions, later ones only those past the previous window's end (its last
 *                    S), so every scored token sees >= len - S tokens of context. S = len is the
 *                    non-overlapping protocol, number for number.
 * `pelab eval` prints these; `compare` calls them per trained model. */
#ifndef PELAB_EVAL_H
#define PELAB_EVAL_H

#include <stddef.h>

#include "../io/checkpoint.h"
#include "../io/results.h"
#include "../model/model.h"
#include "score.h"

enum { EVAL_NONOVERLAP, EVAL_SLIDING, EVAL_N_PROTOCOLS };
extern const char *const eval_protocol_names[EVAL_N_PROTOCOLS]; /* "nonoverlap", "sliding" */

/* why a length was not computed: the scheme refuses it (learned table) or cannot compute it */
typedef enum { EVAL_OK, EVAL_PAST_TABLE, EVAL_PAST_COMPUTABLE } EvalStatus;

/* Optional per-token record of one protocol run, [n] each (index = target token): logprob of
 * every scored target, and how many times it was scored. Tests check "exactly once". */
typedef struct {
    float *logprob;
    int *count;
} EvalTrace;

/* One protocol: windows of len tokens advanced by stride (1 <= stride <= len), position ids
 * 0..len-1; a dynamic rule under `dynamic` (score.h: the window's length or each prefix's).
 * bucket_sum / bucket_n (may be NULL): NLL sum and count per bucket of the query position
 * (eval_bucket). trace may be NULL. -1 with pelab_errmsg if the model refuses a position. */
int eval_windows(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic, int n_buckets,
                 double *bucket_sum, size_t *bucket_n, EvalTrace *trace, ScoreResult *r);

/* after every window of every protocol, tick(ctx, tokens the window fed), for a command's progress
 * line (pelab eval); NULL (the default): none. One hook for the process: the command sets it
 * around its evaluations, on one thread. */
typedef void (*EvalTick)(void *ctx, size_t tokens_fed);
void eval_set_tick(EvalTick tick, void *ctx);

/* bucket of query position p (0..len-1) among n_buckets equal-width buckets; its range [lo, hi] */
int eval_bucket(int p, int len, int n_buckets);
void eval_bucket_range(int b, int len, int n_buckets, int *lo, int *hi);

typedef struct {
    int len, stride;
    EvalStatus status;
    long limit;                          /* the table / computable length when status != EVAL_OK */
    ScoreResult proto[EVAL_N_PROTOCOLS]; /* zero when not computed */
    int n_buckets;                       /* min(requested, len) */
    double *bucket_sum;                  /* [n_buckets] NLL sums, non-overlapping windows */
    size_t *bucket_n;                    /* [n_buckets] predictions */
    double seconds[EVAL_N_PROTOCOLS];
    double ci_lo[EVAL_N_PROTOCOLS], ci_hi[EVAL_N_PROTOCOLS]; /* 95% interval of the mean loss (below) */
} EvalLength;

/* Both protocols and the position buckets at one length. stride 0: len / 2 (at least 1).
 * ci_lo/ci_hi: a percentile bootstrap of each protocol's mean loss over blocks of len consecutive
 * scored tokens (the non-overlapping windows themselves), STATS_BOOTSTRAP_REPS resamples from a
 * fixed seed: how much the figure owes to which text was evaluated (NaN with a single block).
 * A length the scheme refuses is not an error: status says why and nothing is computed.
 * Free with eval_length_free. */
int eval_length(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic, int n_buckets,
                EvalLength *e);
/* eval_length with every window's first input replaced by sink_token (>= 0; -1: none), as train
 * --sink-token opens every training window: the text's first token of each window is then only a
 * target (of the window before), never an input */
int eval_length_sink(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic, int n_buckets,
                     int sink_token, EvalLength *e);
void eval_length_free(EvalLength *e);
/* "ok", "n/a (past table of 64)", "n/a (past computable 18000)" */
void eval_status_str(const EvalLength *e, char *buf, size_t n);
/* the status as a results row's (io/results.h); its limit is e->limit */
ResStatus eval_result_status(const EvalLength *e);

/* mean NLL of a protocol (NaN when nothing was scored) */
double eval_mean(const ScoreResult *r);

/* Load a checkpoint at this precision (checkpoint_load_precision: a bf16 checkpoint under bf16
 * keeps its weights in bf16 alone) and apply a scaling rule: "none" keeps the stored scheme; any
 * other rule on a non-rotary model is an error naming the rule. meta may be NULL. -1 with pelab_errmsg. */
int eval_load_rule(const char *path, const char *rule, Precision precision, Model *m, CkptMeta *meta);

/* Parse "64,128" (lengths) or, if lengths is NULL, "0.5,1,2" (mult, times train_len, rounded,
 * at least 2) into out[max]; returns the count, or -1 with pelab_errmsg naming the flag. */
int eval_parse_lengths(const char *lengths, const char *mult, int train_len, int *out, int max);

#endif
