/* train.h: the training loop: batches, forward/backward, AdamW, validation, checkpoints,
 * resume, Ctrl-C and NaN handling. */
#ifndef PELAB_TRAIN_H
#define PELAB_TRAIN_H

#include <stddef.h>

#include "../core/files.h"
#include "../core/rng.h"
#include "../data/dataset.h"
#include "../model/model.h"
#include "adamw.h"
#include "curve.h"
#include "progress.h"

typedef struct {
    const char *data;   /* file path or synth:NAME */
    const char *pos;    /* position scheme spec */
    const char *attn_pattern; /* NULL, or the per-layer attention pattern (model/pattern.h) */
    const char *out;    /* checkpoint path */
    const char *init;   /* start from this checkpoint's weights (fine-tuning), or NULL */
    const char *scale;  /* RoPE scaling rule to train with (with init: the PI fine-tuning recipe), or NULL */
    const char *tokenizer; /* tokenizer file (pelab BPE or llama2.c tokenizer.bin), or NULL (see train_run) */
    int rand_pos;       /* > 0: randomized positions, sorted distinct ids from [0, rand_pos) per row */
    int pose;           /* > 0: PoSE, each row's positions are pose_chunks runs skipping into [0, pose) */
    int pose_chunks;    /* PoSE's chunks per row (default 2, as the paper) */
    float passkey_frac; /* share of training rows that are passkey documents (data/passkey.h) */
    int align_examples; /* task data: every training window starts at an example's first byte */
    int sink_token;     /* >= 0: every training and validation window's first input is this token
                         * (StreamingLLM's pre-training with a sink token); -1: off */
    Precision precision; /* the weight products: fp32, or bf16 with fp32 accumulation (model.h) */
    int dim, layers, heads, kv_heads, hidden, seq_len, batch, tied;
    long steps;         /* the run's steps; with converge, the most it may take */
    int warmup;
    /* converge: train until the convergence rule (curve_judge) holds at a validation, at
     * converge_frac and converge_abs, from step min_steps on, then cool down (lr_wsd) for a quarter of
     * the steps so far (a fifth of the run), or until steps when that would pass it. The cooldown
     * also begins when a quarter of the steps so far would reach steps: the run then ends at steps,
     * the rule perhaps not met. 0: cosine over exactly steps */
    int converge;
    float converge_frac, converge_abs;
    long min_steps;
    float lr, min_lr_frac, wd, clip, beta1, beta2;
    unsigned long long seed;
    float val_frac;
    long synth_bytes;
    int eval_every, eval_windows, ckpt_every, log_every;
    int resume;         /* continue from out if it exists */
    int force;          /* go on without the lock on out where its file system cannot lock (the lock
                         * held by another run is never overridden) */
    int resume_exact;   /* with resume: train.steps must be the checkpoint's too (a sweep's run continues as
                         * it was planned; `train --resume` may grow it) */
    long stop_after;    /* > 0: checkpoint and stop after this many steps (an interruption on purpose) */
    int quiet;          /* no progress output */
    int progress_line;  /* with quiet: still the step line, nothing else (compare on a terminal) */
    const char *progress_prefix; /* text before "step" on that line (compare's runs so far), or NULL */
    float *loss_log;    /* optional [steps]: training loss of every step (tests) */
} TrainConfig;

typedef struct {
    long step;          /* steps completed */
    float train_loss;   /* last step's */
    float val_loss;     /* last validation (NaN if none) */
    double tokens_per_s;
    long cooldown_start; /* converge: the step the cooldown began (-1: none) */
    int plateaued;      /* ... 1: the rule held there; 0: the cap forced it */
    int interrupted;    /* Ctrl-C, SIGTERM or stop_after */
    int signal;         /* SIGINT or SIGTERM when one stopped the run, else 0 */
    long resumed_from;  /* the checkpoint's step this run continued from (0: a new run) */
} TrainResult;

void train_config_defaults(TrainConfig *tc);
/* The whole run: trainer_setup, then trainer_step until the last step, with trainer_evaluate and
 * trainer_checkpoint at their intervals; Ctrl-C / SIGTERM / stop_after checkpoint and stop.
 * -1 with pelab_errmsg on bad input, NaN loss, or I/O failure */
int train_run(const TrainConfig *tc, TrainResult *res);
/* the model's shape from tc (dim, layers, heads, kv heads, hidden, length) checked as train_run
 * checks it first: for a caller that plans many runs (compare, demo) and would otherwise learn of
 * a bad shape from the first of them; -1 with one line */
int train_check_shape(const TrainConfig *tc);
/* n runs (train --seeds: one per seed, each with its own cfg.out) in one process, stepped in
 * lockstep across the threads, one run per thread at a time. Each run's checkpoint is
 * bit-identical to training it alone: at any thread count where the batch is sharded (a small
 * float32 model, model_shards), else alone at --threads 1 (bf16: at the same thread count, the
 * runs then take turns instead of sharing the threads). res[n]. -1 with pelab_errmsg
 * naming the seed whose run failed (the others stop too). */
int train_run_many(const TrainConfig *tcs, int n, TrainResult *res);
/* Calls step(ctx, k) for runs k = 0..n-1 on up to `threads` threads until each run's step returns
 * non-zero (1: over; -1: failed, which stops them all), one thread per run at a time, the run with
 * the fewest steps first; no thread waits for another between steps. Inside, nested OpenMP regions
 * and OpenBLAS calls run on one thread (a region of one thread: on all of them). Returns the first
 * failed run, or -1. */
int lockstep_run(int n, int threads, int (*step)(void *ctx, int k), void *ctx);

/* One run in progress: what train_run's loop steps. */
typedef struct {
    TrainConfig cfg;         /* the caller's, kv_heads and hidden resolved */
    int warmup;              /* warmup steps (cfg.warmup -1: 5% of the steps) */
    Tokenizer tok;
    Dataset data;
    Model model;
    float *adam_m, *adam_v;  /* AdamW moments, [n_params] each */
    AdamWConfig opt;         /* opt.lr: the last step's */
    Rng data_rng;            /* batches, passkey rows and random positions; saved in the checkpoint */
    int *inputs, *targets;   /* [batch * seq_len] */
    int *positions;          /* [batch * seq_len]: 0..T-1 per row, or sampled with rand_pos or pose */
    long step;               /* steps completed (resume: counted from the checkpoint's) */
    long steps_this_run;
    long last_good_step;     /* step of the last checkpoint written or resumed, -1 if none */
    long cooldown_start, cooldown_end; /* converge: the cooldown's steps [start, end); -1 before it */
    int plateaued;           /* converge: the rule held when the cooldown began */
    float train_loss;        /* last step's (resume of a finished run: the stored one) */
    float val_loss;          /* last validation, NaN if none */
    double t0;               /* when this run's first step began */
    double tokens_per_s;     /* this run's */
    Progress prog;
    LossCurve curve;         /* the loss curve beside cfg.out (curve.h) */
    OutputLock lock;         /* on cfg.out, from setup to trainer_free (core/files.h) */
    double resume_loss_sum;  /* resumed: the curve's running mean at the checkpoint (its steps since the */
    long resume_loss_n;      /* last row), carried into the reopened curve */
} Trainer;

/* Every TrainConfig field is checked before a file is read or memory allocated; then the
 * tokenizer, the data, and the model (resumed from cfg.out, fine-tuned from cfg.init, or new).
 * Free with trainer_free whether it succeeds or not. -1 with pelab_errmsg. */
int trainer_setup(Trainer *tr, const TrainConfig *tc);
/* the step the run ends at: cfg.steps, or with converge the cooldown's end once it began */
long trainer_end_step(const Trainer *tr);
/* one optimizer step on a fresh batch; -1 (naming the step and the last good checkpoint) on a
 * non-finite loss or gradient norm */
int trainer_step(Trainer *tr);
/* validation loss over cfg.eval_windows windows, kept in tr->val_loss */
float trainer_evaluate(Trainer *tr);
/* atomic save of weights, moments and data position to cfg.out; -1 without writing if a weight
 * is not finite (a good checkpoint is never overwritten by a poisoned one) */
int trainer_checkpoint(Trainer *tr);
void trainer_free(Trainer *tr);


/* mean validation loss over up to max_windows windows of T tokens, spread over the held-out part;
 * at positions 0..T-1, or (rand_pos > 0) at sorted distinct ids from [0, rand_pos) drawn as
 * training draws them, from a fixed seed (every evaluation the same) */
float evaluate_loss(Model *m, const Dataset *d, int T, int max_windows, int rand_pos);

/* PoSE (Zhu et al. 2023): T positions for a row of T contiguous tokens, in `chunks` runs of
 * consecutive ids. The cuts between runs are distinct, uniform in [1, T-1]; run 0 starts at 0
 * and run i is shifted by a skip u_i ~ U[u_{i-1}, target - T] (u_0 = 0), so the ids are sorted,
 * distinct and the last is at most target - 1. Needs 1 <= chunks <= T <= target. */
void pose_positions(Rng *rng, int T, int target, int chunks, int *out);

#endif
