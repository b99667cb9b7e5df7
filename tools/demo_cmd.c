/* demo_cmd.c: `pelab demo`: the built-in end-to-end run. Trains a few seeds of one small model per
 * position scheme side by side on the synthetic corpus at a short length L, each until its
 * validation loss converges (compare --converge), measures held-out loss at L/2 .. 8L
 * (non-overlapping windows, positions restarting at 0), prints the table, writes a report with a
 * loss-vs-length plot, then shows why the table looks as it does: the same held-out prompt continued
 * to 8L by RoPE, RoPE with yarn at the largest multiple, and ALiBi (those among --schemes), the
 * crossing of L marked, with one line of failure metrics each (infer/genmetrics.h). It is a
 * `pelab compare` (lab/compare.c, lab/report.c): the same run files, CSVs, report, verdicts and gnuplot
 * scripts. Its defaults (L 32, dim 32, lr 1e-2, 4 seeds) are sized so that every run converges and
 * the verdicts past L are significant within about 3 minutes on 2 cores (README). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/eval.h"
#include "../data/corpus.h"
#include "../data/dataset.h"
#include "../infer/genmetrics.h"
#include "../io/checkpoint.h"
#include "args.h"
#include "commands.h"
#include "../lab/compare.h"
#include "../lab/gnuplot.h"
#include "../lab/report.h"
#include "compare_flags.h"
#include "train_flags.h"

/* a byte of a generated text; control bytes but the newline, and bytes past ASCII (the demo corpus is
 * ASCII; a stray one would print invalid UTF-8), shown as '?' */
static void put_byte(int id) { putchar(id == '\n' || (id >= 32 && id < 127) ? id : '?'); }

/* the text, the prompt in [ ] and the place where position L is crossed marked */
static void print_marked(const GenText *g, int L) {
    for (int t = 0; t < g->n; t++) {
        if (t == 0) fputs("[", stdout);
        if (t == L) fputs("\u27e8L\u27e9", stdout);
        put_byte(g->tokens[t]);
        if (t == g->n_prompt - 1) fputs("]", stdout);
    }
    printf("\n");
}

/* "0.123 -> 0.456": a metric before and after L */
static void print_pair(const char *name, double before, double after) {
    printf("  %s %.3f -> %.3f", name, before, after);
}

/* The point of the demo: one prompt from the held-out text continued far past L by a scheme (under
 * a scaling rule when rule is not "none"), the crossing of L marked, and the failure metrics of
 * infer/genmetrics.h over the demo's prompts: repetition, distinct 4-grams and the model's own
 * loss before -> after L, and the held-out loss jump at L. */
static void show_scheme(const Compare *c, int s, const char *rule, const int *held, size_t n_held, GenSummary *sum) {
    char ckpt[1200], label[200];
    compare_run_path(c, s, 0, ".safetensors", ckpt, sizeof ckpt);
    snprintf(label, sizeof label, "%s%s%s", c->scheme[s], strcmp(rule, "none") ? " + " : "", strcmp(rule, "none") ? rule : "");
    Model m;
    if (eval_load_rule(ckpt, rule, PRECISION_FP32, &m, NULL) != 0) pelab_die("demo: %s", pelab_errmsg);
    int L = c->base.seq_len;
    GenSampling gs = {GEN_TEMPERATURE, GEN_TOP_P, c->seed[0]};
    GenText first;
    if (gen_summary(&m, held, n_held, L, compare_gen_len(c), c->gen_prompts, 4, &gs, sum, &first) != 0)
        pelab_die("demo: %s: %s", label, pelab_errmsg);
    double jump;
    int refused;
    if (loss_jump_on_text(&m, held, n_held, L, &jump, &refused) != 0) pelab_die("demo: %s: %s", label, pelab_errmsg);
    printf("\n== %s: [prompt] continued to %d tokens; \u27e8L\u27e9 marks position L = %d ==\n", label, first.n, L);
    print_marked(&first, L);
    printf("%s, %d texts, before -> after L:", label, sum->n_texts);
    print_pair("repeated-4", ngram_repeat_rate(&sum->before.ng), ngram_repeat_rate(&sum->after.ng));
    print_pair("distinct-4", ngram_distinct_rate(&sum->before.ng), ngram_distinct_rate(&sum->after.ng));
    print_pair("own loss", gen_range_loss(&sum->before), gen_range_loss(&sum->after));
    if (refused) printf("  loss jump at L n/a\n");
    else printf("  loss jump at L %+.3f\n", jump);
    gen_text_free(&first);
    model_free(&m);
}

/* the index of the first scheme named name (options allowed), or -1 */
static int find_scheme(const Compare *c, const char *name) {
    size_t n = strlen(name);
    for (int i = 0; i < c->n_schemes; i++)
        if (strncmp(c->scheme[i], name, n) == 0 && (c->scheme[i][n] == 0 || c->scheme[i][n] == ':')) return i;
    return -1;
}

/* rope, rope with yarn at the largest evaluated multiple, and alibi, those that were trained */
static void show_past_l(const Compare *c) {
    Dataset d;
    if (dataset_load(&d, c->data, c->base.val_frac, c->seed[0], (size_t)c->base.synth_bytes, c->base.seq_len) != 0)
        pelab_die("demo: %s", pelab_errmsg);
    const int *held = d.tokens + d.n_train;
    size_t n_held = d.n - d.n_train;
    if (n_held > 16384) n_held = 16384; /* the loss jump needs a few windows, not the whole tail */
    int rope = find_scheme(c, "rope"), alibi = find_scheme(c, "alibi");
    char yarn[32];
    snprintf(yarn, sizeof yarn, "yarn:%g", (double)c->lens[c->n_lengths - 1] / c->base.seq_len);
    printf("\npast the training length: the same prompt continued by each scheme (temperature %g, top-p %g, seed "
           "%llu; the metrics over %d prompts from the held-out text; repeated-4: share of 4-grams seen earlier, "
           "distinct-4: unique / all 4-grams, own loss: the model's NLL of its own tokens, loss jump: held-out loss "
           "at (L, 2L] minus (L/2, L])\n",
           GEN_TEMPERATURE, GEN_TOP_P, c->seed[0], c->gen_prompts);
    GenSummary sum; /* the last scheme's; its data_* (the held-out text after the prompts) is every scheme's */
    if (rope >= 0) show_scheme(c, rope, "none", held, n_held, &sum);
    if (rope >= 0) show_scheme(c, rope, yarn, held, n_held, &sum);
    if (alibi >= 0) show_scheme(c, alibi, "none", held, n_held, &sum);
    if (rope >= 0 || alibi >= 0) { /* the yardstick: how repetitive the text itself is there */
        printf("\nheld-out text after the same prompts, before -> after L:");
        print_pair("repeated-4", ngram_repeat_rate(&sum.data_before), ngram_repeat_rate(&sum.data_after));
        print_pair("distinct-4", ngram_distinct_rate(&sum.data_before), ngram_distinct_rate(&sum.data_after));
        printf("\n(repetition above the text's: the model loops; below it: it no longer reuses its context)\n");
    }
    dataset_free(&d);
}

int cmd_demo(int argc, char **argv) {
    static Compare c; /* large: not on the stack */
    int steps = 5000, threads = 0, synth_bytes = 1 << 20, seeds = 4;
    const char *schemes = "nope,learned,sinusoidal,alibi,rope";
    c.name = "demo", c.out = "runs/demo", c.data = "synth:stories", c.mult = "0.5,1,2,4,8";
    compare_gen_defaults(&c);
    compare_verdict_defaults(&c);
    TrainConfig *b = &c.base;
    train_config_defaults(b);
    /* lr: at 3e-3 these models were still improving after 3,000 steps (by more than 0.01 nats per 20%);
     * at 1e-2 with a cap of 3,000, 4 of 20 runs */
    b->dim = 32, b->layers = 2, b->heads = 4, b->seq_len = 32, b->batch = 16, b->lr = 1e-2f;
    const OptSpec opts[] = {
        {"--steps", OPT_INT, &steps, 1, 1 << 30, "the most steps a run may take: each trains until its validation "
                                                 "loss converges, then cools down (compare --converge)"},
        {"--seeds", OPT_INT, &seeds, 1, CMP_MAX_SEEDS, "seeds per scheme (1..N), trained side by side; 2 or more "
                                                      "for a verdict"},
        {"--schemes", OPT_STR, &schemes, 0, 0, "comma-separated position schemes"},
        {"--out", OPT_OUT_DIR, &c.out, 0, 0, "directory for the runs, report.md and plots"},
        TRAIN_FLAG_ROWS(b),
        TRAIN_SYNTH_BYTES_ROW(&synth_bytes),
        COMPARE_GEN_OPTS(&c),
        OPT_THREADS_ROW(&threads),
    };
    args_parse("demo", "[flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    set_threads(threads);
    if (compare_set_schemes(&c, schemes) != 0) pelab_die("%s", pelab_errmsg);
    compare_set_cmdline(&c, argc, argv);

    b->steps = steps, b->synth_bytes = synth_bytes, b->ckpt_every = 0, b->converge = 1;
    compare_set_converge(&c);
    c.n_seeds = seeds;
    for (int k = 0; k < seeds; k++) c.seed[k] = (unsigned long long)k + 1;
    c.eval_tokens = 16384;   /* per length: the seeds, not more text, decide the verdicts */
    c.nonoverlap_only = 1;   /* the sliding protocol would double the evaluation time */
    c.fresh = 1;             /* a demo always trains, whatever an earlier one left behind */
    c.n_lengths = eval_parse_lengths(NULL, c.mult, b->seq_len, c.lens, CMP_MAX_LENGTHS);
    if (c.n_lengths < 0) pelab_die("demo: %s", pelab_errmsg);

    printf("pelab demo: %d seed%s per scheme side by side at L = %d on synth:stories (%d bytes, the last %g%% held "
           "out), each trained until its validation loss converges (at most %d steps); held-out loss in nats/byte at "
           "L/2 .. 8L\n", seeds, seeds == 1 ? "" : "s", b->seq_len, synth_bytes, 100 * b->val_frac, steps);
    fflush(stdout);
    if (compare_run_all(&c, NULL) != 0) {
        fflush(stdout);
        fprintf(stderr, "pelab: %s\n", pelab_errmsg);
        exit(compare_stop_status());
    }
    if (compare_print_table(&c, stdout) != 0) pelab_die("demo: %s", pelab_errmsg);
    fflush(stdout);
    if (compare_report(&c) != 0) pelab_die("demo: %s", pelab_errmsg);

    if (compare_gen_len(&c) > 0) show_past_l(&c);
    char ckpt[1200];
    compare_run_path(&c, c.n_schemes - 1, 0, ".safetensors", ckpt, sizeof ckpt);
    printf("\ncheckpoints are in %s/runs/; try: ./pelab sample %s --prompt \"Once upon a time\"\n", c.out, ckpt);
    printf("report: %s/report.md\n", c.out);
    if (!gp_available())
        printf("no plots drawn: %s; to get them, %s, then: cd %s/plots && gnuplot plots.gp curves.gp\n", gp_missing(),
               GP_INSTALL_HINT, c.out);
    printf("on real text, the shipped %s/%s: ./pelab suite quick --protocols lm (it prints its expected time first)\n",
           CORPUS_DIR, shipped_corpora[0].file);
    return 0;
}
