/* train_cmd.c: `pelab train` flags -> TrainConfig -> train_run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../model/pos/pos.h"
#include "../train/train.h"
#include "args.h"
#include "commands.h"
#include "train_flags.h"

enum { MAX_SEEDS = 64 };

/* --seeds: OUT with _s<seed> before its extension (runs/x.safetensors -> runs/x_s3.safetensors) */
static char *seed_path(const char *out, unsigned long long seed) {
    const char *slash = strrchr(out, '/'), *dot = strrchr(out, '.');
    size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - out) : strlen(out);
    size_t n = strlen(out) + 32;
    char *path = malloc(n);
    if (!path) pelab_die("train: out of memory");
    snprintf(path, n, "%.*s_s%llu%s", (int)stem, out, seed, out + stem);
    return path;
}

/* --seeds: one run per seed in lockstep (train_run_many), one line each and the aggregate rate */
static int train_seeds(const TrainConfig *tc, const char *list) {
    unsigned long long seeds[MAX_SEEDS];
    int n = args_seeds("train", "--seeds", list, seeds, MAX_SEEDS);
    TrainConfig *tcs = calloc((size_t)n, sizeof *tcs);
    TrainResult *res = calloc((size_t)n, sizeof *res);
    if (!tcs || !res) pelab_die("train: out of memory");
    for (int k = 0; k < n; k++) {
        tcs[k] = *tc;
        tcs[k].seed = seeds[k];
        tcs[k].out = seed_path(tc->out, seeds[k]);
        tcs[k].quiet = tc->quiet || k > 0; /* one progress line: the first seed's */
    }
    if (train_run_many(tcs, n, res) != 0) pelab_die("train: %s", pelab_errmsg);
    double total = 0;
    int code = 0;
    for (int k = 0; k < n; k++) {
        printf("seed %llu  step %ld  train_loss %.4f  val_loss %.4f  tokens/s %.0f  checkpoint %s\n", seeds[k], res[k].step,
               res[k].train_loss, res[k].val_loss, res[k].tokens_per_s, tcs[k].out);
        total += res[k].tokens_per_s;
        if (res[k].interrupted && res[k].signal && res[k].step < tc->steps) code = 128 + res[k].signal;
    }
    printf("%d seeds  tokens/s %.0f in all\n", n, total);
    for (int k = 0; k < n; k++) free((char *)tcs[k].out);
    free(tcs), free(res);
    return code;
}

int cmd_train(int argc, char **argv) {
    TrainConfig tc;
    train_config_defaults(&tc);
    const char *precision = NULL, *pos_layers = NULL, *seeds = NULL;
    int steps = (int)tc.steps, synth_bytes = (int)tc.synth_bytes, stop_after = 0, threads = 0, untied = 0;
    int pose_chunks = 0; /* 0: not given */
    int min_steps = 0;
    /* every scheme's options from its table; args_usage appends " (default rope)" on a line of its own */
    char schemes[8192], pos_flag_help[8400];
    pos_help(schemes, sizeof schemes, "                       ");
    snprintf(pos_flag_help, sizeof pos_flag_help, "position scheme NAME[:k=v,...], one of:\n%s\n%20s", schemes, "");
    const OptSpec opts[] = {
        {"--data", OPT_STR, &tc.data, 0, 0, "text file or synth:NAME (bytes are tokens unless --tokenizer)"},
        {"--pos", OPT_STR, &tc.pos, 0, 0, pos_flag_help},
        {"--attn-pattern", OPT_STR, &tc.attn_pattern, 0, 0,
         "per-layer attention, a cycle over the layers: GROUP[:GROUP...], GROUP = [N*]ITEM[,ITEM...], ITEM = global | "
         "window=W | chunk=C | base=B | nope (e.g. 5*window=512,base=10000:global,base=1000000)"},
        {"--pos-layers", OPT_STR, &pos_layers, 0, 0,
         "nope@L1,L2,...: these 0-based layers without the --pos scheme (NoPE layers; appended to --pos)"},
        {"--tokenizer", OPT_STR, &tc.tokenizer, 0, 0,
         "tokenizer file (pelab tokenizer train, or a llama2.c tokenizer.bin); default: bytes, or --init's"},
        {"--out", OPT_OUT_FILE, &tc.out, 0, 0,
         "checkpoint path (safetensors), its loss curve beside it (OUT's stem + .curve.csv); one run at a time per "
         "path: a run holds the lock OUT.lock and a second is refused, naming the first's pid. A new run over an "
         "earlier checkpoint keeps the earlier curve as CURVE.1 (.2, ...) once its own first checkpoint replaces the "
         "earlier one"},
        {"--resume", OPT_FLAG, &tc.resume, 0, 0, "continue from --out if it exists (same flags as before)"},
        {"--force", OPT_FLAG, &tc.force, 0, 0,
         "train without the lock on --out where its file system cannot lock (you vouch that no other run writes it); "
         "a lock held by a running train is never overridden"},
        {"--init", OPT_STR, &tc.init, 0, 0, "start from this checkpoint's weights (fine-tune)"},
        {"--scale", OPT_STR, &tc.scale, 0, 0, "scaling rule to train with, for a scheme that takes one (with --init: fine-tune, e.g. pi:4)"},
        {"--rand-pos", OPT_INT, &tc.rand_pos, 0, 1 << 30, "randomized positions: sorted distinct ids from [0, N) (0: off)"},
        {"--pose", OPT_INT, &tc.pose, 0, 1 << 30,
         "PoSE to target length N: each row's --seq-len positions in chunks with random skips into [0, N) (0: off)"},
        {"--pose-chunks", OPT_INT, &pose_chunks, 1, 1 << 20, "PoSE's chunks per row (default 2)"},
        {"--passkey-frac", OPT_FLOAT, &tc.passkey_frac, 0, 1, "share of rows that are passkey documents (pelab passkey)"},
        {"--sink-token", OPT_INT, &tc.sink_token, -1, 1 << 30,
         "every training and validation window starts with this token id (StreamingLLM's sink token; -1: off)"},
        {"--align-examples", OPT_FLAG, &tc.align_examples, 0, 0,
         "task data: every window starts at an example's first byte (as task eval's prompts)"},
        TRAIN_FLAG_ROWS(&tc),
        {"--untied", OPT_FLAG, &untied, 0, 0, "separate output head instead of the token embedding"},
        {"--steps", OPT_INT, &steps, 1, 1 << 30, "optimizer steps"},
        {"--min-lr-frac", OPT_FLOAT, &tc.min_lr_frac, 0, 1, "final lr as a fraction of --lr (cosine decay)"},
        {"--converge", OPT_FLAG, &tc.converge, 0, 0, "train until the validation loss converges, --steps at most: "
                                                     "constant lr after the warmup until the loss fell by at most "
                                                     "--converge-frac or --converge-abs over the last 20% of the "
                                                     "steps (checked at each validation), then a linear cooldown "
                                                     "to --min-lr-frac for a quarter of the steps so far; it "
                                                     "begins earlier when it would otherwise pass --steps"},
        {"--converge-frac", OPT_FLOAT, &tc.converge_frac, 0, 0.999, "with --converge: the largest relative fall "
                                                                    "that counts as converged (default 0.01)"},
        {"--converge-abs", OPT_FLOAT, &tc.converge_abs, 0, 100, "with --converge: ... or the largest fall in nats "
                                                                "(default 0.01)"},
        {"--min-steps", OPT_INT, &min_steps, 0, 1 << 30, "with --converge: the rule is not checked before this "
                                                        "step (a task's plateau before it learns)"},
        {"--wd", OPT_FLOAT, &tc.wd, 0, 10, "AdamW weight decay (matrices and embeddings only)"},
        {"--clip", OPT_FLOAT, &tc.clip, 0, 1e9, "global gradient-norm clip (0: off)"},
        {"--beta1", OPT_FLOAT, &tc.beta1, 0, 0.999999, "AdamW beta1"},
        {"--beta2", OPT_FLOAT, &tc.beta2, 0, 0.999999, "AdamW beta2"},
        {"--seed", OPT_U64, &tc.seed, 0, 1.8e19, "seed for weights, data order and the synthetic corpus"},
        {"--seeds", OPT_STR, &seeds, 0, 0,
         "train one model per seed (1,2,3) in this process, in lockstep; checkpoints OUT_sSEED (--out's stem)"},
        {"--val-frac", OPT_FLOAT, &tc.val_frac, 1e-6, 0.999999, "held-out fraction (the end of the data)"},
        TRAIN_SYNTH_BYTES_ROW(&synth_bytes),
        {"--eval-every", OPT_INT, &tc.eval_every, 0, 1 << 30, "validation every N steps (0: only at the end)"},
        {"--eval-windows", OPT_INT, &tc.eval_windows, 1, 1 << 20, "validation windows of --seq-len tokens"},
        {"--ckpt-every", OPT_INT, &tc.ckpt_every, 0, 1 << 30, "checkpoint every N steps (0: only at the end)"},
        {"--log-every", OPT_INT, &tc.log_every, 1, 1 << 30, "progress line every N steps when not on a terminal"},
        {"--stop-after", OPT_INT, &stop_after, 0, 1 << 30, "checkpoint and stop after N steps of this run"},
        OPT_PRECISION_ROW(&precision),
        OPT_THREADS_ROW(&threads),
        {"--quiet", OPT_FLAG, &tc.quiet, 0, 0, "no progress output"},
    };
    args_parse("train", "[flags]  (Ctrl-C writes a checkpoint; rerun with --resume)", argc, argv, 1, opts,
               sizeof opts / sizeof opts[0], NULL, 0, NULL);
    tc.steps = steps;
    tc.synth_bytes = synth_bytes;
    tc.stop_after = stop_after;
    tc.min_steps = min_steps;
    if (min_steps && !tc.converge) pelab_die("train: --min-steps %d: needs --converge", min_steps);
    tc.tied = !untied;
    if (pose_chunks && !tc.pose) pelab_die("train: --pose-chunks %d: needs --pose TARGET_LEN", pose_chunks);
    if (pose_chunks) tc.pose_chunks = pose_chunks;
    if (precision && precision_parse(precision, &tc.precision) != 0) pelab_die("train: %s", pelab_errmsg);
    char pos_with_layers[POS_SPEC_MAX]; /* --pos + "+" + --pos-layers: pos_init checks the list */
    if (pos_layers) {
        if (tc.init) pelab_die("train: --pos-layers %s: with --init the scheme is the checkpoint's", pos_layers);
        if (pos_layers[0] == '+') pos_layers++;
        if (strncmp(pos_layers, "nope@", 5) != 0) pelab_die("train: --pos-layers %s: expected nope@L1,L2,...", pos_layers);
        if (snprintf(pos_with_layers, sizeof pos_with_layers, "%s+%s", tc.pos, pos_layers) >= (int)sizeof pos_with_layers)
            pelab_die("train: --pos-layers %.40s...: too long", pos_layers);
        tc.pos = pos_with_layers;
    }
    set_threads(threads);
    if (seeds) return train_seeds(&tc, seeds);
    TrainResult res;
    if (train_run(&tc, &res) != 0) pelab_die("train: %s", pelab_errmsg);
    printf("step %ld  train_loss %.4f  val_loss %.4f  tokens/s %.0f  checkpoint %s\n", res.step, res.train_loss,
           res.val_loss, res.tokens_per_s, tc.out);
    if (tc.converge && res.cooldown_start >= 0)
        printf("cooldown from step %ld: %s\n", res.cooldown_start,
               res.plateaued ? "the validation loss had converged" : "forced by --steps, the loss still falling");
    /* the shell's convention, 128 + the signal: 130 for Ctrl-C, 143 for SIGTERM */
    return res.interrupted && res.signal && res.step < tc.steps ? 128 + res.signal : 0;
}
