/* test_verdict.c: compare's verdicts on constructed CSVs (`compare --collect`, no training): a clear
 * winner gets its sentence with the Welch p value the test gives; identical schemes share a rank;
 * a bimodal scheme whose failed seeds miss the gate is judged on the rest ("4 of 5 seeds learned
 * the task"), its mean taken over them; a rule against the same checkpoints is tested paired; a
 * run still improving at its end is flagged (with --converge: where its cooldown began); a language
 * model's loss at L not below its unigram bound (or above --gate-loss) leaves it out, a few percent
 * worse than its siblings does not; one seed says no verdict is possible; --seeds N is a
 * count and a rerun with more seeds trains only the new ones. lab/verdict.h, lab/report_verdict.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/stats.h"
#include "../lab/compare_plan.h"
#include "test.h"

/* the file's text in a buffer of its own (the caller frees it) */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 18);
    size_t n = buf ? fread(buf, 1, (1 << 18) - 1, f) : 0;
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

static int collect(const char *args, char *out, size_t cap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare %s --collect", args);
    return run_pelab(cmd, out, cap);
}

/* compare --collect into dir, then its report.md (NULL if missing); *rc: the exit status */
static char *collect_report(const char *args, const char *dir, char *out, size_t cap, int *rc) {
    char path[600];
    *rc = collect(args, out, cap);
    snprintf(path, sizeof path, "%s/report.md", dir);
    return slurp(path);
}

/* the same with flags common + extra + "--out dir" */
static char *collect_flags(const char *common, const char *extra, const char *dir, char *out, size_t cap, int *rc) {
    char args[1024];
    snprintf(args, sizeof args, "%s %s --out %s", common, extra, dir);
    return collect_report(args, dir, out, cap, rc);
}

/* DIR/runs/TAG_sSEED.csv with the header; the caller writes the rows */
static FILE *run_csv(const char *dir, const char *tag, int seed) {
    char path[600];
    snprintf(path, sizeof path, "%s/runs", dir);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/runs/%s_s%d.csv", dir, tag, seed);
    FILE *f = fopen(path, "w");
    if (f) fprintf(f, "%s\n", CMP_CSV_COLUMNS);
    return f;
}

static void loss_row(FILE *f, const char *scheme, int seed, const char *rule, int len, double loss) {
    fprintf(f, "length,%s,%d,%s,16,%d,nonoverlap,%.6f,ok,,,,1000,-1,-1,%.6f,%.6f\n", scheme, seed, rule, len, loss,
            loss - 0.01, loss + 0.01);
}

/* alibi clearly below rope at 4L, both identical at L; rope+yarn:4 a little below rope every seed */
static void clear_winner(const char *tmp) {
    char dir[512], args[1024], path[600];
    static char out[1 << 14];
    snprintf(dir, sizeof dir, "%s/verdict-lm", tmp);
    const double alibi4[5] = {2.00, 2.05, 1.97, 2.02, 1.99}, rope4[5] = {2.61, 2.70, 2.55, 2.66, 2.58};
    const double yarn_gain[5] = {0.031, 0.029, 0.030, 0.032, 0.028};
    for (int k = 1; k <= 5; k++) {
        FILE *f = run_csv(dir, "alibi", k);
        if (!f) return;
        loss_row(f, "alibi", k, "none", 16, 1.5);
        loss_row(f, "alibi", k, "none", 64, alibi4[k - 1]);
        fclose(f);
        f = run_csv(dir, "rope", k);
        loss_row(f, "rope", k, "none", 16, 1.5);
        loss_row(f, "rope", k, "none", 64, rope4[k - 1]);
        loss_row(f, "rope", k, "yarn:4", 16, 1.5);
        loss_row(f, "rope", k, "yarn:4", 64, rope4[k - 1] - yarn_gain[k - 1]);
        fclose(f);
    }
    snprintf(args, sizeof args, "--schemes alibi,rope --seq-len 16 --mult 1,4 --rules yarn:4 --finetune-scale 0 "
                                "--gen-tokens 0 --keyppl-tokens 0 --out %s", dir);
    int rc;
    char *rep = collect_report(args, dir, out, sizeof out, &rc);
    /* after the title only the note that the plots were not drawn (PELAB_NO_GNUPLOT), one paragraph */
    const char *title = "# pelab compare report\n\n> **No plots drawn**";
    const char *note = rep && strncmp(rep, title, strlen(title)) == 0 ? strstr(rep, "\n\n") + 2 : NULL;
    const char *after = note ? strstr(note, "\n\n") : NULL;
    CHECK(rc == 0 && after && strncmp(after, "\n\n## Verdict\n", 13) == 0,
          "the report opens with the verdict, after the note on the plots (exit %d): %.300s", rc, rep ? rep : out);
    StatTest w = stats_welch(alibi4, 5, rope4, 5);
    char want[160];
    snprintf(want, sizeof want, "At 4L (64): **alibi** is best, %.3g nats below rope+yarn:4", -w.diff - 0.03);
    CHECK(rep && strstr(rep, want), "the winner at 4L named with its margin over the runner-up: '%s'", want);
    /* the margin over rope itself is in verdicts.csv with Welch's p, Holm-adjusted over 3 pairs */
    snprintf(path, sizeof path, "%s/verdicts.csv", dir);
    char *csv = slurp(path);
    char row[200];
    snprintf(row, sizeof row, "nonoverlap,64,\"alibi\",\"rope\",welch,5,5,%.6g,%.6g,%.6g,", 2.006, 2.62, w.diff);
    const char *at = csv ? strstr(csv, row) : NULL;
    double p = NAN, ph = NAN, lo = NAN, hi = NAN;
    if (at) sscanf(at + strlen(row), "%lf,%lf,%lf,%lf", &lo, &hi, &p, &ph);
    CHECK(at && fabs(p - w.p) < 1e-5 * w.p && fabs(lo - w.ci_lo) < 1e-5 && ph >= p && ph <= 3 * p * (1 + 1e-9),
          "alibi vs rope at 4L: Welch p %g (test %g), Holm %g, CI [%g, %g]: %s", p, w.p, ph, lo, hi, csv ? csv : "");
    /* identical schemes at L share rank 1 */
    CHECK(rep && strstr(rep, "| alibi | **1**: 1.5000 | **1**: 2.0060 |") && strstr(rep, "| rope | **1**: 1.5000 | 3: 2.6200 |"),
          "identical at L: rank 1 shared; at 4L rope third: %s", rep ? rep : "");
    CHECK(rep && strstr(rep, "At 1L (16): no significant winner") && strstr(rep, "their figures are identical"),
          "identical figures: no winner, said so");
    /* the rule against the same checkpoints: paired, significant, though Welch could not see it */
    double r4[5], y4[5];
    for (int k = 0; k < 5; k++) r4[k] = rope4[k], y4[k] = rope4[k] - yarn_gain[k];
    StatTest pt = stats_paired(y4, r4, 5), wt = stats_welch(y4, 5, r4, 5);
    CHECK(pt.p < 1e-4 && wt.p > 0.3, "the constructed rule gain is paired-significant only (paired %g, Welch %g)", pt.p, wt.p);
    CHECK(rep && strstr(rep, "| rope+yarn:4 | +0 (p 1) | -0.03 (p ") && strstr(csv, "\"rope\",\"rope+yarn:4\",paired-t,5,5"),
          "the rule vs none: paired t, -0.03 nats at 4L, significant: %s",
          rep && strstr(rep, "Rules and") ? strstr(rep, "Rules and") : "");
    const char *rules = rep ? strstr(rep, "| rope+yarn:4 | +0 (p 1) | -0.03 (p ") : NULL;
    CHECK(rules && strchr(rules, '\n') && memchr(rules, '*', (size_t)(strchr(rules, '\n') - rules)), "marked significant");
    CHECK(strstr(out, "Verdicts, exploratory (all pairs at this length, Holm); loss, non-overlapping") &&
              strstr(out, "**alibi** is best"),
          "the terminal prints the verdicts: %s", out);
    free(rep), free(csv);
}

/* kerple learns copy in 4 seeds of 5: judged on the 4, "4 of 5"; rope learns in all 5 */
static void bimodal_gate(const char *tmp) {
    char dir[512], args[1024];
    static char out[1 << 14];
    snprintf(dir, sizeof dir, "%s/verdict-task", tmp);
    const double kerple16[5] = {0.60, 0.64, 0.0, 0.58, 0.62}, rope16[5] = {0.02, 0.0, 0.01, 0.03, 0.0};
    for (int k = 1; k <= 5; k++) {
        const char *tags[2] = {"kerple", "rope"};
        for (int t = 0; t < 2; t++) {
            FILE *f = run_csv(dir, tags[t], k);
            if (!f) return;
            double gate = t == 0 && k == 3 ? 0.12 : 0.98;
            for (int g = 2; g <= 4; g++)
                fprintf(f, "gate,%s,%d,none,64,%d,exact,%.6f,ok,,,20,100,-1,-1,,\n", tags[t], k, g, gate);
            double v = t == 0 ? kerple16[k - 1] : rope16[k - 1];
            fprintf(f, "task,%s,%d,none,64,16,exact,%.6f,ok,,,40,100,-1,-1,%.6f,%.6f\n", tags[t], k, v, v, v);
            fprintf(f, "task,%s,%d,none,64,16,bytes,%.6f,ok,,,40,100,-1,-1,,\n", tags[t], k, v);
            fclose(f);
        }
    }
    snprintf(args, sizeof args, "--task copy:len=2-4,vocab=8 --task-lens 16 --schemes kerple,rope --seq-len 64 --out %s",
             dir);
    int rc;
    char *rep = collect_report(args, dir, out, sizeof out, &rc);
    CHECK(rc == 0 && rep && strstr(rep, "- kerple: 4 of 5 seeds learned the task; left out: seed 3") &&
              strstr(rep, "- rope: 5 of 5 seeds learned the task"),
          "k of n seeds learned the task (exit %d): %s", rc, rep ? rep : out);
    double kept[4] = {0.60, 0.64, 0.58, 0.62};
    StatSummary s = stats_summary(kept, 4);
    char cell[80];
    snprintf(cell, sizeof cell, "| kerple | none | %.1f ± %.1f |", 100 * s.mean, 100 * s.sd);
    CHECK(rep && strstr(rep, cell), "the mean over the 4 that learned: '%s'", cell);
    CHECK(rep && strstr(rep, "| kerple_s3 | 12.0 | **fail** |"), "the failed run listed with its gate figure");
    StatTest w = stats_welch(kept, 4, rope16, 5);
    char want[200];
    snprintf(want, sizeof want, "At task length 16: **kerple** is best, %.3g points above rope", 100 * w.diff);
    CHECK(rep && strstr(rep, want) && strstr(rep, "4 vs 5 seeds"), "the verdict on the seeds that learned: '%s'", want);
    free(rep);
}

/* a curve whose validation loss still falls 10% in its last 20% is flagged; a flat one is not */
static void convergence(const char *tmp) {
    char dir[512], args[1024], path[600];
    static char out[1 << 14];
    snprintf(dir, sizeof dir, "%s/verdict-conv", tmp);
    for (int k = 1; k <= 2; k++) {
        FILE *f = run_csv(dir, "rope", k);
        if (!f) return;
        loss_row(f, "rope", k, "none", 16, 1.5);
        fclose(f);
        snprintf(path, sizeof path, "%s/runs/rope_s%d.curve.csv", dir, k);
        f = fopen(path, "w");
        fprintf(f, "step,tokens,lr,train_loss,val_loss\n");
        for (int step = 10; step <= 100; step += 10) {
            double v = k == 1 ? 3.0 - 0.01 * step : (step < 50 ? 3.0 - 0.02 * step : 2.0);
            fprintf(f, "%d,%d,0.001,%.4f,%.4f\n", step, step * 256, v + 0.1, v);
            fprintf(f, "%d,%d,0.001,%.4f,\n", step + 5, step * 256 + 1280, v + 0.1); /* a row without validation */
        }
        fclose(f);
    }
    snprintf(args, sizeof args, "--schemes rope --seeds 1,2 --seq-len 16 --mult 1 --rules none --finetune-scale 0 "
                                "--gen-tokens 0 --keyppl-tokens 0 --out %s", dir);
    int rc;
    char *rep = collect_report(args, dir, out, sizeof out, &rc);
    /* run 1: 2.2 at step 80 -> 2.0 at step 100: 9.1% */
    CHECK(rc == 0 && rep && strstr(rep, "**1 of 2 runs still improving**: rope_s1 (2.2000 -> 2.0000)"),
          "the improving run flagged, the flat one not (exit %d): %s", rc, rep ? rep : out);
    CHECK(rep && strstr(rep, "| rope_s2 | 1.5000 | pass | 2.0000 -> 2.0000 |"), "the flat run's curve in the runs table");
    /* one seed: no verdict possible, said at the top */
    snprintf(args, sizeof args, "--schemes rope --seeds 1 --seq-len 16 --mult 1 --rules none --finetune-scale 0 "
                                "--gen-tokens 0 --keyppl-tokens 0 --out %s", dir);
    free(rep);
    rep = collect_report(args, dir, out, sizeof out, &rc);
    CHECK(rc == 0 && rep && strstr(rep, "**One seed per scheme: no verdict is possible.**"), "one seed: no verdict");
    free(rep);
}

/* language modelling: the gate fails a run that diverged or learned nothing from context (its loss
 * at L not below its unigram row), not one a few percent worse than its siblings; --gate-loss adds
 * a bound; CSVs without the unigram row fail nothing finite */
static void lm_gate(const char *tmp) {
    char dir[512], args[1024];
    static char out[1 << 14];
    snprintf(dir, sizeof dir, "%s/verdict-lmgate", tmp);
    const double at_l[3] = {1.50, 1.60, 3.31};
    for (int with_unigram = 1; with_unigram >= 0; with_unigram--) {
        for (int k = 1; k <= 3; k++) {
            FILE *f = run_csv(dir, "rope", k);
            if (!f) return;
            loss_row(f, "rope", k, "none", 16, at_l[k - 1]);
            if (with_unigram) fprintf(f, "gate,rope,%d,none,16,16,unigram,3.300000,ok,,,,5000,-1,-1,,\n", k);
            fclose(f);
        }
        const char *common = "--schemes rope --seeds 3 --seq-len 16 --mult 1 --rules none --finetune-scale 0 "
                             "--gen-tokens 0 --keyppl-tokens 0";
        int rc;
        char *rep = collect_flags(common, "", dir, out, sizeof out, &rc);
        if (with_unigram)
            CHECK(rc == 0 && rep && strstr(rep, "- rope: 2 of 3 seeds passed the gate; left out: seed 3") &&
                      strstr(rep, "| rope | none | 1.5500 ± 0.0707 |") && strstr(rep, "unigram loss") &&
                      strstr(rep, ": 3.3000 nats here"),
                  "3.31 at L against the unigram 3.30 fails; 1.60, 7%% above 1.50, passes (exit %d): %s", rc,
                  rep ? rep : out);
        else
            CHECK(rc == 0 && rep && strstr(rep, "- rope: 3 of 3 seeds passed the gate") && strstr(rep, "no unigram row"),
                  "without unigram rows only a non-finite loss fails (exit %d): %s", rc, rep ? rep : out);
        free(rep);
        if (!with_unigram) break;
        rep = collect_flags(common, "--gate-loss 1.55", dir, out, sizeof out, &rc);
        CHECK(rc == 0 && rep && strstr(rep, "- rope: 1 of 3 seeds passed the gate; left out: seeds 2, 3"),
              "--gate-loss 1.55 leaves seed 2 out too (exit %d)", rc);
        free(rep);
    }
    snprintf(args, sizeof args, "./pelab compare --gate-rel 0.05 --out %s", dir);
    CHECK(run_pelab(args, out, sizeof out) != 0 && strstr(out, "--gate-rel"), "--gate-rel is gone: %s", out);
}

/* --converge: the report judges a run where its cooldown began (the last validation at the peak
 * lr), as training did: a flat stable phase then a cooldown drop is converged; the same curve
 * judged as a fixed-budget run is still improving; a stable phase still falling is flagged */
static void converge_curves(const char *tmp) {
    char dir[512], path[600];
    static char out[1 << 14];
    snprintf(dir, sizeof dir, "%s/verdict-wsd", tmp);
    for (int k = 1; k <= 2; k++) {
        FILE *f = run_csv(dir, "rope", k);
        if (!f) return;
        loss_row(f, "rope", k, "none", 16, 1.5);
        fclose(f);
        snprintf(path, sizeof path, "%s/runs/rope_s%d.curve.csv", dir, k);
        f = fopen(path, "w");
        fprintf(f, "step,tokens,lr,train_loss,val_loss\n");
        for (int step = 10; step <= 125; step += 5) { /* warmup to 10, stable to 100, cooldown to 125 */
            double lr = step <= 100 ? 0.003 : 0.003 * (1 - 0.9 * (step - 100) / 25.0);
            double v = k == 1 ? (step <= 100 ? 2.0 + 0.001 * (100 - step) : 2.0 - 0.01 * (step - 100))
                              : (step <= 100 ? 3.0 - 0.01 * step : 2.0 - 0.01 * (step - 100));
            fprintf(f, "%d,%d,%g,%.4f,%.4f\n", step, step * 256, lr, v + 0.1, v);
        }
        fclose(f);
    }
    const char *common = "--schemes rope --seeds 1,2 --seq-len 16 --mult 1 --rules none --finetune-scale 0 "
                         "--gen-tokens 0 --keyppl-tokens 0 --steps 200";
    int rc;
    char *rep = collect_flags(common, "--converge", dir, out, sizeof out, &rc);
    /* seed 1: 2.020 at step 80 -> 2.000 at 100 (1%, 0.02 nats: converged); seed 2: 2.2 -> 2.0 (9%) */
    CHECK(rc == 0 && rep && strstr(rep, "**1 of 2 runs still improving**: rope_s2 (2.2000 -> 2.0000)") &&
              strstr(rep, "| rope_s1 | 1.5000 | pass | 2.0200 -> 2.0000 at step 100; 1.7500 at 125 |"),
          "--converge: judged where the cooldown began (exit %d): %s", rc, rep ? rep : out);
    free(rep);
    rep = collect_flags(common, "", dir, out, sizeof out, &rc);
    CHECK(rc == 0 && rep && strstr(rep, "**2 of 2 runs still improving**"),
          "the same curves as fixed budgets: the cooldown's fall counts (exit %d)", rc);
    free(rep);
}

static void seeds_flag(const char *tmp) {
    static char out[1 << 14];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "./pelab compare --seeds 0 --out %s/vs", tmp);
    CHECK(run_pelab(cmd, out, sizeof out) == 1 && strstr(out, "--seeds 0"), "--seeds 0 refused: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab compare --seeds 1,1 --out %s/vs", tmp);
    CHECK(run_pelab(cmd, out, sizeof out) == 1 && strstr(out, "given twice"), "a seed twice refused: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab compare --seeds 5-3 --out %s/vs", tmp);
    CHECK(run_pelab(cmd, out, sizeof out) == 1 && strstr(out, "--seeds 5-3"), "a reversed range refused: %s", out);
    /* a count trains 1..N; a rerun with a larger count trains only the new seeds */
    const char *micro = "--schemes rope --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 4 --synth-bytes 20000 "
                        "--mult 1 --rules none --finetune-scale 0 --gen-tokens 0 --keyppl-tokens 0 --batch 4 --threads 1";
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare %s --seeds 2 --out %s/vs", micro, tmp);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "train rope seed 1") && strstr(out, "train rope seed 2") && !strstr(out, "seed 3"),
          "--seeds 2: seeds 1 and 2 (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare %s --seeds 3 --out %s/vs", micro, tmp);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "skip rope_s1") && strstr(out, "skip rope_s2") && strstr(out, "train rope seed 3"),
          "--seeds 3 after 2: only seed 3 trains (exit %d): %s", rc, out);
    char path[600];
    snprintf(path, sizeof path, "%s/vs/runs/rope_s3.curve.csv", tmp);
    char *curve = slurp(path);
    CHECK(curve && strncmp(curve, "step,tokens,lr,train_loss,val_loss\n1,64,", 40) == 0,
          "each compare run writes its loss curve beside its checkpoint: %.80s", curve ? curve : "(missing)");
    free(curve);
}

void test_verdict(void) {
    const char *tmp = test_tmpdir();
    clear_winner(tmp);
    bimodal_gate(tmp);
    convergence(tmp);
    lm_gate(tmp);
    converge_curves(tmp);
    seeds_flag(tmp);
}
