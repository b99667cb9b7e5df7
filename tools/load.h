/* load.h: what every inference command does first: load a checkpoint and its tokenizer, or stop
 * with one line naming the file and the problem. */
#ifndef PELAB_LOAD_H
#define PELAB_LOAD_H

#include "../data/tokenizer.h"
#include "../model/model.h"

/* scale: a RoPE scaling rule to apply (--scale), or NULL */
void load_model_or_die(const char *path, const char *scale, Model *m, Tokenizer *tok);

#endif
