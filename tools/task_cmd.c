/* task_cmd.c: `pelab task list|show`: the length-generalization tasks (data/task.h) and examples. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../data/task.h"
#include "../infer/task_eval.h"
#include "../io/results.h"
#include "args.h"
#include "commands.h"
#include "../lab/gnuplot.h"
#include "../lab/gp_grid.h"
#include "load.h"

static const char USAGE[] = "usage: pelab task SUBCOMMAND ...   (pelab task SUBCOMMAND --help for its flags)\n"
                            "  list                                   every task, its format and options\n"
                            "  show SPEC [--seed N] [--n K] [--len N]  K examples, the answer in [[ ]]\n"
                            "  eval CKPT --task SPEC [--lens A,B,...] [--depths D,...] [--csv F] [--json F] [--plots DIR]\n"
                            "                                         greedy answers: exact match and byte accuracy\n"
                            "                                         (RULER's tasks: their score) per length (and\n"
                            "                                         depth), table, files, plots\n";

static void print_range(double lo, double hi) {
    printf(lo == hi ? "%g" : "%g-%g", lo, hi);
}

static int list(int argc, char **argv) {
    args_parse("task list", "", argc, argv, 2, NULL, 0, NULL, 0, NULL);
    for (int i = 0; i < task_count(); i++) {
        const TaskDef *d = task_def(i);
        printf("%-15s %s\n", d->name, d->desc);
        for (int k = 0; k < d->n_opts; k++) {
            const TaskOpt *o = &d->opts[k];
            printf("  %-13s default ", o->name);
            if (o->names) {
                char v[64];
                task_opt_value_name(o, o->def_lo, v, sizeof v);
                printf("%s, one of %s: %s\n", v, o->names, o->help);
                continue;
            }
            print_range(o->def_lo, o->def_hi);
            printf(", accepts %g..%g%s: %s\n", o->lo, o->hi, o->single ? " (one value)" : "", o->help);
        }
    }
    return 0;
}

/* the text on one line: newlines as \n, each answer span between [[ and ]] */
static void print_marked(const TaskExample *ex) {
    for (size_t i = 0; i < ex->n; i++) {
        int in = ex->mask ? ex->mask[i] : i >= ex->answer_start, before = i > 0 && (ex->mask ? ex->mask[i - 1] : i > ex->answer_start);
        if (in && !before) fputs("[[", stdout);
        if (!in && before) fputs("]]", stdout);
        if (ex->text[i] == '\n') fputs("\\n", stdout);
        else putchar(ex->text[i]);
    }
    fputs(ex->mask ? "\n" : "]]\n", stdout);
}

static int show(int argc, char **argv) {
    unsigned long long seed = 1;
    int n = 4, len = -1;
    const OptSpec opts[] = {
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "generator seed (the same seed gives the same examples)"},
        {"--n", OPT_INT, &n, 1, 1 << 20, "examples to print"},
        {"--len", OPT_INT, &len, -1, 1 << 16, "fix the length option (-1: draw it from the spec's range)"},
    };
    const char *pos[1];
    int n_pos;
    args_parse("task show", "SPEC [flags]   (SPEC: NAME[:k=v,...])", argc, argv, 2, opts, sizeof opts / sizeof opts[0],
               pos, 1, &n_pos);
    if (n_pos != 1) pelab_die("task show: expected one task SPEC (tasks: %s)", task_names());
    TaskSpec t;
    if (task_parse(&t, pos[0]) != 0) pelab_die("%s", pelab_errmsg);
    char canon[256];
    task_format(&t, canon, sizeof canon);
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        TaskExample ex;
        if (task_example(&t, &rng, len, &ex) != 0) pelab_die("%s", pelab_errmsg);
        if (i == 0) printf("# %s  seed %llu\n", canon, seed); /* after the first check of --len */
        if (ex.mask)
            printf("%d: len %d, %zu answer bytes from byte %zu, %zu bytes in all", i + 1, ex.len, task_answers(&ex),
                   ex.answer_start, ex.n);
        else printf("%d: len %d, answer at byte %zu, %zu bytes", i + 1, ex.len, ex.answer_start, ex.answer_len);
        if (ex.depth >= 0) printf(", depth %.3f", ex.depth);
        printf("\n   ");
        print_marked(&ex);
        task_example_free(&ex);
    }
    return 0;
}

enum { MAX_CELLS = 32 };

/* what task eval measured: every (depth, length) cell */
typedef struct {
    const char *model;
    char task[256];                /* the canonical spec */
    unsigned long long seed;
    int n, train_len, n_len, n_depth, has_depth;
    double len_value[MAX_CELLS], depth[MAX_CELLS];
    TaskScore cell[MAX_CELLS][MAX_CELLS]; /* [depth][length] */
} TaskRun;

static double exact_of(const TaskScore *s) { return s->n ? (double)s->exact / s->n : NAN; }
static double bytes_of(const TaskScore *s) { return s->answer_bytes ? (double)s->correct_bytes / s->answer_bytes : NAN; }
/* the grid's figure: RULER's score for its tasks, exact match for the others */
static double grid_of(const TaskScore *s) { return s->listed ? s->recall : exact_of(s); }

/* one (depth, length) cell as a results row */
static ResultRow cell_row(const TaskRun *r, int d, int i) {
    const TaskScore *s = &r->cell[d][i];
    ResultRow w = result_row();
    w.task = r->task, w.train_len = r->train_len, w.length = s->len, w.pos_hi = s->max_positions, w.n = s->n;
    w.past_train_len = s->max_positions > r->train_len;
    if (r->has_depth) w.depth = r->depth[d];
    w.exact = s->exact, w.answer_bytes = s->answer_bytes, w.correct_bytes = s->correct_bytes;
    w.value = exact_of(s), w.ci_lo = s->exact_ci[0], w.ci_hi = s->exact_ci[1];
    w.value2 = bytes_of(s), w.ci2_lo = s->bytes_ci[0], w.ci2_hi = s->bytes_ci[1];
    if (s->listed) w.recall = s->recall, w.recall_ci_lo = s->recall_ci[0], w.recall_ci_hi = s->recall_ci[1], w.recall_all = s->recall_all;
    return w;
}

static void write_csv(const TaskRun *r, const char *path) {
    MemFile mf; /* written whole: a kill or a full disk leaves the old file */
    FILE *f = memfile_open(&mf);
    if (!f) pelab_die("%s: %s", path, pelab_errmsg);
    results_csv_header(f, &RES_TASK_CSV);
    for (int d = 0; d < r->n_depth; d++)
        for (int i = 0; i < r->n_len; i++) {
            ResultRow w = cell_row(r, d, i);
            results_csv_row(f, &RES_TASK_CSV, &w);
        }
    if (memfile_commit(&mf, path) != 0) pelab_die("%s", pelab_errmsg);
}

static void write_json(const TaskRun *r, const char *path) {
    MemFile mf; /* written whole: a kill or a full disk leaves the old file */
    FILE *f = memfile_open(&mf);
    if (!f) pelab_die("%s: %s", path, pelab_errmsg);
    json_field(f, "{\n  ", "command", "task eval");
    json_field(f, ",\n  ", "model", r->model);
    json_field(f, ",\n  ", "task", r->task);
    fprintf(f, ",\n  \"seed\": %llu,\n  \"examples_per_cell\": %d,\n  \"train_len\": %d,\n  \"cells\": [", r->seed, r->n,
            r->train_len);
    int first = 1;
    for (int d = 0; d < r->n_depth; d++)
        for (int i = 0; i < r->n_len; i++) {
            ResultRow w = cell_row(r, d, i);
            results_json_row(f, &RES_TASK_JSON, &w, &first);
        }
    fprintf(f, "\n  ]\n}\n");
    if (memfile_commit(&mf, path) != 0) pelab_die("%s", pelab_errmsg);
}

/* DIR/accuracy_vs_length.{dat,png,svg} (one exact-match and one byte-accuracy line per depth) and,
 * with depths, DIR/depth_x_length.{dat,png,svg}: the exact-match heatmap. The dashed line: the
 * last length whose examples fit in the training length. */
static void write_plots(const TaskRun *r, const char *dir) {
    if (make_dirs(dir) != 0) pelab_die("task eval: --plots: %s", pelab_errmsg);
    char path[1200];
    snprintf(path, sizeof path, "%s/accuracy_vs_length.dat", dir);
    AtomicFile file; /* each file whole or not at all (pelab_die removes a half-written one) */
    FILE *f = atomic_open(&file, path);
    if (!f) pelab_die("task eval: --plots: %s", pelab_errmsg);
    int listed = r->cell[0][0].listed;
    fprintf(f, "# length, positions, then exact match %%, byte accuracy %%%s per depth\n", listed ? " and RULER score %" : "");
    int last_in = -1;
    for (int i = 0; i < r->n_len; i++) {
        long reach = 0;
        for (int d = 0; d < r->n_depth; d++)
            if (r->cell[d][i].max_positions > reach) reach = r->cell[d][i].max_positions;
        if (reach <= r->train_len) last_in = i;
        fprintf(f, "%d %ld", (int)r->len_value[i], reach);
        for (int d = 0; d < r->n_depth; d++) {
            fprintf(f, " %.3f %.3f", 100 * exact_of(&r->cell[d][i]), 100 * bytes_of(&r->cell[d][i]));
            if (listed) fprintf(f, " %.3f", 100 * r->cell[d][i].recall);
        }
        fprintf(f, "\n");
    }
    if (atomic_commit(&file) != 0) pelab_die("task eval: --plots: %s", pelab_errmsg);
    if (r->has_depth) {
        static double grid[MAX_CELLS * MAX_CELLS];
        for (int d = 0; d < r->n_depth; d++)
            for (int i = 0; i < r->n_len; i++) grid[d * r->n_len + i] = grid_of(&r->cell[d][i]);
        snprintf(path, sizeof path, "%s/depth_x_length.dat", dir);
        if (gp_grid_dat(path, grid, r->n_depth, r->n_len) != 0) pelab_die("task eval: --plots: %s", pelab_errmsg);
    }
    snprintf(path, sizeof path, "%s/task_plots.gp", dir);
    if (!(f = atomic_open(&file, path))) pelab_die("task eval: --plots: %s", pelab_errmsg);
    fprintf(f, "# gnuplot task_plots.gp (in this directory)\n");
    gp_preamble(f);
    fprintf(f, "set logscale x 2\nset xlabel 'task length (dashed: the last whose examples fit in L = %d positions)'\n"
               "set ylabel 'accuracy (%%)'\nset yrange [0:100]\n", r->train_len);
    if (last_in >= 0)
        fprintf(f, "set arrow from %g, graph 0 to %g, graph 1 nohead dashtype 2 lc rgb 'gray40'\n",
                r->len_value[last_in], r->len_value[last_in]);
    fprintf(f, "set title ");
    gp_string(f, r->task);
    fputc('\n', f);
    for (int t = 0; t < 2; t++) {
        gp_output(f, "accuracy_vs_length", t ? "svg" : "png", 1000, 600);
        fprintf(f, "plot ");
        int per = listed ? 3 : 2; /* columns per depth */
        for (int d = 0; d < r->n_depth; d++) {
            char label[64] = "";
            if (r->has_depth) snprintf(label, sizeof label, ", depth %.2f", r->depth[d]);
            fprintf(f, "%s'accuracy_vs_length.dat' using 1:%d with linespoints lt %d title 'exact match%s', "
                       "'' using 1:%d with linespoints lt %d dashtype 2 title 'byte accuracy%s'",
                    d ? ", \\\n     " : "", 3 + per * d, d + 1, label, 4 + per * d, d + 1, label);
            if (listed)
                fprintf(f, ", '' using 1:%d with linespoints lt %d dashtype 3 title 'RULER score%s'", 5 + per * d, d + 1,
                        label);
        }
        fprintf(f, "\nset output\n");
    }
    if (r->has_depth) {
        const char *what = listed ? "RULER score (%)" : "exact match (%)";
        int lens[MAX_CELLS];
        for (int i = 0; i < r->n_len; i++) lens[i] = (int)r->len_value[i];
        char title[64];
        snprintf(title, sizeof title, "%s, depth x length", listed ? "RULER score" : "exact match");
        gp_grid_plot(f, "depth_x_length", title, what, listed ? "needle depth" : "key depth", lens, r->n_len, r->depth,
                     r->n_depth);
    }
    if (atomic_commit(&file) != 0) pelab_die("task eval: --plots: %s", pelab_errmsg);
    int have_gp, drawn = gp_run(dir, "task_plots.gp", &have_gp);
    if (drawn) printf("plots: %s/accuracy_vs_length.png%s\n", dir, r->has_depth ? ", depth_x_length.png" : "");
    else if (have_gp) printf("plots: gnuplot failed (see %s/gnuplot.log); data and script in %s\n", dir, dir);
    else printf("plots: gnuplot not found; data and script in %s (cd there && gnuplot task_plots.gp)\n", dir);
}

static void print_table(const TaskRun *r) {
    printf("# %s on %s, %d examples per cell, seed %llu, training length %d\n", r->task, r->model, r->n, r->seed,
           r->train_len);
    int listed = r->cell[0][0].listed;
    printf("%6s %8s %10s %12s %14s%s\n", "depth", "length", "positions", "exact match", "byte accuracy",
           listed ? "    RULER score  all recalled" : "");
    for (int d = 0; d < r->n_depth; d++)
        for (int i = 0; i < r->n_len; i++) {
            const TaskScore *s = &r->cell[d][i];
            char dtext[16] = "-", ruler[64] = "";
            if (r->has_depth) snprintf(dtext, sizeof dtext, "%.2f", r->depth[d]);
            if (listed) snprintf(ruler, sizeof ruler, " %13.1f%% %13d", 100 * s->recall, s->recall_all);
            printf("%6s %8d %10ld %11.1f%% %13.1f%%%s%s\n", dtext, s->len, s->max_positions, 100 * exact_of(s),
                   100 * bytes_of(s), ruler, s->max_positions > r->train_len ? "  (past L)" : "");
        }
    if (!r->has_depth) return;
    /* the retrieval grid: depth down, length across */
    printf("\n%s %%, depth x length\n%6s", listed ? "RULER score" : "exact match", "depth");
    for (int i = 0; i < r->n_len; i++) printf(" %7d", (int)r->len_value[i]);
    for (int d = 0; d < r->n_depth; d++) {
        printf("\n%6.2f", r->depth[d]);
        for (int i = 0; i < r->n_len; i++) printf(" %7.1f", 100 * grid_of(&r->cell[d][i]));
    }
    printf("\n");
}

/* greedy answers of a trained model at each length (and depth, for a task with one): a table,
 * for retrieval tasks also the depth x length grid of exact match; CSV, JSON and plots on request */
static int eval(int argc, char **argv) {
    const char *task = NULL, *lens = NULL, *depths = NULL, *csv = NULL, *json = NULL, *plots = NULL;
    LoadFlags load = LOAD_FLAGS_DEFAULT;
    static TaskRun r; /* large: not on the stack */
    r.seed = 1, r.n = 100;
    int threads = 0, rand_pos = 0;
    const OptSpec opts[] = {
        {"--task", OPT_STR, &task, 0, 0, "task SPEC (pelab task list); its length range is ignored"},
        {"--rand-pos", OPT_INT, &rand_pos, 0, 1 << 30, "each example at sorted distinct positions from [0, N), as a model "
                                                       "trained with --rand-pos N is evaluated (0: positions 0..)"},
        {"--lens", OPT_STR, &lens, 0, 0, "lengths to test, comma-separated (default: the spec's lo, hi, 2 hi, 4 hi)"},
        {"--depths", OPT_STR, &depths, 0, 0, "depths in [0, 1] to test, comma-separated (tasks with a depth option)"},
        {"--n", OPT_INT, &r.n, 1, 1 << 20, "examples per cell"},
        {"--seed", OPT_U64, &r.seed, 0, 1.8e19, "example seed (different from training's: held-out examples)"},
        {"--csv", OPT_OUT_FILE, &csv, 0, 0, "also write the cells as CSV"},
        {"--json", OPT_OUT_FILE, &json, 0, 0, "also write the cells as JSON"},
        {"--plots", OPT_OUT_DIR, &plots, 0, 0, "plot accuracy vs length (and the depth x length heatmap) into DIR"},
        LOAD_FLAG_ROWS(&load),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos[1];
    int n_pos;
    args_parse("task eval", "CKPT --task SPEC [flags]", argc, argv, 2, opts, sizeof opts / sizeof opts[0], pos, 1,
               &n_pos);
    if (n_pos != 1 || !task) pelab_die("task eval: expected a checkpoint and --task SPEC (see pelab task eval --help)");
    TaskSpec t;
    if (task_parse(&t, task) != 0) pelab_die("%s", pelab_errmsg);
    int depth_opt = -1;
    if (lens) r.n_len = args_numbers("task eval", "--lens", lens, 1, 1 << 16, r.len_value, MAX_CELLS);
    else {
        int lo = (int)t.lo[t.def->len_opt], hi = (int)t.hi[t.def->len_opt];
        int defaults[4] = {lo, hi, 2 * hi, 4 * hi};
        for (int i = 0; i < 4; i++)
            if (i == 0 || defaults[i] != defaults[i - 1]) r.len_value[r.n_len++] = defaults[i];
    }
    for (int k = 0; k < t.def->n_opts; k++)
        if (strcmp(t.def->opts[k].name, "depth") == 0) depth_opt = k;
    r.n_depth = 1;
    if (depths) {
        if (depth_opt < 0) pelab_die("--depths: task %s has no depth option", t.def->name);
        r.n_depth = args_numbers("task eval", "--depths", depths, 0, 1, r.depth, MAX_CELLS);
        r.has_depth = 1;
    }
    set_threads(threads);
    Model m;
    Tokenizer tok;
    load_model_or_die("task eval", pos[0], &load, &m, &tok);
    r.model = pos[0], r.train_len = m.cfg.seq_len;
    task_format(&t, r.task, sizeof r.task);
    for (int d = 0; d < r.n_depth; d++) {
        if (r.has_depth) t.lo[depth_opt] = t.hi[depth_opt] = r.depth[d];
        for (int i = 0; i < r.n_len; i++)
            if (task_eval_length(&m, &tok, &t, (int)r.len_value[i], r.n, r.seed, rand_pos, &r.cell[d][i]) != 0)
                pelab_die("task eval: length %d: %s", (int)r.len_value[i], pelab_errmsg);
    }
    print_table(&r);
    if (csv) write_csv(&r, csv);
    if (json) write_json(&r, json);
    if (plots) write_plots(&r, plots);
    tokenizer_free(&tok);
    model_free(&m);
    return 0;
}

int cmd_task(int argc, char **argv) {
    if (argc < 2) pelab_die("task: expected a subcommand: list, show or eval (see pelab task --help)");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (strcmp(sub, "list") == 0) return list(argc, argv);
    if (strcmp(sub, "show") == 0) return show(argc, argv);
    if (strcmp(sub, "eval") == 0) return eval(argc, argv);
    pelab_die("task: unknown subcommand '%s' (list, show, eval)", sub);
}
