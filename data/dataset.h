/* dataset.h: a token stream split into training and validation parts, and batches of random
 * windows of T+1 tokens, from a text file or a built-in synthetic corpus ("synth:NAME"),
 * as bytes (vocab 256) or through a tokenizer. */
#ifndef PELAB_DATASET_H
#define PELAB_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "../core/rng.h"
#include "tokenizer.h"

typedef struct {
    int *tokens;      /* [n] */
    size_t n;
    size_t n_train;   /* tokens [0, n_train) train, [n_train, n) validation */
    int vocab_size;
    uint64_t fingerprint; /* FNV-1a of the bytes: resume refuses a different data set */
    const Tokenizer *tok; /* what made the tokens; NULL: bytes */
    unsigned char *counted; /* [n] or NULL (all): 1 if predicting token i counts in the loss (a task's
                               answer tokens); windows give target -1 where it does not */
    size_t *starts;   /* task data: the training windows that begin at an example's first token, in */
    size_t n_starts;  /* increasing order (each window [s, s+T] inside the training part) */
    size_t *val_starts;  /* the same in the validation part, windows not overlapping */
    size_t n_val_starts;
    int val_window;      /* the window length both lists were made for */
    int aligned;      /* 1: training batches and validation windows (of val_window tokens) start at
                       * example starts only */
    int has_sink;     /* 1: every training and validation window's first input token is sink_token */
    int sink_token;   /* (train --sink-token: a constant first token, as StreamingLLM's pre-training
                       * with a sink token); has_sink 0 (the loaders' default): the text's own */
    char name[256];
} Dataset;

/* spec: a file path, "synth:NAME" (synth_bytes of corpus NAME from synth_seed), or "task:SPEC"
 * (synth_bytes of task examples from synth_seed, data/task.h; the loss counts only answer tokens).
 * val_frac of the stream (its end) is held out. Needs enough tokens for windows of T+1 in both parts. */
int dataset_load(Dataset *d, const char *spec, double val_frac, uint64_t synth_seed, size_t synth_bytes,
                 int window);
/* the same with a tokenizer (NULL: bytes); the fingerprint stays that of the bytes */
int dataset_load_with(Dataset *d, const char *spec, const Tokenizer *tok, double val_frac, uint64_t synth_seed,
                      size_t synth_bytes, int window);
/* the same from the bytes of a text already in memory (name: for messages and d->name); bytes stay the caller's */
int dataset_from_bytes(Dataset *d, const char *name, const unsigned char *bytes, size_t n, const Tokenizer *tok,
                       double val_frac, int window);
void dataset_free(Dataset *d);
/* train on some tokens only: counted[i] (n of them, d->n) says whether predicting token i counts */
void dataset_set_counted(Dataset *d, const unsigned char *counted);
/* B random windows from the training part: inputs[b*T + t], targets = inputs shifted by one
 * (-1 where d->counted says the token does not count); with d->aligned, windows start at
 * example starts only (task data, --align-examples); with d->has_sink each window's first
 * input is that token (its target stays the text's next token) */
void dataset_train_batch(const Dataset *d, Rng *rng, int B, int T, int *inputs, int *targets);
/* number of evenly spaced validation windows of T+1 tokens available (aligned: one at each of
 * val_starts, non-overlapping, so the validation loss is measured as training sees examples) */
size_t dataset_val_windows(const Dataset *d, int T);
/* validation window w (0 <= w < dataset_val_windows) */
void dataset_val_window(const Dataset *d, size_t w, int T, int *inputs, int *targets);

#endif
