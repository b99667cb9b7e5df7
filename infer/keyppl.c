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

int key_bytes_of_tokens(const Tokenizer *tok, const int *ids, size_t n_ids, const unsigned char *key_ids,
                        const unsigned char *text, size_t n, unsigned char *key, size_t *n_key) {
    memset(key, 0, n);
    *n_key = 0;
    size_t off = 0;
    for (size_t i = 0; i < n_ids; i++) { /* each token's bytes: its piece, found where the text is */
        size_t len;
        const unsigned char *p = tokenizer_decode(tok, i ? ids[i - 1] : -1, ids[i], &len);
        if (!p || len > n - off || memcmp(p, text + off, len) != 0)
            return pelab_fail("key tokens: token %zu (id %d) of the evaluator's tokenizer does not give back text byte "
                              "%zu: its key tokens cannot be placed in the text", i, ids[i], off);
        for (size_t b = off; key_ids[i] && b < off + len; b++) key[b] = 1, ++*n_key;
        off += len;
    }
    if (off != n) return pelab_fail("key tokens: the evaluator's tokens give back %zu of the text's %zu bytes", off, n);
    return 0;
}

int key_identify_text(Model *evaluator, const Tokenizer *tok, const unsigned char *text, size_t n, float min_gain,
                      unsigned char *key, size_t *n_key) {
    size_t n_ids, nk;
    int *ids = tokenizer_encode(tok, text, n, 0, &n_ids);
    if (!ids) return -1;
    unsigned char *key_ids = xcalloc(n_ids ? n_ids : 1, 1);
    int rc = key_identify(evaluator, ids, n_ids, evaluator->cfg.seq_len, 0, min_gain, key_ids, &nk);
    if (rc == 0) rc = key_bytes_of_tokens(tok, ids, n_ids, key_ids, text, n, key, n_key);
    free(key_ids), free(ids);
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
    /* shorter windows would be reported under len's name */
    if (n < 2 || (size_t)len > n - 1)
        return pelab_fail("key tokens at length %d: %d tokens needed (a window of inputs and the next one); the "
                          "text gives %zu",
                          len, len + 1, n);
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
