/* load.h: what every inference command does first: load a checkpoint and its tokenizer, or stop
 * with one line naming the file and the problem. */
#ifndef PELAB_LOAD_H
#define PELAB_LOAD_H

#include "../data/tokenizer.h"
#include "../model/model.h"

/* scale: a RoPE scaling rule to apply (--scale), or NULL; precision: --precision (NULL: fp32; a
 * bf16 checkpoint under bf16 keeps its weights in bf16 alone, checkpoint_load_precision) */
void load_model_or_die(const char *path, const char *scale, const char *precision, Model *m, Tokenizer *tok);
/* the --scale flag's help, the same in every command that takes one: the scaling rules and the
 * extension methods as their tables list them (rope_scaling.h, extend.h) */
const char *scale_flag_help(void);
/* --attn-scale logn[:len=N]|temp[:...]|none on a loaded model, or stop with one line (NULL: keep) */
void set_attn_scale_or_die(Model *m, const char *text);
/* --precision fp32|bf16 (NULL: fp32), or stop with one line */
Precision precision_or_die(const char *precision);
/* token ids of the text a probe or picture reads: FILE, or the built-in corpus when path is NULL
 * (stories, seed 12345: not a training seed); *n ids, the array owned by the caller */
int *load_text_or_die(const char *cmd, const char *path, const Tokenizer *tok, size_t *n);

#endif
