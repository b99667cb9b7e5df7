/* test_compare.c: `pelab compare` end to end on a micro config (2 schemes x 2 seeds, dim 16,
 * L 16, 20 steps, a 5-step PI fine-tune of the rope runs): the report has every section and a row
 * per scheme and rule (the fine-tune too); the fine-tune changes the model; a rerun skips finished
 * runs without touching their CSVs; --jobs writes one runnable command per unfinished run; --collect rebuilds
 * the report from the CSVs alone (and says so when gnuplot is missing, as in CI). `pelab demo`
 * on a micro config: the table on stdout, report.md with the table and the command. Which runs get
 * the scaling rules and the fine-tune: the schemes that declare POS_CAP_RULES (xPos too).
 * compare --task: task rows, the accuracy report, mean ± std over seeds from constructed CSVs.
 * The long-generation, loss-jump and key-token rows and sections of the micro run. --sink-token:
 * trained and evaluated with the sink, no rows that would read the text without it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../core/error.h"
#include "../io/checkpoint.h"
#include "../model/pos/pos.h"
#include "../lab/compare.h"
#include "../lab/compare_plan.h"
#include "../lab/report_show.h"
#include "../lab/suite_plan.h"
#include "../model/pattern.h"
#include "test.h"

/* runs "PELAB SUBCOMMAND ARGS" (PELAB_BIN: the binary under test); stdout+stderr into out */
static int run_sub(const char *env, const char *sub, const char *args, char *out, size_t cap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s ./pelab %s %s", env, sub, args);
    return run_pelab(cmd, out, cap);
}

static int run_compare(const char *env, const char *args, char *out, size_t cap) {
    return run_sub(env, "compare", args, out, cap);
}


static long long mtime_ns(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
#ifdef __APPLE__
    return (long long)st.st_mtimespec.tv_sec * 1000000000LL + st.st_mtimespec.tv_nsec;
#else
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
#endif
}

static int count_substr(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p++) n++;
    return n;
}

/* the loss field of the first CSV row starting with prefix, as text ("" if none) */
static void csv_loss(const char *path, const char *prefix, char *loss, size_t cap) {
    const char *csv = test_slurp(path), *row = csv ? strstr(csv, prefix) : NULL;
    loss[0] = 0;
    if (row) snprintf(loss, cap, "%.*s", (int)strcspn(row + strlen(prefix), ","), row + strlen(prefix));
}

static void check_all_in(const char *text, const char *what, const char *const *needles, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK(text && strstr(text, needles[i]) != NULL, "%s has '%s'", what, needles[i]);
}

/* the fine-tune's rows: one per length and protocol, each a different loss than post-hoc PI */
static void check_finetune_csv(const char *dir) {
    char path[512], post_hoc[32], tuned[32];
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1_ft-pi2.csv", dir);
    const char *csv = test_slurp(path);
    CHECK(csv && count_substr(csv, "\nlength,rope,1,pi:2+ft,16,") == 6, "the fine-tune's CSV has 3 lengths x 2 protocols");
    csv_loss(path, "\nlength,rope,1,pi:2+ft,16,32,nonoverlap,", tuned, sizeof tuned);
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1.csv", dir);
    csv_loss(path, "\nlength,rope,1,pi:2,16,32,nonoverlap,", post_hoc, sizeof post_hoc);
    CHECK(tuned[0] && post_hoc[0] && strcmp(tuned, post_hoc) != 0,
          "fine-tuning changes the loss at 2L (post hoc %s, fine-tuned %s)", post_hoc, tuned);
    snprintf(path, sizeof path, "%s/cmp/runs/alibi_s1_ft-pi2.csv", dir);
    CHECK(mtime_ns(path) < 0, "only rope runs are fine-tuned");
}

/* the long-generation, loss-jump and key-token rows of a run: every bucket, finite values */
static void check_gen_rows(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1.csv", dir);
    const char *csv = test_slurp(path);
    CHECK(csv && count_substr(csv, "\ngen,rope,1,none,16,128,rep4,") == 8 &&
              count_substr(csv, "\ngen,rope,1,pi:2,16,128,ownloss,") == 8 &&
              count_substr(csv, "\ngen,rope,1,none,16,128,distinct4,") == 8,
          "the CSV has 8 position buckets of each generation metric for each rule");
    CHECK(count_substr(csv, "\ngen,rope,1,none,16,128,rep4_data,") >= 7 &&
              count_substr(csv, "\ngen,rope,1,none,16,128,distinct4_data,") >= 7,
          "... and of the held-out text's own continuation (the first bucket may be all prompt)");
    snprintf(path, sizeof path, "%s/cmp/report.md", dir);
    const char *rep = test_slurp(path);
    CHECK(rep && count_substr(rep, "| *held-out text* | (reference) |") == 2,
          "the report's repetition tables have the held-out text's row");
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1.csv", dir);
    csv = test_slurp(path);
    const char *prefixes[] = {"\ngen,rope,1,none,16,128,rep4,", "\ngen,rope,1,none,16,128,distinct4,",
                              "\ngen,rope,1,none,16,128,ownloss,", "\njump,rope,1,none,16,32,nonoverlap,",
                              "\nkeyppl,rope,1,none,16,32,all,", "\nkeyppl,rope,1,none,16,16,share,"};
    for (int i = 0; i < 6; i++) {
        char v[32];
        csv_loss(path, prefixes[i], v, sizeof v);
        char *end;
        double x = strtod(v, &end);
        CHECK(v[0] && !*end && isfinite(x) && (i == 3 || x >= 0), "%s row is finite: '%s'", prefixes[i] + 1, v);
    }
    snprintf(path, sizeof path, "%s/cmp/runs/alibi_s1.csv", dir);
    csv = test_slurp(path);
    CHECK(csv && strstr(csv, "\njump,alibi,1,none,16,32,nonoverlap,") && strstr(csv, "\nkeyppl,alibi,1,none,16,8,key,"),
          "alibi has its jump and key-token rows");
}

/* the demo at a micro size: the table on stdout, report.md (gnuplot hidden), the CSVs, a rerun retrains */
static void check_demo(const char *dir) {
    static char out[1 << 16], args[1024], path[512];
    snprintf(args, sizeof args, "--steps 3 --seq-len 8 --dim 16 --layers 1 --synth-bytes 20000 --schemes rope,learned "
             "--seeds 2 --threads 1 --out %s/demo", dir);
    int rc = run_sub("PELAB_NO_GNUPLOT=1", "demo", args, out, sizeof out);
    snprintf(path, sizeof path, "report: %s/demo/report.md", dir);
    const char *stdout_needles[] = {"1L=8", "8L=64", "\nrope ", "\nlearned ", "past table", path,
                                    "== rope: [prompt] continued to 64 tokens", "== rope + yarn:8:", "\u27e8L\u27e9",
                                    "rope + yarn:8, 3 texts, before -> after L:  repeated-4 ", "loss jump at L ",
                                    "held-out text after the same prompts, before -> after L:  repeated-4 "};
    CHECK(rc == 0, "demo runs end to end (exit %d): %s", rc, out);
    check_all_in(out, "demo output", stdout_needles, sizeof stdout_needles / sizeof stdout_needles[0]);
    snprintf(path, sizeof path, "%s/demo/report.md", dir);
    const char *rep = test_slurp(path);
    const char *report_needles[] = {"# pelab demo report", "pelab demo --steps 3 --seq-len 8", "| 8 (=L) |",
                                    "| rope | none |", "| learned | none |", "n/a (past table of 8)",
                                    "runs: 4 of 4 finished", "gnuplot not found", "- rope: reliable length",
                                    "Verdicts, exploratory (all pairs at this length, Holm):", ("Convergence: each run "
                                     "trained until its validation loss fell by at most 1%"), "at most 3 steps"};
    check_all_in(rep, "demo report.md", report_needles, sizeof report_needles / sizeof report_needles[0]);
    CHECK(rep && !strstr(rep, "sliding windows\n"), "the demo report has the non-overlapping table only");
    /* 3 steps learn nothing: every run is at the unigram bound, and the verdict says why there is none */
    const char *verdict = rep ? strstr(rep, "\n\n## Verdict\n\n") : NULL;
    const char *head = "# pelab demo report\n\n> **No plots drawn**: gnuplot was not run (PELAB_NO_GNUPLOT is set). To "
                       "get them, install gnuplot (Debian/Ubuntu: `sudo apt-get install gnuplot-nox`; macOS: `brew "
                       "install gnuplot`), then draw";
    CHECK(rep && strncmp(rep, head, strlen(head)) == 0 && !strstr(rep, "--collect`, which trains"),
          "the demo report's first lines say the plots were not drawn and how to get them: %.400s", rep ? rep : "");
    CHECK(verdict && strncmp(verdict, "\n\n## Verdict\n\n**No scheme has 2 seeds that passed the gate", 58) == 0 &&
              strchr(rep + 2, '#') == verdict + 2 &&
              !strstr(rep, "One seed per scheme") && strstr(rep, "- rope: 0 of 2 seeds passed the gate; left out: seeds 1, 2"),
          "the demo report opens with the verdict on its seeds: %.300s", rep ? rep : "");
    snprintf(path, sizeof path, "%s/demo/runs/rope_s1.csv", dir);
    CHECK(mtime_ns(path) > 0, "the demo keeps its CSV (%s)", path);
    snprintf(path, sizeof path, "%s/demo/plots/plots.gp", dir);
    CHECK(test_slurp(path) && strstr(test_slurp(path), "set logscale x 2"), "the demo keeps the gnuplot script");
    rc = run_sub("PELAB_NO_GNUPLOT=1", "demo", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "] train rope seed 1") && !strstr(out, "skip "), "a demo rerun trains again: %s", out);
}

/* the report's bias picture: no checkpoint draws the initial parameters; a corrupt one is an error
 * naming it, not a picture "at initialisation" */
static void report_bias_checkpoint(const char *dir) {
    static Compare c;
    static char out[1100], path[1300], rep[8192];
    snprintf(out, sizeof out, "%s/repshow", dir);
    CHECK(mkdir(out, 0755) == 0 || errno == EEXIST, "mkdir %s", out);
    snprintf(path, sizeof path, "%s/runs", out);
    CHECK(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s", path);
    c.name = "compare", c.out = out, c.n_seeds = 1, c.seed[0] = 1;
    /* the pictures are drawn with the model's layers (main 9adacaf): at least one */
    c.base.seq_len = 8, c.base.dim = 8, c.base.heads = 2, c.base.layers = 1;
    compare_set_schemes(&c, "alibi");
    FILE *f = tmpfile();
    CHECK(f && report_show_write(f, &c) == 0, "report without a checkpoint: %s", pelab_errmsg);
    if (f) {
        rewind(f);
        rep[fread(rep, 1, sizeof rep - 1, f)] = 0;
        fclose(f);
    }
    CHECK(strstr(rep, "at initialisation (no checkpoint)"), "report without a checkpoint: %s", rep);
    snprintf(path, sizeof path, "%s/runs/alibi_s1.safetensors", out);
    FILE *g = fopen(path, "w");
    CHECK(g != NULL, "cannot write %s", path);
    if (g) fputs("not a checkpoint", g), fclose(g);
    f = tmpfile();
    CHECK(f && report_show_write(f, &c) == -1 && strstr(pelab_errmsg, "alibi_s1.safetensors"),
          "a corrupt checkpoint is an error naming it: %s", pelab_errmsg);
    if (f) fclose(f);
}

/* the capability decides, not the name: every scheme as registered, and with options */
static void rules_follow_capability(void) {
    static Compare c;
    c.n_schemes = 0;
    for (int i = 0; i < pos_count() && c.n_schemes < CMP_MAX_SCHEMES; i++) {
        snprintf(c.scheme[c.n_schemes], sizeof c.scheme[0], "%s", pos_at(i)->name);
        int want = (pos_at(i)->caps & POS_CAP_RULES) != 0;
        CHECK(compare_takes_rules(&c, c.n_schemes) == want, "compare: %s takes rules: %d", pos_at(i)->name, want);
        c.n_schemes++;
    }
    const char *specs[][2] = {{"xpos:scale_base=64", "1"}, {"rope:base=500", "1"}, {"fope:layout=half", "0"},
                              {"sinusoidal:scale=1", "0"}, {"ropes", "0"}};
    for (int i = 0; i < 5; i++) {
        snprintf(c.scheme[0], sizeof c.scheme[0], "%s", specs[i][0]);
        c.finetune_steps = 5, c.finetune_kinds = 1 << FT_PI;
        int want = specs[i][1][0] == '1';
        CHECK(compare_takes_rules(&c, 0) == want && compare_finetunes(&c, 0) == want,
              "compare: %s takes rules and is fine-tuned: %s", specs[i][0], specs[i][1]);
    }
    /* a spec with several options is listed as written for --pos: "k=v" pieces join the spec before */
    c.name = "compare";
    compare_set_schemes(&c, "nope,sinusoidal:scale=1,tokens=sqrt_dim,rope:base=500,scale=pi:2,alibi");
    CHECK(c.n_schemes == 4 && strcmp(c.scheme[1], "sinusoidal:scale=1,tokens=sqrt_dim") == 0 &&
              strcmp(c.scheme[2], "rope:base=500,scale=pi:2") == 0 && strcmp(c.scheme[3], "alibi") == 0 &&
              strcmp(c.tag[1], "sinusoidal-scale-1-tokens-sqrt-dim") == 0,
          "--schemes keeps multi-option specs whole (%d: %s | %s)", c.n_schemes, c.scheme[1], c.scheme[2]);
    /* NoPE layers: digits after "+nope@" continue the list; elsewhere they would be a scheme */
    compare_set_schemes(&c, "rope,rope+nope@1,2,alibi+temp:floor=2+nope@0,3");
    CHECK(c.n_schemes == 3 && strcmp(c.scheme[0], "rope") == 0 && strcmp(c.scheme[1], "rope+nope@1,2") == 0 &&
              strcmp(c.scheme[2], "alibi+temp:floor=2+nope@0,3") == 0 && strcmp(c.tag[1], "rope-nope-1-2") == 0,
          "--schemes keeps a layer list whole (%d: %s | %s | tag %s)", c.n_schemes, c.scheme[1], c.scheme[2], c.tag[1]);
    expect_pelab_error("./pelab compare --schemes scale=2,rope --out /tmp/pelab-unused", "no scheme before it");
    /* "+randpos[:N]" anywhere among the "+" parts: the label keeps it, the --pos spec drops it; no N: 4 L */
    c.task = "copy", c.base.seq_len = 16, c.base.rand_pos = 0;
    compare_set_schemes(&c, "rope,rope+randpos:256,alibi+temp:floor=2+randpos+nope@0");
    CHECK(c.n_schemes == 3 && strcmp(c.pos[0], "rope") == 0 && c.rand_pos[0] == 0 &&
              strcmp(c.scheme[1], "rope+randpos:256") == 0 && strcmp(c.pos[1], "rope") == 0 && c.rand_pos[1] == 256 &&
              strcmp(c.tag[1], "rope-randpos-256") == 0 && strcmp(c.pos[2], "alibi+temp:floor=2+nope@0") == 0 &&
              c.rand_pos[2] == 64,
          "+randpos per scheme: %s -> %s (%d), %s -> %s (%d)", c.scheme[1], c.pos[1], c.rand_pos[1], c.scheme[2],
          c.pos[2], c.rand_pos[2]);
    /* "+attn(SPEC)": commas and colons inside the parentheses stay in the entry; the label and tag
     * keep it, the --pos spec drops it, the pattern goes to training; other entries get none */
    compare_set_schemes(&c, "rope+attn(3*window=16,base=10000:global,base=1000000),rope+attn(3*chunk=16:global,nope)"
                            "+randpos:64,alibi");
    CHECK(c.n_schemes == 3 && strcmp(c.scheme[0], "rope+attn(3*window=16,base=10000:global,base=1000000)") == 0 &&
              strcmp(c.pos[0], "rope") == 0 && strcmp(c.attn[0], "3*window=16,base=10000:global,base=1000000") == 0 &&
              strcmp(c.tag[0], "rope-attn-3-window-16-base-10000-global-base-1000000-") == 0 &&
              strcmp(c.pos[1], "rope") == 0 && strcmp(c.attn[1], "3*chunk=16:global,nope") == 0 &&
              c.rand_pos[1] == 64 && strcmp(c.pos[2], "alibi") == 0 && c.attn[2][0] == 0,
          "+attn(SPEC) per scheme (%d): %s -> %s [%s]; %s -> %s [%s]; %s [%s]", c.n_schemes, c.scheme[0], c.pos[0],
          c.attn[0], c.scheme[1], c.pos[1], c.attn[1], c.pos[2], c.attn[2]);
    CHECK(suite_count_schemes("rope+attn(3*window=16,base=10000:global,base=1000000),rope+attn(window=4:global,nope),"
                              "sinusoidal:scale=1,tokens=sqrt_dim,alibi") == 4,
          "the suite counts +attn(...) entries as compare splits them (%d)",
          suite_count_schemes("rope+attn(3*window=16,base=10000:global,base=1000000),rope+attn(window=4:global,nope),"
                              "sinusoidal:scale=1,tokens=sqrt_dim,alibi"));
    CHECK(suite_count_schemes("rope,rope+nope@1,2,alibi+temp:floor=2+nope@0,3") == 3,
          "the suite counts a +nope@ layer list as one entry, as compare does (%d)",
          suite_count_schemes("rope,rope+nope@1,2,alibi+temp:floor=2+nope@0,3"));
    c.base.attn_pattern = "window=8:global"; /* --attn-pattern: every entry without its own */
    compare_set_schemes(&c, "rope,alibi");
    CHECK(strcmp(c.attn[0], "window=8:global") == 0 && strcmp(c.attn[1], "window=8:global") == 0,
          "--attn-pattern reaches every scheme (%s, %s)", c.attn[0], c.attn[1]);
    c.base.attn_pattern = NULL;
    c.base.rand_pos = 128; /* --rand-pos: every scheme */
    compare_set_schemes(&c, "rope,alibi");
    CHECK(c.rand_pos[0] == 128 && c.rand_pos[1] == 128 && strcmp(c.pos[1], "alibi") == 0,
          "--rand-pos 128 reaches every scheme (%d, %d)", c.rand_pos[0], c.rand_pos[1]);
    c.task = NULL, c.base.rand_pos = 0;
    /* the lab returns its refusals as one line in pelab_errmsg; the process goes on (only the command
     * layer exits) */
    pelab_errmsg[0] = 0;
    CHECK(compare_set_schemes(&c, "rope,ropey") == -1 &&
              strstr(pelab_errmsg, "compare: --schemes: unknown position scheme 'ropey'") && !strchr(pelab_errmsg, '\n'),
          "compare_set_schemes refuses an unknown scheme with one line: %s", pelab_errmsg);
    TrainConfig keep = c.base;
    train_config_defaults(&c.base);
    c.base.seq_len = 1, c.out = "/nonexistent-pelab-dir";
    CHECK(compare_run_all(&c, NULL) == -1 && strstr(pelab_errmsg, "compare: --seq-len 1: the evaluation needs") &&
              compare_stop_status() == 1,
          "compare_run_all refuses a length below 2 with one line, exit status 1: %s (%d)", pelab_errmsg,
          compare_stop_status());
    c.base = keep, c.out = NULL;
    compare_set_schemes(&c, "rope,alibi");
    static const char *const bad_randpos[][2] = {
        {"--schemes rope+randpos:64 --seq-len 16", "randomized positions need --task"},
        {"--task copy --schemes rope+randpos:x", "expected +randpos or +randpos:N"},
        {"--task copy --schemes rope+randpos:64x", "expected +randpos or +randpos:N"},
        {"--task copy --schemes rope+randpos:0", "expected +randpos or +randpos:N"},
        {"--task copy --seq-len 16 --schemes rope+randpos:8", "+randpos:8: expected at least --seq-len 16"},
        {"--task copy --rand-pos 128 --schemes rope,rope+randpos:64", "and --rand-pos 128: give one"},
        {"--task copy --schemes rope+randpos:64+randpos:65", "+randpos given twice"},
        {"--schemes 'rope+attn(window=4:global'", "'+attn(' without its ')'"},
        {"--schemes 'rope+attn(window=4)x'", "'+attn(' without its ')'"},
        {"--schemes 'rope+attn(window=0)'", "expected window=W"},
        {"--schemes 'rope+attn()'", "+attn() needs a pattern"},
        {"--schemes 'rope+attn'", "expected +attn(SPEC)"},
        {"--schemes 'rope+attn(window=4)+attn(window=5)'", "+attn given twice"},
        {"--attn-pattern window=4 --schemes 'rope+attn(window=5)'", "give one"},
        {"--schemes 'rope+attn(window=4:global),rope+attn(window=4,global)'", "have the same file name"},
    };
    for (size_t i = 0; i < sizeof bad_randpos / sizeof bad_randpos[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "./pelab compare %s --out /tmp/pelab-unused", bad_randpos[i][0]);
        expect_pelab_error(cmd, bad_randpos[i][1]);
    }
    /* end to end without training (--collect): xPos gets the rule rows and its fine-tune, FoPE none */
    static char out[1 << 16], args[1024];
    snprintf(args, sizeof args,
             "--schemes xpos,fope --seeds 1 --seq-len 16 --mult 1,2 --rules pi:2 --finetune-steps 5 "
             "--out %s/cmp-xpos --collect",
             test_tmpdir());
    int rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "\nxpos+pi:2 ") && strstr(out, "\nxpos+pi:2+ft ") && !strstr(out, "fope+"),
          "compare plans xpos's rules and fine-tune, none for fope (exit %d): %s", rc, out);
}

/* compare --task: a micro run end to end (rows of kind task, a learned table's n/a past its end),
 * then --collect over hand-made CSVs: the mean and sample std over seeds, in percent */
static void check_compare_task(const char *dir) {
    static char out[1 << 16], args[2048], path[512];
    const char *micro = "--task copy:len=2-4,vocab=8 --task-lens 2,4,16 --task-n 5 --schemes rope,learned --seeds 1,2 "
                        "--dim 16 --layers 1 --heads 2 --seq-len 16 --steps 5 --synth-bytes 20000 --batch 4 --threads 1";
    snprintf(args, sizeof args, "%s --out %s/cmpt", micro, dir);
    int rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "len 16*") && strstr(out, "past table"), "compare --task end to end (exit %d): %s", rc,
          out);
    snprintf(path, sizeof path, "%s/cmpt/runs/learned_s2.csv", dir);
    const char *csv = test_slurp(path);
    CHECK(csv && count_substr(csv, "\ntask,learned,2,none,16,") == 6 &&
              strstr(csv, "\ntask,learned,2,none,16,16,exact,,n/a (past table of 16),"),
          "a task CSV: 3 lengths x (exact, bytes), n/a past the table: %s", csv ? csv : "(missing)");
    snprintf(path, sizeof path, "%s/cmpt/report.md", dir);
    const char *rep = test_slurp(path);
    const char *needles[] = {"## Exact match", "## Byte accuracy", "| *positions reached* | | 12 | 16 | 40 |",
                             "| 16 (past L) |", "| rope | none |", "| learned | none |", "- task: `copy:len=2-4,vocab=8`",
                             "n/a (past table of 16)", "every training window starts at an example"};
    check_all_in(rep, "compare --task report.md", needles, sizeof needles / sizeof needles[0]);

    /* --collect on constructed CSVs: exact match 0.5 and 1 over two seeds = 75.0 ± 35.4 */
    for (int k = 1; k <= 2; k++) {
        snprintf(path, sizeof path, "%s/cmpt/runs/rope_s%d.csv", dir, k);
        FILE *f = fopen(path, "w");
        if (!f) continue;
        fprintf(f, "%s\n", CMP_CSV_COLUMNS);
        fprintf(f, "task,rope,%d,none,16,4,exact,%s,ok,,,16,5,-1,-1\n", k, k == 1 ? "0.5" : "1");
        fprintf(f, "task,rope,%d,none,16,4,bytes,0.9,ok,,,16,5,-1,-1\n", k);
        fclose(f);
    }
    snprintf(args, sizeof args, "%s --out %s/cmpt --collect", micro, dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    snprintf(path, sizeof path, "%s/cmpt/report.md", dir);
    rep = test_slurp(path);
    CHECK(rc == 0 && rep && strstr(rep, "| rope | none | — | 75.0 ± 35.4 | — |") && strstr(rep, "| 90.0 ± 0.0 |"),
          "compare --task --collect: mean ± std in percent (exit %d): %s", rc, rep ? rep : out);
    snprintf(path, sizeof path, "%s/cmpt/plots/accuracy_vs_length.dat", dir);
    const char *dat = test_slurp(path);
    CHECK(dat && strstr(dat, "\n4 16 75.000 35.355 "), "the plot data: mean and std per series: %s", dat ? dat : "");

    /* --unaligned reaches the plan: the report says the windows were cut anywhere */
    snprintf(args, sizeof args, "%s --out %s/cmpt --collect --unaligned", micro, dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    snprintf(path, sizeof path, "%s/cmpt/report.md", dir);
    rep = test_slurp(path);
    CHECK(rc == 0 && rep && strstr(rep, "training windows cut anywhere in the stream (--unaligned)"),
          "--unaligned is said in the report (exit %d)", rc);

    /* flags that mean nothing with --task are refused, not ignored */
    snprintf(args, sizeof args, "%s --out %s/cmpt --mult 1,2", micro, dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && count_lines(out) == 1 && strstr(out, "--task-lens"), "--mult with --task refused: %s", out);
    snprintf(args, sizeof args, "--task-lens 4,8 --out %s/cmpt2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "--task-lens needs --task"), "--task-lens alone refused: %s", out);
    snprintf(args, sizeof args, "--task copy --task-lens 4,0 --out %s/cmpt2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && count_lines(out) == 1 && strstr(out, "--task-lens"), "a task length of 0 refused: %s", out);
    snprintf(args, sizeof args, "--unaligned --out %s/cmpt2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "--unaligned needs --task"), "--unaligned alone refused: %s", out);
    /* --rand-pos: trained and evaluated at randomized positions; an example longer than N: n/a */
    snprintf(args, sizeof args, "--task copy:len=2-4,vocab=8 --task-lens 2,40 --task-n 3 --schemes rope --seeds 1 --dim 16 "
             "--layers 1 --heads 2 --seq-len 16 --steps 2 --synth-bytes 20000 --batch 4 --threads 1 --rand-pos 64 "
             "--out %s/cmpt-rp", dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    snprintf(path, sizeof path, "%s/cmpt-rp/report.md", dir);
    const char *rp = test_slurp(path);
    CHECK(rc == 0 && rp && strstr(rp, "drawn from [0, 64)") && strstr(rp, "n/a (longer than rand_pos 64)"),
          "compare --task --rand-pos: said in the report, a too-long example n/a (exit %d): %s", rc, rp ? rp : out);
    /* +randpos per scheme: rope beside rope+randpos:64 in one compare; only the latter's runs are
     * randomized (trained so: the checkpoint says it) and its too-long example is n/a */
    snprintf(args, sizeof args, "--task copy:len=2-4,vocab=8 --task-lens 2,40 --task-n 3 --schemes rope,rope+randpos:64 "
             "--seeds 1 --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 2 --synth-bytes 20000 --batch 4 --threads 1 "
             "--out %s/cmpt-rp1", dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    snprintf(path, sizeof path, "%s/cmpt-rp1/report.md", dir);
    rp = test_slurp(path);
    char *report_rp = rp ? strdup(rp) : NULL, csv_plain[600], csv_rand[600];
    snprintf(csv_plain, sizeof csv_plain, "%s/cmpt-rp1/runs/rope_s1.csv", dir);
    snprintf(csv_rand, sizeof csv_rand, "%s/cmpt-rp1/runs/rope-randpos-64_s1.csv", dir);
    char *plain = test_slurp(csv_plain) ? strdup(test_slurp(csv_plain)) : NULL, *rand = test_slurp(csv_rand);
    CHECK(rc == 0 && report_rp && strstr(report_rp, "rope+randpos:64: every training row") &&
              !strstr(report_rp, ", rope: every") && plain &&
              rand && strstr(rand, "task,rope+randpos:64,1,none,16,40,exact,,n/a (longer than rand_pos 64)") &&
              strstr(plain, "task,rope,1,none,16,40,exact,") && !strstr(plain, "rand_pos"),
          "compare rope,rope+randpos:64: randomized runs for the one only (exit %d): %s", rc,
          report_rp ? report_rp : out);
    free(report_rp), free(plain);
    for (int i = 0; i < 2; i++) { /* the checkpoints: trained at randomized positions, or not; --pos without +randpos */
        snprintf(path, sizeof path, "%s/cmpt-rp1/runs/%s_s1.safetensors", dir, i ? "rope-randpos-64" : "rope");
        Model m;
        CkptMeta meta;
        int loaded = checkpoint_load(path, &m, &meta, NULL, NULL) == 0;
        const char *got = loaded ? meta_get(&meta, "train.rand_pos") : NULL;
        CHECK(loaded && got && strcmp(got, i ? "64" : "0") == 0 && strncmp(meta_get(&meta, "pos"), "rope:", 5) == 0,
              "%s: train.rand_pos %s, pos %s (%s)", path, got ? got : "-", loaded ? meta_get(&meta, "pos") : "-",
              loaded ? "" : pelab_errmsg);
        if (loaded) model_free(&m);
    }
    /* +attn(SPEC) per scheme: the pattern reaches training (the checkpoint has it), the plain entry has none */
    snprintf(args, sizeof args, "--task copy:len=2-4,vocab=8 --task-lens 2,40 --task-n 3 "
             "--schemes 'rope,rope+attn(window=4:global,nope)' --seeds 1 --dim 16 --layers 2 --heads 2 --seq-len 16 "
             "--steps 2 --synth-bytes 20000 --batch 4 --threads 1 --out %s/cmpt-attn", dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    CHECK(rc == 0, "compare with rope+attn(window=4:global,nope) (exit %d): %s", rc, out);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/cmpt-attn/runs/%s_s1.safetensors", dir, i ? "rope-attn-window-4-global-nope-" : "rope");
        Model m;
        int loaded = checkpoint_load(path, &m, NULL, NULL, NULL) == 0;
        char spec[PATTERN_SPEC_MAX + 1] = "-";
        if (loaded) pattern_spec(&m.cfg.pattern, spec, sizeof spec);
        CHECK(loaded && strcmp(spec, i ? "window=4:global,nope" : "none") == 0 &&
                  strncmp(m.pos.scheme->name, "rope", 4) == 0,
              "%s: trained with attention pattern %s (%s)", path, spec, loaded ? "" : pelab_errmsg);
        if (loaded) model_free(&m);
    }
    snprintf(args, sizeof args, "--rand-pos 64 --out %s/cmpt2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "--rand-pos needs --task"), "--rand-pos without --task refused: %s", out);
    snprintf(args, sizeof args, "--task frob --out %s/cmpt2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "frob"), "an unknown task refused: %s", out);
}

/* --finetune both: the PI fine-tune at 2L and PoSE at L for twice the steps (the same tokens), side
 * by side in the CSVs and the report; an unknown recipe refused */
static void check_compare_pose(const char *dir) {
    static char out[1 << 16], args[1024], path[512];
    snprintf(args, sizeof args,
             "--schemes rope --seeds 1 --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 20 --synth-bytes 20000 "
             "--batch 4 --mult 1,2 --rules pi:2 --finetune-steps 5 --finetune both --eval-tokens 500 --threads 1 "
             "--out %s/cmp-pose",
             dir);
    int rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "] fine-tune rope seed 1 with pi:2 at length 32, 5 steps") &&
              strstr(out, "] PoSE fine-tune rope seed 1 with pi:2 at length 16, 10 steps, PoSE positions in [0, 32)"),
          "compare --finetune both: PI at 2L, PoSE at L for twice the steps (exit %d): %s", rc, out);
    snprintf(path, sizeof path, "%s/cmp-pose/runs/rope_s1_ft-pose2.csv", dir);
    const char *csv = test_slurp(path);
    CHECK(csv && count_substr(csv, "\nlength,rope,1,pi:2+pose,16,") == 4, "the PoSE fine-tune's CSV: 2 lengths x 2 protocols");
    snprintf(path, sizeof path, "%s/cmp-pose/report.md", dir);
    const char *rep = test_slurp(path);
    const char *needles[] = {"| rope | pi:2+ft |", "| rope | pi:2+pose |", "`--scale pi:2 --pose 32` at length 16",
                             "PI fine-tunes: 1 of 1 finished; PoSE fine-tunes: 1 of 1 finished",
                             "runs/SCHEME_sSEED_ft-pose2.safetensors"};
    check_all_in(rep, "report.md with --finetune both", needles, sizeof needles / sizeof needles[0]);
    snprintf(args, sizeof args, "--schemes rope --finetune frob --out %s/cmp-pose", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && count_lines(out) == 1 && strstr(out, "--finetune frob: expected pi, pose or both"),
          "an unknown fine-tune recipe refused in one line: %s", out);
}

/* --sink-token N: every model trained with N opening its windows (recorded in the checkpoint), every
 * evaluated window so opened (eval_length_sink, test_eval), the rows that would read the text
 * without it (generation, loss jump, key tokens) not written; refused where a prompt is scored from
 * its own first byte */
static void check_compare_sink(const char *dir) {
    static char out[1 << 15], args[1024], path[600];
    snprintf(args, sizeof args, "--schemes rope --seeds 1 --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 10 "
                                "--synth-bytes 20000 --batch 4 --mult 1,2 --rules stream:2:13,stream:0:15 "
                                "--finetune-steps 0 --eval-tokens 500 --sink-token 0 --threads 1 --out %s/cmp-sink", dir);
    int rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    CHECK(rc == 0, "compare --sink-token runs (exit %d): %s", rc, out);
    snprintf(path, sizeof path, "%s/cmp-sink/runs/rope_s1.csv", dir);
    char *csv = test_slurp(path);
    CHECK(csv && strstr(csv, "\nlength,rope,1,stream:0:15,16,32,nonoverlap,") && !strstr(csv, "\ngen,") &&
              !strstr(csv, "\njump,") && !strstr(csv, "\nkeyppl,"),
          "the loss by length under each rule, no generation / jump / key-token rows: %.600s", csv ? csv : "(none)");
    snprintf(path, sizeof path, "%s/cmp-sink/runs/rope_s1.safetensors", dir);
    FILE *f = fopen(path, "rb");
    static char head[1 << 14];
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    const char key[] = "\"train.sink_token\":\"0\"";
    int found = 0; /* the header is text after an 8-byte length holding NULs: no strstr */
    for (size_t i = 0; i + strlen(key) <= n && !found; i++) found = memcmp(head + i, key, strlen(key)) == 0;
    CHECK(found, "the checkpoint records the sink token it was trained with");
    snprintf(args, sizeof args, "--task copy:len=2-4 --sink-token 0 --out %s/cmp-sink-task", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "compare: --sink-token and --task"), "--sink-token with --task refused: %s", out);
    snprintf(args, sizeof args, "--passkey-frac 0.2 --sink-token 0 --out %s/cmp-sink-pk", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "compare: --sink-token and --passkey-frac"), "--sink-token with --passkey-frac refused: %s",
          out);
}

/* --seeds auto: looks of seeds until the pairs are decided; the decisions in DIR/sequential.md. A
 * pair between alibi and itself under another name cannot differ; a second look trains only the
 * schemes of undecided pairs, and what is decided trains no more */
static void check_seeds_auto(const char *dir) {
    static char out[1 << 16], args[2048], path[512];
    snprintf(args, sizeof args, "--schemes rope,alibi --seeds auto --looks 2,3 --dim 16 --layers 1 --heads 2 "
                                "--seq-len 16 --steps 60 --lr 1e-2 --synth-bytes 20000 --batch 4 --mult 1,4 --rules none "
                                "--finetune-steps 0 --eval-tokens 1000 --threads 1 --out %s/auto", dir);
    int rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "--seeds auto: look 1 of 2, 2 seeds, 2 schemes") &&
              strstr(out, "--seeds auto: 2 pairs: "),
          "--seeds auto runs its looks (exit %d): %.3000s", rc, out);
    snprintf(path, sizeof path, "%s/auto/sequential.md", dir);
    char *seq = test_slurp(path);
    CHECK(seq && strstr(seq, "Exploratory: the family is all 2 pairs") && strstr(seq, "| 4L | rope | alibi | **"),
          "sequential.md: every pair at every length with its outcome: %s", seq ? seq : "(missing)");
    int second = strstr(out, "look 2 of 2") != NULL;
    snprintf(path, sizeof path, "%s/auto/runs/rope_s3.csv", dir);
    FILE *f = fopen(path, "r");
    CHECK(second == (f != NULL), "a third seed exactly when a second look ran (%d)", second);
    if (f) fclose(f);
    snprintf(args, sizeof args, "--schemes rope --seeds auto --collect --out %s/auto", dir);
    CHECK(run_compare("", args, out, sizeof out) == 1 && strstr(out, "--seeds auto runs its own looks"),
          "--seeds auto with --collect refused: %s", out);
    snprintf(args, sizeof args, "--schemes rope --seeds auto --looks 5,3 --out %s/auto2", dir);
    CHECK(run_compare("", args, out, sizeof out) == 1 && strstr(out, "--looks") && strstr(out, "increasing"),
          "decreasing looks refused: %s", out);
}

void test_compare(void) {
    check_seeds_auto(test_tmpdir());
    check_compare_sink(test_tmpdir());
    check_compare_task(test_tmpdir());
    check_compare_pose(test_tmpdir());
    rules_follow_capability();
    report_bias_checkpoint(test_tmpdir());
    static char out[1 << 16], args[2048], path[512], jobs[512];
    const char *dir = test_tmpdir();
    const char *micro = "--schemes rope,alibi --seeds 1,2 --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 20 "
                        "--synth-bytes 20000 --batch 4 --mult 0.5,1,2 --rules pi:2,rerope:8,stream:2:14 "
                        "--finetune-steps 5 --eval-tokens 1000 --threads 1";
    snprintf(args, sizeof args, "%s --out %s/cmp", micro, dir);
    int rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "report in"), "compare runs end to end (exit %d): %s", rc, out);
    CHECK(strstr(out, "fine-tune rope seed 1 with pi:2 at length 32, 5 steps"), "rope runs are PI fine-tuned: %s", out);

    const char *runs[] = {"rope_s1", "rope_s2", "alibi_s1", "alibi_s2", "rope_s1_ft-pi2", "rope_s2_ft-pi2"};
    enum { N_RUNS = sizeof runs / sizeof runs[0] };
    long long mt[N_RUNS];
    for (int i = 0; i < N_RUNS; i++) {
        snprintf(path, sizeof path, "%s/cmp/runs/%s.csv", dir, runs[i]);
        mt[i] = mtime_ns(path);
        CHECK(mt[i] > 0, "compare writes %s", path);
    }
    check_finetune_csv(dir);
    check_gen_rows(dir);
    snprintf(path, sizeof path, "%s/cmp/report.md", dir);
    char *rep = test_slurp(path);
    CHECK(rep != NULL, "compare writes report.md");
    if (!rep) return;
    const char *needles[] = {"## Command", "pelab compare --schemes rope,alibi", "## Configuration",
                             "## Results: non-overlapping windows", "## Results: sliding windows", "## Reliable length",
                             "## Plots", "| rope | none |", "| rope | pi:2 |", "| rope | pi:2+ft |", "| alibi | none |",
                             "| 16 (=L) |", " ± ", "- rope: reliable length", "- rope+pi:2: reliable length",
                             "- rope+pi:2+ft: reliable length", "- alibi: reliable length", "accepted length unbounded",
                             "runs: 4 of 4 finished; PI fine-tunes: 2 of 2 finished", "`--scale pi:2` at length 32",
                             "## Long generation past L", "### Repeated 4-grams", "| 16–31 (≥L) |", "## Loss jump at L",
                             "## Key-token perplexity", "| key share |"};
    check_all_in(rep, "report.md", needles, sizeof needles / sizeof needles[0]);
    /* extension methods as rules: ReRoPE on the rotary scheme only, StreamingLLM on both */
    CHECK(strstr(rep, "| rope | rerope:8 |") && strstr(rep, "| rope | stream:2:14 |") &&
              strstr(rep, "| alibi | stream:2:14 |") && !strstr(rep, "| alibi | rerope:8 |") &&
              !strstr(rep, "| alibi | pi:2 |"),
          "report.md: rerope:8 for rope only, stream:2:14 for rope and alibi");
    char *gen_sections = strstr(rep, "\n## Long generation"); /* their tables have rows per series too */
    if (gen_sections) *gen_sections = 0;
    /* rope: none, pi:2, rerope:8, stream:2:14, pi:2+ft; alibi: none, stream:2:14; x 2 tables (the verdict's
     * tables above them name series by label) */
    const char *results = strstr(rep, "## Results: non-overlapping");
    int rows = count_substr(results, "\n| rope |") + count_substr(results, "\n| alibi |");
    if (gen_sections) *gen_sections = '\n';
    CHECK(rows == 14, "a table row per scheme and rule in both tables (%d rows)", rows);
    int plotted = strstr(rep, "](plots/loss_vs_length.png)") != NULL;
    CHECK(plotted || strstr(rep, "gnuplot not found"), "report.md plots or says gnuplot is missing");
    snprintf(path, sizeof path, "%s/cmp/plots/plots.gp", dir);
    CHECK(test_slurp(path) && strstr(test_slurp(path), "loss_vs_length.svg"), "the gnuplot script is kept");
    /* 20 steps pass no gate: the plot data has the fine-tune's columns, empty (test_plots draws passing runs) */
    snprintf(path, sizeof path, "%s/cmp/plots/loss_vs_length.dat", dir);
    CHECK(test_slurp(path) && strstr(test_slurp(path), "\n# columns 14-16: rope+pi:2+ft\n"), "the plot data has the fine-tune");
    CHECK(strstr(out, "\nrope+pi:2+ft "), "compare prints the table with the fine-tune: %s", out);

    /* rerun: every run and fine-tune skipped, nothing retrained, CSVs untouched */
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "skip rope_s1") && strstr(out, "skip rope_s2_ft-pi2") && strstr(out, "skip alibi_s2") &&
              !strstr(out, "train ") && !strstr(out, "fine-tune "),
          "rerun skips finished runs (exit %d): %s", rc, out);
    for (int i = 0; i < N_RUNS; i++) {
        snprintf(path, sizeof path, "%s/cmp/runs/%s.csv", dir, runs[i]);
        CHECK(mtime_ns(path) == mt[i], "rerun leaves %s untouched", path);
    }

    /* --jobs: one self-contained command per unfinished run (tests/test_jobs.c: the rest) */
    snprintf(path, sizeof path, "%s/cmp/runs/alibi_s2.csv", dir);
    remove(path);
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1_ft-pi2.csv", dir);
    remove(path);
    snprintf(jobs, sizeof jobs, "%s/cmp.jobs", dir);
    snprintf(args, sizeof args, "%s --out %s/cmp --jobs %s", micro, dir, jobs);
    rc = run_compare("", args, out, sizeof out);
    char *j = test_slurp(jobs);
    int lines = count_substr(j, "\n"), only = count_substr(j, " --only ");
    CHECK(rc == 0 && lines == 2 && only == 2 && !strstr(j, "--jobs") && strstr(j, "--only rope_s1\n") &&
              strstr(j, "--only alibi_s2\n"),
          "--jobs writes one command per unfinished run (exit %d, %d lines): %s", rc, lines, j ? j : "");
    /* the last command, run as is, redoes the run whose CSV is gone */
    snprintf(path, sizeof path, "%s/cmp/runs/alibi_s2.csv", dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "tail -n 1 %s | sh > /dev/null 2>&1", jobs);
    rc = system(cmd);
    CHECK(rc == 0 && mtime_ns(path) > 0, "a --jobs command redoes its run (exit %d)", rc);
    /* a rope job redoes a fine-tune whose CSV is gone from its checkpoint, the run left alone */
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1_ft-pi2.csv", dir);
    snprintf(cmd, sizeof cmd, "grep -e '--only rope_s1$' %s | sh > /dev/null 2>&1", jobs);
    rc = system(cmd);
    CHECK(rc == 0 && mtime_ns(path) > 0, "a rope --jobs command redoes its fine-tune (exit %d)", rc);
    snprintf(path, sizeof path, "%s/cmp/runs/rope_s1.csv", dir);
    CHECK(mtime_ns(path) == mt[0], "... without retraining the run");
    snprintf(path, sizeof path, "%s/cmp/report.md", dir);
    remove(path);

    /* --collect: the report from the CSVs alone (the gnuplot-less path CI takes) */
    snprintf(args, sizeof args, "%s --out %s/cmp --collect", micro, dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    rep = test_slurp(path);
    CHECK(rc == 0 && !strstr(out, "train ") && rep && strstr(rep, "gnuplot not found") &&
              strstr(rep, "| alibi | none |") && strstr(rep, "| rope | pi:2+ft |") &&
              strstr(rep, "runs: 4 of 4 finished; PI fine-tunes: 2 of 2"),
          "--collect rebuilds report.md without training (exit %d): %s", rc, out);
    /* the schemes' pictures: rope's wavelengths under its rules (not the extension methods),
     * alibi's bias map, their data kept (slurp's buffer is reused: the report first) */
    CHECK(rep && strstr(rep, "## Pictures of the schemes") &&
              strstr(rep, "- rope: wavelength 2 pi / theta_j of each rotary pair under none,pi:2, L = 16 marked: not drawn") &&
              strstr(rep, "data plots/show_rope/wavelength.csv") && strstr(rep, "data plots/show_alibi/bias_h*.csv") &&
              strstr(rep, "trained (seed 1's checkpoint)"),
          "report.md names the schemes' pictures and their data: %s", rep ? rep : "(missing)");
    snprintf(path, sizeof path, "%s/cmp/plots/show_rope/wavelength.csv", dir);
    const char *wl = test_slurp(path);
    CHECK(wl && strstr(wl, "pair,\"none\",\"pi:2\"\n0,6.28319,12.5664\n"), "plots/show_rope/wavelength.csv: %s",
          wl ? wl : "(missing)");
    snprintf(path, sizeof path, "%s/cmp/report.md", dir);
    rep = test_slurp(path);

    /* bad input: one line, exit 1 */
    snprintf(args, sizeof args, "--schemes rope,bogus --out %s/cmp2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "unknown position scheme 'bogus'"), "unknown scheme refused: %s", out);
    snprintf(args, sizeof args, "%s --out %s/cmp --only nope_s9", micro, dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "no such run"), "--only of an unknown run refused: %s", out);
    snprintf(args, sizeof args, "%s --out %s/cmp --finetune-scale 0.5", micro, dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && count_lines(out) == 1 && strstr(out, "--finetune-scale 0.5"), "a fine-tune factor <= 1 refused: %s",
          out);

    check_demo(dir);
}
