/* compare.c: the runs of a compare: train one model per (scheme, seed) with the same data, budget
 * and seed, evaluate each at mult x L under both protocols (and the RoPE models under post-hoc
 * scaling rules and after a short PI fine-tune), one CSV per run; the report reads them (report.c).
 * A run whose CSV exists is skipped, so an interrupted compare resumes. The commands on top:
 * `pelab compare` (tools/compare_cmd.c: flags, --jobs, --collect) and `pelab demo` (one seed). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/stats.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../data/dataset.h"
#include "../infer/eval.h"
#include "../infer/passkey.h"
#include "../model/pattern.h"
#include "../model/pos/pos.h"
#include "../train/progress.h"
#include "compare.h"
#include "compare_gen.h"
#include "compare_plan.h"
#include "compare_task.h"
#include "jobs.h"

/* passkey accuracy at one length into *acc: exact match over a few depths (-1: not measurable); -1
 * with pelab_errmsg */
static int passkey_accuracy(const Compare *c, Model *m, int len, unsigned long long seed, double *acc) {
    *acc = -1;
    if (len < PASSKEY_MIN_LEN || !passkey_length_ok(m, len)) return 0;
    static const int depths[] = {10, 50, 90};
    PasskeyModel pm;
    PasskeyScorer sc;
    passkey_model_init(&pm, m, len);
    passkey_model_scorer(&pm, &sc);
    int exact = 0, n = 0;
    for (int j = 0; j < 3; j++) {
        PasskeyCell cell;
        if (passkey_cell(&sc, len, depths[j], 10, seed, &cell) != 0) {
            passkey_model_free(&pm);
            return pelab_fail("%s: passkey: %s", c->name, pelab_errmsg);
        }
        exact += cell.exact, n += cell.trials;
    }
    passkey_model_free(&pm);
    if (n) *acc = (double)exact / n;
    return 0;
}

/* every length of one loaded model into the CSV, its rows labelled rule; -1 with pelab_errmsg */
static int evaluate_model(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                           FILE *f) {
    int n_protocols = c->nonoverlap_only ? 1 : EVAL_N_PROTOCOLS;
    for (int l = 0; l < c->n_lengths; l++) {
        int len = c->lens[l];
        EvalLength e;
        /* stride = len is the non-overlapping computation only (eval_length reuses it); a dynamic
         * rule under the window's length, `pelab eval`'s default */
        if (eval_length_sink(m, held, n_held, len, c->nonoverlap_only ? len : 0, DYNAMIC_WINDOW, CMP_BUCKETS,
                             c->base.sink_token, &e) != 0)
            return pelab_fail("%s: rule %s, length %d: %s", c->name, rule, len, pelab_errmsg);
        CmpRow w;
        for (int p = 0; p < n_protocols; p++) {
            compare_row(&w, c, m, "length", s, k, rule, len, eval_protocol_names[p]);
            if (e.status == EVAL_OK) w.r.value = eval_mean(&e.proto[p]);
            w.r.status = eval_result_status(&e), w.r.limit = e.limit;
            w.r.n = (long long)e.proto[p].n_scored, w.r.ci_lo = e.ci_lo[p], w.r.ci_hi = e.ci_hi[p];
            compare_row_write(f, &w);
        }
        for (int b = 0; e.status == EVAL_OK && b < e.n_buckets; b++) {
            if (!e.bucket_n[b]) continue;
            int lo, hi;
            eval_bucket_range(b, len, e.n_buckets, &lo, &hi);
            compare_row(&w, c, m, "bucket", s, k, rule, len, eval_protocol_names[EVAL_NONOVERLAP]);
            w.r.value = e.bucket_sum[b] / e.bucket_n[b], w.r.bucket = b, w.r.pos_lo = lo, w.r.pos_hi = hi;
            w.r.n = (long long)e.bucket_n[b];
            compare_row_write(f, &w);
        }
        eval_length_free(&e);
        if (c->passkey_frac > 0) {
            double acc;
            if (passkey_accuracy(c, m, len, c->seed[k], &acc) != 0) return -1;
            compare_row(&w, c, m, "passkey", s, k, rule, len, "passkey");
            w.r.status = acc >= 0 ? RES_OK : RES_NA, w.r.n = acc >= 0 ? 30 : 0;
            if (acc >= 0) { /* 30 trials, right or not: the bootstrap of a proportion */
                double right[30], one[30];
                for (int t = 0; t < 30; t++) right[t] = t < (int)floor(acc * 30 + 0.5), one[t] = 1;
                stats_bootstrap_ratio(right, one, 30, STATS_BOOTSTRAP_REPS, c->seed[k], 0.95, &w.r.ci_lo, &w.r.ci_hi);
                w.r.value = acc, w.r.digits = 4;
            }
            compare_row_write(f, &w);
        }
    }
    return 0;
}

/* The language-modelling gate's bound (README: verdicts), a row of kind gate, protocol unigram:
 * the cross-entropy of the evaluated held-out tokens under the training split's token frequencies
 * (add-one smoothed), what a model that reads no context can reach. A run whose loss at L is not
 * below it diverged or learned nothing from its context. */
static void unigram_row(const Compare *c, int s, int k, const Model *m, const Dataset *d, const int *held,
                        size_t n_held, FILE *f) {
    double *count = xcalloc((size_t)d->vocab_size, sizeof(double)), total = 0;
    for (size_t i = 0; i < d->n_train; i++)
        if (d->tokens[i] >= 0 && d->tokens[i] < d->vocab_size) count[d->tokens[i]]++;
    double norm = (double)d->n_train + d->vocab_size;
    size_t n = 0;
    for (size_t i = 0; i < n_held; i++)
        if (held[i] >= 0 && held[i] < d->vocab_size) total -= log((count[held[i]] + 1) / norm), n++;
    free(count);
    CmpRow w;
    compare_row(&w, c, m, "gate", s, k, "none", c->base.seq_len, "unigram");
    if (n) w.r.value = total / (double)n, w.r.n = (long long)n;
    else w.r.status = RES_NA;
    compare_row_write(f, &w);
}

int compare_check_data(const Compare *c) {
    if (c->task) return 0; /* fresh task examples of each length, no held-out text */
    Dataset d = {0};
    if (dataset_load(&d, c->data, c->base.val_frac, c->seed[0], (size_t)c->base.synth_bytes, c->base.seq_len) != 0)
        return -1;
    size_t n_held = d.n - d.n_train;
    if (c->eval_tokens > 0 && n_held > (size_t)c->eval_tokens) n_held = (size_t)c->eval_tokens;
    dataset_free(&d);
    int longest = 0;
    for (int l = 0; l < c->n_lengths; l++) longest = c->lens[l] > longest ? c->lens[l] : longest;
    if ((size_t)longest + 1 > n_held)
        return pelab_fail("length %d needs %d held-out tokens (a window of inputs and the next one); %s holds %zu%s "
                          "(give a longer --data, more --synth-bytes or a larger --eval-tokens)",
                          longest, longest + 1, c->data, n_held,
                          c->eval_tokens > 0 && n_held == (size_t)c->eval_tokens ? " under --eval-tokens" : "");
    return 0;
}

/* One checkpoint into the CSV: a trained model (ft_label NULL) as stored and under each post-hoc
 * rule (when its scheme takes rules), or a fine-tuned one as stored (its rule is in the
 * checkpoint), labelled ft_label. -1 with pelab_errmsg */
static int evaluate_run(const Compare *c, int s, int k, const char *ckpt, const char *ft_label, FILE *f) {
    Dataset d = {0};
    /* the very data the run trained on (at L: the same split); its held-out tail is the evaluation
     * text. A task run is scored on fresh examples instead. */
    if (!c->task &&
        dataset_load(&d, c->data, c->base.val_frac, c->seed[k], (size_t)c->base.synth_bytes, c->base.seq_len) != 0)
        return pelab_fail("%s: %s", c->name, pelab_errmsg);
    const int *held = d.tokens + d.n_train;
    size_t n_held = d.n - d.n_train;
    if (c->eval_tokens > 0 && n_held > (size_t)c->eval_tokens) n_held = (size_t)c->eval_tokens;
    int n_rules = !ft_label ? 1 + c->n_rules : 1;
    char base_ckpt[1200]; /* key tokens from the run as trained, so a fine-tune is scored on the same ones */
    compare_run_path(c, s, k, ".safetensors", base_ckpt, sizeof base_ckpt);
    size_t n_key_tokens = 0;
    /* a sink-token model: generation, the loss jump and key tokens read the text without the sink
     * its windows were trained with, so they are not computed (the loss by length is) */
    int gen = !c->task && c->base.sink_token < 0;
    unsigned char *key = NULL;
    int rc = gen ? compare_key_tokens(c, base_ckpt, held, n_held, &n_key_tokens, &key) : 0;
    for (int r = 0; r < n_rules && rc == 0; r++) {
        if (r > 0 && !compare_takes_rule(c, s, r - 1)) continue;
        const char *rule = r == 0 ? "none" : c->rule[r - 1];
        Model m;
        if (eval_load_rule(ckpt, rule, c->base.precision, &m, NULL) != 0) {
            rc = pelab_fail("%s: %s: rule %s: %s", c->name, ckpt, rule, pelab_errmsg);
            break;
        }
        if (c->task) rc = compare_task_rows(c, s, k, &m, rule, f);
        else rc = evaluate_model(c, s, k, &m, ft_label ? ft_label : rule, held, n_held, f);
        if (rc == 0 && !c->task && !ft_label && r == 0) unigram_row(c, s, k, &m, &d, held, n_held, f);
        if (rc == 0 && gen)
            rc = compare_gen_rows(c, s, k, &m, ft_label ? ft_label : rule, held, n_held, key, n_key_tokens, f);
        model_free(&m);
    }
    free(key);
    if (!c->task) dataset_free(&d);
    return rc;
}

/* compare_run_all's progress: runs done of all, their rate and the time left, a line per finished
 * run; on a terminal each training's step line starts with them, redrawn in place. One compare
 * runs at a time in a process (suite runs its protocols one after another). */
static Progress runs_progress;
static int runs_done;
static char runs_prefix[200];
/* the exit status the last failure asks for: 128 + the signal that stopped a training, else 1 */
static int stop_status = 1;

int compare_stop_status(void) { return stop_status; }

/* tc shows its step line (on a terminal only), after the runs' progress and the run's name */
static void show_steps(TrainConfig *tc, const char *name) {
    const Progress *p = &runs_progress;
    if (!p->tty) return;
    double elapsed = now_seconds() - p->t_start, here = runs_done - p->done0;
    char eta[32] = "?";
    if (here > 0) progress_format_eta(eta, sizeof eta, elapsed / here * (p->total - runs_done));
    snprintf(runs_prefix, sizeof runs_prefix, "[%s %d/%ld runs, ETA %s] %s: ", p->what, runs_done, p->total, eta, name);
    tc->progress_line = 1, tc->progress_prefix = runs_prefix;
}

/* trains tc (what: "train" or "fine-tune", ft_label: the fine-tune's rule column or NULL), resuming
 * its checkpoint when one is there, and evaluates it into csv, written under a temporary name and
 * renamed: a CSV that exists is a finished run. A run stopped by a signal keeps its checkpoint and
 * fails, asking for the shell's code (128 + the signal, compare_stop_status): a job engine reruns
 * it, and it resumes. The steps trained here (0: the checkpoint was finished already), or -1 with
 * pelab_errmsg. */
static long train_and_evaluate(const Compare *c, int s, int k, const TrainConfig *tc, const char *what,
                               const char *ft_label, const char *csv, int idx, int total, const TrainResult *done) {
    double t0 = now_seconds();
    fprintf(stderr, "%s: [%d/%d] %s %s seed %llu", c->name, idx, total, what, c->scheme[s], c->seed[k]);
    if (ft_label) fprintf(stderr, " with %s at length %d, %ld steps", tc->scale, tc->seq_len, tc->steps);
    if (ft_label && tc->pose) fprintf(stderr, ", PoSE positions in [0, %d)", tc->pose);
    fprintf(stderr, "%s -> %s\n", done ? " (side by side, done)" : "", tc->out);
    TrainResult tr;
    TrainConfig shown = *tc;
    char name[200];
    snprintf(name, sizeof name, "%s %s seed %llu", what, c->scheme[s], c->seed[k]);
    show_steps(&shown, name);
    if (done) tr = *done; /* trained side by side with the scheme's other seeds (train_scheme_seeds) */
    else if (train_run(&shown, &tr) != 0)
        return pelab_fail("%s: %s %s seed %llu: %s", c->name, what, c->scheme[s], c->seed[k], pelab_errmsg);
    if (tr.interrupted) {
        stop_status = tr.signal ? 128 + tr.signal : 1;
        return pelab_fail("%s: %s %s seed %llu: stopped at step %ld by signal %d; the checkpoint %s is kept: the "
                          "same command resumes it", c->name, what, c->scheme[s], c->seed[k], tr.step, tr.signal,
                          tc->out);
    }
    if (tr.resumed_from > 0)
        fprintf(stderr, "%s: [%d/%d] %s %s seed %llu: resumed from its checkpoint at step %ld\n", c->name, idx, total,
                what, c->scheme[s], c->seed[k], tr.resumed_from);
    double t1 = now_seconds();
    /* composed in memory, written whole: a CSV that exists is a finished run, whatever stops this one */
    MemFile mf;
    FILE *f = memfile_open(&mf);
    if (!f) return pelab_fail("%s: %s", c->name, pelab_errmsg);
    results_csv_header(f, &RES_COMPARE_CSV);
    if (evaluate_run(c, s, k, tc->out, ft_label, f) != 0) {
        memfile_discard(&mf);
        return -1;
    }
    if (memfile_commit(&mf, csv) != 0) return pelab_fail("%s: %s", c->name, pelab_errmsg);
    char val[160] = "checkpoint reused"; /* a finished run resumed: no step, no validation */
    if (!isnan(tr.val_loss)) snprintf(val, sizeof val, "val_loss %.4f", tr.val_loss);
    if (!isnan(tr.val_loss) && tc->converge && tr.cooldown_start >= 0)
        snprintf(val + strlen(val), sizeof val - strlen(val), ", %ld steps: %s at step %ld", tr.step,
                 tr.plateaued ? "converged" : "still improving at the cap's cooldown", tr.cooldown_start);
    fprintf(stderr, "%s: [%d/%d] %s seed %llu: %s %.1f s (%s), eval %.1f s -> %s\n", c->name, idx, total, c->scheme[s],
            c->seed[k], what, t1 - t0, val, now_seconds() - t1, csv);
    return tr.step - tr.resumed_from;
}

static int skip_finished(const char *csv) {
    if (access(csv, F_OK) != 0) return 0;
    const char *name = strrchr(csv, '/') ? strrchr(csv, '/') + 1 : csv;
    printf("skip %.*s (%s exists)\n", (int)(strlen(name) - 4), name, csv);
    fflush(stdout);
    return 1;
}

/* the training config of run (s, k) writing checkpoint out: the shared one with the run's scheme,
 * randomized positions, attention pattern and seed */
static TrainConfig run_config(const Compare *c, int s, int k, const char *out) {
    TrainConfig tc = c->base;
    tc.pos = c->pos[s], tc.rand_pos = c->rand_pos[s], tc.seed = c->seed[k], tc.out = out;
    tc.attn_pattern = c->attn[s][0] ? c->attn[s] : NULL;
    return tc;
}

/* A fine-tune recipe on a trained run whose scheme takes rules: its weights, pi:S, a short budget;
 * PI at length S x L, or PoSE at length L with positions skipping into [0, S x L) for as many tokens.
 * base_retrained: the run was (re)trained just now, so an older fine-tune of it is stale. -1 with
 * pelab_errmsg */
static int finetune_one(const Compare *c, int kind, int s, int k, const char *base_ckpt, int base_retrained, int idx,
                         int total) {
    char ckpt[1200], csv[1200];
    compare_finetune_path(c, kind, s, k, ".safetensors", ckpt, sizeof ckpt);
    compare_finetune_path(c, kind, s, k, ".csv", csv, sizeof csv);
    if (base_retrained) remove(csv), remove(ckpt);
    else if (skip_finished(csv)) return 0;
    if (access(base_ckpt, F_OK) != 0)
        return pelab_fail("%s: cannot fine-tune %s_s%llu: %s is missing (remove its CSV to retrain the run)", c->name,
                          c->tag[s], c->seed[k], base_ckpt);
    TrainConfig tc = run_config(c, s, k, ckpt);
    tc.init = base_ckpt, tc.scale = c->finetune_rule;
    tc.seq_len = kind == FT_POSE ? c->base.seq_len : compare_finetune_len(c);
    tc.pose = kind == FT_POSE ? compare_finetune_len(c) : 0;
    tc.steps = compare_finetune_steps(c, kind); /* same batch: fewer rows recovered worse */
    tc.eval_every = tc.steps / 20 > 0 ? (int)(tc.steps / 20) : 1, tc.log_every = tc.eval_every; /* its curve */
    tc.lr = c->finetune_lr, tc.warmup = -1; /* 5% of the fine-tune, whatever the base run's warmup */
    tc.converge = 0, tc.min_steps = 0;      /* a fixed budget: its recipe's, whatever the run's rule */
    tc.resume = 1; /* a fine-tune checkpoint without its CSV (stopped in training or evaluation) continues */
    return train_and_evaluate(c, s, k, &tc, kind == FT_POSE ? "PoSE fine-tune" : "fine-tune",
                              c->finetune_label[kind], csv, idx, total, NULL) < 0 ? -1 : 0;
}

/* train + evaluate one (scheme, seed), then its fine-tune; each skipped when its CSV exists.
 * done: NULL, or the run was trained already (train_scheme_seeds) and only its evaluation is due.
 * 1 when the run trained here, 0 when it was finished, -1 with pelab_errmsg */
static int run_one(const Compare *c, int s, int k, int idx, int total, const TrainResult *done) {
    char ckpt[1200], csv[1200];
    compare_run_path(c, s, k, ".safetensors", ckpt, sizeof ckpt);
    compare_run_path(c, s, k, ".csv", csv, sizeof csv);
    int trained = 0;
    if (done || c->fresh || !skip_finished(csv)) {
        TrainConfig tc = run_config(c, s, k, ckpt);
        tc.resume = c->base.resume && !c->fresh;
        long steps = train_and_evaluate(c, s, k, &tc, "train", NULL, csv, idx, total, done);
        if (steps < 0) return -1;
        trained = steps > 0;
    }
    for (int kind = 0; kind < FT_KINDS; kind++)
        if (compare_finetunes_with(c, s, kind) && finetune_one(c, kind, s, k, ckpt, trained, idx, total) != 0) return -1;
    return trained;
}

int compare_make_runs_dir(const Compare *c) {
    if (strlen(c->out) > 1000)
        return pelab_fail("%s: --out: the directory path is %zu bytes; at most 1000 are supported", c->name,
                          strlen(c->out));
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/runs", c->out);
    return make_dirs(dir) != 0 ? pelab_fail("%s: %s", c->name, pelab_errmsg) : 0;
}

/* The scheme's runs still to train (no CSV yet, or --fresh), when there are two or more: trained
 * side by side in this process (train --seeds, train_run_many; each checkpoint as if trained
 * alone), their results into done[k], marked in trained[k]. One run takes the usual path. -1 with
 * pelab_errmsg */
static int train_scheme_seeds(const Compare *c, int s, TrainResult *done, int *trained) {
    TrainConfig tcs[CMP_MAX_SEEDS];
    TrainResult res[CMP_MAX_SEEDS];
    char ckpt[CMP_MAX_SEEDS][1200], csv[1200];
    int ks[CMP_MAX_SEEDS], n = 0;
    for (int k = 0; k < c->n_seeds; k++) {
        compare_run_path(c, s, k, ".csv", csv, sizeof csv);
        if (!c->fresh && access(csv, F_OK) == 0) continue;
        compare_run_path(c, s, k, ".safetensors", ckpt[n], sizeof ckpt[n]);
        tcs[n] = run_config(c, s, k, ckpt[n]);
        tcs[n].resume = c->base.resume && !c->fresh;
        tcs[n].quiet = c->base.quiet || n > 0; /* one progress line: the first seed's */
        ks[n++] = k;
    }
    if (n < 2) return 0;
    char name[200];
    snprintf(name, sizeof name, "%s, %d seeds", c->scheme[s], n);
    show_steps(&tcs[0], name);
    double t0 = now_seconds();
    fprintf(stderr, "%s: training %s, %d seeds side by side\n", c->name, c->scheme[s], n);
    if (train_run_many(tcs, n, res) != 0) return pelab_fail("%s: train %s: %s", c->name, c->scheme[s], pelab_errmsg);
    fprintf(stderr, "%s: %s: %d seeds trained in %.1f s\n", c->name, c->scheme[s], n, now_seconds() - t0);
    for (int i = 0; i < n; i++) done[ks[i]] = res[i], trained[ks[i]] = 1;
    return 0;
}

/* the runs this compare_run_all trains (none when --seeds auto skips the scheme), and those already
 * finished (a CSV, not --fresh) */
static int runs_planned(const Compare *c, int *finished) {
    int n = 0;
    *finished = 0;
    for (int s = 0; s < c->n_schemes; s++)
        for (int k = 0; k < c->n_seeds && !c->skip_scheme[s]; k++) {
            char csv[1200];
            compare_run_path(c, s, k, ".csv", csv, sizeof csv);
            n++;
            *finished += !c->fresh && access(csv, F_OK) == 0;
        }
    return n;
}

int compare_run_all(const Compare *c, const char *only) {
    stop_status = 1;
    /* what the flags' ranges accept but no run can use (heads not dividing dim; a length the
     * evaluation, with its key tokens at L/4 and L, cannot), refused before the first run */
    if (train_check_shape(&c->base) != 0) return pelab_fail("%s: %s", c->name, pelab_errmsg);
    if (c->base.seq_len < 2)
        return pelab_fail("%s: --seq-len %d: the evaluation needs a training length of at least 2 (key tokens "
                          "compare contexts L/4 and L)", c->name, c->base.seq_len);
    if (compare_make_runs_dir(c) != 0) return -1;
    int total = c->n_schemes * c->n_seeds, idx = 0, found = 0, finished;
    int planned = runs_planned(c, &finished);
    /* a job (--only) is one run: its engine's log, no line of its own */
    progress_count_init(&runs_progress, stderr, !only && isatty(fileno(stderr)), c->name, "runs", 1, planned, finished,
                        0);
    runs_done = finished;
    for (int s = 0; s < c->n_schemes; s++) {
        TrainResult done[CMP_MAX_SEEDS];
        int trained[CMP_MAX_SEEDS] = {0};
        if (c->skip_scheme[s]) { /* --seeds auto: its pairs are decided */
            idx += c->n_seeds;
            continue;
        }
        if (!only && train_scheme_seeds(c, s, done, trained) != 0) return -1;
        for (int k = 0; k < c->n_seeds; k++) {
            idx++;
            char name[200];
            snprintf(name, sizeof name, "%s_s%llu", c->tag[s], c->seed[k]);
            if (only && strcmp(only, name) != 0) continue;
            found = 1;
            int ran = run_one(c, s, k, idx, total, trained[k] ? &done[k] : NULL);
            if (ran < 0) return -1;
            if (ran && !only) {
                char name[200];
                snprintf(name, sizeof name, "%s seed %llu done", c->scheme[s], c->seed[k]);
                progress_count(&runs_progress, ++runs_done, -1, 1, name);
            }
        }
    }
    if (only && !found) return pelab_fail("%s: --only %s: no such run (runs are SCHEME_sSEED)", c->name, only);
    return 0;
}

void compare_set_cmdline(Compare *c, int argc, char **argv) {
    sb_free(&c->cmdline);
    sb_puts(&c->cmdline, "pelab");
    for (int i = 0; i < argc; i++) {
        sb_put(&c->cmdline, " ", 1);
        shell_quote(&c->cmdline, argv[i]);
    }
}

int compare_run_finished(const Compare *c, int s, int k) {
    char csv[1200];
    compare_run_path(c, s, k, ".csv", csv, sizeof csv);
    if (access(csv, F_OK) != 0) return 0;
    for (int kind = 0; kind < FT_KINDS; kind++) {
        if (!compare_finetunes_with(c, s, kind)) continue;
        compare_finetune_path(c, kind, s, k, ".csv", csv, sizeof csv);
        if (access(csv, F_OK) != 0) return 0;
    }
    return 1;
}

/* --schemes "rope:base=500,scale=pi:2,alibi": split at commas, but a piece whose text before its
 * first '=' has no ':' ("scale=pi:2") is another option of the spec before it, so that a spec with
 * several options can be listed as written for --pos */
static int split_schemes(Compare *c, const char *list) {
    char *buf = strdup(list);
    if (!buf) return pelab_fail("%s: out of memory", c->name);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int option = scheme_piece_continues(n ? c->scheme[n - 1] : NULL, t, strlen(t));
        if (option && n == 0) return pelab_fail("%s: --schemes: '%s' is an option with no scheme before it", c->name, t), free(buf), -1;
        if (option) {
            char *spec = c->scheme[n - 1];
            if (strlen(spec) + 1 + strlen(t) >= sizeof c->scheme[0])
                return pelab_fail("%s: --schemes: '%s' is too long", c->name, spec), free(buf), -1;
            strcat(spec, ","), strcat(spec, t);
            continue;
        }
        if (n == CMP_MAX_SCHEMES)
            return pelab_fail("%s: --schemes %s: more than %d entries", c->name, list, CMP_MAX_SCHEMES), free(buf), -1;
        if (strlen(t) >= sizeof c->scheme[0]) return pelab_fail("%s: --schemes: '%s' is too long", c->name, t), free(buf), -1;
        snprintf(c->scheme[n++], sizeof c->scheme[0], "%s", t);
    }
    free(buf);
    return n;
}

/* "SCHEME+randpos[:N]" (anywhere among the spec's "+" parts): that scheme's runs train, and are scored,
 * at randomized positions (Ruoss et al. 2023: sorted distinct ids from [0, N), default 4 L), beside
 * the same scheme at positions 0, 1, 2, ... in one compare. The label keeps the suffix; c->pos[i],
 * what training reads, drops it. A scheme without it takes --rand-pos (0: off). */
static int take_randpos(Compare *c, int i) {
    const char *spec = c->scheme[i], *at = strstr(spec, "+randpos");
    while (at && at[8] && at[8] != ':' && at[8] != '+') at = strstr(at + 1, "+randpos");
    c->rand_pos[i] = c->base.rand_pos;
    snprintf(c->pos[i], sizeof c->pos[i], "%s", spec);
    if (!at) return 0;
    const char *arg = at + 8, *end = arg + strcspn(arg, "+");
    long n = 4L * c->base.seq_len;
    if (*arg == ':') {
        char *stop;
        n = strtol(arg + 1, &stop, 10);
        if (stop == arg + 1 || stop != end || n < 1 || n > 1 << 30)
            return pelab_fail("%s: --schemes %s: '+randpos%.*s': expected +randpos or +randpos:N (ids drawn from "
                              "[0, N))", c->name, spec, (int)(end - arg), arg);
    }
    if (!c->task)
        return pelab_fail("%s: --schemes %s: randomized positions need --task SPEC (loss lengths are measured at "
                          "positions 0..)", c->name, spec);
    if (c->base.rand_pos)
        return pelab_fail("%s: --schemes %s and --rand-pos %d: give one (--rand-pos randomizes every scheme)", c->name,
                          spec, c->base.rand_pos);
    snprintf(c->pos[i], sizeof c->pos[i], "%.*s%s", (int)(at - spec), spec, end);
    if (strstr(c->pos[i], "+randpos")) return pelab_fail("%s: --schemes %s: +randpos given twice", c->name, spec);
    if (n < c->base.seq_len)
        return pelab_fail("%s: --schemes %s: +randpos:%ld: expected at least --seq-len %d distinct positions", c->name,
                          spec, n, c->base.seq_len);
    c->rand_pos[i] = (int)n;
    return 0;
}

/* "SCHEME+attn(SPEC)" (anywhere among the spec's "+" parts): that scheme's runs train with the per-layer
 * attention pattern SPEC (model/pattern.h: windows, chunks, bases, NoPE layers), beside schemes with
 * other patterns or none in one compare. The label keeps the suffix; c->pos[i] drops it. A scheme
 * without it takes --attn-pattern (NULL: every layer global). Runs after take_randpos (c->pos[i] set). */
static int take_attn(Compare *c, int i) {
    const char *spec = c->scheme[i];
    char *pos = c->pos[i], *at = strstr(pos, "+attn(");
    c->attn[i][0] = 0;
    if (!at) {
        if (strstr(pos, "+attn"))
            return pelab_fail("%s: --schemes %s: expected +attn(SPEC), e.g. rope+attn(3*window=16:global,nope)", c->name,
                              spec);
        if (c->base.attn_pattern) snprintf(c->attn[i], sizeof c->attn[i], "%s", c->base.attn_pattern);
        return 0;
    }
    char *arg = at + 6, *close = strchr(arg, ')');
    if (!close || (close[1] && close[1] != '+'))
        return pelab_fail("%s: --schemes %s: '+attn(' without its ')' ending that part of the spec", c->name, spec);
    if (c->base.attn_pattern)
        return pelab_fail("%s: --schemes %s and --attn-pattern %s: give one (--attn-pattern is every scheme's)", c->name,
                          spec, c->base.attn_pattern);
    snprintf(c->attn[i], sizeof c->attn[i], "%.*s", (int)(close - arg), arg);
    AttnPattern p;
    if (pattern_parse(&p, c->attn[i]) != 0) return pelab_fail("%s: --schemes %s: %s", c->name, spec, pelab_errmsg);
    if (p.n == 0) return pelab_fail("%s: --schemes %s: +attn() needs a pattern (model/pattern.h)", c->name, spec);
    memmove(at, close + 1, strlen(close + 1) + 1);
    if (strstr(pos, "+attn")) return pelab_fail("%s: --schemes %s: +attn given twice", c->name, spec);
    return 0;
}

int compare_set_schemes(Compare *c, const char *list) {
    char known[512];
    pos_list(known, sizeof known);
    int n = split_schemes(c, list);
    if (n < 0) return -1;
    c->n_schemes = n;
    if (c->n_schemes == 0) return pelab_fail("%s: --schemes '%s': expected at least one position scheme", c->name, list);
    for (int i = 0; i < c->n_schemes; i++) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(c->scheme[i], ":+"), c->scheme[i]);
        if (!pos_find(name))
            return pelab_fail("%s: --schemes: unknown position scheme '%s' (known: %s)", c->name, name, known);
        for (int j = 0; j < i; j++)
            if (strcmp(c->scheme[i], c->scheme[j]) == 0) return pelab_fail("%s: --schemes: '%s' given twice", c->name, name);
        char *t = c->tag[i]; /* file-name form: anything but [A-Za-z0-9.-] becomes '-' */
        memcpy(c->tag[i], c->scheme[i], sizeof c->tag[i]); /* same size; snprintf here trips -Wrestrict */
        for (; *t; t++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-", *t)) *t = '-';
        for (int j = 0; j < i; j++) /* two specs whose file names agree would share their runs' files */
            if (strcmp(c->tag[i], c->tag[j]) == 0)
                return pelab_fail("%s: --schemes: '%s' and '%s' have the same file name %s_sN: give one", c->name,
                                  c->scheme[j], c->scheme[i], c->tag[i]);
        if (take_randpos(c, i) != 0 || take_attn(c, i) != 0) return -1;
    }
    return 0;
}

void compare_set_finetune(Compare *c) {
    snprintf(c->finetune_rule, sizeof c->finetune_rule, "pi:%g", c->finetune_scale);
    snprintf(c->finetune_label[FT_PI], sizeof c->finetune_label[FT_PI], "%s+ft", c->finetune_rule);
    snprintf(c->finetune_label[FT_POSE], sizeof c->finetune_label[FT_POSE], "%s+pose", c->finetune_rule);
}

