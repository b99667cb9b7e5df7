#include "keyppl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "eval.h"

size_t key_select(const float *lp_long, const float *lp_short, size_t n, float min_gain, float min_logprob,
                  unsigned char *key) {
    size_t count = 0;
    if (n) key[0] = 0;
    for (size_t t = 1; t < n; t++) {
        key[t] = lp_long[t] - lp_short[t] >= min_gain && lp_long[t] > min_logprob;
        count += key[t];
    }
    return count;
}

/* every target's log-prob from sliding windows of len, stride len/2 (L/2..L tokens of context) */
static int sliding_logprobs(Model *m, const int *tokens, size_t n, int len, float *lp) {
    EvalTrace tr = {lp, NULL};
    ScoreResult r;
    return eval_windows(m, tokens, n, len, len / 2 > 0 ? len / 2 : 1, DYNAMIC_WINDOW, 0, NULL, NULL, &tr, &r);
}

int key_identify(Model *evaluator, const int *tokens, size_t n, int long_len, int short_len, float min_gain,
                 unsigned char *key, size_t *n_key) {
    if (short_len <= 0) short_len = long_len / 4 > 0 ? long_len / 4 : 1;
    if (short_len >= long_len)
        return pelab_fail("key tokens: short context %d must be shorter than the long one (%d)", short_len, long_len);
    float *lp_long = xcalloc(n, sizeof(float)), *lp_short = xcalloc(n, sizeof(float));
    int rc = sliding_logprobs(evaluator, tokens, n, long_len, lp_long);
    if (rc == 0) rc = sliding_logprobs(evaluator, tokens, n, short_len, lp_short);
    if (rc == 0) *n_key = key_select(lp_long, lp_short, n, min_gain, KEY_MIN_LOGPROB, key);
    free(lp_long);
    free(lp_short);
    return rc;
}

void key_ppl_add(const float *logprob, const int *scored, const unsigned char *key, size_t n, KeyPpl *r) {
    for (size_t t = 1; t < n; t++) {
        if (scored && !scored[t]) continue; /* a window's first token: no prediction, no loss */
        r->all_sum -= logprob[t];
        r->n_all++;
        if (!key[t]) continue;
        r->key_sum -= logprob[t];
        r->n_key++;
    }
}

int key_ppl_at(Model *m, const int *tokens, size_t n, int len, const unsigned char *key, KeyPpl *r) {
    memset(r, 0, sizeof *r);
    float *lp = xcalloc(n, sizeof(float));
    int *scored = xcalloc(n, sizeof(int));
    EvalTrace tr = {lp, scored};
    ScoreResult s;
    int rc = eval_windows(m, tokens, n, len, len, DYNAMIC_WINDOW, 0, NULL, NULL, &tr, &s);
    if (rc == 0) key_ppl_add(lp, scored, key, n, r);
    free(lp), free(scored);
    return rc;
}

double key_ppl_key_loss(const KeyPpl *r) { return r->n_key ? r->key_sum / r->n_key : NAN; }
double key_ppl_all_loss(const KeyPpl *r) { return r->n_all ? r->all_sum / r->n_all : NAN; }
double key_ppl_share(const KeyPpl *r) { return r->n_all ? (double)r->n_key / r->n_all : NAN; }
