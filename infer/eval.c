#include "eval.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/stats.h"
#include "../core/sys.h"
#include "../model/layers.h"
#include "decode.h"

const char *const eval_protocol_names[EVAL_N_PROTOCOLS] = {"nonoverlap", "sliding"};

/* score_tokens' block size: the same blocks give the same floats, so eval at L equals score */
#define EVAL_CHUNK 256

int eval_bucket(int p, int len, int n_buckets) { return (int)((long)p * n_buckets / len); }

void eval_bucket_range(int b, int len, int n_buckets, int *lo, int *hi) {
    /* the inverse of eval_bucket: smallest p with p * nb / len >= b, and the next bucket's start - 1 */
    *lo = (int)(((long)b * len + n_buckets - 1) / n_buckets);
    *hi = (int)(((long)(b + 1) * len + n_buckets - 1) / n_buckets) - 1;
}

/* one window's scoring: rows first.. of its logits, log-softmaxed in place, into the sums */
typedef struct {
    const int *tokens;
    size_t s;  /* the window's first input in tokens */
    int first; /* its first scored row (earlier ones were scored by an earlier window) */
    int len, n_buckets, V;
    double *bucket_sum;
    size_t *bucket_n;
    EvalTrace *trace;
    ScoreResult *r;
} WindowScore;

/* rows [row0, row0 + n) of the window's logits (a logits_sink, decode.h) */
static void score_rows(void *ctx, int row0, int n, float *rows) {
    WindowScore *w = ctx;
    for (int i = row0 > w->first ? row0 : w->first; i < row0 + n; i++) {
        float *row = rows + (size_t)(i - row0) * w->V;
        log_softmax(row, row, w->V);
        size_t t = w->s + i + 1;
        float lp = row[w->tokens[t]];
        w->r->nll_sum -= lp;
        if (w->bucket_sum) {
            int b = eval_bucket(i, w->len, w->n_buckets);
            w->bucket_sum[b] -= lp;
            w->bucket_n[b]++;
        }
        if (w->trace) {
            if (w->trace->logprob) w->trace->logprob[t] = lp;
            if (w->trace->count) w->trace->count[t]++;
        }
    }
}

static EvalTick eval_tick;
static void *eval_tick_ctx;

void eval_set_tick(EvalTick tick, void *ctx) { eval_tick = tick, eval_tick_ctx = ctx; }

/* eval_windows with every window's first input replaced by sink_token when >= 0 */
static int windows_sink(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic,
                        int n_buckets, double *bucket_sum, size_t *bucket_n, EvalTrace *trace, int sink_token,
                        ScoreResult *r) {
    memset(r, 0, sizeof *r);
    if (n < 2) return pelab_fail("eval: need at least 2 tokens, got %zu", n);
    if (len < 1) return pelab_fail("eval: length %d: expected >= 1", len);
    if (stride < 1 || stride > len) return pelab_fail("eval: stride %d: expected 1..%d (the length)", stride, len);
    int V = m->cfg.vocab_size;
    KVCache kv;
    kvcache_init(&kv, m, len, EVAL_CHUNK);
    WindowScore w = {.tokens = tokens, .len = len, .n_buckets = n_buckets, .V = V, .bucket_sum = bucket_sum,
                     .bucket_n = bucket_n, .trace = trace, .r = r};
    kv.logits_sink = score_rows, kv.sink_ctx = &w;
    float *logits = NULL; /* [len, V], only for a dynamic rule's prefix protocol */
    int *pos = xmalloc(sizeof(int) * len);
    for (int i = 0; i < len; i++) pos[i] = i;
    int *in = sink_token >= 0 ? xmalloc(sizeof(int) * len) : NULL; /* the window's inputs, sink first */
    int rc = 0;
    /* window at s feeds inputs [s, e) and predicts targets s+1..e; inputs before `done` were
     * already scored by an earlier window, so each target is scored once, in stream order */
    size_t done = 0, last = n - 1;
    for (size_t s = 0; done < last; s += (size_t)stride) {
        size_t e = s + (size_t)len < last ? s + (size_t)len : last;
        int nw = (int)(e - s);
        w.s = s, w.first = (int)(done - s);
        const int *inputs = tokens + s; /* targets stay the text's: only the first input changes */
        if (in) {
            memcpy(in, tokens + s, sizeof(int) * (size_t)nw);
            in[0] = sink_token;
            inputs = in;
        }
        if (dynamic == DYNAMIC_WINDOW || kv.dynamic_from < 0 || nw <= kv.dynamic_from) {
            /* one forward (score_window_logits' blocks), each block's rows scored as it comes */
            kvcache_reset(&kv);
            rc = decode_forward(m, &kv, inputs, pos, nw, NULL, 1);
        } else {
            if (!logits) logits = xmalloc(sizeof(float) * (size_t)len * V);
            rc = score_window_logits(m, &kv, inputs, pos, nw, w.first, dynamic, logits);
            if (rc == 0) score_rows(&w, 0, nw, logits);
        }
        if (rc != 0) break;
        r->n_scored += e - done;
        r->n_windows++;
        done = e;
        if (eval_tick) eval_tick(eval_tick_ctx, (size_t)nw);
    }
    kvcache_free(&kv);
    free(logits);
    free(pos);
    free(in);
    return rc;
}

int eval_windows(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic, int n_buckets,
                 double *bucket_sum, size_t *bucket_n, EvalTrace *trace, ScoreResult *r) {
    return windows_sink(m, tokens, n, len, stride, dynamic, n_buckets, bucket_sum, bucket_n, trace, -1, r);
}

double eval_mean(const ScoreResult *r) { return r->n_scored ? r->nll_sum / r->n_scored : NAN; }

/* the bootstrap interval of the mean NLL of targets 1..last (logprob by target), in blocks of len */
static void window_interval(const float *logprob, size_t last, int len, double *lo, double *hi) {
    size_t nb = (last + (size_t)len - 1) / (size_t)len;
    double *nll = xcalloc(nb, sizeof(double)), *count = xcalloc(nb, sizeof(double));
    for (size_t t = 1; t <= last; t++) nll[(t - 1) / len] -= logprob[t], count[(t - 1) / len] += 1;
    *lo = *hi = NAN;
    if (nb > 1) stats_bootstrap_ratio(nll, count, nb, STATS_BOOTSTRAP_REPS, 1, 0.95, lo, hi);
    free(nll), free(count);
}

int eval_length(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic, int n_buckets,
                EvalLength *e) {
    return eval_length_sink(m, tokens, n, len, stride, dynamic, n_buckets, -1, e);
}

int eval_length_sink(Model *m, const int *tokens, size_t n, int len, int stride, DynamicLength dynamic, int n_buckets,
                     int sink_token, EvalLength *e) {
    memset(e, 0, sizeof *e);
    if (sink_token >= m->cfg.vocab_size)
        return pelab_fail("eval: sink token %d: expected a token id below the vocabulary size %d", sink_token,
                          m->cfg.vocab_size);
    if (len < 1) return pelab_fail("eval: length %d: expected >= 1", len);
    if (n_buckets < 1) return pelab_fail("eval: %d buckets: expected >= 1", n_buckets);
    e->len = len;
    e->stride = stride > 0 ? stride : (len / 2 > 0 ? len / 2 : 1);
    if (e->stride > len) return pelab_fail("eval: stride %d exceeds the length %d", e->stride, len);
    e->n_buckets = n_buckets < len ? n_buckets : len;
    for (int p = 0; p < EVAL_N_PROTOCOLS; p++) e->ci_lo[p] = e->ci_hi[p] = NAN;
    e->bucket_sum = xcalloc(e->n_buckets, sizeof(double));
    e->bucket_n = xcalloc(e->n_buckets, sizeof(size_t));
    /* positions 0..len-1: refused lengths are reported, not computed (one row, not the run) */
    long table = pos_max_position(&m->pos), comp = pos_computable_position(&m->pos);
    if (table >= 0 && len > table) {
        e->status = EVAL_PAST_TABLE;
        e->limit = table;
        return 0;
    }
    if (comp >= 0 && len > comp) {
        e->status = EVAL_PAST_COMPUTABLE;
        e->limit = comp;
        return 0;
    }
    if (n < 2) return pelab_fail("eval: need at least 2 tokens, got %zu", n);
    /* the windows would be shorter than len, and the result theirs under len's name */
    if ((size_t)len > n - 1)
        return pelab_fail("eval: length %d needs %d tokens (a window of inputs and the next one); the data gives %zu",
                          len, len + 1, n);
    EvalTrace trace = {xmalloc(sizeof(float) * n), NULL}; /* every scored target's log-prob */
    double t0 = now_seconds();
    int rc = windows_sink(m, tokens, n, len, len, dynamic, e->n_buckets, e->bucket_sum, e->bucket_n, &trace,
                          sink_token, &e->proto[EVAL_NONOVERLAP]);
    double t1 = now_seconds();
    e->seconds[EVAL_NONOVERLAP] = t1 - t0;
    if (rc == 0) window_interval(trace.logprob, n - 1, len, &e->ci_lo[EVAL_NONOVERLAP], &e->ci_hi[EVAL_NONOVERLAP]);
    /* stride = len is the same computation: reuse it rather than spend the time twice */
    if (rc == 0 && e->stride == len) {
        e->proto[EVAL_SLIDING] = e->proto[EVAL_NONOVERLAP];
        e->ci_lo[EVAL_SLIDING] = e->ci_lo[EVAL_NONOVERLAP], e->ci_hi[EVAL_SLIDING] = e->ci_hi[EVAL_NONOVERLAP];
    } else if (rc == 0) {
        rc = windows_sink(m, tokens, n, len, e->stride, dynamic, 0, NULL, NULL, &trace, sink_token,
                          &e->proto[EVAL_SLIDING]);
        if (rc == 0) window_interval(trace.logprob, n - 1, len, &e->ci_lo[EVAL_SLIDING], &e->ci_hi[EVAL_SLIDING]);
    }
    e->seconds[EVAL_SLIDING] = now_seconds() - t1;
    free(trace.logprob);
    return rc;
}

void eval_length_free(EvalLength *e) {
    free(e->bucket_sum);
    free(e->bucket_n);
    e->bucket_sum = NULL;
    e->bucket_n = NULL;
}

ResStatus eval_result_status(const EvalLength *e) {
    return e->status == EVAL_PAST_TABLE ? RES_PAST_TABLE : e->status == EVAL_PAST_COMPUTABLE ? RES_PAST_COMPUTABLE : RES_OK;
}

void eval_status_str(const EvalLength *e, char *buf, size_t n) {
    result_status_str(eval_result_status(e), e->limit, buf, n);
}

int eval_load_rule(const char *path, const char *rule, Precision precision, Model *m, CkptMeta *meta) {
    if (checkpoint_load_precision(path, m, meta, precision) != 0) return -1;
    if (!rule || strcmp(rule, "none") == 0) return 0;
    if (pos_set_scale(&m->pos, rule) != 0) {
        model_free(m);
        return -1;
    }
    return 0;
}

int eval_parse_lengths(const char *lengths, const char *mult, int train_len, int *out, int max) {
    const char *list = lengths ? lengths : mult, *flag = lengths ? "--lengths" : "--mult";
    int count = 0;
    for (const char *p = list;;) {
        char *end;
        errno = 0;
        double v = lengths ? (double)strtol(p, &end, 10) : strtod(p, &end);
        if (errno || end == p || (*end && *end != ',') || !(v > 0))
            return pelab_fail("%s %s: expected a comma-separated list of positive %s", flag, list,
                              lengths ? "integers" : "numbers");
        double len = lengths ? v : floor(v * train_len + 0.5);
        if (len < 1 || len > (1 << 24))
            return pelab_fail("%s %s: length %.0f is outside 1..%d", flag, list, len, 1 << 24);
        if (count >= max) return pelab_fail("%s %s: more than %d lengths", flag, list, max);
        out[count++] = (int)len;
        if (!*end) break;
        p = end + 1;
    }
    return count;
}
