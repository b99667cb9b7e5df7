/* compare_flags.h: the flags of a compare's generation, loss-jump and key-token rows
 * (lab/compare_gen.h), shared by compare and demo: rows of an OptSpec table (args.h). */
#ifndef PELAB_COMPARE_FLAGS_H
#define PELAB_COMPARE_FLAGS_H

#include "../lab/compare_gen.h"
#include "args.h"

/* rows of a command's table for Compare *c; their defaults: compare_gen_defaults */
#define COMPARE_GEN_OPTS(c)                                                                                    \
    {"--gen-tokens", OPT_INT, &(c)->gen_tokens, -1, 1 << 24, "long generation: tokens per text, prompt included "   \
                                                             "(-1: 8 x L; 0: off); repetition and own loss by position"}, \
    {"--gen-prompts", OPT_INT, &(c)->gen_prompts, 1, 64, "texts per model (prompts from the held-out text)"},      \
    {"--keyppl-tokens", OPT_INT, &(c)->keyppl_tokens, 0, 1 << 30, "held-out tokens for the key-token perplexity "  \
                                                                  "(0: off)"},                                    \
    {"--key-gain", OPT_FLOAT, &(c)->key_gain, 0, 100, "key token: log-prob gain (nats) with context L over L/4"},  \
    {"--key-evaluator", OPT_STR, &(c)->key_evaluator, 0, 0, "checkpoint that picks the key tokens for every run "  \
                                                            "(default: each run's own model)"}

/* the engine of a sweep's --jobs file, shared by compare and suite (lab/jobs.h) */
#define JOBS_FORMAT_OPT(var)                                                                                   \
    {"--jobs-format", OPT_STR, &(var), 0, 0, "lines: one command per line (GNU parallel, xargs -P, sh); slurm: an " \
                                             "sbatch array script, task i runs line i (sbatch --wait FILE)"}

#endif
