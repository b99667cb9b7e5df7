/* task_cmd.c: `pelab task list|show`: the length-generalization tasks (data/task.h) and examples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../data/task.h"
#include "../infer/task_eval.h"
#include "../io/fields.h"
#include "args.h"
#include "commands.h"
#include "load.h"

static const char USAGE[] = "usage: pelab task SUBCOMMAND ...   (pelab task SUBCOMMAND --help for its flags)\n"
                            "  list                                   every task, its format and options\n"
                            "  show SPEC [--seed N] [--n K] [--len N]  K examples, the answer in [[ ]]\n"
                            "  eval CKPT --task SPEC [--lens A,B,...] [--depths D,...]  greedy answers: exact match\n"
                            "                                         and byte accuracy per length (and depth)\n";

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
            print_range(o->def_lo, o->def_hi);
            printf(", accepts %g..%g%s: %s\n", o->lo, o->hi, o->single ? " (one value)" : "", o->help);
        }
    }
    return 0;
}

/* the text on one line: newlines as \n, the answer span between [[ and ]] */
static void print_marked(const TaskExample *ex) {
    for (size_t i = 0; i < ex->n; i++) {
        if (i == ex->answer_start) fputs("[[", stdout);
        if (ex->text[i] == '\n') fputs("\\n", stdout);
        else putchar(ex->text[i]);
    }
    fputs("]]\n", stdout);
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
        printf("%d: len %d, answer at byte %zu, %zu bytes", i + 1, ex.len, ex.answer_start, ex.answer_len);
        if (ex.depth >= 0) printf(", depth %.3f", ex.depth);
        printf("\n   ");
        print_marked(&ex);
        task_example_free(&ex);
    }
    return 0;
}

/* greedy answers of a trained model at each length (and depth, for a task with one): a table,
 * for retrieval tasks also the depth x length grid of exact match, and a CSV */
static int eval(int argc, char **argv) {
    const char *task = NULL, *lens = NULL, *depths = NULL, *csv = NULL, *scale = NULL;
    unsigned long long seed = 1;
    int n = 100, threads = 0;
    const OptSpec opts[] = {
        {"--task", OPT_STR, &task, 0, 0, "task SPEC (pelab task list); its length range is ignored"},
        {"--lens", OPT_STR, &lens, 0, 0, "lengths to test, comma-separated (default: the spec's lo, hi, 2 hi, 4 hi)"},
        {"--depths", OPT_STR, &depths, 0, 0, "depths in [0, 1] to test, comma-separated (tasks with a depth option)"},
        {"--n", OPT_INT, &n, 1, 1 << 20, "examples per cell"},
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "example seed (different from training's: held-out examples)"},
        {"--scale", OPT_STR, &scale, 0, 0, SCALE_RULE_HELP},
        {"--csv", OPT_OUT_FILE, &csv, 0, 0, "also write the table as CSV"},
        OPT_THREADS_ROW(&threads),
    };
    const char *pos[1];
    int n_pos;
    args_parse("task eval", "CKPT --task SPEC [flags]", argc, argv, 2, opts, sizeof opts / sizeof opts[0], pos, 1,
               &n_pos);
    if (n_pos != 1 || !task) pelab_die("task eval: expected a checkpoint and --task SPEC (see pelab task eval --help)");
    TaskSpec t;
    if (task_parse(&t, task) != 0) pelab_die("%s", pelab_errmsg);
    enum { MAX_CELLS = 32 };
    double len_value[MAX_CELLS], depth[MAX_CELLS];
    int n_len = 0, n_depth = 1, depth_opt = -1;
    if (lens) n_len = args_numbers("task eval", "--lens", lens, 1, 1 << 16, len_value, MAX_CELLS);
    else {
        int lo = (int)t.lo[t.def->len_opt], hi = (int)t.hi[t.def->len_opt];
        int defaults[4] = {lo, hi, 2 * hi, 4 * hi};
        for (int i = 0; i < 4; i++)
            if (i == 0 || defaults[i] != defaults[i - 1]) len_value[n_len++] = defaults[i];
    }
    for (int k = 0; k < t.def->n_opts; k++)
        if (strcmp(t.def->opts[k].name, "depth") == 0) depth_opt = k;
    if (depths) {
        if (depth_opt < 0) pelab_die("--depths: task %s has no depth option", t.def->name);
        n_depth = args_numbers("task eval", "--depths", depths, 0, 1, depth, MAX_CELLS);
    }
    set_threads(threads);
    Model m;
    Tokenizer tok;
    load_model_or_die(pos[0], scale, &m, &tok);
    if (tok.kind != TOK_BYTE) pelab_die("task eval: %s uses the %s tokenizer; tasks are byte-level", pos[0],
                                        tokenizer_kind_name(&tok));
    FILE *f = csv ? fopen(csv, "w") : NULL;
    if (csv && !f) pelab_die("%s: cannot open for writing", csv);
    if (f) fprintf(f, "task,depth,length,positions,n,exact_match,byte_accuracy\n");
    char canon[256];
    task_format(&t, canon, sizeof canon);
    printf("# %s on %s, %d examples per cell, seed %llu, training length %d\n", canon, pos[0], n, seed,
           m.cfg.seq_len);
    printf("%6s %8s %10s %12s %14s\n", "depth", "length", "positions", "exact match", "byte accuracy");
    static double grid[MAX_CELLS][MAX_CELLS];
    for (int d = 0; d < n_depth; d++) {
        if (depths) t.lo[depth_opt] = t.hi[depth_opt] = depth[d];
        for (int i = 0; i < n_len; i++) {
            TaskScore s;
            if (task_eval_length(&m, &t, (int)len_value[i], n, seed, &s) != 0)
                pelab_die("task eval: length %d: %s", (int)len_value[i], pelab_errmsg);
            double em = (double)s.exact / s.n, acc = (double)s.correct_bytes / s.answer_bytes;
            grid[d][i] = em;
            char dtext[16] = "-";
            if (depths) snprintf(dtext, sizeof dtext, "%.2f", depth[d]);
            printf("%6s %8d %10ld %11.1f%% %13.1f%%%s\n", dtext, (int)len_value[i], s.max_positions, 100 * em,
                   100 * acc, s.max_positions > m.cfg.seq_len ? "  (past L)" : "");
            if (f) {
                csv_field(f, canon, ',');
                fprintf(f, "%s,%d,%ld,%d,%.6f,%.6f\n", depths ? dtext : "", (int)len_value[i], s.max_positions, s.n,
                        em, acc);
            }
        }
    }
    if (depths) { /* the retrieval grid: depth down, length across */
        printf("\nexact match %%, depth x length\n%6s", "depth");
        for (int i = 0; i < n_len; i++) printf(" %7d", (int)len_value[i]);
        for (int d = 0; d < n_depth; d++) {
            printf("\n%6.2f", depth[d]);
            for (int i = 0; i < n_len; i++) printf(" %7.1f", 100 * grid[d][i]);
        }
        printf("\n");
    }
    if (f && fclose(f) != 0) pelab_die("%s: write failed", csv);
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
