/* load.h: what every inference command does first: load a checkpoint and its tokenizer, or stop
 * with one line naming the file and the problem; and the flags every such command shares. */
#ifndef PELAB_LOAD_H
#define PELAB_LOAD_H

#include "../data/tokenizer.h"
#include "../model/model.h"
#include "args.h"

/* The loading flags of every command that runs a checkpoint (eval, sample, score, passkey, probe,
 * task eval, show): the same names, meanings, help and checks in each. */
typedef struct {
    const char *scale;      /* --scale RULE|METHOD (scaling rule or extension method); NULL: the checkpoint's */
    const char *precision;  /* --precision fp32|bf16; NULL: fp32 */
    const char *kv_cache;   /* --kv-cache fp32|bf16: what a KV cache stores keys and values in */
    const char *attn_scale; /* --attn-scale MOD; NULL: the checkpoint's */
} LoadFlags;

#define LOAD_FLAGS_DEFAULT {.kv_cache = "fp32"}

/* the rows of a command's table for LoadFlags *f, --scale with the given help (eval's takes a list) */
#define LOAD_FLAG_ROWS_WITH(f, scale_help)                                                                  \
    {"--scale", OPT_STR, &(f)->scale, 0, 0, (scale_help)}, OPT_PRECISION_ROW(&(f)->precision),              \
    {"--kv-cache", OPT_STR, &(f)->kv_cache, 0, 0,                                                           \
     "fp32 | bf16: what a KV cache stores keys and values in, where the command decodes with one (bf16: half " \
     "the memory and half the bytes each decoded token reads; logits move by under 1% of the largest, "       \
     "docs/PERFORMANCE.md)"},                                                                               \
    OPT_ATTN_SCALE_ROW(&(f)->attn_scale)
#define LOAD_FLAG_ROWS(f) LOAD_FLAG_ROWS_WITH(f, scale_flag_help())

/* the --scale flag's help, the same in every command that takes one: the scaling rules and the
 * extension methods as their tables list them (rope_scaling.h, extend.h) */
const char *scale_flag_help(void);
/* 1 when any loading flag differs from LOAD_FLAGS_DEFAULT (for commands that load only sometimes) */
int load_flags_given(const LoadFlags *f);
/* the checkpoint at path with f applied (precision at load: a bf16 checkpoint under bf16 keeps its
 * weights in bf16 alone, checkpoint_load_precision; then --scale, --attn-scale, --kv-cache), and its
 * tokenizer; or stop with one line naming cmd, the file or the flag */
void load_model_or_die(const char *cmd, const char *path, const LoadFlags *f, Model *m, Tokenizer *tok);
/* what load_model_or_die applies after the load but --scale, for a model loaded otherwise (eval's
 * one model per rule): --attn-scale and --kv-cache */
void load_flags_apply_or_die(const char *cmd, const LoadFlags *f, Model *m);
/* --precision fp32|bf16 (NULL: fp32), or stop with one line */
Precision precision_or_die(const char *precision);
/* token ids of the text a probe or picture reads: FILE, or the built-in corpus when path is NULL
 * (stories, seed 12345: not a training seed); *n ids, the array owned by the caller */
int *load_text_or_die(const char *cmd, const char *path, const Tokenizer *tok, size_t *n);

#endif
