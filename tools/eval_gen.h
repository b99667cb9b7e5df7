/* eval_gen.h: `pelab eval --gen-tokens N` / `--keyppl-tokens N`: long generation by position, the
 * loss jump at L and key-token perplexity for one checkpoint under each of its rules, on stdout. */
#ifndef PELAB_EVAL_GEN_H
#define PELAB_EVAL_GEN_H

#include <stddef.h>

#include "../model/model.h"
#include "../model/pos/pos.h"

typedef struct {
    int gen_tokens;    /* text length, prompt included (-1: 8 L, 0: no generation) */
    int gen_prompts;   /* texts per rule */
    int keyppl_tokens; /* data tokens for the key tokens (0: none) */
    float key_gain;    /* nats */
    unsigned long long seed;
} EvalGenOpts;

/* models[r] under rules[r]; models[0] (the first rule, "none" by default) picks the key tokens */
void eval_gen_print(Model *models, const char *const *rules, int n_rules, const int *tokens, size_t n, int train_len,
                    const int *lens, int n_lengths, const EvalGenOpts *o);

#endif
