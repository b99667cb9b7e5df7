/* demo.c: `pelab demo`: the built-in end-to-end run. Trains one small model per position scheme
 * on the synthetic corpus at a short length L, measures held-out loss at L/2 .. 8L
 * (non-overlapping windows, positions restarting at 0), prints the table and samples text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../data/dataset.h"
#include "../infer/generate.h"
#include "../infer/score.h"
#include "../model/checkpoint.h"
#include "../train/train.h"
#include "args.h"
#include "commands.h"

static void print_byte(int id, void *ctx) {
    (void)ctx;
    putchar(id);
    fflush(stdout);
}

int cmd_demo(int argc, char **argv) {
    int steps = 600, seq_len = 64, threads = 0;
    const char *out_dir = "runs/demo", *schemes = "nope,learned,sinusoidal,alibi,rope";
    const OptSpec opts[] = {
        {"--steps", OPT_INT, &steps, 1, 1 << 30, "training steps per scheme"},
        {"--seq-len", OPT_INT, &seq_len, 8, 4096, "training length L"},
        {"--schemes", OPT_STR, &schemes, 0, 0, "comma-separated position schemes"},
        {"--out", OPT_STR, &out_dir, 0, 0, "directory for the checkpoints"},
        {"--threads", OPT_INT, &threads, 0, 1024, "threads (0: all cores)"},
    };
    args_parse("demo", "[flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    set_threads(threads);
    if (strspn(schemes, ", ") == strlen(schemes))
        pelab_die("demo: --schemes '%s': expected at least one position scheme", schemes);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", out_dir);
    for (char *p = dir + 1; *p; p++) /* mkdir -p */
        if (*p == '/') *p = 0, mkdir(dir, 0755), *p = '/';
    mkdir(dir, 0755);

    TrainConfig base;
    train_config_defaults(&base);
    base.dim = 96, base.layers = 3, base.heads = 4, base.seq_len = seq_len, base.batch = 16;
    base.steps = steps, base.synth_bytes = 1 << 20, base.eval_every = 0, base.ckpt_every = 0;
    base.log_every = steps / 4 > 0 ? steps / 4 : 1;
    Dataset data;
    if (dataset_load(&data, base.data, base.val_frac, base.seed, (size_t)base.synth_bytes, seq_len) != 0)
        pelab_die("demo: %s", pelab_errmsg);
    const int *held_out = data.tokens + data.n_train;
    size_t n_held_out = data.n - data.n_train;

    double mults[] = {0.5, 1, 2, 4, 8};
    enum { N_MULT = sizeof mults / sizeof mults[0], MAX_SCHEMES = 16 };
    char names[MAX_SCHEMES][64], paths[MAX_SCHEMES][600];
    double loss[MAX_SCHEMES][N_MULT];
    int n_schemes = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", schemes);
    printf("pelab demo: %d steps per scheme at L = %d on synth:stories (%zu training bytes); held-out loss in "
           "nats/byte at L/2 .. 8L\n",
           steps, seq_len, data.n_train);
    fflush(stdout);
    char *saveptr = NULL;
    for (char *s = strtok_r(list, ",", &saveptr); s && n_schemes < MAX_SCHEMES; s = strtok_r(NULL, ",", &saveptr)) {
        int i = n_schemes++;
        snprintf(names[i], sizeof names[i], "%s", s);
        snprintf(paths[i], sizeof paths[i], "%s/%s.safetensors", dir, s);
        TrainConfig tc = base;
        tc.pos = names[i];
        tc.out = paths[i];
        fprintf(stderr, "\n== training %s -> %s\n", names[i], paths[i]);
        TrainResult r;
        if (train_run(&tc, &r) != 0) pelab_die("demo: %s", pelab_errmsg);
        Model m;
        if (checkpoint_load(paths[i], &m, NULL, NULL, NULL) != 0) pelab_die("demo: %s", pelab_errmsg);
        long max_pos = pos_max_position(&m.pos);
        for (int k = 0; k < N_MULT; k++) {
            int len = (int)(mults[k] * seq_len);
            ScoreResult sr;
            if (max_pos >= 0 && len > max_pos) loss[i][k] = NAN; /* past the learned table: not computable */
            else if (score_tokens(&m, held_out, n_held_out, len, NULL, &sr) != 0) pelab_die("demo: %s", pelab_errmsg);
            else loss[i][k] = sr.nll_sum / sr.n_scored;
        }
        model_free(&m);
    }

    printf("\n%-12s", "scheme");
    for (int k = 0; k < N_MULT; k++) printf("  %5gL=%-5d", mults[k], (int)(mults[k] * seq_len));
    printf("\n");
    for (int i = 0; i < n_schemes; i++) {
        printf("%-12s", names[i]);
        for (int k = 0; k < N_MULT; k++)
            if (isnan(loss[i][k])) printf("  %11s", "past table");
            else printf("  %11.3f", loss[i][k]);
        printf("\n");
    }
    printf("(non-overlapping windows, position ids from 0 in each window; lower is better; 5.55 = uniform)\n");

    int show = n_schemes - 1; /* sample from the last scheme (rope by default) */
    Model m;
    if (checkpoint_load(paths[show], &m, NULL, NULL, NULL) == 0) {
        const char *prompt = "Once upon a time, ";
        int n_new = 300, plen = (int)strlen(prompt);
        int *tokens = xmalloc(sizeof(int) * (plen + n_new));
        for (int i = 0; i < plen; i++) tokens[i] = (unsigned char)prompt[i];
        Sampler s;
        sampler_init(&s, m.cfg.vocab_size, 0.8f, 0.9f, 0, 42);
        printf("\nsample from %s (temperature 0.8, top-p 0.9, seed 42):\n%s", names[show], prompt);
        long max_pos = pos_max_position(&m.pos);
        if (max_pos >= 0 && plen + n_new > max_pos) n_new = (int)max_pos - plen;
        if (generate(&m, &s, tokens, plen, n_new, 1, -1, print_byte, NULL) < 0) pelab_die("demo: %s", pelab_errmsg);
        printf("\n\ncheckpoints are in %s/; try: ./pelab sample %s --prompt \"Once upon a time\"\n", dir, paths[show]);
        sampler_free(&s);
        free(tokens);
        model_free(&m);
    }
    dataset_free(&data);
    return 0;
}
