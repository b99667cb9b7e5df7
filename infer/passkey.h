/* passkey.h (infer): passkey retrieval accuracy of a model by (length, depth), both ways that
 * docs/position-encodings.md section 10.3 allows for tiny models:
 *   (a) exact match: the greedy continuation of the prompt starts with the 5 key digits;
 *   (b) log-prob rank: log p(" KEY" | prompt), teacher-forced, against 9 random distractor keys;
 *       rank 1 = the true key scores best (ties share ranks: a model blind to the key gets 5.5).
 * The model enters through a PasskeyScorer, so the ranking and matching run on injected
 * log-probs in the tests; passkey_model_scorer is the KV-cache implementation. */
#ifndef PELAB_INFER_PASSKEY_H
#define PELAB_INFER_PASSKEY_H

#include "../core/rng.h"
#include "../data/passkey.h"
#include "../data/tokenizer.h"
#include "../model/model.h"
#include "decode.h"

#define PASSKEY_CANDIDATES 10 /* the key and 9 distractors */

typedef struct {
    /* greedy continuation: n_new tokens after the prompt into out */
    int (*greedy)(void *ctx, const int *prompt, int n_prompt, int *out, int n_new);
    /* log p(answer | prompt), summed over the answer tokens */
    int (*logprob)(void *ctx, const int *prompt, int n_prompt, const int *answer, int n_answer, double *out);
    void *ctx;
    /* NULL or a byte tokenizer: a byte is a token. Another (bpe, llama2c, hf): the prompt is the
     * tokenizer's encoding of the prompt text (a runner's prompt: BOS where it has one), a
     * candidate's answer tokens are what encoding prompt + " KEY" adds after the prompt's tokens,
     * and the greedy answer is PASSKEY_GEN_TOKENS tokens, decoded to text */
    const Tokenizer *tok;
} PasskeyScorer;

#define PASSKEY_GEN_TOKENS 8 /* a subword model's greedy answer: " 12345" is at most 6 tokens in Llama 2 */

typedef struct {
    int length, depth_pct;
    int na;           /* 1: not measured (below the minimum document, or past the scheme's positions) */
    int trials, exact;
    double rank_sum;  /* over trials */
} PasskeyCell;

/* rank of scores[0] among n scores: 1 + (number higher) + (number tied) / 2 */
double passkey_rank(const double *scores, int n);
/* n distinct random keys, none equal to key */
void passkey_distractors(Rng *rng, int key, int *out, int n);
/* scores " KEY" for key and every distractor through s->logprob; the rank of key */
int passkey_rank_keys(const PasskeyScorer *s, const int *prompt, int n_prompt, int key, const int *distractors,
                      int n_distractors, double *rank);
/* 1 if text (n bytes) is optional spaces, then the key's 5 digits, then no further digit */
int passkey_match(const char *text, int n, int key);

/* One trial: a document of `length` bytes (answer included) with a random key at depth. */
int passkey_trial(const PasskeyScorer *s, int length, double depth, Rng *rng, int *exact, double *rank);
/* trials trials at (length, depth_pct); keys depend only on (seed, length, depth_pct) */
int passkey_cell(const PasskeyScorer *s, int length, int depth_pct, int trials, unsigned long long seed,
                 PasskeyCell *cell);

/* the model behind a scorer: one KV cache; the prompt is fed once per trial */
typedef struct {
    Model *m;
    KVCache kv;
    int *pos;      /* [max_len] 0, 1, 2, ... */
    float *logits; /* [max_len, V] */
    float *first;  /* [V] log-softmax after the prompt */
    int n_prompt;  /* prompt tokens at the head of the cache (0: none) */
} PasskeyModel;

/* max_len: the longest document to be scored */
void passkey_model_init(PasskeyModel *pm, Model *m, int max_len);
void passkey_model_free(PasskeyModel *pm);
void passkey_model_scorer(PasskeyModel *pm, PasskeyScorer *s);
/* 1 if the model can run a document of `length` bytes (every position accepted and computable) */
int passkey_length_ok(const Model *m, int length);
/* the same for a document of n_tokens tokens through a tokenizer, its greedy answer included */
int passkey_tokens_ok(const Model *m, int n_tokens);
/* the tokens of a document of `length` bytes (key 12345 at depth 0.5) through tok, answer included;
 * -1 when tok refuses the text (tokenizer_encode) */
int passkey_document_tokens(const Tokenizer *tok, int length);

#endif
