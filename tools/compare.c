/* compare.c: `pelab compare`: train one model per (scheme, seed) with the same data, budget and
 * seed, evaluate each at mult x L under both protocols (and the RoPE models under post-hoc
 * scaling rules and after a short PI fine-tune), one CSV per run, then the report (report.c).
 * A run whose CSV exists is skipped, so an interrupted compare resumes; --jobs writes one command
 * per run for make -j / GNU parallel, --collect builds the report from the CSVs alone.
 * `pelab demo` (demo.c) drives the same machinery with one seed. */
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
#include "../model/pos/pos.h"
#include "../train/progress.h"
#include "args.h"
#include "commands.h"
#include "compare.h"
#include "compare_auto.h"
#include "compare_gen.h"
#include "compare_plan.h"
#include "compare_task.h"
#include "gnuplot.h"
#include "jobs.h"
#include "report.h"
#include "train_flags.h"

/* passkey accuracy at one length: exact match over a few depths (-1: not measurable) */
static double passkey_accuracy(const Compare *c, Model *m, int len, unsigned long long seed) {
    if (len < PASSKEY_MIN_LEN || !passkey_length_ok(m, len)) return -1;
    static const int depths[] = {10, 50, 90};
    PasskeyModel pm;
    PasskeyScorer sc;
    passkey_model_init(&pm, m, len);
    passkey_model_scorer(&pm, &sc);
    int exact = 0, n = 0;
    for (int j = 0; j < 3; j++) {
        PasskeyCell cell;
        if (passkey_cell(&sc, len, depths[j], 10, seed, &cell) != 0) pelab_die("%s: passkey: %s", c->name, pelab_errmsg);
        exact += cell.exact, n += cell.trials;
    }
    passkey_model_free(&pm);
    return n ? (double)exact / n : -1;
}

/* every length of one loaded model into the CSV, its rows labelled rule */
static void evaluate_model(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                           FILE *f) {
    int n_protocols = c->nonoverlap_only ? 1 : EVAL_N_PROTOCOLS;
    for (int l = 0; l < c->n_lengths; l++) {
        int len = c->lens[l];
        EvalLength e;
        /* stride = len is the non-overlapping computation only (eval_length reuses it); a dynamic
         * rule under the window's length, `pelab eval`'s default */
        if (eval_length_sink(m, held, n_held, len, c->nonoverlap_only ? len : 0, DYNAMIC_WINDOW, CMP_BUCKETS,
                             c->base.sink_token, &e) != 0)
            pelab_die("%s: rule %s, length %d: %s", c->name, rule, len, pelab_errmsg);
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
            double acc = passkey_accuracy(c, m, len, c->seed[k]);
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

/* One checkpoint into the CSV: a trained model (ft_label NULL) as stored and under each post-hoc
 * rule (when its scheme takes rules), or a fine-tuned one as stored (its rule is in the
 * checkpoint), labelled ft_label. */
static void evaluate_run(const Compare *c, int s, int k, const char *ckpt, const char *ft_label, FILE *f) {
    Dataset d = {0};
    /* the very data the run trained on (at L: the same split); its held-out tail is the evaluation
     * text. A task run is scored on fresh examples instead. */
    if (!c->task &&
        dataset_load(&d, c->data, c->base.val_frac, c->seed[k], (size_t)c->base.synth_bytes, c->base.seq_len) != 0)
        pelab_die("%s: %s", c->name, pelab_errmsg);
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
    unsigned char *key = gen ? compare_key_tokens(c, base_ckpt, held, n_held, &n_key_tokens) : NULL;
    for (int r = 0; r < n_rules; r++) {
        if (r > 0 && !compare_takes_rule(c, s, r - 1)) continue;
        const char *rule = r == 0 ? "none" : c->rule[r - 1];
        Model m;
        if (eval_load_rule(ckpt, rule, c->base.precision, &m, NULL) != 0)
            pelab_die("%s: %s: rule %s: %s", c->name, ckpt, rule, pelab_errmsg);
        if (c->task) compare_task_rows(c, s, k, &m, rule, f);
        else evaluate_model(c, s, k, &m, ft_label ? ft_label : rule, held, n_held, f);
        if (!c->task && !ft_label && r == 0) unigram_row(c, s, k, &m, &d, held, n_held, f);
        if (gen) compare_gen_rows(c, s, k, &m, ft_label ? ft_label : rule, held, n_held, key, n_key_tokens, f);
        model_free(&m);
    }
    free(key);
    if (!c->task) dataset_free(&d);
}

/* compare_run_all's progress: runs done of all, their rate and the time left, a line per finished
 * run; on a terminal each training's step line starts with them, redrawn in place. One compare
 * runs at a time in a process (suite runs its protocols one after another). */
static Progress runs_progress;
static int runs_done;
static char runs_prefix[200];

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
 * ends the process with the shell's code (128 + the signal): a job engine reruns it, and it resumes.
 * The steps trained here (0: the checkpoint was finished already). */
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
        pelab_die("%s: %s %s seed %llu: %s", c->name, what, c->scheme[s], c->seed[k], pelab_errmsg);
    if (tr.interrupted) {
        fflush(stdout);
        fprintf(stderr, "pelab: %s: %s %s seed %llu: stopped at step %ld by signal %d; the checkpoint %s is kept: the "
                "same command resumes it\n", c->name, what, c->scheme[s], c->seed[k], tr.step, tr.signal, tc->out);
        exit(tr.signal ? 128 + tr.signal : 1);
    }
    if (tr.resumed_from > 0)
        fprintf(stderr, "%s: [%d/%d] %s %s seed %llu: resumed from its checkpoint at step %ld\n", c->name, idx, total,
                what, c->scheme[s], c->seed[k], tr.resumed_from);
    double t1 = now_seconds();
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp", csv);
    FILE *f = fopen(tmp, "w");
    if (!f) pelab_die("%s: cannot open %s: %s", c->name, tmp, strerror(errno));
    results_csv_header(f, &RES_COMPARE_CSV);
    evaluate_run(c, s, k, tc->out, ft_label, f);
    if (fclose(f) != 0 || rename(tmp, csv) != 0) pelab_die("%s: cannot write %s: %s", c->name, csv, strerror(errno));
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

/* A fine-tune recipe on a trained run whose scheme takes rules: its weights, pi:S, a short budget;
 * PI at length S x L, or PoSE at length L with positions skipping into [0, S x L) for as many tokens.
 * base_retrained: the run was (re)trained just now, so an older fine-tune of it is stale. */
static void finetune_one(const Compare *c, int kind, int s, int k, const char *base_ckpt, int base_retrained, int idx,
                         int total) {
    char ckpt[1200], csv[1200];
    compare_finetune_path(c, kind, s, k, ".safetensors", ckpt, sizeof ckpt);
    compare_finetune_path(c, kind, s, k, ".csv", csv, sizeof csv);
    if (base_retrained) remove(csv), remove(ckpt);
    else if (skip_finished(csv)) return;
    if (access(base_ckpt, F_OK) != 0)
        pelab_die("%s: cannot fine-tune %s_s%llu: %s is missing (remove its CSV to retrain the run)", c->name,
                  c->tag[s], c->seed[k], base_ckpt);
    TrainConfig tc = c->base;
    tc.pos = c->pos[s], tc.rand_pos = c->rand_pos[s], tc.seed = c->seed[k], tc.out = ckpt;
    tc.init = base_ckpt, tc.scale = c->finetune_rule;
    tc.seq_len = kind == FT_POSE ? c->base.seq_len : compare_finetune_len(c);
    tc.pose = kind == FT_POSE ? compare_finetune_len(c) : 0;
    tc.steps = compare_finetune_steps(c, kind); /* same batch: fewer rows recovered worse */
    tc.eval_every = tc.steps / 20 > 0 ? (int)(tc.steps / 20) : 1, tc.log_every = tc.eval_every; /* its curve */
    tc.lr = c->finetune_lr, tc.warmup = -1; /* 5% of the fine-tune, whatever the base run's warmup */
    tc.converge = 0, tc.min_steps = 0;      /* a fixed budget: its recipe's, whatever the run's rule */
    tc.resume = 1; /* a fine-tune checkpoint without its CSV (stopped in training or evaluation) continues */
    train_and_evaluate(c, s, k, &tc, kind == FT_POSE ? "PoSE fine-tune" : "fine-tune", c->finetune_label[kind], csv,
                       idx, total, NULL);
}

/* train + evaluate one (scheme, seed), then its fine-tune; each skipped when its CSV exists.
 * done: NULL, or the run was trained already (train_scheme_seeds) and only its evaluation is due */
static int run_one(const Compare *c, int s, int k, int idx, int total, const TrainResult *done) {
    char ckpt[1200], csv[1200];
    compare_run_path(c, s, k, ".safetensors", ckpt, sizeof ckpt);
    compare_run_path(c, s, k, ".csv", csv, sizeof csv);
    int trained = 0;
    if (done || c->fresh || !skip_finished(csv)) {
        TrainConfig tc = c->base;
        tc.pos = c->pos[s], tc.rand_pos = c->rand_pos[s], tc.seed = c->seed[k], tc.out = ckpt;
        tc.resume = c->base.resume && !c->fresh;
        trained = train_and_evaluate(c, s, k, &tc, "train", NULL, csv, idx, total, done) > 0;
    }
    for (int kind = 0; kind < FT_KINDS; kind++)
        if (compare_finetunes_with(c, s, kind)) finetune_one(c, kind, s, k, ckpt, trained, idx, total);
    return trained;
}

/* DIR/runs, created with its parents; DIR's length is bounded here so that every path built from it
 * (run names, CSVs, plots) fits the fixed path buffers below */
static void make_runs_dir(const Compare *c) {
    if (strlen(c->out) > 1000)
        pelab_die("%s: --out: the directory path is %zu bytes; at most 1000 are supported", c->name, strlen(c->out));
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/runs", c->out);
    if (make_dirs(dir) != 0) pelab_die("%s: %s", c->name, pelab_errmsg);
}

/* The scheme's runs still to train (no CSV yet, or --fresh), when there are two or more: trained
 * side by side in this process (train --seeds, train_run_many; each checkpoint as if trained
 * alone), their results into done[k], marked in trained[k]. One run takes the usual path. */
static void train_scheme_seeds(const Compare *c, int s, TrainResult *done, int *trained) {
    TrainConfig tcs[CMP_MAX_SEEDS];
    TrainResult res[CMP_MAX_SEEDS];
    char ckpt[CMP_MAX_SEEDS][1200], csv[1200];
    int ks[CMP_MAX_SEEDS], n = 0;
    for (int k = 0; k < c->n_seeds; k++) {
        compare_run_path(c, s, k, ".csv", csv, sizeof csv);
        if (!c->fresh && access(csv, F_OK) == 0) continue;
        compare_run_path(c, s, k, ".safetensors", ckpt[n], sizeof ckpt[n]);
        tcs[n] = c->base;
        tcs[n].pos = c->pos[s], tcs[n].rand_pos = c->rand_pos[s], tcs[n].seed = c->seed[k], tcs[n].out = ckpt[n];
        tcs[n].resume = c->base.resume && !c->fresh;
        tcs[n].quiet = c->base.quiet || n > 0; /* one progress line: the first seed's */
        ks[n++] = k;
    }
    if (n < 2) return;
    char name[200];
    snprintf(name, sizeof name, "%s, %d seeds", c->scheme[s], n);
    show_steps(&tcs[0], name);
    double t0 = now_seconds();
    fprintf(stderr, "%s: training %s, %d seeds side by side\n", c->name, c->scheme[s], n);
    if (train_run_many(tcs, n, res) != 0) pelab_die("%s: train %s: %s", c->name, c->scheme[s], pelab_errmsg);
    fprintf(stderr, "%s: %s: %d seeds trained in %.1f s\n", c->name, c->scheme[s], n, now_seconds() - t0);
    for (int i = 0; i < n; i++) done[ks[i]] = res[i], trained[ks[i]] = 1;
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

void compare_run_all(const Compare *c, const char *only) {
    /* what the flags' ranges accept but no run can use (heads not dividing dim; a length the
     * evaluation, with its key tokens at L/4 and L, cannot), refused before the first run */
    if (train_check_shape(&c->base) != 0) pelab_die("%s: %s", c->name, pelab_errmsg);
    if (c->base.seq_len < 2)
        pelab_die("%s: --seq-len %d: the evaluation needs a training length of at least 2 (key tokens compare "
                  "contexts L/4 and L)", c->name, c->base.seq_len);
    make_runs_dir(c);
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
        if (!only) train_scheme_seeds(c, s, done, trained);
        for (int k = 0; k < c->n_seeds; k++) {
            idx++;
            char name[200];
            snprintf(name, sizeof name, "%s_s%llu", c->tag[s], c->seed[k]);
            if (only && strcmp(only, name) != 0) continue;
            found = 1;
            if (run_one(c, s, k, idx, total, trained[k] ? &done[k] : NULL) && !only) {
                char name[200];
                snprintf(name, sizeof name, "%s seed %llu done", c->scheme[s], c->seed[k]);
                progress_count(&runs_progress, ++runs_done, -1, 1, name);
            }
        }
    }
    if (only && !found) pelab_die("%s: --only %s: no such run (runs are SCHEME_sSEED)", c->name, only);
}

void compare_set_cmdline(Compare *c, int argc, char **argv) {
    sb_free(&c->cmdline);
    sb_puts(&c->cmdline, "pelab");
    for (int i = 0; i < argc; i++) {
        sb_put(&c->cmdline, " ", 1);
        shell_quote(&c->cmdline, argv[i]);
    }
}

/* 1 when run (s, k) and every fine-tune it owes have their CSVs */
static int run_finished(const Compare *c, int s, int k) {
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

/* a word of a job line: no line break may cut the line in two */
static void job_word(StrBuf *b, const char *w, const char *what) {
    if (jobs_word_breaks_line(w))
        pelab_die("compare: --jobs: %s holds a line break; a job file has one command per line", what);
    shell_quote(b, w);
}

/* --jobs: one self-contained command per run not finished (its fine-tunes included): cd to here, this
 * binary, these flags, --only NAME; as lines or as a Slurm array script (jobs.h). Built in a growing
 * buffer: a long path is never cut short. */
static void write_jobs(const Compare *c, const char *path, int fmt, int threads, int argc, char **argv) {
    char *exe = self_exe_path(), *cwd = getcwd(NULL, 0); /* glibc allocates a buffer of the right size */
    if (!cwd) pelab_die("compare: getcwd: %s", strerror(errno));
    StrBuf base = {0}, lines = {0};
    sb_puts(&base, "cd ");
    job_word(&base, cwd, "the working directory");
    sb_puts(&base, " && ");
    job_word(&base, exe ? exe : "pelab", "the path of pelab");
    sb_puts(&base, " compare");
    free(exe), free(cwd);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--jobs") == 0 || strcmp(a, "--only") == 0 || strcmp(a, "--jobs-format") == 0) { i++; continue; }
        if (strncmp(a, "--jobs=", 7) == 0 || strncmp(a, "--only=", 7) == 0 || strncmp(a, "--jobs-format=", 14) == 0 ||
            strcmp(a, "--collect") == 0)
            continue;
        sb_put(&base, " ", 1);
        job_word(&base, a, "a flag");
    }
    int count = 0, finished = 0;
    for (int s = 0; s < c->n_schemes; s++)
        for (int k = 0; k < c->n_seeds; k++) {
            if (run_finished(c, s, k)) {
                finished++;
                continue;
            }
            sb_printf(&lines, "%s --only %s_s%llu\n", sb_str(&base), c->tag[s], c->seed[k]);
            count++;
        }
    if (jobs_write(path, fmt, "compare", sb_str(&lines), count, threads) != 0) pelab_die("compare: --jobs: %s", pelab_errmsg);
    sb_free(&base), sb_free(&lines);
    StrBuf how = {0};
    jobs_how(&how, fmt, path);
    if (count)
        printf("compare: wrote %d command%s to %s (%d run%s finished already); run them (%s), then the same compare "
               "command with --collect\n",
               count, count == 1 ? "" : "s", path, finished, finished == 1 ? "" : "s", sb_str(&how));
    else
        printf("compare: every run is finished (%s is empty); the report: the same compare command with --collect\n",
               path);
    sb_free(&how);
}

/* split "a,b,c" into fixed-size slots; returns the count */
static int split_list(const char *cmd, const char *flag, const char *list, char *out, size_t width, int max) {
    char *buf = strdup(list); /* strtok_r writes into it; never a cut-short copy */
    if (!buf) pelab_die("%s: out of memory", cmd);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) pelab_die("%s: %s %s: more than %d entries", cmd, flag, list, max);
        if (strlen(t) >= width) pelab_die("%s: %s: '%s' is too long", cmd, flag, t);
        snprintf(out + (size_t)n++ * width, width, "%s", t);
    }
    free(buf);
    return n;
}

/* --schemes "rope:base=500,scale=pi:2,alibi": split at commas, but a piece whose text before its
 * first '=' has no ':' ("scale=pi:2") is another option of the spec before it, so that a spec with
 * several options can be listed as written for --pos */
static int split_schemes(Compare *c, const char *list) {
    char *buf = strdup(list);
    if (!buf) pelab_die("%s: out of memory", c->name);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        int option = eq && memchr(t, ':', (size_t)(eq - t)) == NULL;
        /* "rope+nope@1,2": a piece of digits only continues a layer list */
        const char *last_part = n ? strrchr(c->scheme[n - 1], '+') : NULL;
        if (n && t[strspn(t, "0123456789")] == 0 && last_part && strncmp(last_part, "+nope@", 6) == 0) option = 1;
        if (option && n == 0) pelab_die("%s: --schemes: '%s' is an option with no scheme before it", c->name, t);
        if (option) {
            char *spec = c->scheme[n - 1];
            if (strlen(spec) + 1 + strlen(t) >= sizeof c->scheme[0]) pelab_die("%s: --schemes: '%s' is too long", c->name, spec);
            strcat(spec, ","), strcat(spec, t);
            continue;
        }
        if (n == CMP_MAX_SCHEMES) pelab_die("%s: --schemes %s: more than %d entries", c->name, list, CMP_MAX_SCHEMES);
        if (strlen(t) >= sizeof c->scheme[0]) pelab_die("%s: --schemes: '%s' is too long", c->name, t);
        snprintf(c->scheme[n++], sizeof c->scheme[0], "%s", t);
    }
    free(buf);
    return n;
}

/* "SCHEME+randpos[:N]" (anywhere among the spec's "+" parts): that scheme's runs train, and are scored,
 * at randomized positions (Ruoss et al. 2023: sorted distinct ids from [0, N), default 4 L), beside
 * the same scheme at positions 0, 1, 2, ... in one compare. The label keeps the suffix; c->pos[i],
 * what training reads, drops it. A scheme without it takes --rand-pos (0: off). */
static void take_randpos(Compare *c, int i) {
    const char *spec = c->scheme[i], *at = strstr(spec, "+randpos");
    while (at && at[8] && at[8] != ':' && at[8] != '+') at = strstr(at + 1, "+randpos");
    c->rand_pos[i] = c->base.rand_pos;
    snprintf(c->pos[i], sizeof c->pos[i], "%s", spec);
    if (!at) return;
    const char *arg = at + 8, *end = arg + strcspn(arg, "+");
    long n = 4L * c->base.seq_len;
    if (*arg == ':') {
        char *stop;
        n = strtol(arg + 1, &stop, 10);
        if (stop == arg + 1 || stop != end || n < 1 || n > 1 << 30)
            pelab_die("%s: --schemes %s: '+randpos%.*s': expected +randpos or +randpos:N (ids drawn from [0, N))",
                      c->name, spec, (int)(end - arg), arg);
    }
    if (!c->task)
        pelab_die("%s: --schemes %s: randomized positions need --task SPEC (loss lengths are measured at positions 0..)",
                  c->name, spec);
    if (c->base.rand_pos)
        pelab_die("%s: --schemes %s and --rand-pos %d: give one (--rand-pos randomizes every scheme)", c->name, spec,
                  c->base.rand_pos);
    snprintf(c->pos[i], sizeof c->pos[i], "%.*s%s", (int)(at - spec), spec, end);
    if (strstr(c->pos[i], "+randpos")) pelab_die("%s: --schemes %s: +randpos given twice", c->name, spec);
    if (n < c->base.seq_len)
        pelab_die("%s: --schemes %s: +randpos:%ld: expected at least --seq-len %d distinct positions", c->name, spec,
                  n, c->base.seq_len);
    c->rand_pos[i] = (int)n;
}

void compare_set_schemes(Compare *c, const char *list) {
    char known[512];
    pos_list(known, sizeof known);
    c->n_schemes = split_schemes(c, list);
    if (c->n_schemes == 0) pelab_die("%s: --schemes '%s': expected at least one position scheme", c->name, list);
    for (int i = 0; i < c->n_schemes; i++) {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(c->scheme[i], ":+"), c->scheme[i]);
        if (!pos_find(name))
            pelab_die("%s: --schemes: unknown position scheme '%s' (known: %s)", c->name, name, known);
        for (int j = 0; j < i; j++)
            if (strcmp(c->scheme[i], c->scheme[j]) == 0) pelab_die("%s: --schemes: '%s' given twice", c->name, name);
        char *t = c->tag[i]; /* file-name form: anything but [A-Za-z0-9.-] becomes '-' */
        memcpy(c->tag[i], c->scheme[i], sizeof c->tag[i]); /* same size; snprintf here trips -Wrestrict */
        for (; *t; t++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-", *t)) *t = '-';
        take_randpos(c, i);
    }
}

void compare_set_finetune(Compare *c) {
    snprintf(c->finetune_rule, sizeof c->finetune_rule, "pi:%g", c->finetune_scale);
    snprintf(c->finetune_label[FT_PI], sizeof c->finetune_label[FT_PI], "%s+ft", c->finetune_rule);
    snprintf(c->finetune_label[FT_POSE], sizeof c->finetune_label[FT_POSE], "%s+pose", c->finetune_rule);
}

/* --seeds: "N" (1..N), "A-B" or "A,B,C" into c->seed[] */
static void parse_seeds(Compare *c, const char *seeds) {
    const char *digits = "0123456789";
    size_t n1 = strspn(seeds, digits);
    if (n1 > 0 && n1 < 20 && (seeds[n1] == 0 || (seeds[n1] == '-' && seeds[n1 + 1 + strspn(seeds + n1 + 1, digits)] == 0 &&
                                                   seeds[n1 + 1]))) {
        unsigned long long a = strtoull(seeds, NULL, 10), b = a;
        if (seeds[n1] == '-') b = strtoull(seeds + n1 + 1, NULL, 10);
        else a = 1; /* a count */
        if (b < a || b - a >= CMP_MAX_SEEDS || (seeds[n1] == 0 && b == 0))
            pelab_die("compare: --seeds %s: expected a count 1..%d, a range A-B of at most %d seeds, or a list", seeds,
                      CMP_MAX_SEEDS, CMP_MAX_SEEDS);
        c->n_seeds = 0;
        for (unsigned long long v = a; v <= b; v++) c->seed[c->n_seeds++] = v;
        return;
    }
    c->n_seeds = args_seeds("compare", "--seeds", seeds, c->seed, CMP_MAX_SEEDS);
}

/* the largest of the --mult list */
static double largest_mult(const char *mult) {
    double smax = 0;
    for (const char *p = mult; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) smax = fmax(smax, atof(p));
    return smax;
}

/* --finetune pi|pose|both: the recipes' bits */
static int finetune_kinds(const char *which) {
    if (strcmp(which, "pi") == 0) return 1 << FT_PI;
    if (strcmp(which, "pose") == 0) return 1 << FT_POSE;
    if (strcmp(which, "both") == 0) return 1 << FT_PI | 1 << FT_POSE;
    pelab_die("compare: --finetune %s: expected pi, pose or both", which);
}

/* --finetune-*: defaults (S = min(4, largest mult), 10% of the steps) and checks */
static void setup_finetune(Compare *c, double smax) {
    if (c->finetune_scale < 0) { /* default: none when no evaluated length exceeds L */
        c->finetune_scale = (float)fmin(4, smax);
        if (c->finetune_scale <= 1) c->finetune_steps = 0;
    } else if (c->finetune_scale == 0) {
        c->finetune_steps = 0;
    } else if (c->finetune_steps != 0 && !(c->finetune_scale > 1)) {
        pelab_die("compare: --finetune-scale %g: expected a factor above 1 (or --finetune-steps 0)", c->finetune_scale);
    }
    /* with --converge: of the floor every run trains, not of a cap that few reach */
    long budget = c->base.converge && c->base.min_steps > 0 ? c->base.min_steps : c->base.steps;
    if (c->finetune_steps < 0) c->finetune_steps = budget / 10 > 0 ? (int)(budget / 10) : 1;
    /* lower than training's, as in the PI recipe: of lr, lr/3 and lr/10, lr/3 recovered best (synth, L 64, pi:4) */
    if (c->finetune_lr <= 0) c->finetune_lr = c->base.lr / 3;
    compare_set_finetune(c);
}

/* --rules: as given, or pi:S,ntk:S,yarn:S,dynamic-ntk at S = the largest mult, plus post-hoc PI at
 * the fine-tune's own factor so that the fine-tune has its baseline */
static void setup_rules(Compare *c, const char *rules, double smax) {
    char defaults[160];
    if (!rules) {
        int n = snprintf(defaults, sizeof defaults, "pi:%g,ntk:%g,yarn:%g,dynamic-ntk", smax, smax, smax);
        if (c->finetune_steps > 0 && c->finetune_scale != (float)smax)
            snprintf(defaults + n, sizeof defaults - n, ",%s", c->finetune_rule);
        rules = defaults;
    }
    if (strcmp(rules, "none") != 0 && rules[0])
        c->n_rules = split_list("compare", "--rules", rules, c->rule[0], sizeof c->rule[0], CMP_MAX_RULES);
    for (int r = 0; r < c->n_rules; r++) { /* now, not after hours of training */
        PosExtend e;
        RopeRule rule;
        int is_extend = extend_parse(c->rule[r], &e);
        if (is_extend < 0 || (is_extend == 0 && rope_rule_parse(c->rule[r], &rule) != 0))
            pelab_die("compare: --rules: %s", pelab_errmsg);
    }
}

int compare_main(int argc, char **argv, Compare *c) {
    sb_free(&c->cmdline);
    memset(c, 0, sizeof *c);
    TrainConfig *b = &c->base;
    train_config_defaults(b);
    b->eval_every = 0, b->ckpt_every = 0, b->quiet = 1;
    char all_schemes[512];
    pos_list(all_schemes, sizeof all_schemes);
    const char *schemes = NULL, *seeds = "5", *rules = NULL, *jobs = NULL, *only = NULL, *task_lens = NULL;
    const char *task_depths = NULL;
    const char *precision = NULL, *finetune = "pi", *looks = NULL;
    static const char default_format[] = "lines"; /* by identity: a --jobs-format given without --jobs is refused */
    const char *jobs_format = default_format;
    float budget = 0;
    int collect = 0, unaligned = 0, threads = 0, steps = (int)b->steps, synth_bytes = (int)b->synth_bytes, min_steps = 0;
    /* the defaults by identity: with --task, a --mult or --data given is refused, not ignored */
    static const char default_mult[] = "0.5,1,2,4,8,16", default_data[] = "synth:stories";
    c->name = "compare", c->data = default_data, c->mult = default_mult, c->eval_tokens = 32768;
    c->finetune_steps = -1, c->finetune_scale = -1, c->task_n = 100;
    compare_gen_defaults(c);
    compare_verdict_defaults(c);
    const OptSpec opts[] = {
        {"--schemes", OPT_STR, &schemes, 0, 0, "comma-separated position schemes (default: every registered scheme)"},
        {"--data", OPT_STR, &c->data, 0, 0, "text file or synth:NAME (the held-out tail is the evaluation text)"},
        OPT_RENAMED_ROW("--train-len", "--seq-len"),
        {"--steps", OPT_INT, &steps, 1, 1 << 30, "training steps per run (with --converge: the most a run may take)"},
        {"--converge", OPT_FLAG, &b->converge, 0, 0, "train each run until its validation loss converges (the "
                                                      "--converge-frac / --converge-abs rule, checked at each of "
                                                      "--steps / 50 validations) or --steps: constant lr after the "
                                                      "warmup, then a linear cooldown of a quarter of the steps so far "
                                                      "(train --converge); the report flags a run whose rule had not "
                                                      "held when its cooldown began"},
        {"--min-steps", OPT_INT, &min_steps, 0, 1 << 30, "with --converge: the rule is not checked before this step "
                                                         "(at most --steps: a larger floor is --steps)"},
        {"--seeds", OPT_STR, &seeds, 0, 0, "N: seeds 1..N (default 5); or a list A,B,C or a range A-B (init, batches, "
                                           "synthetic corpus); a finished compare rerun with more seeds trains only "
                                           "the new ones; auto: seeds in --looks until every pair is decided "
                                           "(DIR/sequential.md)"},
        {"--looks", OPT_STR, &looks, 0, 0, "with --seeds auto: seeds per series at each look (default "
                                           COMPARE_AUTO_LOOKS ")"},
        {"--budget", OPT_FLOAT, &budget, 0, 1e6, "with --seeds auto: minutes; no further look starts when it is expected "
                                                 "to end past this (0: none)"},
        {"--gate", OPT_FLOAT, &c->gate, 0, 1, "with --task: a run learned the task when its exact match inside the "
                                             "trained lengths is at least this; runs below are left out of means and "
                                             "verdicts"},
        {"--gate-loss", OPT_FLOAT, &c->gate_loss, 0, 1e6, "language modelling: a run also fails the gate when its loss "
                                                          "at L is above this (0: no bound; the gate's own bound is "
                                                          "the unigram loss of its evaluation text)"},
        {"--converge-frac", OPT_FLOAT, &c->converge_frac, 0, 0.999, "the convergence rule: a run is still improving "
                                                                    "while its validation loss fell by more than this "
                                                                    "fraction over its last 20% of steps (before its "
                                                                    "cooldown with --converge)"},
        {"--converge-abs", OPT_FLOAT, &c->converge_abs, 0, 100, "... and by more than this many nats (a loss near 0 "
                                                               "falls by large fractions of almost nothing)"},
        {"--alpha", OPT_FLOAT, &c->alpha, 1e-6, 0.5, "significance level of the verdicts (Holm-adjusted)"},
        {"--out", OPT_OUT_DIR, &c->out, 0, 0, "output directory (runs/, plots/, report.md)"},
        {"--mult", OPT_STR, &c->mult, 0, 0, "evaluation lengths as multiples of L"},
        {"--rules", OPT_STR, &rules, 0, 0, "post-hoc scaling rules for the schemes that take them (default pi:S,ntk:S,yarn:S,dynamic-ntk, "
                                           "S = largest mult, and pi:F for the fine-tune; none: no rules; "
                                           "longrope:PATH with no ',' in PATH; extension methods selfextend:G:W, "
                                           "rerope:W, leaky-rerope:W:K for the rotary schemes, stream:S:W for all "
                                           "but learned and sinusoidal)"},
        {"--finetune-steps", OPT_INT, &c->finetune_steps, -1, 1 << 30, "PI fine-tune of each run that takes rules: steps at F x L "
                                                                       "(-1: 10% of --steps, with --converge of "
                                                                       "--min-steps when given; 0: no fine-tune)"},
        {"--finetune-scale", OPT_FLOAT, &c->finetune_scale, -1, 1 << 10, "its factor F: pi:F at length F x L (-1: min(4, "
                                                                         "largest mult); 0: no fine-tune)"},
        {"--finetune-lr", OPT_FLOAT, &c->finetune_lr, 0, 10, "its peak learning rate (0: --lr / 3)"},
        {"--finetune", OPT_STR, &finetune, 0, 0, "fine-tune recipe: pi (pi:F at F x L), pose (pi:F at L, PoSE positions "
                                                 "into [0, F x L), F x the steps: the same tokens) or both"},
        {"--passkey-frac", OPT_FLOAT, &c->passkey_frac, 0, 0.9, "share of passkey documents in training (> 0: passkey "
                                                                "accuracy by length too)"},
        {"--task", OPT_STR, &c->task, 0, 0, "train on task:SPEC (pelab task list) and report greedy-answer accuracy by task "
                                       "length instead of loss (no rules unless --rules, no fine-tune)"},
        {"--task-lens", OPT_STR, &task_lens, 0, 0, "task lengths to score (default: the spec's lo, hi, then 2, 4, 8, 16 x hi)"},
        {"--task-n", OPT_INT, &c->task_n, 1, 1 << 20, "examples per task length"},
        {"--task-depths", OPT_STR, &task_depths, 0, 0, "with --task of a task with a depth option (niah_single, "
                                                       "niah_multikey, passkey): also each task length with the needle "
                                                       "at each of these depths in [0, 1], the report's depth x "
                                                       "length grid per scheme"},
        {"--effective-threshold", OPT_FLOAT, &c->effective_pct, 0, 100, "with --task: RULER's effective length is the "
                                                                        "longest task length whose score (RULER's "
                                                                        "tasks: theirs; else exact match), and every "
                                                                        "shorter one's, is at least this % (0: RULER's "
                                                                        "85.6)"},
        {"--effective-relative", OPT_FLOAT, &c->effective_rel, 0, 1, "with --task: instead, at least this fraction of "
                                                                     "the series' own score at the longest length "
                                                                     "inside L (0: off)"},
        {"--rand-pos", OPT_INT, &b->rand_pos, 0, 1 << 30, "with --task: randomized positions (Ruoss et al.), sorted "
                                                       "distinct ids from [0, N) in training and in the task evaluation, "
                                                       "every scheme (one scheme: SCHEME+randpos:N in --schemes)"},
        {"--unaligned", OPT_FLAG, &unaligned, 0, 0, "with --task: training windows cut anywhere in the example stream "
                                                   "(default: each starts at an example, as evaluation prompts do)"},
        {"--eval-tokens", OPT_INT, &c->eval_tokens, 0, 1 << 30, "held-out tokens evaluated per length (0: all)"},
        TRAIN_SYNTH_BYTES_ROW(&synth_bytes),
        {"--sink-token", OPT_INT, &b->sink_token, -1, 1 << 30, "train every model (and fine-tune) with this token id "
                                                             "opening every window (train --sink-token) and evaluate "
                                                             "each window so opened; no generation, loss jump or key "
                                                             "tokens then (-1: none)"},
        COMPARE_GEN_OPTS(c),
        {"--jobs", OPT_OUT_FILE, &jobs, 0, 0, "write one shell command per run (and its fine-tune) to this file instead of "
                                         "running"},
        {"--jobs-format", OPT_STR, &jobs_format, 0, 0, "lines: one command per line (GNU parallel, xargs -P, sh); "
                                                       "slurm: an sbatch array script, task i runs line i (sbatch "
                                                       "--wait FILE)"},
        {"--only", OPT_STR, &only, 0, 0, "run only SCHEME_sSEED (what --jobs commands use); no report"},
        {"--collect", OPT_FLAG, &collect, 0, 0, "build the report from the finished CSVs, no training"},
        TRAIN_FLAG_ROWS(b),
        OPT_PRECISION_ROW(&precision),
        OPT_THREADS_ROW(&threads),
    };
    args_parse("compare", "--out DIR [--schemes a,b] [--seq-len L] [--steps N] [--seeds 1,2,3] [flags]", argc, argv,
               1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    if (!c->out) pelab_die("compare: --out DIR is required");
    if (!schemes) { /* "nope, learned, ..." -> "nope,learned,..." */
        char *w = all_schemes;
        for (char *r = all_schemes; *r; r++)
            if (*r != ' ') *w++ = *r;
        *w = 0;
        schemes = all_schemes;
    }
    set_threads(threads);
    if (precision && precision_parse(precision, &b->precision) != 0) pelab_die("compare: %s", pelab_errmsg);
    b->steps = steps, b->synth_bytes = synth_bytes, b->data = c->data, b->passkey_frac = c->passkey_frac;
    if (min_steps && !b->converge) pelab_die("compare: --min-steps %d: needs --converge", min_steps);
    b->min_steps = min_steps < steps ? min_steps : steps; /* a recipe's floor under a shorter --steps (suite --steps) */
    compare_set_converge(c);
    /* a killed run resumes (train --resume) from its last checkpoint, one every tenth of its steps, as planned:
     * never a longer or shorter one */
    b->ckpt_every = steps / 10 > 0 ? steps / 10 : 1, b->resume = 1, b->resume_exact = 1;
    c->finetune_kinds = finetune_kinds(finetune);

    compare_set_schemes(c, schemes);
    int auto_seeds = strcmp(seeds, "auto") == 0;
    parse_seeds(c, auto_seeds ? "1" : seeds);
    static char task_data[300];
    if (c->task) { /* task lengths, the task stream as data; rules only when asked, no fine-tune */
        if (c->mult != default_mult) pelab_die("compare: --mult sets loss lengths; with --task give --task-lens");
        if (c->data != default_data) pelab_die("compare: --data and --task: the task is the data (give one)");
        if (c->passkey_frac > 0) pelab_die("compare: --passkey-frac mixes passkey rows into text; with --task use --task passkey");
        if (b->sink_token >= 0) pelab_die("compare: --sink-token and --task: task prompts are scored from their own first byte");
        compare_task_setup(c, task_lens);
        compare_task_depths(c, task_depths);
        snprintf(task_data, sizeof task_data, "task:%s", c->task);
        c->data = b->data = task_data;
        b->align_examples = !unaligned;
        c->finetune_steps = 0, c->finetune_scale = 0;
        setup_finetune(c, 1);
        setup_rules(c, rules ? rules : "none", 1);
        if (c->effective_pct > 0 && c->effective_rel > 0)
            pelab_die("compare: --effective-threshold and --effective-relative: give one");
    } else {
        if (task_lens) pelab_die("compare: --task-lens needs --task SPEC");
        if (task_depths) pelab_die("compare: --task-depths needs --task SPEC");
        if (c->effective_pct > 0 || c->effective_rel > 0)
            pelab_die("compare: --effective-threshold and --effective-relative need --task SPEC");
        if (unaligned) pelab_die("compare: --unaligned needs --task SPEC");
        if (b->rand_pos) pelab_die("compare: --rand-pos needs --task SPEC (loss lengths are measured at positions 0..)");
        if (b->sink_token >= 0 && c->passkey_frac > 0)
            pelab_die("compare: --sink-token and --passkey-frac: passkey documents are scored without the sink token");
        c->n_lengths = eval_parse_lengths(NULL, c->mult, b->seq_len, c->lens, CMP_MAX_LENGTHS);
        if (c->n_lengths < 0) pelab_die("compare: %s", pelab_errmsg);
        double smax = largest_mult(c->mult);
        setup_finetune(c, smax);
        setup_rules(c, rules, smax);
    }
    compare_set_cmdline(c, argc, argv);
    int fmt;
    if (jobs_format_parse(jobs_format, &fmt) != 0) pelab_die("compare: %s", pelab_errmsg);
    if (jobs_format != default_format && !jobs) pelab_die("compare: --jobs-format %s: needs --jobs FILE", jobs_format);
    if (auto_seeds && jobs)
        pelab_die("compare: --seeds auto decides its seeds look by look: no --jobs (suite --jobs runs looks as jobs)");
    if (jobs) {
        make_runs_dir(c);
        write_jobs(c, jobs, fmt, threads, argc, argv);
        return 0;
    }
    if (collect) make_runs_dir(c); /* an empty report, if nothing ran yet: the directory may not exist */
    if (auto_seeds && (collect || only)) pelab_die("compare: --seeds auto runs its own looks: no --collect or --only");
    if (auto_seeds) {
        compare_auto_run(c, looks ? looks : COMPARE_AUTO_LOOKS, budget, compare_run_all);
    } else if (!collect) {
        compare_run_all(c, only);
        if (only) return 0; /* parallel jobs: the report waits for --collect */
    }
    if (compare_report(c) != 0) pelab_die("compare: %s", pelab_errmsg);
    if (compare_print_table(c, stdout) != 0) pelab_die("compare: %s", pelab_errmsg);
    printf("compare: report in %s/report.md\n", c->out);
    if (!gp_available())
        printf("compare: no plots drawn: %s; to get them, %s, then the same command with --collect\n", gp_missing(),
               GP_INSTALL_HINT);
    return 0;
}

int cmd_compare(int argc, char **argv) {
    static Compare c; /* large: not on the stack */
    return compare_main(argc, argv, &c);
}
