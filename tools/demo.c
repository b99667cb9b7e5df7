/* demo.c: `pelab demo`: the built-in end-to-end run. Trains one small model per position scheme
 * on the synthetic corpus at a short length L, measures held-out loss at L/2 .. 8L
 * (non-overlapping windows, positions restarting at 0), prints the table, writes a report with a
 * loss-vs-length plot and samples text. It is a one-seed `pelab compare` (compare.c, report.c):
 * the same run files, CSVs, report and gnuplot scripts. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/eval.h"
#include "../infer/generate.h"
#include "../io/checkpoint.h"
#include "args.h"
#include "commands.h"
#include "compare.h"
#include "report.h"

static void print_byte(int id, void *ctx) {
    (void)ctx;
    putchar(id);
    fflush(stdout);
}

/* a few hundred bytes from the model at path, after a story opening */
static void print_sample(const char *path, const char *name) {
    Model m;
    if (checkpoint_load(path, &m, NULL, NULL, NULL) != 0) pelab_die("demo: %s", pelab_errmsg);
    const char *prompt = "Once upon a time, ";
    int n_new = 300, plen = (int)strlen(prompt);
    long max_pos = pos_max_position(&m.pos);
    if (max_pos >= 0 && plen + n_new > max_pos) n_new = (int)max_pos - plen; /* a learned table ends there */
    if (n_new > 0) {
        int *tokens = xmalloc(sizeof(int) * (plen + n_new));
        for (int i = 0; i < plen; i++) tokens[i] = (unsigned char)prompt[i];
        Sampler s;
        sampler_init(&s, m.cfg.vocab_size, 0.8f, 0.9f, 0, 42);
        printf("\nsample from %s (temperature 0.8, top-p 0.9, seed 42):\n%s", name, prompt);
        if (generate(&m, &s, tokens, plen, n_new, 1, -1, print_byte, NULL) < 0) pelab_die("demo: %s", pelab_errmsg);
        printf("\n");
        sampler_free(&s);
        free(tokens);
    }
    model_free(&m);
}

int cmd_demo(int argc, char **argv) {
    static Compare c; /* large: not on the stack */
    int steps = 600, seq_len = 64, threads = 0, dim = 96, layers = 3, synth_bytes = 1 << 20;
    const char *schemes = "nope,learned,sinusoidal,alibi,rope";
    c.name = "demo", c.out = "runs/demo", c.data = "synth:stories", c.mult = "0.5,1,2,4,8";
    const OptSpec opts[] = {
        {"--steps", OPT_INT, &steps, 1, 1 << 30, "training steps per scheme"},
        {"--seq-len", OPT_INT, &seq_len, 8, 4096, "training length L"},
        {"--schemes", OPT_STR, &schemes, 0, 0, "comma-separated position schemes"},
        {"--out", OPT_OUT_DIR, &c.out, 0, 0, "directory for the runs, report.md and plots"},
        {"--dim", OPT_INT, &dim, 4, 4096, "model width (4 heads)"},
        {"--layers", OPT_INT, &layers, 1, 64, "layers"},
        {"--synth-bytes", OPT_INT, &synth_bytes, 1000, 1 << 30, "bytes of the synthetic corpus (10% held out)"},
        OPT_THREADS_ROW(&threads),
    };
    args_parse("demo", "[flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    set_threads(threads);
    compare_set_schemes(&c, schemes);
    compare_set_cmdline(&c, argc, argv);

    TrainConfig *b = &c.base;
    train_config_defaults(b);
    b->dim = dim, b->layers = layers, b->heads = 4, b->seq_len = seq_len, b->batch = 16, b->steps = steps;
    b->synth_bytes = synth_bytes, b->eval_every = 0, b->ckpt_every = 0, b->log_every = steps / 4 > 0 ? steps / 4 : 1;
    c.n_seeds = 1, c.seed[0] = b->seed;
    c.eval_tokens = 0;       /* the whole held-out tail */
    c.nonoverlap_only = 1;   /* the sliding protocol would double the evaluation time */
    c.fresh = 1;             /* a demo always trains, whatever an earlier one left behind */
    c.n_lengths = eval_parse_lengths(NULL, c.mult, seq_len, c.lens, CMP_MAX_LENGTHS);
    if (c.n_lengths < 0) pelab_die("demo: %s", pelab_errmsg);

    printf("pelab demo: %d steps per scheme at L = %d on synth:stories (%d bytes, the last %g%% held out); held-out "
           "loss in nats/byte at L/2 .. 8L\n", steps, seq_len, synth_bytes, 100 * b->val_frac);
    fflush(stdout);
    compare_run_all(&c, NULL);
    compare_print_table(&c, stdout);
    fflush(stdout);
    if (compare_report(&c) != 0) pelab_die("demo: %s", pelab_errmsg);

    char ckpt[1200];
    int show = c.n_schemes - 1; /* sample from the last scheme (rope by default) */
    compare_run_path(&c, show, 0, ".safetensors", ckpt, sizeof ckpt);
    print_sample(ckpt, c.scheme[show]);
    printf("\ncheckpoints are in %s/runs/; try: ./pelab sample %s --prompt \"Once upon a time\"\n", c.out, ckpt);
    printf("report: %s/report.md\n", c.out);
    return 0;
}
