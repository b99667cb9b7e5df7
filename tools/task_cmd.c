/* task_cmd.c: `pelab task list|show`: the length-generalization tasks (data/task.h) and examples. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../data/task.h"
#include "args.h"
#include "commands.h"

static const char USAGE[] = "usage: pelab task SUBCOMMAND ...   (pelab task SUBCOMMAND --help for its flags)\n"
                            "  list                                   every task, its format and options\n"
                            "  show SPEC [--seed N] [--n K] [--len N]  K examples, the answer in [[ ]]\n";

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

int cmd_task(int argc, char **argv) {
    if (argc < 2) pelab_die("task: expected a subcommand: list or show (see pelab task --help)");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (strcmp(sub, "list") == 0) return list(argc, argv);
    if (strcmp(sub, "show") == 0) return show(argc, argv);
    pelab_die("task: unknown subcommand '%s' (list, show)", sub);
}
