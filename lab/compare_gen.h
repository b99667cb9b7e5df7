/* compare_gen.h: the long-generation, loss-jump and key-token rows of a compare run's CSV
 * (compare_plan.h documents the row kinds gen, jump and keyppl); the computations are in
 * infer/genmetrics.h and infer/keyppl.h. */
#ifndef PELAB_COMPARE_GEN_H
#define PELAB_COMPARE_GEN_H

#include <stdio.h>

#include "../model/model.h"
#include "compare_plan.h"

/* the run's key tokens over the first min(n, keyppl_tokens) held-out tokens, picked by
 * c->key_evaluator or else the run's own trained model (base_ckpt) at its training length, into
 * *key (NULL when the key-token perplexity is off). *n_used: the tokens covered. -1 with pelab_errmsg */
int compare_key_tokens(const Compare *c, const char *base_ckpt, const int *held, size_t n, size_t *n_used,
                       unsigned char **key);
/* the generation buckets, the loss jump at L and the key-token rows of one loaded model; -1 with
 * pelab_errmsg */
int compare_gen_rows(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                     const unsigned char *key, size_t n_key_tokens, FILE *f);
/* the defaults of the flags of these rows (tools/compare_flags.h, the command layer): texts of 8L tokens, 3 prompts,
 * 16384 tokens for key tokens, gain 2 nats, each run its own evaluator */
void compare_gen_defaults(Compare *c);
/* the generated texts' length: gen_tokens, or 8 L when it is -1 */
int compare_gen_len(const Compare *c);

#endif
