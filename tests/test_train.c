/* test_train.c: training end to end: the loss falls on the synthetic corpus; a run stopped and
 * resumed has exactly the loss curve of an uninterrupted one; resume refuses changed flags;
 * a NaN stops the run naming the last good checkpoint; AdamW and the schedule by hand; --converge
 * stops by its rule, resumes bit-identically and is forced by its cap. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../data/dataset.h"
#include "../infer/eval.h"
#include "../io/checkpoint.h"
#include "../train/adamw.h"
#include "../train/curve.h"
#include "../train/train.h"
#include "test.h"

static void small_config(TrainConfig *tc, const char *out) {
    train_config_defaults(tc);
    tc->out = out;
    tc->dim = 32;
    tc->layers = 2;
    tc->heads = 2;
    tc->seq_len = 32;
    tc->batch = 4;
    tc->steps = 20;
    tc->synth_bytes = 40000;
    tc->eval_every = 0;
    tc->eval_windows = 8;
    tc->ckpt_every = 0;
    tc->quiet = 1;
}

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 16);
    if (buf) fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

/* pose > 0: PoSE positions, drawn from the checkpointed data generator; stopped after `stop` steps,
 * at a row of the curve (every 5 steps) or between two (the curve's running mean is checkpointed) */
static void resume_identical(const char *spec, int pose, int stop) {
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/full.safetensors", test_tmpdir());
    snprintf(b, sizeof b, "%s/split.safetensors", test_tmpdir());
    remove(b);
    float full[20], split[20];
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, a);
    tc.pos = spec;
    tc.pose = pose;
    tc.loss_log = full;
    tc.log_every = 5;
    CHECK(train_run(&tc, &r) == 0 && r.step == 20, "resume %s: uninterrupted run: %s", spec, pelab_errmsg);
    small_config(&tc, b);
    tc.pos = spec;
    tc.pose = pose;
    tc.loss_log = split;
    tc.log_every = 5;
    tc.stop_after = stop;
    CHECK(train_run(&tc, &r) == 0 && r.step == stop && r.interrupted, "resume %s: first part stops at %d", spec, stop);
    char curve_a[300], curve_b[300];
    curve_path(a, curve_a, sizeof curve_a);
    curve_path(b, curve_b, sizeof curve_b);
    FILE *cf = fopen(curve_b, "a"); /* a killed run's row past its last checkpoint: dropped on resume */
    if (cf) fprintf(cf, "15,999,0.1,9.9,\n"), fclose(cf);
    tc.stop_after = 0;
    tc.resume = 1;
    CHECK(train_run(&tc, &r) == 0 && r.step == 20 && r.resumed_from == stop, "resume %s: the rest, from step %ld: %s",
          spec, r.resumed_from, pelab_errmsg);
    CHECK(memcmp(full, split, sizeof full) == 0, "resume %s: loss curve identical (step 20: %.7f vs %.7f)", spec,
          full[19], split[19]);
    char *ca = read_text(curve_a), *cb = read_text(curve_b);
    CHECK(ca && cb && strcmp(ca, cb) == 0 && strncmp(ca, CURVE_CSV_COLUMNS "\n5,", strlen(CURVE_CSV_COLUMNS) + 3) == 0 &&
              count_lines(ca) == 5,
          "resume %s: the curve CSV equals the uninterrupted run's (rows 5, 10, 15, 20): %s", spec, cb ? cb : "(missing)");
    free(ca), free(cb);
    /* and the final weights are bit-identical */
    Model ma, mb;
    if (checkpoint_load(a, &ma, NULL, NULL, NULL) == 0 && checkpoint_load(b, &mb, NULL, NULL, NULL) == 0) {
        CHECK(memcmp(ma.params_mem, mb.params_mem, ma.n_params * sizeof(float)) == 0,
              "resume %s: final weights identical", spec);
        model_free(&ma), model_free(&mb);
    } else CHECK(0, "resume %s: reload: %s", spec, pelab_errmsg);
}

static void resume_refuses_changes(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/split.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, path);
    tc.resume = 1;
    tc.steps = 30;
    tc.lr = 1e-3f;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "train.lr"), "resume with another --lr refused: %s",
          pelab_errmsg);
    small_config(&tc, path);
    tc.resume = 1;
    tc.steps = 30;
    tc.pos = "sinusoidal";
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "--pos"), "resume with another --pos refused: %s",
          pelab_errmsg);
    small_config(&tc, path);
    tc.resume = 1;
    tc.steps = 30;
    tc.dim = 64;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "--dim"), "resume with another --dim refused: %s",
          pelab_errmsg);
}

static void nan_stops(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/nan.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, path);
    tc.steps = 40;
    tc.ckpt_every = 1;
    tc.lr = 1e30f; /* diverges within a few steps */
    tc.clip = 0;
    tc.warmup = 0;
    int rc = train_run(&tc, &r);
    CHECK(rc == -1 && strstr(pelab_errmsg, "Last good checkpoint") && strstr(pelab_errmsg, path),
          "a NaN loss stops the run and names the last good checkpoint: %s", pelab_errmsg);
    Model m;
    CkptMeta meta;
    CHECK(checkpoint_load(path, &m, &meta, NULL, NULL) == 0, "the last good checkpoint still loads: %s", pelab_errmsg);
    if (meta_get(&meta, "step")) model_free(&m);
}

/* an update that poisons the weights is caught before it can overwrite a good checkpoint */
static void poisoned_weights_not_saved(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/poison.safetensors", test_tmpdir());
    remove(path);
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, path);
    tc.wd = NAN;
    tc.ckpt_every = 1;
    int rc = train_run(&tc, &r);
    FILE *f = fopen(path, "rb");
    CHECK(rc == -1 && strstr(pelab_errmsg, "a weight") && !f, "NaN weights are never saved: %s", pelab_errmsg);
    if (f) fclose(f);
}

/* --steps may grow on resume when --warmup was left at its default (5% of the steps), but for
 * resume_exact (a sweep's run continues as planned) */
static void resume_longer(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/longer.safetensors", test_tmpdir());
    remove(path);
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, path);
    tc.steps = 40;
    tc.stop_after = 5;
    train_run(&tc, &r);
    small_config(&tc, path);
    tc.steps = 80;
    tc.resume = 1, tc.resume_exact = 1;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "cannot resume: train.steps is 40 in the checkpoint but 80 now"),
          "resume_exact refuses more --steps: %s", pelab_errmsg);
    tc.resume_exact = 0;
    CHECK(train_run(&tc, &r) == 0 && r.step == 80, "resume with more --steps: %s", pelab_errmsg);
}

static void loss_falls(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/e2e.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    train_config_defaults(&tc);
    tc.out = path;
    tc.dim = 64;
    tc.layers = 2;
    tc.heads = 4;
    tc.seq_len = 64;
    tc.batch = 16;
    tc.steps = 200;
    tc.synth_bytes = 300000;
    tc.eval_every = 0;
    tc.quiet = 1;
    CHECK(train_run(&tc, &r) == 0, "end to end: %s", pelab_errmsg);
    /* uniform over 256 bytes is 5.55 nats; unigram statistics alone give about 3.0 */
    CHECK(r.val_loss < 2.3f, "end to end: validation loss %.3f < 2.3 after 200 steps on synth:stories", r.val_loss);
}

static void optimizer_by_hand(void) {
    float lr = lr_schedule(0, 100, 10, 1.0f, 0.1f);
    CHECK(fabsf(lr - 0.1f) < 1e-7f, "warmup step 0 = lr/10 (%g)", lr);
    CHECK(fabsf(lr_schedule(9, 100, 10, 1.0f, 0.1f) - 1.0f) < 1e-7f, "warmup ends at lr");
    CHECK(fabsf(lr_schedule(55, 100, 10, 1.0f, 0.1f) - 0.55f) < 1e-6f, "cosine midpoint = (1 + min)/2");
    CHECK(fabsf(lr_schedule(100, 100, 10, 1.0f, 0.1f) - 0.1f) < 1e-6f, "cosine ends at min_frac");
    float g[4] = {3, 4, 0, 0};
    float norm = clip_grad_norm(g, 4, 1.0f);
    CHECK(fabsf(norm - 5.0f) < 1e-6f && fabsf(g[0] - 0.6f) < 1e-6f && fabsf(g[1] - 0.8f) < 1e-6f,
          "clip: norm 5 scaled to 1");

    /* AdamW step 1: bias-corrected m/sqrt(v) = sign(g), so p -= lr * (sign(g) + wd * p) where decayed
     * (matrices, embeddings) and p -= lr * sign(g) on norm gains */
    Model m;
    ModelConfig c = {.vocab_size = 8, .dim = 4, .n_layers = 1, .n_heads = 1, .n_kv_heads = 1, .hidden_dim = 4,
                     .seq_len = 4, .norm_eps = 1e-5f, .tied = 1};
    model_create(&m, &c, "nope");
    model_init_weights(&m, 3);
    model_alloc_train(&m, 1, 4);
    float *before = xmalloc(m.n_params * sizeof(float)), *am = xcalloc(m.n_params, 4), *av = xcalloc(m.n_params, 4);
    memcpy(before, m.params_mem, m.n_params * sizeof(float));
    for (size_t i = 0; i < m.n_params; i++) m.grads_mem[i] = (i % 3 == 0) ? -0.5f : 0.25f;
    AdamWConfig opt = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f};
    adamw_update(&m, am, av, &opt, 1);
    int ok = 1;
    for (int t = 0; t < N_PARAM_TENSORS; t++)
        for (size_t i = 0; i < m.tensors[t].numel; i++) {
            size_t k = m.tensors[t].offset + i;
            float sign = m.grads_mem[k] > 0 ? 1.0f : -1.0f, wd = m.tensors[t].decay ? 0.1f : 0.0f;
            float want = before[k] - 0.01f * (sign + wd * before[k]);
            if (fabsf(m.params_mem[k] - want) > 1e-6f) ok = 0;
        }
    CHECK(ok, "AdamW first step = lr * (sign(g) + wd p), no decay on norm gains");
    CHECK(!m.tensors[T_ATTN_NORM].decay && !m.tensors[T_FINAL_NORM].decay && m.tensors[T_WQ].decay,
          "decay mask: norms excluded, matrices included");
    free(before), free(am), free(av);
    model_free(&m);
}

static void randomized_positions(void) {
    Rng rng;
    rng_seed(&rng, 3);
    enum { MAX = 64, T = 16, DRAWS = 4000 };
    int out[T], counts[MAX] = {0}, ok = 1;
    for (int d = 0; d < DRAWS; d++) {
        rng_sorted_sample(&rng, MAX, T, out);
        for (int t = 0; t < T; t++) {
            if (out[t] < 0 || out[t] >= MAX || (t && out[t] <= out[t - 1])) ok = 0;
            else counts[out[t]]++;
        }
    }
    CHECK(ok, "randomized positions: T distinct increasing ids in [0, MAX)");
    int uniform = 1; /* each id is chosen with probability T/MAX = 1/4: 1000 +- 27 */
    for (int i = 0; i < MAX; i++) uniform &= counts[i] > 1000 - 5 * 27 && counts[i] < 1000 + 5 * 27;
    CHECK(uniform, "randomized positions: every id equally likely (id 0: %d, id 63: %d of 1000)", counts[0],
          counts[MAX - 1]);

    char path[256];
    snprintf(path, sizeof path, "%s/randpos.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, path);
    tc.rand_pos = 256;
    CHECK(train_run(&tc, &r) == 0 && isfinite(r.val_loss), "training with --rand-pos 256 on rope: %s", pelab_errmsg);
    /* validation at positions drawn as training draws them: from exactly T ids they are 0..T-1 */
    Model m;
    Dataset d;
    if (checkpoint_load(path, &m, NULL, NULL, NULL) == 0 &&
        dataset_load(&d, tc.data, tc.val_frac, tc.seed, (size_t)tc.synth_bytes, tc.seq_len) == 0) {
        model_alloc_train(&m, tc.batch, tc.seq_len);
        float plain = evaluate_loss(&m, &d, tc.seq_len, 8, 0), same = evaluate_loss(&m, &d, tc.seq_len, 8, tc.seq_len);
        float drawn = evaluate_loss(&m, &d, tc.seq_len, 8, 256), again = evaluate_loss(&m, &d, tc.seq_len, 8, 256);
        CHECK(plain == same && drawn == again && drawn != plain,
              "validation with rand_pos: T of T ids = positions 0.. (%g, %g); of 256: fixed and other (%g, %g)", plain,
              same, drawn, again);
        dataset_free(&d);
        model_free(&m);
    } else CHECK(0, "reload the rand-pos run: %s", pelab_errmsg);
    small_config(&tc, path);
    tc.pos = "learned";
    tc.rand_pos = 256;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "past the end"),
          "--rand-pos beyond a learned table is refused: %s", pelab_errmsg);
    small_config(&tc, path);
    tc.rand_pos = 8;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "--rand-pos"), "--rand-pos < seq-len refused: %s",
          pelab_errmsg);
}

/* PoSE's position ids: sorted, distinct, in [0, target), at most `chunks` runs of consecutive ids
 * starting at 0, reaching every part of [0, target) over many rows, the same from the same seed */
static void pose_position_ids(void) {
    enum { T = 32, TARGET = 256, ROWS = 1000, BINS = 16 };
    for (int chunks = 1; chunks <= 4; chunks++) {
        Rng rng, again;
        rng_seed(&rng, 7), rng_seed(&again, 7);
        int ids[T], ids2[T], bins[BINS] = {0}, ok = 1, same = 1, max_runs = 0, max_last = 0;
        for (int row = 0; row < ROWS; row++) {
            pose_positions(&rng, T, TARGET, chunks, ids);
            pose_positions(&again, T, TARGET, chunks, ids2);
            same &= memcmp(ids, ids2, sizeof ids) == 0;
            int runs = 1;
            ok &= ids[0] == 0 && ids[T - 1] <= TARGET - 1;
            for (int t = 1; t < T; t++) {
                ok &= ids[t] > ids[t - 1];
                runs += ids[t] != ids[t - 1] + 1;
            }
            ok &= runs <= chunks; /* a skip of 0 joins two chunks into one run */
            if (runs > max_runs) max_runs = runs;
            if (ids[T - 1] > max_last) max_last = ids[T - 1];
            for (int t = 0; t < T && ok; t++) bins[ids[t] * BINS / TARGET]++;
        }
        int covered = 1;
        for (int i = 0; i < BINS; i++) covered &= chunks == 1 || bins[i] > 0;
        CHECK(ok && same, "pose %d chunks: ids sorted, distinct, from 0, last <= %d, deterministic", chunks, TARGET - 1);
        CHECK(max_runs == chunks, "pose %d chunks: up to %d runs of consecutive ids (%d seen)", chunks, chunks,
              max_runs);
        CHECK(chunks == 1 ? max_last == T - 1 : max_last >= TARGET - 4,
              "pose %d chunks: the last id reaches the target's end (max %d of %d)", chunks, max_last, TARGET - 1);
        CHECK(covered, "pose %d chunks: every 16th of [0, %d) is covered over %d rows", chunks, TARGET, ROWS);
    }
    int ids[8]; /* T = target: no room to skip, positions 0..T-1 */
    Rng rng;
    rng_seed(&rng, 1);
    pose_positions(&rng, 8, 8, 3, ids);
    int plain = 1;
    for (int t = 0; t < 8; t++) plain &= ids[t] == t;
    CHECK(plain, "pose to the training length itself: positions 0..T-1");
}

/* --pose's refusals: one line naming the flag, from the library and the command */
static void pose_refusals(void) {
    char out[256], cmd[1024];
    snprintf(out, sizeof out, "%s/pose.safetensors", test_tmpdir());
    struct { const char *flags, *needle; } bad[] = {
        {"--seq-len 32 --pose 16", "--pose 16: expected a target length of at least --seq-len 32"},
        {"--seq-len 32 --pose 64 --rand-pos 64", "--pose 64: cannot be combined with --rand-pos"},
        {"--seq-len 32 --pos learned --pose 256", "--pose 256: positions up to 255 are past the end of the learned"},
        {"--seq-len 32 --pose 64 --pose-chunks 33", "--pose-chunks 33: expected 1 to --seq-len 32"},
        {"--seq-len 32 --pose-chunks 3", "--pose-chunks 3: needs --pose"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "./pelab train --data /nonexistent/corpus.txt %s --out %s", bad[i].flags, out);
        expect_pelab_error(cmd, bad[i].needle);
    }
    /* a resumed run refuses another target */
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, out);
    tc.pose = 128;
    tc.steps = 2;
    CHECK(train_run(&tc, &r) == 0, "train with --pose 128: %s", pelab_errmsg);
    tc.pose = 256;
    tc.resume = 1;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "train.pose is 128 in the checkpoint but 256"),
          "resume with another --pose refused: %s", pelab_errmsg);
}

/* the PI recipe: --init CKPT --scale pi:4 --seq-len 4L keeps the rule's original length */
static void pi_finetune(void) {
    char base[256], tuned[256];
    snprintf(base, sizeof base, "%s/base.safetensors", test_tmpdir());
    snprintf(tuned, sizeof tuned, "%s/tuned.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, base);
    CHECK(train_run(&tc, &r) == 0, "pi fine-tune: base run");
    small_config(&tc, tuned);
    tc.init = base;
    tc.scale = "pi:4";
    tc.seq_len = 128;
    tc.steps = 5;
    CHECK(train_run(&tc, &r) == 0, "pi fine-tune at 4L: %s", pelab_errmsg);
    Model m;
    if (checkpoint_load(tuned, &m, NULL, NULL, NULL) == 0) {
        char spec[256];
        pos_spec(&m.pos, spec, sizeof spec);
        CHECK(m.cfg.seq_len == 128 && strstr(spec, "scale=pi:4") && strstr(spec, "orig_len=32"),
              "fine-tuned checkpoint: seq_len 128, %s", spec);
        model_free(&m);
    } else CHECK(0, "reload fine-tuned: %s", pelab_errmsg);
    small_config(&tc, tuned);
    tc.pos = "learned";
    tc.scale = "pi:4";
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "rotary"), "--scale on a learned model refused: %s",
          pelab_errmsg);
}

/* every flag is checked before the data is read or memory allocated: with data that does not
 * exist, the error names the flag and the Trainer holds no allocation. The flags alone are checked
 * before the output folder is touched (a killed run's temporary file stays); the passkey length
 * after the tokenizer, which may refuse passkey rows whatever the length. */
static void flags_checked_first(void) {
    char out[256], stale[300], cmd[1024];
    snprintf(out, sizeof out, "%s/early.safetensors", test_tmpdir());
    snprintf(stale, sizeof stale, "%s.tmp.abcdef", out); /* a killed run's leftover: setup removes it */
    struct { const char *pos; int seq_len, rand_pos; float passkey_frac; int flags_only; const char *needle; } bad[] = {
        {"rope", 32, 8, 0, 1, "--rand-pos 8: expected at least --seq-len 32"},
        {"rope", 32, -1, 0, 1, "--rand-pos -1"},
        {"learned", 32, 256, 0, 1, "--rand-pos 256: positions up to 255 are past the end of the learned"},
        {"rope", 64, 0, 1.5f, 1, "--passkey-frac 1.5"},
        {"rope", 64, 0, NAN, 1, "--passkey-frac nan"},
        {"rope", 16, 0, 0.5f, 0, "--passkey-frac: a passkey document needs --seq-len >= 43, got 16"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(stale, "w");
        if (f) fclose(f);
        TrainConfig tc;
        small_config(&tc, out);
        tc.data = "/nonexistent/corpus.txt";
        tc.pos = bad[i].pos, tc.seq_len = bad[i].seq_len;
        tc.rand_pos = bad[i].rand_pos, tc.passkey_frac = bad[i].passkey_frac;
        Trainer tr;
        int rc = trainer_setup(&tr, &tc);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i].needle), "bad flag %zu refused before the data: %s", i,
              pelab_errmsg);
        CHECK(!tr.data.tokens && !tr.model.params_mem && !tr.adam_m && !tr.inputs,
              "bad flag %zu refused before any allocation", i);
        trainer_free(&tr);
        f = fopen(stale, "r");
        if (bad[i].flags_only) CHECK(f != NULL, "bad flag %zu refused before the output folder is touched", i);
        if (f) fclose(f);
        remove(stale);
    }
    snprintf(cmd, sizeof cmd, "./pelab train --data /nonexistent/corpus.txt --seq-len 32 --rand-pos 8 --out %s", out);
    expect_pelab_error(cmd, "--rand-pos 8");
}

/* path's bytes equal the other's (checkpoints: weights, moments, metadata) */
static int same_file(const char *a, const char *b) {
    unsigned char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    int same = read_file(a, &x, &nx) == 0 && read_file(b, &y, &ny) == 0 && nx == ny && memcmp(x, y, nx) == 0;
    free(x), free(y);
    return same;
}

/* train --seeds: every seed's checkpoint bit-identical to training that seed alone at the same
 * thread count, with a batch (4 rows: sharded, model.h) and with 1 row (one shard); and the
 * sharded training the same on 1 and 2 threads (the shards, not the threads, fix the sums) */
/* --converge: a tiny model on a tiny corpus converges long before its cap of 2000 steps, by the
 * rule as curve_judge states it, then cools down for a quarter of its steps to lr x min_lr_frac;
 * stopped in the stable phase or in the cooldown and resumed it equals the uninterrupted run bit for
 * bit; a run that cannot converge is cooled down at 80% of its cap; resume refuses another rule and
 * a missing curve */
static void converge_config(TrainConfig *tc, const char *out) {
    small_config(tc, out);
    tc->dim = 16, tc->layers = 1, tc->seq_len = 16, tc->synth_bytes = 20000;
    tc->steps = 2000, tc->eval_every = 10, tc->log_every = 1000, tc->converge = 1;
}

static void converge_stops(void) {
    char a[256], b[256], ca[300], cb[300];
    snprintf(a, sizeof a, "%s/conv_full.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    converge_config(&tc, a);
    CHECK(train_run(&tc, &r) == 0, "converge: %s", pelab_errmsg);
    long s0 = r.cooldown_start;
    CHECK(r.plateaued && s0 > 0 && s0 % 10 == 0 && r.step == s0 + (s0 + 3) / 4 && r.step < 2000,
          "converge: the rule held at step %ld, cooled down to %ld, before the cap", s0, r.step);
    curve_path(a, ca, sizeof ca);
    FILE *f = fopen(ca, "r");
    long step[400];
    double val[400], lr[400];
    int n = 0;
    char line[256];
    if (f) {
        if (fgets(line, sizeof line, f)) {}
        while (n < 400 && fgets(line, sizeof line, f)) {
            char *p = line;
            step[n] = strtol(p, &p, 10);
            p = strchr(p + 1, ',') + 1; /* past tokens */
            lr[n] = strtod(p, &p);
            p = strchr(p + 1, ',') + 1; /* past train_loss */
            if (*p != '\n') val[n] = strtod(p, NULL), n++;
        }
        fclose(f);
    }
    int at = -1, early;
    for (int i = 0; i < n; i++)
        if (step[i] == s0) at = i;
    CHECK(at > 0 && curve_judge(step, val, at + 1, 0.01, 0.01, &early) == CURVE_CONVERGED &&
              curve_judge(step, val, at, 0.01, 0.01, &early) == CURVE_IMPROVING,
          "converge: the rule holds at step %ld on the curve as written, not at the validation before", s0);
    CHECK(at > 0 && fabs(lr[at] - tc.lr) < 1e-9 && fabs(lr[n - 1] - tc.lr * tc.min_lr_frac) < 1e-7 && lr[at + 1] < lr[at],
          "converge: constant lr to the cooldown, then down to lr x min_lr_frac (%g at the end)", n ? lr[n - 1] : -1);
    /* interrupted in the stable phase and in the cooldown: resumed, the same run */
    long stops[2] = {s0 / 20 * 10, s0 + 10}; /* validations: a stop elsewhere adds a row (curve.h) */
    for (int i = 0; i < 2; i++) {
        snprintf(b, sizeof b, "%s/conv_split%d.safetensors", test_tmpdir(), i);
        remove(b);
        converge_config(&tc, b);
        tc.stop_after = stops[i];
        CHECK(train_run(&tc, &r) == 0 && r.interrupted && r.step == stops[i], "converge: stopped at %ld", stops[i]);
        tc.stop_after = 0, tc.resume = 1;
        CHECK(train_run(&tc, &r) == 0 && r.cooldown_start == s0 && r.plateaued, "converge: resumed from %ld: %s",
              stops[i], pelab_errmsg);
        curve_path(b, cb, sizeof cb);
        CHECK(same_file(a, b) && same_file(ca, cb), "converge: stopped at %ld and resumed, checkpoint and curve "
                                                     "bit-identical to the uninterrupted run", stops[i]);
    }
    /* resume refuses another rule, and a stable phase without its curve */
    converge_config(&tc, b);
    tc.converge_frac = 0.02f, tc.resume = 1;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "train.converge"), "another rule refused: %s", pelab_errmsg);
    snprintf(b, sizeof b, "%s/conv_nocurve.safetensors", test_tmpdir());
    remove(b);
    converge_config(&tc, b);
    tc.stop_after = 25;
    CHECK(train_run(&tc, &r) == 0 && r.interrupted, "converge: stopped at 25");
    curve_path(b, cb, sizeof cb);
    remove(cb);
    tc.stop_after = 0, tc.resume = 1;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "lacks the validation at step 20"),
          "a --converge resume without its curve refused: %s", pelab_errmsg);
    /* forty steps of a larger model: still falling, the cooldown forced at 32 so that it ends at the cap */
    snprintf(b, sizeof b, "%s/conv_cap.safetensors", test_tmpdir());
    small_config(&tc, b);
    tc.steps = 40, tc.eval_every = 4, tc.converge = 1;
    CHECK(train_run(&tc, &r) == 0 && r.step == 40 && r.cooldown_start == 32 && !r.plateaued,
          "converge: the cap forces the cooldown at 32 (%ld), not converged (%d)", r.cooldown_start, r.plateaued);
    /* the schedule by hand: warmup, constant, linear to the floor at the last step */
    CHECK(fabsf(lr_wsd(0, 4, -1, -1, 1, 0.1f) - 0.25f) < 1e-7f && lr_wsd(50, 4, -1, -1, 1, 0.1f) == 1 &&
              lr_wsd(59, 4, 60, 70, 1, 0.1f) == 1 && fabsf(lr_wsd(60, 4, 60, 70, 1, 0.1f) - 0.91f) < 1e-6f &&
              fabsf(lr_wsd(69, 4, 60, 70, 1, 0.1f) - 0.1f) < 1e-6f,
          "lr_wsd: warmup, stable, linear cooldown");
    /* the rule: a fall of more than 1% and 0.01 nats since the last validation at or before 80% */
    long st[4] = {10, 20, 40, 50};
    double fall[4] = {3, 2.5, 2.1, 2.0}, flat[4] = {3, 2.5, 2.01, 2.0};
    CHECK(curve_judge(st, fall, 4, 0.01, 0.01, &early) == CURVE_IMPROVING && early == 2 &&
              curve_judge(st, flat, 4, 0.01, 0.01, &early) == CURVE_CONVERGED &&
              curve_judge(st, fall, 4, 0.01, 0.2, &early) == CURVE_CONVERGED &&
              curve_judge(st, fall, 1, 0.01, 0.01, &early) == CURVE_UNKNOWN,
          "curve_judge: improving, flat, under the nats floor, too short");
}

static void seeds_identical(void) {
    int saved = omp_get_max_threads();
    unsigned long long seeds[3] = {3, 1, 7};
    for (int batch = 4; batch >= 1; batch -= 3) {
        char outs[3][256], alone[256], alone1[256];
        TrainConfig tcs[3];
        TrainResult res[3];
        for (int k = 0; k < 3; k++) {
            snprintf(outs[k], sizeof outs[k], "%s/seeds_b%d_s%llu.safetensors", test_tmpdir(), batch, seeds[k]);
            small_config(&tcs[k], outs[k]);
            tcs[k].seed = seeds[k], tcs[k].batch = batch, tcs[k].steps = 12, tcs[k].eval_every = 5;
        }
        omp_set_num_threads(2);
        CHECK(train_run_many(tcs, 3, res) == 0 && res[0].step == 12 && res[2].step == 12, "3 seeds in lockstep: %s",
              pelab_errmsg);
        for (int k = 0; k < 3; k++) {
            snprintf(alone, sizeof alone, "%s/alone_b%d_s%llu.safetensors", test_tmpdir(), batch, seeds[k]);
            TrainConfig tc = tcs[k];
            TrainResult r;
            tc.out = alone;
            CHECK(train_run(&tc, &r) == 0, "seed %llu alone: %s", seeds[k], pelab_errmsg);
            CHECK(r.train_loss == res[k].train_loss && r.val_loss == res[k].val_loss,
                  "seed %llu: losses alone %.7f / %.7f, in the batch %.7f / %.7f", seeds[k], r.train_loss, r.val_loss,
                  res[k].train_loss, res[k].val_loss);
            CHECK(same_file(alone, outs[k]), "batch %d: seed %llu's checkpoint bit-identical to training it alone",
                  batch, seeds[k]);
        }
        snprintf(alone1, sizeof alone1, "%s/alone_b%d_t1.safetensors", test_tmpdir(), batch);
        TrainConfig tc = tcs[1];
        TrainResult r;
        tc.out = alone1;
        omp_set_num_threads(1);
        CHECK(train_run(&tc, &r) == 0, "seed alone, 1 thread: %s", pelab_errmsg);
        if (batch > 1) CHECK(same_file(alone1, outs[1]), "sharded training: 1 thread and 2 threads bit-identical");
    }
    omp_set_num_threads(saved);
    /* a failing seed is named, and stops the others */
    TrainConfig bad[2];
    TrainResult res[2];
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/seeds_bad_a.safetensors", test_tmpdir());
    snprintf(b, sizeof b, "%s/seeds_bad_b.safetensors", test_tmpdir());
    small_config(&bad[0], a), small_config(&bad[1], b);
    bad[1].seed = 9, bad[1].data = "/nonexistent/corpus.txt";
    CHECK(train_run_many(bad, 2, res) == -1 && strstr(pelab_errmsg, "seed 9") && strstr(pelab_errmsg, "/nonexistent"),
          "a seed that cannot start is named: %s", pelab_errmsg);
}

/* a learned table longer than L (GPT-2's): training at L = 32 never reaches rows 32..127, so they
 * keep their initialization bit for bit while rows 0..31 are trained; the loss past L is then
 * computable up to the table's 128 rows, and a length past it is refused (n/a, never a read past
 * the array) */
static void learned_table_past_len(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/learned_long.safetensors", test_tmpdir());
    TrainConfig tc;
    TrainResult r;
    small_config(&tc, path);
    tc.pos = "learned:max_len=128";
    CHECK(train_run(&tc, &r) == 0 && isfinite(r.val_loss), "training learned:max_len=128 at L 32: %s", pelab_errmsg);
    Model m, init;
    Dataset d;
    if (checkpoint_load(path, &m, NULL, NULL, NULL) != 0 || model_create(&init, &m.cfg, tc.pos) != 0) {
        CHECK(0, "reload the learned:max_len=128 run: %s", pelab_errmsg);
        return;
    }
    model_init_weights(&init, tc.seed);
    const TensorInfo *ti = &m.tensors[T_POS];
    size_t row = (size_t)m.cfg.dim, trained = (size_t)tc.seq_len * row;
    const float *p = m.params_mem + ti->offset, *p0 = init.params_mem + ti->offset;
    CHECK(ti->numel == 128 * row && memcmp(p + trained, p0 + trained, (ti->numel - trained) * sizeof(float)) == 0 &&
              memcmp(p, p0, trained * sizeof(float)) != 0,
          "rows 32..127 keep their initialization, rows 0..31 are trained (%zu values)", ti->numel);
    if (dataset_load(&d, tc.data, tc.val_frac, tc.seed, (size_t)tc.synth_bytes, tc.seq_len) == 0) {
        const int *held = d.tokens + d.n_train;
        size_t n_held = d.n - d.n_train;
        EvalLength e4, e5;
        int rc4 = eval_length(&m, held, n_held, 128, 0, DYNAMIC_WINDOW, 4, &e4);
        int rc5 = eval_length(&m, held, n_held, 160, 0, DYNAMIC_WINDOW, 4, &e5);
        CHECK(rc4 == 0 && e4.status == EVAL_OK && isfinite(eval_mean(&e4.proto[EVAL_NONOVERLAP])) && rc5 == 0 &&
                  e5.status == EVAL_PAST_TABLE && e5.limit == 128,
              "loss at 4L = 128 computed (%g), at 160 past the table of 128 (status %d, limit %ld): %s",
              rc4 == 0 ? eval_mean(&e4.proto[EVAL_NONOVERLAP]) : NAN, (int)e5.status, e5.limit, pelab_errmsg);
        if (rc4 == 0) eval_length_free(&e4);
        if (rc5 == 0) eval_length_free(&e5);
        dataset_free(&d);
    } else CHECK(0, "dataset of the learned:max_len=128 run: %s", pelab_errmsg);
    model_free(&init);
    model_free(&m);
}

void test_train(void) {
    seeds_identical();
    flags_checked_first();
    randomized_positions();
    pose_position_ids();
    pose_refusals();
    pi_finetune();
    optimizer_by_hand();
    resume_identical("rope", 256, 10);
    resume_identical("rope", 0, 7);
    resume_identical("learned", 0, 10); /* resume_refuses_changes continues this one */
    resume_refuses_changes();
    nan_stops();
    poisoned_weights_not_saved();
    resume_longer();
    loss_falls();
    converge_stops();
    learned_table_past_len();
}
