/* keyppl.h: key-token perplexity, after LongPPL (Fang et al. 2024, "What is Wrong with Perplexity for
 * Long-context Language Modeling?"; EXPERIMENTS.md section 6.4).
 *
 * LongPPL: a token x_i is a key token when an evaluator model predicts it much better from the long
 * context than from a short one: LSD = log p(x_i | long) - log p(x_i | short) > alpha (2) and
 * LCL = log p(x_i | long) > beta (-2); the evaluated model's perplexity is then taken on the key
 * tokens only. The paper's evaluator is one large model (Qwen2-72B, later Llama-3.1-8B), short
 * context 4096 tokens, the same for every model judged.
 *
 * Here there is no outside evaluator, so key tokens are identified by an evaluator model at its own
 * training length L (long context: sliding windows of L, stride L/2, so L/2..L tokens before each
 * token; short: windows of K = L/4, stride K/2). Within L every scheme is in distribution, so the
 * identification measures what the text needs, not how the scheme extrapolates, which is what the
 * key-token perplexity at lengths past L then tests. compare uses each run's own stored model as
 * its evaluator (the same key tokens for the run's every rule and length), or one fixed checkpoint
 * for every run (--key-evaluator): the paper's setting, the same tokens for every scheme. */
#ifndef PELAB_KEYPPL_H
#define PELAB_KEYPPL_H

#include <stddef.h>

#include "../data/tokenizer.h"
#include "../model/model.h"

#define KEY_MIN_GAIN 2.0f     /* alpha, nats */
#define KEY_MIN_LOGPROB -2.0f /* beta, nats */

/* key[t] = 1 where lp_long[t] - lp_short[t] >= min_gain and lp_long[t] > min_logprob, for t in
 * [1, n) (t = 0 is never predicted); returns the count. Pure. */
size_t key_select(const float *lp_long, const float *lp_short, size_t n, float min_gain, float min_logprob,
                  unsigned char *key);

/* key[0..n) from the evaluator at long_len and short_len (= long_len / 4 when 0); *n_key their count.
 * -1 with pelab_errmsg (the evaluator refuses long_len). */
int key_identify(Model *evaluator, const int *tokens, size_t n, int long_len, int short_len, float min_gain,
                 unsigned char *key, size_t *n_key);

/* the same with an evaluator of another tokenizer (a subword model judging byte-level models):
 * text[0..n) encoded with tok, its key tokens found as above, and key[i] = 1 for every byte i of
 * the text inside a key token's bytes (what LongPPL does across tokenizers: key tokens by offsets).
 * *n_key counts key bytes. -1 naming the token when tok's pieces do not give the text back byte for
 * byte (its offsets would be guesses). */
int key_identify_text(Model *evaluator, const Tokenizer *tok, const unsigned char *text, size_t n, float min_gain,
                      unsigned char *key, size_t *n_key);
/* the mapping alone: ids [n_ids] (tok's encoding of text) with key_ids flags -> key[n] flags on the
 * text's bytes; *n_key the key bytes. -1 as above. Pure. */
int key_bytes_of_tokens(const Tokenizer *tok, const int *ids, size_t n_ids, const unsigned char *key_ids,
                        const unsigned char *text, size_t n, unsigned char *key, size_t *n_key);

typedef struct {
    double key_sum, all_sum; /* NLL sums, nats */
    size_t n_key, n_all;     /* scored key tokens, scored tokens */
} KeyPpl;

/* adds the targets [1, n) of one scoring (logprob[t] of token t) to r, split by key, skipping
 * those scored[t] == 0 (a window's first token is never predicted; scored NULL: all). Pure. */
void key_ppl_add(const float *logprob, const int *scored, const unsigned char *key, size_t n, KeyPpl *r);
/* r at one length: non-overlapping windows of len (positions from 0), as the main tables.
 * -1 with pelab_errmsg. */
int key_ppl_at(Model *m, const int *tokens, size_t n, int len, const unsigned char *key, KeyPpl *r);
/* mean NLLs (NaN when empty) and the key share */
double key_ppl_key_loss(const KeyPpl *r);
double key_ppl_all_loss(const KeyPpl *r);
double key_ppl_share(const KeyPpl *r);

#endif
