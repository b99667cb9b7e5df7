/* eval_gen.h: `pelab eval --gen-tokens N` / `--keyppl-tokens N`: long generation by position, the
 * loss jump at L and key-token perplexity for one checkpoint under each of its rules, on stdout. */
#ifndef PELAB_EVAL_GEN_H
#define PELAB_EVAL_GEN_H

#include <stddef.h>

#include "../io/results.h"
#include "../model/model.h"
#include "../model/pos/pos.h"

typedef struct {
    int gen_tokens;    /* text length, prompt included (-1: 8 L, 0: no generation) */
    int gen_prompts;   /* texts per rule */
    int keyppl_tokens; /* data tokens for the key tokens (0: none) */
    float key_gain;    /* nats */
    unsigned long long seed;
} EvalGenOpts;

/* the figures as result rows (io/results.h) for eval's CSV/JSON, the run's columns (model, seed,
 * scheme, data, tokens, train_len) left to the caller: kind gen (protocol rep4, distinct4,
 * ownloss; a bucket lo-hi), jump (length 2L) or keyppl (protocol key or all at a length, share at
 * L); value NaN: not computed; ppl set where value is a loss */
typedef struct {
    ResultRow *row;
    int n, cap;
} EvalGenRows;

/* models[r] under rules[r]; models[0] (the first rule, "none" by default) picks the key tokens.
 * Every figure printed is also appended to rows (may be NULL; free with free(rows->row)). */
void eval_gen_print(Model *models, const char *const *rules, int n_rules, const int *tokens, size_t n, int train_len,
                    const int *lens, int n_lengths, const EvalGenOpts *o, EvalGenRows *rows);

#endif
