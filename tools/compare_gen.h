/* compare_gen.h: the long-generation, loss-jump and key-token rows of a compare run's CSV
 * (compare_plan.h documents the row kinds gen, jump and keyppl); the computations are in
 * infer/genmetrics.h and infer/keyppl.h. */
#ifndef PELAB_COMPARE_GEN_H
#define PELAB_COMPARE_GEN_H

#include <stdio.h>

#include "../model/model.h"
#include "compare_plan.h"

/* the run's key tokens over the first min(n, keyppl_tokens) held-out tokens, picked by
 * c->key_evaluator or else the run's own trained model (base_ckpt) at its training length;
 * NULL when the key-token perplexity is off. *n_used: the tokens covered. Dies on error. */
unsigned char *compare_key_tokens(const Compare *c, const char *base_ckpt, const int *held, size_t n, size_t *n_used);
/* the generation buckets, the loss jump at L and the key-token rows of one loaded model */
void compare_gen_rows(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                      const unsigned char *key, size_t n_key_tokens, FILE *f);
/* the flags of these rows, shared by compare and demo (rows of an OptSpec table), and their defaults:
 * texts of 8L tokens, 3 prompts, 16384 tokens for key tokens, gain 2 nats, each run its own evaluator */
#define COMPARE_GEN_OPTS(c)                                                                                    \
    {"--gen-tokens", OPT_INT, &(c)->gen_tokens, -1, 1 << 24, "long generation: tokens per text, prompt included "   \
                                                             "(-1: 8 x L; 0: off); repetition and own loss by position"}, \
    {"--gen-prompts", OPT_INT, &(c)->gen_prompts, 1, 64, "texts per model (prompts from the held-out text)"},      \
    {"--keyppl-tokens", OPT_INT, &(c)->keyppl_tokens, 0, 1 << 30, "held-out tokens for the key-token perplexity "  \
                                                                  "(0: off)"},                                    \
    {"--key-gain", OPT_FLOAT, &(c)->key_gain, 0, 100, "key token: log-prob gain (nats) with context L over L/4"},  \
    {"--key-evaluator", OPT_STR, &(c)->key_evaluator, 0, 0, "checkpoint that picks the key tokens for every run "  \
                                                            "(default: each run's own model)"}
void compare_gen_defaults(Compare *c);
/* the generated texts' length: gen_tokens, or 8 L when it is -1 */
int compare_gen_len(const Compare *c);

#endif
