/* train_flags.h: the flags of the model and its optimizer that every command that trains takes
 * (train, compare, demo): one name, one range and one help each, written into a TrainConfig.
 * The command sets its own defaults in the TrainConfig before args_parse, so --help shows them. */
#ifndef PELAB_TRAIN_FLAGS_H
#define PELAB_TRAIN_FLAGS_H

#include "../train/train.h"
#include "args.h"

/* rows of a command's table for TrainConfig *tc */
#define TRAIN_FLAG_ROWS(tc)                                                                                 \
    {"--dim", OPT_INT, &(tc)->dim, 2, 65536, "model width"},                                                \
    {"--layers", OPT_INT, &(tc)->layers, 1, 1024, "decoder layers"},                                        \
    {"--heads", OPT_INT, &(tc)->heads, 1, 4096, "attention heads"},                                         \
    {"--kv-heads", OPT_INT, &(tc)->kv_heads, 0, 4096, "key/value heads, grouped-query attention (0: = heads)"}, \
    {"--hidden", OPT_INT, &(tc)->hidden, 0, 1 << 20, "SwiGLU hidden width (0: 3 x dim)"},                   \
    {"--seq-len", OPT_INT, &(tc)->seq_len, 1, 1 << 20, "training length L"},                                \
    {"--batch", OPT_INT, &(tc)->batch, 1, 1 << 16, "sequences per step"},                                   \
    {"--lr", OPT_FLOAT, &(tc)->lr, 0, 10, "peak learning rate"},                                            \
    {"--warmup", OPT_INT, &(tc)->warmup, -1, 1 << 30, "linear warmup steps (-1: 5% of --steps)"}

/* the size of a synth:NAME corpus, in bytes (an int: TrainConfig's is a long) */
#define TRAIN_SYNTH_BYTES_ROW(dst) {"--synth-bytes", OPT_INT, (dst), 1024, 1 << 30, "size of a synth:NAME corpus in bytes"}

#endif
