/* compare_cmd.c: `pelab compare`: its flags, the --jobs file, --seeds auto and --collect around the
 * runs (lab/compare.c) and the report (lab/report.c); every failure is one line and exit 1 (a
 * training stopped by a signal: 128 + the signal, so that a job engine reruns it). */
#include "compare_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../infer/eval.h"
#include "../lab/compare.h"
#include "../lab/compare_auto.h"
#include "../lab/compare_task.h"
#include "../lab/gnuplot.h"
#include "../lab/jobs.h"
#include "../lab/report.h"
#include "../model/pos/pos.h"
#include "args.h"
#include "commands.h"
#include "compare_flags.h"
#include "train_flags.h"

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
            if (compare_run_finished(c, s, k)) {
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

/* --task-lens (NULL: the task's defaults) into c->lens */
static void set_task_lengths(Compare *c, const char *lens) {
    double lo, hi;
    if (compare_task_lengths(c, &lo, &hi) != 0) pelab_die("%s", pelab_errmsg);
    if (!lens) return;
    double v[CMP_MAX_LENGTHS];
    c->n_lengths = args_numbers(c->name, "--task-lens", lens, lo, hi, v, CMP_MAX_LENGTHS);
    for (int i = 0; i < c->n_lengths; i++) c->lens[i] = (int)v[i];
}

/* --task-depths (NULL: none) into c->depths */
static void set_task_depths(Compare *c, const char *depths) {
    c->n_depths = 0;
    if (!depths) return;
    if (compare_task_takes_depths(c) != 0) pelab_die("%s", pelab_errmsg);
    c->n_depths = args_numbers(c->name, "--task-depths", depths, 0, 1, c->depths, CMP_MAX_DEPTHS);
}

/* the runs' failure: its line, and the exit status it asks for */
static void runs_failed(void) {
    fflush(stdout);
    fprintf(stderr, "pelab: %s\n", pelab_errmsg);
    exit(compare_stop_status());
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
        {"--attn-pattern", OPT_STR, &b->attn_pattern, 0, 0,
         "every scheme's per-layer attention (train --attn-pattern; one scheme: SCHEME+attn(SPEC) in --schemes, e.g. "
         "'rope+attn(3*window=16:global,nope)')"},
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
        JOBS_FORMAT_OPT(jobs_format),
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

    if (compare_set_schemes(c, schemes) != 0) pelab_die("%s", pelab_errmsg);
    int auto_seeds = strcmp(seeds, "auto") == 0;
    parse_seeds(c, auto_seeds ? "1" : seeds);
    static char task_data[300];
    if (c->task) { /* task lengths, the task stream as data; rules only when asked, no fine-tune */
        if (c->mult != default_mult) pelab_die("compare: --mult sets loss lengths; with --task give --task-lens");
        if (c->data != default_data) pelab_die("compare: --data and --task: the task is the data (give one)");
        if (c->passkey_frac > 0) pelab_die("compare: --passkey-frac mixes passkey rows into text; with --task use --task passkey");
        if (b->sink_token >= 0) pelab_die("compare: --sink-token and --task: task prompts are scored from their own first byte");
        set_task_lengths(c, task_lens);
        set_task_depths(c, task_depths);
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
    /* the runs' own data: each --jobs line runs this check before its training */
    if (!collect && !jobs && compare_check_data(c) != 0) pelab_die("compare: %s", pelab_errmsg);
    int fmt;
    if (jobs_format_parse(jobs_format, &fmt) != 0) pelab_die("compare: %s", pelab_errmsg);
    if (jobs_format != default_format && !jobs) pelab_die("compare: --jobs-format %s: needs --jobs FILE", jobs_format);
    if (auto_seeds && jobs)
        pelab_die("compare: --seeds auto decides its seeds look by look: no --jobs (suite --jobs runs looks as jobs)");
    if (jobs) {
        if (compare_make_runs_dir(c) != 0) pelab_die("%s", pelab_errmsg);
        write_jobs(c, jobs, fmt, threads, argc, argv);
        return 0;
    }
    if (collect && compare_make_runs_dir(c) != 0) pelab_die("%s", pelab_errmsg); /* an empty report, if nothing ran yet: the directory may not exist */
    if (auto_seeds && (collect || only)) pelab_die("compare: --seeds auto runs its own looks: no --collect or --only");
    if (auto_seeds) {
        if (compare_auto_run(c, looks ? looks : COMPARE_AUTO_LOOKS, budget, compare_run_all) != 0) runs_failed();
    } else if (!collect) {
        if (compare_run_all(c, only) != 0) runs_failed();
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
