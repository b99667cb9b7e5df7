#include "score.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../io/results.h"
#include "../model/layers.h"
#include "decode.h"

const char *const dynamic_length_names[2] = {"window", "prefix"};

int dynamic_length_parse(const char *flag, const char *text, DynamicLength *out) {
    for (int d = 0; d < 2; d++)
        if (strcmp(text, dynamic_length_names[d]) == 0) {
            *out = (DynamicLength)d;
            return 0;
        }
    return pelab_fail("%s %s: expected window or prefix", flag, text);
}

int score_window_logits(Model *m, KVCache *kv, const int *tokens, const int *pos, int n, int first,
                        DynamicLength dynamic, float *logits) {
    kvcache_reset(kv);
    long dyn = kv->dynamic_from;
    if (dynamic == DYNAMIC_WINDOW || dyn < 0 || n <= dyn) return decode_forward(m, kv, tokens, pos, n, logits, 1);
    size_t V = m->cfg.vocab_size;
    /* prefixes up to L share one rotation, so one forward gives all their rows; when the first
     * scored row is past L, one forward over its prefix gives just that row */
    int rc = first + 1 > dyn ? decode_forward(m, kv, tokens, pos, first + 1, logits + first * V, 0)
                             : decode_forward(m, kv, tokens, pos, (int)dyn, logits, 1);
    /* then one token at a time, as generate() feeds them: past L the decoder recomputes the prefix
     * under each new length */
    for (int i = kv->len; i < n && rc == 0; i++) rc = decode_forward(m, kv, tokens + i, pos + i, 1, logits + i * V, 0);
    return rc;
}

int score_tokens(Model *m, const int *tokens, size_t n, int len, DynamicLength dynamic, FILE *per_token,
                 ScoreResult *r) {
    r->nll_sum = 0.0;
    r->n_scored = 0;
    r->n_windows = 0;
    if (n < 2) return pelab_fail("score: need at least 2 tokens, got %zu", n);
    if (len < 1) return pelab_fail("score: --len %d: expected >= 1", len);
    int V = m->cfg.vocab_size;
    KVCache kv;
    kvcache_init(&kv, m, len, 256);
    float *logits = xmalloc(sizeof(float) * (size_t)len * V);
    int *pos = xmalloc(sizeof(int) * len);
    for (int i = 0; i < len; i++) pos[i] = i;
    int rc = 0;
    for (size_t start = 0; start + 1 < n; start += (size_t)len) {
        int nw = (int)(n - 1 - start < (size_t)len ? n - 1 - start : (size_t)len);
        if (score_window_logits(m, &kv, tokens + start, pos, nw, 0, dynamic, logits) != 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < nw; i++) {
            float *row = logits + (size_t)i * V;
            log_softmax(row, row, V);
            int target = tokens[start + i + 1];
            r->nll_sum -= row[target];
            if (per_token) {
                ResultRow w = result_row();
                w.window_index = (long long)r->n_windows, w.token_pos = i + 1, w.token = target, w.value = row[target];
                results_csv_row(per_token, &RES_TOKEN_CSV, &w);
            }
        }
        r->n_scored += nw;
        r->n_windows++;
    }
    kvcache_free(&kv);
    free(logits);
    free(pos);
    return rc;
}

/* texts [first, first + S) of `order` side by side; their log-probs into logprob at offset[] */
static int score_group(Model *m, const int *const *texts, const int *lens, const int *order, int S,
                       DynamicLength dynamic, const size_t *offset, float *logprob, double *nll) {
    int V = m->cfg.vocab_size, fed = 0; /* each text feeds all its tokens but the last */
    for (int b = 0; b < S; b++) fed = lens[order[b]] - 1 > fed ? lens[order[b]] - 1 : fed;
    KVCache kv;
    kvcache_init_batch(&kv, m, S, fed, 64);
    int *in = xmalloc(sizeof(int) * S * fed), *pos = xmalloc(sizeof(int) * S * fed);
    for (int b = 0; b < S; b++) {
        const int *t = texts[order[b]];
        int pad = fed - (lens[order[b]] - 1);
        kv.key_start[b] = pad;
        for (int i = 0; i < fed; i++) in[b * fed + i] = i < pad ? 0 : t[i - pad], pos[b * fed + i] = i < pad ? 0 : i - pad;
    }
    float *logits = xmalloc(sizeof(float) * (size_t)S * fed * V);
    int rc = S == 1 ? score_window_logits(m, &kv, in, pos, fed, 0, dynamic, logits)
                    : decode_forward_batch(m, &kv, in, pos, fed, logits, 1);
    for (int b = 0; b < S && rc == 0; b++) {
        int t = order[b], pad = fed - (lens[t] - 1);
        double sum = 0;
        for (int i = 0; i < lens[t] - 1; i++) {
            float *row = logits + ((size_t)b * fed + pad + i) * V;
            log_softmax(row, row, V);
            float lp = row[texts[t][i + 1]];
            sum -= lp;
            if (logprob) logprob[offset[t] + i] = lp;
        }
        if (nll) nll[t] = sum;
    }
    kvcache_free(&kv);
    free(in), free(pos), free(logits);
    return rc;
}

/* a text's length and index: sorted shorter first, ties in file order (plain qsort: qsort_r's
 * argument order differs between glibc and macOS/BSD) */
typedef struct {
    int len, index;
} ByLength;

static int by_length(const void *a, const void *b) {
    const ByLength *x = a, *y = b;
    return x->len != y->len ? (x->len > y->len) - (x->len < y->len) : x->index - y->index;
}

int score_texts(Model *m, const int *const *texts, const int *lens, int n_texts, int batch, DynamicLength dynamic,
                float *logprob, double *nll) {
    if (batch < 1) return pelab_fail("score: batch %d: expected >= 1", batch);
    long max_pos = pos_max_position(&m->pos);
    const PosScheme *ps = m->pos.scheme;
    long dyn = ps->qk_dynamic_from ? ps->qk_dynamic_from(&m->pos) : -1;
    size_t *offset = xmalloc(sizeof(size_t) * (n_texts + 1));
    int *order = xmalloc(sizeof(int) * (n_texts > 0 ? n_texts : 1)), rc = 0;
    offset[0] = 0;
    for (int t = 0; t < n_texts; t++) {
        if (lens[t] < 2) rc = pelab_fail("text %d: %d token(s): at least 2 are needed to predict one", t + 1, lens[t]);
        else if (max_pos >= 0 && lens[t] - 1 > max_pos)
            rc = pelab_fail("text %d: %d tokens need positions up to %d; the %s scheme accepts %ld", t + 1, lens[t],
                            lens[t] - 2, ps->name, max_pos);
        if (rc != 0) break;
        offset[t + 1] = offset[t] + (size_t)(lens[t] - 1);
        order[t] = t;
        if (dyn >= 0 && lens[t] - 1 > dyn) batch = 1; /* the rule follows each text's own length */
    }
    if (pos_cache_policy(&m->pos).one_sequence) batch = 1;
    if (rc == 0) {
        ByLength *sorted = xmalloc(sizeof(ByLength) * (n_texts > 0 ? n_texts : 1));
        for (int t = 0; t < n_texts; t++) sorted[t] = (ByLength){lens[t], t};
        qsort(sorted, n_texts, sizeof(ByLength), by_length);
        for (int t = 0; t < n_texts; t++) order[t] = sorted[t].index;
        free(sorted);
        for (int first = 0; first < n_texts && rc == 0; first += batch)
            rc = score_group(m, texts, lens, order + first, n_texts - first < batch ? n_texts - first : batch,
                             dynamic, offset, logprob, nll);
    }
    free(offset), free(order);
    return rc;
}
