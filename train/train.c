#include "train.h"

#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/blas.h"
#include "../core/cpu.h"
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
    tc->pose_chunks = 2;
    tc->sink_token = -1;
    tc->val_frac = 0.1f;
    tc->synth_bytes = 4 << 20;
    tc->eval_every = 200;
    tc->eval_windows = 64;
    tc->ckpt_every = 500;
    tc->log_every = 50;
    tc->converge_frac = 0.01f;
    tc->converge_abs = 0.01f;
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

static volatile sig_atomic_t stop_requested;
static void on_sigint(int sig) { stop_requested = sig; /* SIGINT or SIGTERM: the exit code tells which */ }

float evaluate_loss(Model *m, const Dataset *d, int T, int max_windows, int rand_pos) {
    size_t avail = dataset_val_windows(d, T), n = avail < (size_t)max_windows ? avail : (size_t)max_windows;
    int B = m->B;
    int *in = xmalloc(sizeof(int) * B * T), *tg = xmalloc(sizeof(int) * B * T), *pos = xmalloc(sizeof(int) * B * T);
    for (int i = 0; i < B * T; i++) pos[i] = i % T;
    if (rand_pos > 0) { /* positions drawn as training draws them, the same at every evaluation */
        Rng pos_rng;
        rng_seed(&pos_rng, 0x76616cULL);
        for (int b = 0; b < B; b++) rng_sorted_sample(&pos_rng, rand_pos, T, pos + b * T);
    }
    double total = 0.0, weight_sum = 0.0;
    for (size_t w0 = 0; w0 < n; w0 += B) {
        int nb = (int)(n - w0 < (size_t)B ? n - w0 : (size_t)B);
        for (int b = 0; b < nb; b++) /* windows spread evenly over the held-out part */
            dataset_val_window(d, (w0 + b) * avail / n, T, in + b * T, tg + b * T);
        if (model_forward(m, in, tg, pos, nb, T) != 0) {
            total = NAN;
            break;
        }
        /* a batch's mean is over its counted targets: with a loss mask (task answers) weigh it by them */
        double weight = nb;
        if (d->counted) {
            weight = 0;
            for (int i = 0; i < nb * T; i++) weight += tg[i] >= 0;
        }
        total += (double)m->mean_loss * weight;
        weight_sum += weight;
    }
    free(in), free(tg), free(pos);
    return weight_sum > 0 ? (float)(total / weight_sum) : NAN;
}

void pose_positions(Rng *rng, int T, int target, int chunks, int *out) {
    int *cuts = xmalloc(sizeof(int) * (chunks + 1)); /* chunk i is tokens [cuts[i], cuts[i+1]) */
    cuts[0] = 0, cuts[chunks] = T;
    rng_sorted_sample(rng, T - 1, chunks - 1, cuts + 1); /* distinct, from [0, T-1): +1 below */
    for (int i = 1; i < chunks; i++) cuts[i]++;
    int slack = target - T, skip = 0; /* skip: u_i, nondecreasing so the runs never overlap */
    for (int i = 0; i < chunks; i++) {
        if (i > 0) skip += (int)rng_below(rng, (uint64_t)(slack - skip + 1));
        for (int t = cuts[i]; t < cuts[i + 1]; t++) out[t] = t + skip;
    }
    free(cuts);
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
    meta_set(meta, "train.pose", "%d", tc->pose);
    meta_set(meta, "train.pose_chunks", "%d", tc->pose_chunks);
    meta_set(meta, "train.passkey_frac", "%.9g", tc->passkey_frac);
    meta_set(meta, "train.align_examples", "%d", tc->align_examples);
    meta_set(meta, "train.sink_token", "%d", tc->sink_token);
    meta_set(meta, "train.precision", "%s", precision_name(tc->precision));
    if (tc->converge) /* the rule decides the schedule: a resume must keep it */
        meta_set(meta, "train.converge", "frac %.9g abs %.9g from %ld", tc->converge_frac, tc->converge_abs,
                 tc->min_steps);
    else meta_set(meta, "train.converge", "off");
}

/* on resume every stored training key must equal this run's (train.steps may grow, but for resume_exact) */
static int check_resume_meta(const CkptMeta *stored, const TrainConfig *tc, const Dataset *d, const char *path) {
    CkptMeta now = {0};
    write_train_meta(&now, tc, d);
    for (int i = 0; i < now.n; i++) {
        const char *key = now.e[i].key, *old = meta_get(stored, key);
        if (strcmp(key, "train.steps") == 0 && !tc->resume_exact) continue;
        if (!old && strcmp(key, "train.passkey_frac") == 0) old = "0"; /* written before the flag existed */
        if (!old && strcmp(key, "train.align_examples") == 0) old = "0"; /* the same */
        if (!old && strcmp(key, "train.precision") == 0) old = "fp32";
        if (!old && strcmp(key, "train.pose") == 0) old = "0";
        if (!old && strcmp(key, "train.sink_token") == 0) old = "-1";
        if (!old && strcmp(key, "train.pose_chunks") == 0) old = "2";
        if (!old && strcmp(key, "train.converge") == 0) old = "off";
        if (!old) return pelab_fail("%s: cannot resume: the checkpoint has no '%s' (not written by pelab train)", path, key);
        if (strcmp(old, now.e[i].val) != 0)
            return pelab_fail("%s: cannot resume: %s is %s in the checkpoint but %s now; pass the same flags as the "
                              "original run",
                              path, key, old, now.e[i].val);
    }
    return 0;
}

/* the position scheme the flags describe: --pos, then --scale */
static int scheme_from_flags(const TrainConfig *tc, PosCtx *pc) {
    if (pos_init(pc, tc->pos, tc->dim, tc->heads, tc->kv_heads, tc->layers, tc->seq_len) != 0) return -1;
    if (tc->scale && pos_set_scale(pc, tc->scale) != 0) {
        pos_free(pc);
        return -1;
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
    PosCtx want; /* the shape flags equal the checkpoint's: the flags' scheme is comparable */
    if (scheme_from_flags(tc, &want) != 0) return -1;
    char a[POS_SPEC_MAX], b[POS_SPEC_MAX];
    pos_spec(&want, a, sizeof a);
    pos_spec(&m->pos, b, sizeof b);
    pos_free(&want);
    if (strcmp(a, b) != 0) return pelab_fail("%s: cannot resume: --pos is %s in the checkpoint but %s now", tc->out, b, a);
    AttnPattern flags = {0};
    if (tc->attn_pattern && pattern_parse(&flags, tc->attn_pattern) != 0) return -1;
    char pa[PATTERN_SPEC_MAX + 1], pb[PATTERN_SPEC_MAX + 1];
    pattern_spec(&flags, pa, sizeof pa), pattern_spec(&c->pattern, pb, sizeof pb);
    if (strcmp(pa, pb) != 0)
        return pelab_fail("%s: cannot resume: --attn-pattern is %s in the checkpoint but %s now", tc->out, pb, pa);
    return 0;
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static int save(const Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    const Dataset *d = &tr->data;
    CkptMeta meta = {0};
    write_train_meta(&meta, tc, d);
    meta_set(&meta, "step", "%ld", tr->step);
    meta_set(&meta, "data_rng", "%llu", (unsigned long long)tr->data_rng.state);
    meta_set(&meta, "train_loss", "%.9g", tr->train_loss);
    meta_set(&meta, "val_loss", "%.9g", tr->val_loss);
    /* the curve's running mean since its last row, exact: a run resumed between two rows writes the next
     * row as the run uninterrupted does */
    meta_set(&meta, "curve_loss", "%.17g %ld", tr->curve.loss_sum, tr->curve.loss_n);
    if (tr->cooldown_start >= 0) /* --converge: where the schedule turned, for a resume */
        meta_set(&meta, "cooldown", "%ld %ld %s", tr->cooldown_start, tr->cooldown_end, tr->plateaued ? "plateau" : "cap");
    if (d->tok && d->tok->image) meta.tokenizer_image = d->tok->image, meta.tokenizer_len = d->tok->image_len;
    return checkpoint_save(tc->out, &tr->model, &meta, tr->adam_m, tr->adam_v);
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

/* --- setup: every flag first, then the tokenizer, the data and the model --- */

/* the model shape the flags ask for (a new run, or the checkpoint a resumed run must match) */
static ModelConfig flag_model_config(const TrainConfig *tc, int vocab_size) {
    ModelConfig c = {.vocab_size = vocab_size, .dim = tc->dim, .n_layers = tc->layers, .n_heads = tc->heads,
                     .n_kv_heads = tc->kv_heads, .hidden_dim = tc->hidden, .seq_len = tc->seq_len,
                     .norm_eps = 1e-5f, .tied = tc->tied};
    if (tc->attn_pattern) pattern_parse(&c.pattern, tc->attn_pattern); /* checked by check_model_flags */
    return c;
}

/* randomized (--rand-pos N) and PoSE (--pose N) positions go up to N - 1: the scheme must accept
 * and compute all of them */
static int check_positions_fit(const PosCtx *pc, const TrainConfig *tc) {
    const char *flag = tc->pose > 0 ? "--pose" : "--rand-pos";
    int n = tc->pose > 0 ? tc->pose : tc->rand_pos;
    long table = pos_max_position(pc), computable = pos_computable_position(pc);
    if (n > 0 && table >= 0 && n > table)
        return pelab_fail("%s %d: positions up to %d are past the end of the %s position table (%ld "
                          "positions); use %s <= %ld",
                          flag, n, n - 1, pc->scheme->name, table, flag, table);
    if (n > 0 && computable >= 0 && n > computable)
        return pelab_fail("%s %d: positions up to %d are past the %ld positions the %s scheme can compute "
                          "in float32",
                          flag, n, n - 1, computable, pc->scheme->name);
    return 0;
}

/* the run's own flags: lengths, counts, shares. The optimizer's floats (lr, wd, clip, betas) are
 * not bounded here: `pelab train` bounds its flags, and a run they make diverge is stopped by the
 * NaN checks (the tests drive those with lr 1e30 and wd NaN). */
static int check_run_flags(const TrainConfig *tc) {
    if (tc->steps < 1) return pelab_fail("--steps %ld: expected at least 1", tc->steps);
    if (!tc->out || !*tc->out) return pelab_fail("--out: a checkpoint path is required");
    if (!tc->data || !*tc->data) return pelab_fail("--data: a file or synth:NAME is required");
    if (tc->seq_len < 1) return pelab_fail("--seq-len %d: expected at least 1", tc->seq_len);
    if (tc->batch < 1) return pelab_fail("--batch %d: expected at least 1", tc->batch);
    if (tc->warmup < -1) return pelab_fail("--warmup %d: expected -1 (5%% of --steps) or more", tc->warmup);
    if (!(tc->val_frac > 0.0f && tc->val_frac < 1.0f))
        return pelab_fail("--val-frac %g: expected a fraction strictly between 0 and 1", tc->val_frac);
    if (tc->synth_bytes < 1) return pelab_fail("--synth-bytes %ld: expected at least 1", tc->synth_bytes);
    PosExtend method; /* the backward knows no far branch nor sliding cache, and the spec keeps no method */
    if (tc->scale && extend_parse(tc->scale, &method) == 1)
        return pelab_fail("--scale %s: an extension method at inference (sample, score, eval); training takes a "
                          "scaling rule (pi:S, ntk:S, yarn:S, ...)", tc->scale);
    if (tc->eval_every < 0 || tc->ckpt_every < 0 || tc->log_every < 0 || tc->stop_after < 0)
        return pelab_fail("--eval-every %d, --ckpt-every %d, --log-every %d, --stop-after %ld: expected 0 or more",
                          tc->eval_every, tc->ckpt_every, tc->log_every, tc->stop_after);
    if (tc->eval_windows < 1) return pelab_fail("--eval-windows %d: expected at least 1", tc->eval_windows);
    if (tc->rand_pos < 0 || (tc->rand_pos > 0 && tc->rand_pos < tc->seq_len))
        return pelab_fail("--rand-pos %d: expected at least --seq-len %d distinct positions", tc->rand_pos,
                          tc->seq_len);
    if (tc->pose < 0 || (tc->pose > 0 && tc->pose < tc->seq_len))
        return pelab_fail("--pose %d: expected a target length of at least --seq-len %d", tc->pose, tc->seq_len);
    if (tc->pose > 0 && tc->rand_pos > 0)
        return pelab_fail("--pose %d: cannot be combined with --rand-pos (both choose the positions)", tc->pose);
    if (tc->pose > 0 && (tc->pose_chunks < 1 || tc->pose_chunks > tc->seq_len))
        return pelab_fail("--pose-chunks %d: expected 1 to --seq-len %d chunks", tc->pose_chunks, tc->seq_len);
    if (tc->align_examples && strncmp(tc->data, "task:", 5) != 0)
        return pelab_fail("--align-examples: needs --data task:SPEC (a stream of examples), got %s", tc->data);
    if (!(tc->passkey_frac >= 0.0f && tc->passkey_frac <= 1.0f))
        return pelab_fail("--passkey-frac %g: expected a share from 0 to 1", tc->passkey_frac);
    if (tc->converge && !(tc->converge_frac >= 0.0f && tc->converge_frac < 1.0f))
        return pelab_fail("--converge-frac %g: expected a fraction from 0 to below 1", tc->converge_frac);
    if (tc->converge && !(tc->converge_abs >= 0.0f))
        return pelab_fail("--converge-abs %g: expected 0 or more nats", tc->converge_abs);
    if (tc->min_steps < 0 || tc->min_steps > tc->steps)
        return pelab_fail("--min-steps %ld: expected 0 to --steps %ld", tc->min_steps, tc->steps);
    if (tc->converge && tc->eval_every < 1)
        return pelab_fail("--converge: needs --eval-every of at least 1 (the rule reads the validations)");
    return 0;
}

/* passkey rows need the byte tokenizer (--tokenizer, --init or the resumed checkpoint may bring
 * another) and room for a document. The tokenizer first: no --seq-len can fix that one. */
static int check_passkey(const TrainConfig *tc, const Tokenizer *tok) {
    if (tc->passkey_frac > 0 && tok->kind != TOK_BYTE)
        return pelab_fail("--passkey-frac: passkey documents are byte-level; this run uses the %s tokenizer",
                          tokenizer_kind_name(tok));
    if (tc->passkey_frac > 0 && tc->seq_len + 1 < PASSKEY_MIN_LEN)
        return pelab_fail("--passkey-frac: a passkey document needs --seq-len >= %d, got %d", PASSKEY_MIN_LEN - 1,
                          tc->seq_len);
    return 0;
}

/* the shape and scheme flags, when they describe the model (not with --init, whose checkpoint
 * brings both). The vocabulary is the tokenizer's, checked when the model is built. */
static int check_model_flags(const TrainConfig *tc) {
    if (tc->init) return 0;
    ModelConfig cfg = flag_model_config(tc, 256);
    if (config_validate(&cfg) != 0) return -1;
    AttnPattern pattern;
    if (tc->attn_pattern && pattern_parse(&pattern, tc->attn_pattern) != 0) return -1;
    PosCtx pc;
    if (scheme_from_flags(tc, &pc) != 0) return -1;
    int rc = check_positions_fit(&pc, tc);
    pos_free(&pc);
    return rc;
}

/* a run killed while writing its checkpoint leaves OUT.tmp.XXXXXX behind: the checkpoint itself is
 * whole (the old one or the new one), the temporary file only takes disk space */
static void remove_leftovers(const TrainConfig *tc) {
    int stale = remove_stale_temps(tc->out);
    if (stale && !tc->quiet)
        fprintf(stderr, "removed %d temporary file%s left by a killed run (%s.tmp.*)\n", stale, stale > 1 ? "s" : "",
                tc->out);
}

/* continue from cfg.out: weights, moments, step, data position, and the losses it stored */
static int resume_model(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    CkptMeta meta;
    if (checkpoint_load(tc->out, &tr->model, &meta, &tr->adam_m, &tr->adam_v) != 0) return -1;
    meta_free(&meta); /* the tokenizer image: training_tokenizer already read it */
    if (!tr->adam_m) return pelab_fail("%s: cannot resume: the checkpoint has no optimizer state", tc->out);
    if (check_resume_meta(&meta, tc, &tr->data, tc->out) != 0 || check_resume_model(&tr->model, tc) != 0) return -1;
    CkptTrainState st;
    if (checkpoint_train_state(&meta, tc->out, &st) != 0) return pelab_fail("cannot resume: %s", pelab_errmsg);
    tr->step = tr->last_good_step = st.step;
    tr->data_rng.state = st.data_rng;
    tr->train_loss = st.train_loss, tr->val_loss = st.val_loss;
    tr->cooldown_start = st.cooldown_start, tr->cooldown_end = st.cooldown_end, tr->plateaued = st.plateaued;
    tr->resume_loss_sum = st.curve_loss_sum, tr->resume_loss_n = st.curve_loss_n;
    if (!tc->quiet) fprintf(stderr, "resuming %s at step %ld\n", tc->out, tr->step);
    return 0;
}

/* --converge resumed in its stable phase: the rule will read the validations before the resumed
 * step, kept in the curve beside the checkpoint; without them it would judge other numbers than
 * the run uninterrupted */
static int check_resume_curve(const Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    if (!tc->converge || tr->cooldown_start >= 0 || tr->step < tc->eval_every) return 0;
    long due = tr->step - tr->step % tc->eval_every;
    const LossCurve *c = &tr->curve;
    if (c->n_val > 0 && c->val_step[c->n_val - 1] == due) return 0;
    char path[4200];
    curve_path(tc->out, path, sizeof path);
    return pelab_fail("%s: cannot resume --converge: its loss curve %s lacks the validation at step %ld (the "
                      "convergence rule reads the validations so far)", tc->out, path, due);
}

/* fine-tuning: cfg.init's weights and scheme, with the --scale rule and the new training length */
static int init_model(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    if (checkpoint_load(tc->init, &tr->model, NULL, NULL, NULL) != 0) return -1;
    /* a rotary rule keeps the original L (orig_len) while seq_len changes */
    if (tc->scale && pos_set_scale(&tr->model.pos, tc->scale) != 0) return -1;
    tr->model.cfg.seq_len = tc->seq_len;
    return 0;
}

static int create_model(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    ModelConfig cfg = flag_model_config(tc, tr->data.vocab_size);
    if (model_create(&tr->model, &cfg, tc->pos) != 0) return -1;
    if (tc->scale && pos_set_scale(&tr->model.pos, tc->scale) != 0) return -1;
    model_init_weights(&tr->model, tc->seed);
    return 0;
}

static int load_model(Trainer *tr, int resuming) {
    const TrainConfig *tc = &tr->cfg;
    int rc = resuming ? resume_model(tr) : tc->init ? init_model(tr) : create_model(tr);
    if (rc != 0) return -1;
    if (tr->model.cfg.vocab_size < tr->data.vocab_size)
        return pelab_fail("model vocab %d is smaller than the data's %d", tr->model.cfg.vocab_size,
                          tr->data.vocab_size);
    /* with --init the scheme is the checkpoint's: the flags could not be checked against it */
    return check_positions_fit(&tr->model.pos, tc);
}

/* the moments (zero for a new run), activations and one batch */
static void alloc_training(Trainer *tr) {
    Model *m = &tr->model;
    int B = tr->cfg.batch, T = tr->cfg.seq_len;
    if (!tr->adam_m) {
        tr->adam_m = xcalloc(m->n_params, sizeof(float));
        tr->adam_v = xcalloc(m->n_params, sizeof(float));
    }
    model_alloc_train(m, B, T);
    tr->inputs = xmalloc(sizeof(int) * B * T);
    tr->targets = xmalloc(sizeof(int) * B * T);
    tr->positions = xmalloc(sizeof(int) * B * T);
    for (int i = 0; i < B * T; i++) tr->positions[i] = i % T;
}

static void print_summary(const Trainer *tr) {
    const Model *m = &tr->model;
    const Dataset *d = &tr->data;
    char spec[256];
    pos_spec(&m->pos, spec, sizeof spec);
    fprintf(stderr, "model: %zu parameters, dim %d, %d layers, %d heads (%d kv), hidden %d, pos %s\n", m->n_params,
            m->cfg.dim, m->cfg.n_layers, m->cfg.n_heads, m->cfg.n_kv_heads, m->cfg.hidden_dim, spec);
    fprintf(stderr, "data: %s, %zu train + %zu validation tokens; batch %d x %d, %ld steps\n", d->name, d->n_train,
            d->n - d->n_train, tr->cfg.batch, tr->cfg.seq_len, tr->cfg.steps);
    char line[512]; /* tokens/s mean little without the kernels they ran on */
    blas_report(line, sizeof line);
    fprintf(stderr, "%s\n", line);
    if (m->precision == PRECISION_BF16)
        fprintf(stderr, "precision: bf16 weight products with fp32 accumulation (oneDNN), fp32 everything else\n");
    CpuIsa isa;
    cpu_isa(&isa);
    if (blas_narrow_kernels(blas_core_name(), &isa, line, sizeof line)) fprintf(stderr, "%s\n", line);
}

/* one writer per checkpoint (core/files.h's output_lock): a second run on the same --out would
 * interleave its checkpoints and curve rows with the first's. A held lock is never overridden: the
 * kernel releases it when its holder dies, so a held one is a live run. --force goes on without a
 * lock only where the file system cannot lock at all. */
static int lock_out(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    int unsupported;
    if (output_lock(&tr->lock, tc->out, &unsupported) == 0) return 0;
    if (!unsupported)
        return pelab_fail("%.400s; one run per checkpoint: wait for that run, stop it (SIGTERM: it checkpoints and "
                          "exits) or choose another --out", pelab_errmsg);
    if (!tc->force)
        return pelab_fail("%.400s; --force trains without the lock (then no other run may write it)", pelab_errmsg);
    if (!tc->quiet) fprintf(stderr, "%s; going on without the lock (--force)\n", pelab_errmsg);
    return 0;
}

int trainer_setup(Trainer *tr, const TrainConfig *tc_in) {
    memset(tr, 0, sizeof *tr);
    tokenizer_init_byte(&tr->tok);
    tr->train_loss = tr->val_loss = NAN;
    tr->last_good_step = -1;
    tr->cooldown_start = tr->cooldown_end = -1;
    TrainConfig *tc = &tr->cfg;
    *tc = *tc_in;
    if (tc->kv_heads == 0) tc->kv_heads = tc->heads;
    if (tc->hidden == 0) tc->hidden = 3 * tc->dim;
    tr->warmup = tc->warmup < 0 ? (int)(tc->steps / 20) : tc->warmup; /* the flag (-1 = 5%) is what is stored */
    if (check_run_flags(tc) != 0 || check_model_flags(tc) != 0) return -1;
    if (check_output_file(tc->out) != 0) return -1; /* before the data is read: not at the first checkpoint */
    if (lock_out(tr) != 0) return -1; /* before anything at OUT is read or removed */

    int resuming = tc->resume && file_exists(tc->out);
    int replacing = !resuming && file_exists(tc->out); /* an earlier run's checkpoint: its curve is kept */
    remove_leftovers(tc);
    if (training_tokenizer(tc, resuming, &tr->tok) != 0 || check_passkey(tc, &tr->tok) != 0) return -1;
    if (dataset_load_with(&tr->data, tc->data, &tr->tok, tc->val_frac, tc->seed, (size_t)tc->synth_bytes,
                          tc->seq_len) != 0)
        return -1;
    if (tc->sink_token >= tr->data.vocab_size)
        return pelab_fail("--sink-token %d: expected a token id below the vocabulary size %d", tc->sink_token,
                          tr->data.vocab_size);
    tr->data.has_sink = tc->sink_token >= 0, tr->data.sink_token = tc->sink_token;
    /* evaluation asks each prompt from position 0 with nothing before it; windows cut anywhere in the
     * stream begin mid-example instead (an answer without its prompt) */
    if (tc->align_examples) {
        if (tr->data.n_starts == 0)
            return pelab_fail("--align-examples: no example in %s starts a whole window of %d tokens", tc->data,
                              tc->seq_len);
        tr->data.aligned = 1;
    }
    rng_seed(&tr->data_rng, tc->seed * 0x9E3779B97F4A7C15ull + 1);
    if (load_model(tr, resuming) != 0) return -1;
    char why[160];
    if (tc->precision == PRECISION_BF16 && !bf16_native(why, sizeof why))
        return pelab_fail("--precision bf16: training needs native bf16 products: %s (on this CPU bf16 weights serve "
                          "sample, score and eval)", why);
    if (model_set_precision(&tr->model, tc->precision) != 0) return -1;
    alloc_training(tr);
    if (!tc->quiet) print_summary(tr);
    tr->opt = (AdamWConfig){.beta1 = tc->beta1, .beta2 = tc->beta2, .eps = 1e-8f, .weight_decay = tc->wd};
    progress_init(&tr->prog, tr->step, tc->steps, tc->log_every);
    if (tc->progress_prefix) snprintf(tr->prog.prefix, sizeof tr->prog.prefix, "%s", tc->progress_prefix);
    if (curve_open(&tr->curve, tc->out, resuming ? tr->step : 0, replacing) != 0) return -1;
    tr->curve.loss_sum = tr->resume_loss_sum, tr->curve.loss_n = tr->resume_loss_n;
    if (resuming && check_resume_curve(tr) != 0) return -1;
    if (tr->cooldown_start >= 0) tr->prog.total = tr->cooldown_end;
    tr->t0 = now_seconds();
    return 0;
}

void trainer_free(Trainer *tr) {
    curve_close(&tr->curve);
    output_unlock(&tr->lock); /* after the last write */
    free(tr->inputs), free(tr->targets), free(tr->positions);
    free(tr->adam_m), free(tr->adam_v);
    model_free(&tr->model);
    dataset_free(&tr->data);
    tokenizer_free(&tr->tok);
    tr->inputs = tr->targets = tr->positions = NULL;
    tr->adam_m = tr->adam_v = NULL;
}

/* --- the loop's parts --- */

/* the next batch: corpus windows mixed with passkey rows, and their positions */
static void next_batch(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    int B = tc->batch, T = tc->seq_len;
    passkey_mix_batch(&tr->data, &tr->data_rng, tc->passkey_frac, B, T, tr->inputs, tr->targets); /* frac 0: corpus only */
    if (tc->rand_pos > 0)
        for (int b = 0; b < B; b++) rng_sorted_sample(&tr->data_rng, tc->rand_pos, T, tr->positions + b * T);
    if (tc->pose > 0)
        for (int b = 0; b < B; b++) pose_positions(&tr->data_rng, T, tc->pose, tc->pose_chunks, tr->positions + b * T);
}

int trainer_step(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    Model *m = &tr->model;
    int B = tc->batch, T = tc->seq_len;
    next_batch(tr);
    model_zero_grad(m);
    if (model_forward(m, tr->inputs, tr->targets, tr->positions, B, T) != 0) return -1;
    tr->train_loss = m->mean_loss;
    if (!isfinite(tr->train_loss)) {
        nan_message("loss", tr->train_loss, tr->step + 1, tc->out, tr->last_good_step);
        return -1;
    }
    model_backward(m);
    float grad_norm = clip_grad_norm(m->grads_mem, m->n_params, tc->clip);
    if (!isfinite(grad_norm)) {
        nan_message("gradient norm", grad_norm, tr->step + 1, tc->out, tr->last_good_step);
        return -1;
    }
    tr->opt.lr = tc->converge ? lr_wsd(tr->step, tr->warmup, tr->cooldown_start, tr->cooldown_end, tc->lr, tc->min_lr_frac)
                              : lr_schedule(tr->step, tc->steps, tr->warmup, tc->lr, tc->min_lr_frac);
    adamw_update(m, tr->adam_m, tr->adam_v, &tr->opt, tr->step + 1);
    if (m->pos.scheme->after_update && m->tensors[T_POS].numel) m->pos.scheme->after_update(&m->pos, m->params.pos);
    model_sync_bf16(m); /* the next step's products see this step's weights, rounded once */
    if (tc->loss_log) tc->loss_log[tr->step] = tr->train_loss;
    curve_add_loss(&tr->curve, tr->train_loss);
    tr->step++;
    tr->steps_this_run++;
    tr->tokens_per_s = (double)tr->steps_this_run * B * T / (now_seconds() - tr->t0);
    if (!tc->quiet || tc->progress_line)
        progress_step(&tr->prog, tr->step, tr->train_loss, tr->opt.lr, tr->tokens_per_s);
    return 0;
}

float trainer_evaluate(Trainer *tr) {
    tr->val_loss = evaluate_loss(&tr->model, &tr->data, tr->cfg.seq_len, tr->cfg.eval_windows, tr->cfg.rand_pos);
    if (!tr->cfg.quiet) progress_note(&tr->prog, "step %ld: validation loss %.4f", tr->step, tr->val_loss);
    return tr->val_loss;
}

int trainer_checkpoint(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    const Model *m = &tr->model;
    size_t bad = first_non_finite(m->params_mem, m->n_params);
    if (bad < m->n_params) {
        nan_message("a weight", m->params_mem[bad], tr->step, tc->out, tr->last_good_step);
        return -1;
    }
    if (save(tr) != 0) { /* a full disk or a folder made read-only: say what is left to resume */
        if (tr->last_good_step >= 0)
            return pelab_fail("%s; stopped at step %ld. The checkpoint of step %ld is intact: --resume continues from "
                              "it once the folder can be written", pelab_errmsg, tr->step, tr->last_good_step);
        return pelab_fail("%s; stopped at step %ld, before any checkpoint of this run was written", pelab_errmsg,
                          tr->step);
    }
    tr->last_good_step = tr->step;
    char kept[4400]; /* this run's first checkpoint replaced an earlier run's: its curve replaces that one's */
    if (curve_commit(&tr->curve, kept, sizeof kept) != 0)
        return pelab_fail("%s; stopped at step %ld, its checkpoint written", pelab_errmsg, tr->step);
    if (kept[0] && !tc->quiet) progress_note(&tr->prog, "the earlier run's loss curve is kept as %s", kept);
    if (!tc->quiet) progress_note(&tr->prog, "step %ld: checkpoint written to %s", tr->step, tc->out);
    return 0;
}

/* --- the run --- */

static int due(long step, int every) { return every > 0 && step % every == 0; }

/* Ctrl-C and SIGTERM set stop_requested; the previous handlers go into old[2] */
static void catch_stop_signals(struct sigaction old[2]) {
    struct sigaction sa = {0};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C during a long step or save ends the process */
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    stop_requested = 0;
}

static void restore_signals(const struct sigaction old[2]) {
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

long trainer_end_step(const Trainer *tr) { return tr->cooldown_start >= 0 ? tr->cooldown_end : tr->cfg.steps; }

/* --converge: a cooldown of a quarter of the steps so far, a fifth of the run (Hagele et al. 2024:
 * a cooldown of 20% matches a cosine schedule of the same length) */
static long cooldown_steps(long step) { return (step + 3) / 4; }

/* --converge, in the stable phase: the cooldown must begin now, or it would run past cfg.steps */
static int cooldown_forced(const Trainer *tr) {
    return tr->cfg.converge && tr->cooldown_start < 0 && tr->step + cooldown_steps(tr->step) >= tr->cfg.steps;
}

/* --converge, after a validation in the stable phase: the cooldown begins when the rule holds (past
 * the warmup and --min-steps), or when it is forced */
static void maybe_cool_down(Trainer *tr) {
    const TrainConfig *tc = &tr->cfg;
    const LossCurve *c = &tr->curve;
    if (!tc->converge || tr->cooldown_start >= 0) return;
    int early, rule = curve_judge(c->val_step, c->val, c->n_val, tc->converge_frac, tc->converge_abs, &early);
    int plateau = rule == CURVE_CONVERGED && tr->step >= tc->min_steps && c->val_step[early] >= tr->warmup;
    if (!plateau && !cooldown_forced(tr)) return;
    long end = tr->step + cooldown_steps(tr->step);
    tr->cooldown_start = tr->step, tr->cooldown_end = end < tc->steps ? end : tc->steps, tr->plateaued = plateau;
    tr->prog.total = tr->cooldown_end;
    if (!tc->quiet)
        progress_note(&tr->prog, "step %ld: %s; cooling down to step %ld", tr->step,
                      plateau ? "validation loss converged (the rule holds)" : "no convergence before the cap",
                      tr->cooldown_end);
}

/* one step of a run and what falls due after it (validation, the convergence rule, checkpoint, a
 * requested stop): 1 when the run is over, 0 when it goes on, -1 with pelab_errmsg */
static int run_step(Trainer *tr, TrainResult *res) {
    const TrainConfig *tc = &tr->cfg;
    if (tr->step >= trainer_end_step(tr)) return 1; /* a finished run resumed */
    if (trainer_step(tr) != 0) return -1;
    int stopping = stop_requested || (tc->stop_after > 0 && tr->steps_this_run >= tc->stop_after);
    int validated = due(tr->step, tc->eval_every) || tr->step == trainer_end_step(tr) || cooldown_forced(tr);
    if (validated) trainer_evaluate(tr);
    /* no row of its own at a stop: the curve of a run stopped and resumed is the uninterrupted run's */
    if ((validated || due(tr->step, tc->log_every)) &&
        curve_row(&tr->curve, tr->step, tr->step * (long)tc->batch * tc->seq_len, tr->opt.lr,
                  validated ? tr->val_loss : NAN) != 0)
        return -1;
    if (validated) maybe_cool_down(tr);
    int last = tr->step == trainer_end_step(tr);
    if ((due(tr->step, tc->ckpt_every) || last || stopping) && trainer_checkpoint(tr) != 0) return -1;
    if (stopping) {
        res->interrupted = 1;
        res->signal = stop_requested;
        if (!tc->quiet)
            progress_note(&tr->prog, "stopped at step %ld; continue with the same command plus --resume", tr->step);
        return 1;
    }
    return last;
}

/* the next run a free thread should step: the one with the fewest steps that no thread holds (the
 * runs stay within a step of each other), -1 when none is free */
static int pick_run(const long *done, const int *state, int n) {
    int best = -1;
    for (int k = 0; k < n; k++)
        if (state[k] == 0 && (best < 0 || done[k] < done[best])) best = k;
    return best;
}

int lockstep_run(int n, int threads, int (*step)(void *ctx, int k), void *ctx) {
    int *state = xcalloc((size_t)n, sizeof(int)), failed = -1; /* state: 0 free, 1 held, 2 over */
    long *done = xcalloc((size_t)n, sizeof(long));
#pragma omp parallel num_threads(threads < n ? threads : n)
    for (;;) {
        int k;
#pragma omp critical(lockstep_pick)
        {
            k = failed >= 0 ? -1 : pick_run(done, state, n);
            if (k >= 0) state[k] = 1;
        }
        if (k < 0) break;
        int rc = step(ctx, k);
#pragma omp critical(lockstep_pick)
        {
            state[k] = rc != 0 ? 2 : 0;
            done[k]++;
            if (rc < 0 && failed < 0) failed = k;
        }
    }
    free(state), free(done);
    return failed;
}

typedef struct {
    Trainer *tr;
    TrainResult *res;
    char (*errs)[512];
} Runs;

static int step_one(void *ctx, int k) {
    Runs *r = ctx;
    int rc = run_step(&r->tr[k], &r->res[k]);
    if (rc < 0) snprintf(r->errs[k], sizeof r->errs[k], "%s", pelab_errmsg); /* this thread's message */
    return rc;
}

static void fill_result(const Trainer *tr, TrainResult *res) {
    res->step = tr->step;
    res->resumed_from = tr->step - tr->steps_this_run;
    res->train_loss = tr->train_loss;
    res->val_loss = tr->val_loss;
    res->tokens_per_s = tr->tokens_per_s;
    res->cooldown_start = tr->cooldown_start;
    res->plateaued = tr->plateaued;
}

int train_run_many(const TrainConfig *tcs, int n, TrainResult *res) {
    Trainer *tr = xcalloc((size_t)n, sizeof(Trainer));
    int rc = 0;
    for (int k = 0; k < n; k++) {
        memset(&res[k], 0, sizeof res[k]);
        res[k].val_loss = NAN;
    }
    for (int k = 0; k < n && rc == 0; k++)
        if (trainer_setup(&tr[k], &tcs[k]) != 0) {
            char why[512]; /* pelab_fail writes where the message is */
            snprintf(why, sizeof why, "%s", pelab_errmsg);
            if (n > 1) pelab_fail("seed %llu: %.480s", tcs[k].seed, why);
            rc = -1;
        }
    for (int k = 0; k < n && rc == 0; k++) tr[k].t0 = now_seconds(); /* not the later seeds' setup */
    if (rc == 0) {
        struct sigaction old[2];
        catch_stop_signals(old);
        if (n == 1) { /* no region: a big model's loops and products use every thread themselves */
            int r;
            while ((r = run_step(&tr[0], &res[0])) == 0) {}
            rc = r < 0 ? -1 : 0;
        } else {
            char(*errs)[512] = xcalloc((size_t)n, sizeof *errs);
            int threads = omp_get_max_threads();
            for (int k = 0; k < n; k++) /* bf16's workspaces and primitive cache are shared: one run at a time */
                if (tr[k].model.precision != PRECISION_FP32) threads = 1;
            Runs runs = {tr, res, errs};
            int failed = lockstep_run(n, threads, step_one, &runs);
            if (failed >= 0) {
                pelab_fail("seed %llu: %.480s", tcs[failed].seed, errs[failed]);
                rc = -1;
            }
            free(errs);
        }
        for (int k = 0; k < n; k++)
            if (!tcs[k].quiet || tcs[k].progress_line) progress_done(&tr[k].prog);
        restore_signals(old);
    }
    for (int k = 0; k < n; k++) {
        fill_result(&tr[k], &res[k]);
        trainer_free(&tr[k]);
    }
    free(tr);
    return rc;
}

int train_run(const TrainConfig *tc, TrainResult *res) { return train_run_many(tc, 1, res); }

int train_check_shape(const TrainConfig *tc) {
    TrainConfig t = *tc; /* with the defaults trainer_setup resolves */
    if (t.kv_heads == 0) t.kv_heads = t.heads;
    if (t.hidden == 0) t.hidden = 3 * t.dim;
    ModelConfig cfg = flag_model_config(&t, 256);
    return config_validate(&cfg);
}
