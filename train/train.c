#include "train.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/hash.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/sys.h"
#include "../data/passkey.h"
#include "../io/checkpoint.h"
#include "adamw.h"
#include "progress.h"

void train_config_defaults(TrainConfig *tc) {
    memset(tc, 0, sizeof *tc);
    tc->data = "synth:stories";
    tc->pos = "rope";
    tc->out = "model.safetensors";
    tc->dim = 128;
    tc->layers = 4;
    tc->heads = 4;
    tc->kv_heads = 0; /* 0: same as heads */
    tc->hidden = 0;   /* 0: 3 * dim */
    tc->seq_len = 128;
    tc->batch = 16;
    tc->tied = 1;
    tc->steps = 1000;
    tc->warmup = -1; /* -1: 5% of steps */
    tc->lr = 3e-3f;
    tc->min_lr_frac = 0.1f;
    tc->wd = 0.1f;
    tc->clip = 1.0f;
    tc->beta1 = 0.9f;
    tc->beta2 = 0.95f;
    tc->seed = 1;
    tc->val_frac = 0.1f;
    tc->synth_bytes = 4 << 20;
    tc->eval_every = 200;
    tc->eval_windows = 64;
    tc->ckpt_every = 500;
    tc->log_every = 50;
}

static void nan_message(const char *what, float value, long step, const char *path, long last_good_step) {
    if (last_good_step >= 0)
        pelab_fail("%s is %f at step %ld; stopped. Last good checkpoint: %s (step %ld)", what, value, step, path,
                   last_good_step);
    else
        pelab_fail("%s is %f at step %ld; stopped before any checkpoint was written (try a lower --lr)", what, value,
                   step);
}

static size_t first_non_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

/* Randomized positions (Ruoss et al. 2023): T distinct ids from [0, max), increasing, by selection
 * sampling (Knuth's algorithm S: each id is taken with probability needed / remaining). */
void sample_sorted_positions(Rng *rng, int max, int T, int *out) {
    int needed = T;
    for (int id = 0; id < max && needed > 0; id++)
        if (rng_below(rng, (uint64_t)(max - id)) < (uint64_t)needed) out[T - needed--] = id;
}

static volatile sig_atomic_t stop_requested;
static void on_sigint(int sig) { stop_requested = sig; /* SIGINT or SIGTERM: the exit code tells which */ }

float evaluate_loss(Model *m, const Dataset *d, int T, int max_windows) {
    size_t avail = dataset_val_windows(d, T), n = avail < (size_t)max_windows ? avail : (size_t)max_windows;
    int B = m->B;
    int *in = xmalloc(sizeof(int) * B * T), *tg = xmalloc(sizeof(int) * B * T), *pos = xmalloc(sizeof(int) * B * T);
    for (int i = 0; i < B * T; i++) pos[i] = i % T;
    double total = 0.0;
    for (size_t w0 = 0; w0 < n; w0 += B) {
        int nb = (int)(n - w0 < (size_t)B ? n - w0 : (size_t)B);
        for (int b = 0; b < nb; b++) /* windows spread evenly over the held-out part */
            dataset_val_window(d, (w0 + b) * avail / n, T, in + b * T, tg + b * T);
        if (model_forward(m, in, tg, pos, nb, T) != 0) {
            total = NAN;
            break;
        }
        total += (double)m->mean_loss * nb;
    }
    free(in), free(tg), free(pos);
    return n ? (float)(total / n) : NAN;
}

/* the training hyperparameters a resumed run must share with the run it continues */
static void write_train_meta(CkptMeta *meta, const TrainConfig *tc, const Dataset *d) {
    meta_set(meta, "tokenizer", "%s", d->tok ? tokenizer_kind_name(d->tok) : "byte");
    if (d->tok && d->tok->image) /* resume refuses a different vocabulary of the same kind */
        meta_set(meta, "tokenizer_fingerprint", "%016llx",
                 (unsigned long long)fnv1a64(d->tok->image, d->tok->image_len, 0));
    meta_set(meta, "data", "%s", tc->data);
    meta_set(meta, "data_fingerprint", "%016llx", (unsigned long long)d->fingerprint);
    meta_set(meta, "train.batch", "%d", tc->batch);
    meta_set(meta, "train.steps", "%ld", tc->steps);
    meta_set(meta, "train.warmup", "%d", tc->warmup);
    meta_set(meta, "train.lr", "%.9g", tc->lr);
    meta_set(meta, "train.min_lr_frac", "%.9g", tc->min_lr_frac);
    meta_set(meta, "train.wd", "%.9g", tc->wd);
    meta_set(meta, "train.clip", "%.9g", tc->clip);
    meta_set(meta, "train.beta1", "%.9g", tc->beta1);
    meta_set(meta, "train.beta2", "%.9g", tc->beta2);
    meta_set(meta, "train.seed", "%llu", tc->seed);
    meta_set(meta, "train.val_frac", "%.9g", tc->val_frac);
    meta_set(meta, "train.synth_bytes", "%ld", tc->synth_bytes);
    meta_set(meta, "train.init", "%s", tc->init ? tc->init : "");
    meta_set(meta, "train.scale", "%s", tc->scale ? tc->scale : "");
    meta_set(meta, "train.rand_pos", "%d", tc->rand_pos);
    meta_set(meta, "train.passkey_frac", "%.9g", tc->passkey_frac);
}

/* on resume every stored training key must equal this run's (train.steps may grow) */
static int check_resume_meta(const CkptMeta *stored, const TrainConfig *tc, const Dataset *d, const char *path) {
    CkptMeta now = {0};
    write_train_meta(&now, tc, d);
    for (int i = 0; i < now.n; i++) {
        const char *key = now.e[i].key, *old = meta_get(stored, key);
        if (strcmp(key, "train.steps") == 0) continue;
        if (!old && strcmp(key, "train.passkey_frac") == 0) old = "0"; /* written before the flag existed */
        if (!old) return pelab_fail("%s: cannot resume: the checkpoint has no '%s' (not written by pelab train)", path, key);
        if (strcmp(old, now.e[i].val) != 0)
            return pelab_fail("%s: cannot resume: %s is %s in the checkpoint but %s now; pass the same flags as the "
                              "original run",
                              path, key, old, now.e[i].val);
    }
    return 0;
}

/* the architecture flags of this run must describe the checkpoint being resumed */
static int check_resume_model(const Model *m, const TrainConfig *tc) {
    const ModelConfig *c = &m->cfg;
    struct { const char *flag; int now, stored; } f[] = {
        {"--dim", tc->dim, c->dim}, {"--layers", tc->layers, c->n_layers}, {"--heads", tc->heads, c->n_heads},
        {"--kv-heads", tc->kv_heads, c->n_kv_heads}, {"--hidden", tc->hidden, c->hidden_dim},
        {"--seq-len", tc->seq_len, c->seq_len}, {"--tied", tc->tied, c->tied}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].now != f[i].stored)
            return pelab_fail("%s: cannot resume: %s is %d in the checkpoint but %d now", tc->out, f[i].flag,
                              f[i].stored, f[i].now);
    if (tc->init) return 0; /* the scheme came from the --init checkpoint (train.init is compared) */
    PosCtx want;
    if (pos_init(&want, tc->pos, c->dim, c->n_heads, c->n_kv_heads, c->n_layers, c->seq_len) != 0) return -1;
    if (tc->scale && pos_set_scale(&want, tc->scale) != 0) {
        pos_free(&want);
        return -1;
    }
    char a[256], b[256];
    pos_spec(&want, a, sizeof a);
    pos_spec(&m->pos, b, sizeof b);
    pos_free(&want);
    if (strcmp(a, b) != 0) return pelab_fail("%s: cannot resume: --pos is %s in the checkpoint but %s now", tc->out, b, a);
    return 0;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static int save(const char *path, Model *m, const TrainConfig *tc, const Dataset *d, const float *am, const float *av,
                long step, const Rng *rng, float train_loss, float val_loss) {
    CkptMeta meta = {0};
    write_train_meta(&meta, tc, d);
    meta_set(&meta, "step", "%ld", step);
    meta_set(&meta, "data_rng", "%llu", (unsigned long long)rng->state);
    meta_set(&meta, "train_loss", "%.9g", train_loss);
    meta_set(&meta, "val_loss", "%.9g", val_loss);
    if (d->tok && d->tok->image) meta.tokenizer_image = d->tok->image, meta.tokenizer_len = d->tok->image_len;
    return checkpoint_save(path, m, &meta, am, av);
}

/* --tokenizer FILE; else the tokenizer of the checkpoint being resumed or fine-tuned; else bytes */
static int training_tokenizer(const TrainConfig *tc, int resuming, Tokenizer *tok) {
    tokenizer_init_byte(tok);
    if (tc->tokenizer) return tokenizer_load_file(tok, tc->tokenizer);
    const char *from = resuming ? tc->out : tc->init;
    if (!from) return 0;
    Model m;
    CkptMeta meta;
    if (checkpoint_load(from, &m, &meta, NULL, NULL) != 0) return -1;
    int rc = tokenizer_from_image(tok, meta_get(&meta, "tokenizer"), meta.tokenizer_image, meta.tokenizer_len, from,
                                  m.cfg.vocab_size);
    meta_free(&meta);
    model_free(&m);
    return rc;
}

int train_run(const TrainConfig *tc_in, TrainResult *res) {
    TrainConfig tc = *tc_in;
    memset(res, 0, sizeof *res);
    res->val_loss = NAN;
    int warmup = tc.warmup < 0 ? (int)(tc.steps / 20) : tc.warmup; /* the flag (-1 = 5%) is what is stored */
    if (tc.kv_heads == 0) tc.kv_heads = tc.heads;
    if (tc.hidden == 0) tc.hidden = 3 * tc.dim;
    if (tc.steps < 1) return pelab_fail("--steps %ld: expected at least 1", tc.steps);
    if (!tc.out || !*tc.out) return pelab_fail("--out: a checkpoint path is required");
    if (check_output_file(tc.out) != 0) return -1; /* before the data is read: not at the first checkpoint */

    int resumed = tc.resume && file_exists(tc.out);
    /* a run killed while writing its checkpoint leaves OUT.tmp.XXXXXX behind: the checkpoint itself is
     * whole (the old one or the new one), the temporary file only takes disk space */
    int stale = remove_stale_temps(tc.out);
    if (stale && !tc.quiet) fprintf(stderr, "removed %d temporary file%s left by a killed run (%s.tmp.*)\n", stale,
                                    stale > 1 ? "s" : "", tc.out);
    Tokenizer tok;
    if (training_tokenizer(&tc, resumed, &tok) != 0) return -1;
    if (tc.passkey_frac > 0 && tok.kind != TOK_BYTE) {
        tokenizer_free(&tok);
        return pelab_fail("--passkey-frac: passkey documents are byte-level; this run uses the %s tokenizer",
                          tokenizer_kind_name(&tok));
    }
    Dataset data;
    if (dataset_load_with(&data, tc.data, &tok, tc.val_frac, tc.seed, (size_t)tc.synth_bytes, tc.seq_len) != 0) {
        tokenizer_free(&tok);
        return -1;
    }

    Model model;
    float *adam_m = NULL, *adam_v = NULL;
    long step = 0;
    float stored_train_loss = NAN, stored_val_loss = NAN; /* a finished run resumed reports its losses */
    Rng data_rng;
    rng_seed(&data_rng, tc.seed * 0x9E3779B97F4A7C15ull + 1);
    if (resumed) {
        CkptMeta meta;
        if (checkpoint_load(tc.out, &model, &meta, &adam_m, &adam_v) != 0) goto fail_data;
        meta_free(&meta); /* the tokenizer image: training_tokenizer already read it */
        if (!adam_m) {
            pelab_fail("%s: cannot resume: the checkpoint has no optimizer state", tc.out);
            goto fail_model;
        }
        if (check_resume_meta(&meta, &tc, &data, tc.out) != 0 || check_resume_model(&model, &tc) != 0) goto fail_model;
        const char *s = meta_get(&meta, "step"), *r = meta_get(&meta, "data_rng");
        if (!s || !r) {
            pelab_fail("%s: cannot resume: missing step or data_rng metadata", tc.out);
            goto fail_model;
        }
        step = strtol(s, NULL, 10);
        data_rng.state = strtoull(r, NULL, 10);
        const char *tl = meta_get(&meta, "train_loss"), *vl = meta_get(&meta, "val_loss");
        if (tl) stored_train_loss = strtof(tl, NULL);
        if (vl) stored_val_loss = strtof(vl, NULL);
        if (!tc.quiet) fprintf(stderr, "resuming %s at step %ld\n", tc.out, step);
    } else if (tc.init) {
        if (checkpoint_load(tc.init, &model, NULL, NULL, NULL) != 0) goto fail_data;
        /* fine-tuning may change the training length; a rotary rule keeps the original L (orig_len) */
        if (tc.scale && pos_set_scale(&model.pos, tc.scale) != 0) goto fail_model;
        model.cfg.seq_len = tc.seq_len;
    } else {
        ModelConfig cfg = {.vocab_size = data.vocab_size, .dim = tc.dim, .n_layers = tc.layers, .n_heads = tc.heads,
                           .n_kv_heads = tc.kv_heads, .hidden_dim = tc.hidden, .seq_len = tc.seq_len,
                           .norm_eps = 1e-5f, .tied = tc.tied};
        if (model_create(&model, &cfg, tc.pos) != 0) goto fail_data;
        if (tc.scale && pos_set_scale(&model.pos, tc.scale) != 0) goto fail_model;
        model_init_weights(&model, tc.seed);
    }
    if (model.cfg.vocab_size < data.vocab_size) {
        pelab_fail("model vocab %d is smaller than the data's %d", model.cfg.vocab_size, data.vocab_size);
        goto fail_model;
    }
    if (!adam_m) {
        adam_m = xcalloc(model.n_params, sizeof(float));
        adam_v = xcalloc(model.n_params, sizeof(float));
    }

    int B = tc.batch, T = tc.seq_len;
    model_alloc_train(&model, B, T);
    int *inputs = xmalloc(sizeof(int) * B * T), *targets = xmalloc(sizeof(int) * B * T);
    int *positions = xmalloc(sizeof(int) * B * T);
    for (int i = 0; i < B * T; i++) positions[i] = i % T;

    if (!tc.quiet) {
        char spec[256];
        pos_spec(&model.pos, spec, sizeof spec);
        fprintf(stderr, "model: %zu parameters, dim %d, %d layers, %d heads (%d kv), hidden %d, pos %s\n",
                model.n_params, model.cfg.dim, model.cfg.n_layers, model.cfg.n_heads, model.cfg.n_kv_heads,
                model.cfg.hidden_dim, spec);
        fprintf(stderr, "data: %s, %zu train + %zu validation tokens; batch %d x %d, %ld steps\n", data.name,
                data.n_train, data.n - data.n_train, B, T, tc.steps);
    }

    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C during a long step or save ends the process */
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    stop_requested = 0;

    Progress prog;
    progress_init(&prog, step, tc.steps, tc.log_every);
    long last_good_step = resumed ? step : -1;
    float train_loss = stored_train_loss, val_loss = stored_val_loss;
    double t0 = now_seconds();
    long steps_this_run = 0;
    int rc = 0;
    AdamWConfig opt = {.beta1 = tc.beta1, .beta2 = tc.beta2, .eps = 1e-8f, .weight_decay = tc.wd};

    if (tc.rand_pos > 0 && tc.rand_pos < T) {
        pelab_fail("--rand-pos %d: expected at least --seq-len %d distinct positions", tc.rand_pos, T);
        rc = -1;
        goto done;
    }
    if (tc.passkey_frac > 0 && T + 1 < PASSKEY_MIN_LEN) {
        pelab_fail("--passkey-frac: a passkey document needs --seq-len >= %d, got %d", PASSKEY_MIN_LEN - 1, T);
        rc = -1;
        goto done;
    }
    while (step < tc.steps) {
        passkey_mix_batch(&data, &data_rng, tc.passkey_frac, B, T, inputs, targets); /* frac 0: corpus only */
        if (tc.rand_pos > 0)
            for (int b = 0; b < B; b++) sample_sorted_positions(&data_rng, tc.rand_pos, T, positions + b * T);
        model_zero_grad(&model);
        if (model_forward(&model, inputs, targets, positions, B, T) != 0) {
            rc = -1;
            break;
        }
        train_loss = model.mean_loss;
        if (!isfinite(train_loss)) {
            nan_message("loss", train_loss, step + 1, tc.out, last_good_step);
            rc = -1;
            break;
        }
        model_backward(&model);
        float grad_norm = clip_grad_norm(model.grads_mem, model.n_params, tc.clip);
        if (!isfinite(grad_norm)) {
            nan_message("gradient norm", grad_norm, step + 1, tc.out, last_good_step);
            rc = -1;
            break;
        }
        opt.lr = lr_schedule(step, tc.steps, warmup, tc.lr, tc.min_lr_frac);
        adamw_update(&model, adam_m, adam_v, &opt, step + 1);
        if (model.pos.scheme->after_update && model.tensors[T_POS].numel)
            model.pos.scheme->after_update(&model.pos, model.params.pos);
        if (tc.loss_log) tc.loss_log[step] = train_loss;
        step++;
        steps_this_run++;
        res->tokens_per_s = (double)steps_this_run * B * T / (now_seconds() - t0);
        if (!tc.quiet) progress_step(&prog, step, train_loss, opt.lr, res->tokens_per_s);

        int last = step == tc.steps;
        int stopping = stop_requested || (tc.stop_after > 0 && steps_this_run >= tc.stop_after);
        if ((tc.eval_every > 0 && step % tc.eval_every == 0) || last) {
            val_loss = evaluate_loss(&model, &data, T, tc.eval_windows);
            if (!tc.quiet) progress_note(&prog, "step %ld: validation loss %.4f", step, val_loss);
        }
        if ((tc.ckpt_every > 0 && step % tc.ckpt_every == 0) || last || stopping) {
            size_t bad = first_non_finite(model.params_mem, model.n_params);
            if (bad < model.n_params) { /* never write a poisoned checkpoint over a good one */
                nan_message("a weight", model.params_mem[bad], step, tc.out, last_good_step);
                rc = -1;
                break;
            }
            if (save(tc.out, &model, &tc, &data, adam_m, adam_v, step, &data_rng, train_loss, val_loss) != 0) {
                rc = -1;
                break;
            }
            last_good_step = step;
            if (!tc.quiet) progress_note(&prog, "step %ld: checkpoint written to %s", step, tc.out);
        }
        if (stopping) {
            res->interrupted = 1;
            res->signal = stop_requested;
            if (!tc.quiet)
                progress_note(&prog, "stopped at step %ld; continue with the same command plus --resume", step);
            break;
        }
    }
done:
    if (!tc.quiet) progress_done(&prog);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    res->step = step;
    res->train_loss = train_loss;
    res->val_loss = val_loss;
    free(inputs), free(targets), free(positions);
    free(adam_m), free(adam_v);
    model_free(&model);
    dataset_free(&data);
    tokenizer_free(&tok);
    return rc;

fail_model:
    free(adam_m), free(adam_v);
    model_free(&model);
fail_data:
    dataset_free(&data);
    tokenizer_free(&tok);
    return -1;
}
