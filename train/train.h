/* train.h: the training loop: batches, forward/backward, AdamW, validation, checkpoints,
 * resume, Ctrl-C and NaN handling. */
#ifndef PELAB_TRAIN_H
#define PELAB_TRAIN_H

#include <stddef.h>

#include "../core/rng.h"
#include "../data/dataset.h"
#include "../model/model.h"

typedef struct {
    const char *data;   /* file path or synth:NAME */
    const char *pos;    /* position scheme spec */
    const char *out;    /* checkpoint path */
    const char *init;   /* start from this checkpoint's weights (fine-tuning), or NULL */
    const char *scale;  /* RoPE scaling rule to train with (with init: the PI fine-tuning recipe), or NULL */
    const char *tokenizer; /* tokenizer file (pelab BPE or llama2.c tokenizer.bin), or NULL (see train_run) */
    int rand_pos;       /* > 0: randomized positions, sorted distinct ids from [0, rand_pos) per row */
    float passkey_frac; /* share of training rows that are passkey documents (data/passkey.h) */
    int dim, layers, heads, kv_heads, hidden, seq_len, batch, tied;
    long steps;
    int warmup;
    float lr, min_lr_frac, wd, clip, beta1, beta2;
    unsigned long long seed;
    float val_frac;
    long synth_bytes;
    int eval_every, eval_windows, ckpt_every, log_every;
    int resume;         /* continue from out if it exists */
    long stop_after;    /* > 0: checkpoint and stop after this many steps (an interruption on purpose) */
    int quiet;          /* no progress output */
    float *loss_log;    /* optional [steps]: training loss of every step (tests) */
} TrainConfig;

typedef struct {
    long step;          /* steps completed */
    float train_loss;   /* last step's */
    float val_loss;     /* last validation (NaN if none) */
    double tokens_per_s;
    int interrupted;    /* Ctrl-C, SIGTERM or stop_after */
    int signal;         /* SIGINT or SIGTERM when one stopped the run, else 0 */
} TrainResult;

void train_config_defaults(TrainConfig *tc);
/* -1 with pelab_errmsg on bad input, NaN loss, or I/O failure */
int train_run(const TrainConfig *tc, TrainResult *res);

/* T distinct position ids from [0, max), increasing (randomized positions) */
void sample_sorted_positions(Rng *rng, int max, int T, int *out);

/* mean validation loss over up to max_windows windows of T tokens, spread over the held-out part */
float evaluate_loss(Model *m, const Dataset *d, int T, int max_windows);

#endif
