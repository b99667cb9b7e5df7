/* test_ruler_report.c: RULER's figures in compare's --task report: the effective length of
 * constructed result rows (seed means and each seed, lengths in any order, a learned table's n/a,
 * an absolute and a relative threshold, a run that failed the gate left out), its section, and
 * compare --collect on constructed CSVs with recall and grid rows (the RULER score table, the
 * effective lengths, the verdicts on the score, the depth x length grid); a micro compare with
 * --task-depths; the flags refused where they mean nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lab/compare_plan.h"
#include "../lab/report.h"
#include "../lab/report_effective.h"
#include "../lab/report_verdict.h"
#include "test.h"

static const char *const SCHEMES[2] = {"rope", "alibi"};
enum { N_LENS = 4 };
static const int LENS[N_LENS] = {128, 32, 64, 256}; /* as --task-lens may give them: not in order */

/* recall per scheme, seed and length (LENS' order); NAN: n/a past a learned table */
static const double RECALL[2][3][N_LENS] = {
    {{0.5, 1.0, 0.95, 0.0}, {0.9, 1.0, 0.9, 0.1}, {0.2, 1.0, 0.86, 0.0}},
    {{0.9, 0.8, 0.9, 0.0}, {NAN, 1.0, NAN, NAN}, {0.9, 0.9, 0.9, 0.9}},
};

static void setup(Compare *c) {
    memset(c, 0, sizeof *c);
    c->name = "test";
    compare_verdict_defaults(c);
    c->n_schemes = 2, c->n_seeds = 3, c->task = "niah_single:len=32-64", c->base.seq_len = 64;
    for (int s = 0; s < 2; s++) snprintf(c->scheme[s], sizeof c->scheme[s], "%s", SCHEMES[s]);
    for (int k = 0; k < 3; k++) c->seed[k] = (unsigned long long)k + 1;
    c->n_lengths = N_LENS;
    for (int l = 0; l < N_LENS; l++) c->lens[l] = LENS[l];
}

static void put(const Compare *c, Agg *a, GenAgg *g, int s, int k, const char *kind, const char *protocol, int len,
                double v) {
    ResultRow r = result_row();
    char seed[8];
    snprintf(seed, sizeof seed, "%d", k + 1);
    r.kind = kind, r.scheme = c->scheme[s], r.rule = "none", r.seed = seed, r.train_len = 64, r.length = len;
    r.protocol = protocol, r.value = v, r.pos_hi = len;
    if (isnan(v)) r.status = RES_PAST_TABLE, r.limit = 64;
    report_take_row(c, a, g, s, k, &r);
}

/* the rows of every run: the gate (alibi seed 3 failing it when fail_gate), then exact and recall */
static void aggregate(const Compare *c, Agg *a, GenAgg *g, int with_recall, int fail_gate) {
    report_agg_begin(c, a);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 3; k++) {
            a->gate[s][k] = RUN_UNGATED;
            put(c, a, g, s, k, "gate", "exact", 32, fail_gate && s == 1 && k == 2 ? 0.5 : 1.0);
            for (int l = 0; l < N_LENS; l++) {
                double v = RECALL[s][k][l];
                put(c, a, g, s, k, "task", "exact", LENS[l], isnan(v) ? v : v > 0.85 ? v - 0.05 : v);
                if (with_recall) put(c, a, g, s, k, "task", "recall", LENS[l], v);
            }
        }
    report_gates(c, a);
}

static int effective(const Compare *c, const Agg *a, int s, int k) {
    const Series *se = report_series(a, s, "none");
    return se ? report_effective_length(c, a, se, report_effective_metric(a), report_effective_threshold(c, a, se), k)
              : -2;
}

static char *section(const Compare *c, const Agg *a) {
    static char buf[8192];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    if (!f) return strcpy(buf, "");
    report_effective_write(f, c, a);
    fclose(f);
    return buf;
}

static void test_effective_rows(void) {
    static Compare c;
    static Agg a;
    static GenAgg g;
    setup(&c);
    aggregate(&c, &a, &g, 1, 0);
    /* RULER's 85.6: rope's means 1.0, 0.903, 0.533 at 32, 64, 128; seeds 64, 128, 64. alibi's means
     * 0.9, 0.9, 0.9, 0.45 (seed 2 n/a past 32); seeds 0 (0.8 < 0.856 at 32), 32, 256 */
    int want[2][4] = {{64, 64, 128, 64}, {128, 0, 32, 256}};
    for (int s = 0; s < 2; s++)
        for (int k = -1; k < 3; k++)
            CHECK(effective(&c, &a, s, k) == want[s][k + 1], "%s seed %d: effective length %d, want %d", SCHEMES[s],
                  k + 1, effective(&c, &a, s, k), want[s][k + 1]);
    CHECK(report_effective_metric(&a) == TASK_RECALL && a.has_recall, "with recall rows the score is RULER's");
    const char *sec = section(&c, &a);
    CHECK(strstr(sec, "## Effective length") && strstr(sec, "at least 85.6% (RULER's threshold") &&
              strstr(sec, "| rope | 85.6 | 64 | s1 64, s2 128, s3 64 | 85.3 (64-128) |") &&
              strstr(sec, "| alibi | 85.6 | 128 | s1 0, s2 32, s3 256 | 96.0 (0-256) |") &&
              strstr(sec, "the shortest length, 32"),
          "the section: %s", sec);
    /* a threshold given: 95% leaves rope 32 (its mean 0.903 at 64) and alibi 0 */
    c.effective_pct = 95;
    CHECK(effective(&c, &a, 0, -1) == 32 && effective(&c, &a, 1, -1) == 0 && effective(&c, &a, 1, 1) == 32 &&
              strstr(section(&c, &a), "at least 95.0% (given"),
          "--effective-threshold 95: rope %d, alibi %d", effective(&c, &a, 0, -1), effective(&c, &a, 1, -1));
    /* relative: 0.9 x the score at 64, the longest inside L (rope 0.813: 64; seed 2 0.81: 128; alibi
     * 0.81: 128; seed 1 0.81 of its own 0.9: 0, 0.8 at 32) */
    c.effective_pct = 0, c.effective_rel = 0.9f;
    int rel[2][4] = {{64, 64, 128, 64}, {128, 0, -1, 256}}; /* alibi seed 2: no score at 64, no threshold */
    for (int s = 0; s < 2; s++)
        for (int k = -1; k < 3; k++) {
            const Series *se = report_series(&a, s, "none");
            double thr = k < 0 ? report_effective_threshold(&c, &a, se) : NAN;
            int e = k < 0 ? effective(&c, &a, s, k) : -3;
            if (k >= 0) { /* a seed's own threshold: through the section's per-seed column */
                const char *sec2 = section(&c, &a);
                char cell[64];
                snprintf(cell, sizeof cell, "s%d %s", k + 1, rel[s][k + 1] < 0 ? "n/a" : "");
                if (rel[s][k + 1] >= 0) snprintf(cell, sizeof cell, "s%d %d", k + 1, rel[s][k + 1]);
                CHECK(strstr(sec2, cell) != NULL, "relative, %s seed %d: '%s' in %s", SCHEMES[s], k + 1, cell, sec2);
                continue;
            }
            CHECK(e == rel[s][0] && fabs(thr - c.effective_rel * report_mean(&a, se, TASK_RECALL, 2)) < 1e-12,
                  "relative, %s: %d (threshold %g), want %d", SCHEMES[s], e, thr, rel[s][0]);
        }
    CHECK(strstr(section(&c, &a), "0.9 x the series' own RULER score at length 64"), "the relative threshold said");
    /* without recall rows the effective length reads exact match (the recall figures less 0.05 above
     * 0.85): rope's means 1.0 -> 0.95, 0.853 at 64 (below 0.856): 32 */
    c.effective_rel = 0;
    aggregate(&c, &a, &g, 0, 0);
    CHECK(report_effective_metric(&a) == TASK_EXACT && effective(&c, &a, 0, -1) == 32 &&
              strstr(section(&c, &a), "whose exact match"),
          "exact match without recall rows: rope %d", effective(&c, &a, 0, -1));
    /* a run that failed the gate is no seed of the series: alibi from seeds 1 and 2 (means 0.9, 0.9, 0.9,
     * 0: 128 still), its seed 3 left out of the per-seed column */
    aggregate(&c, &a, &g, 1, 1);
    sec = section(&c, &a);
    CHECK(effective(&c, &a, 1, -1) == 128 && strstr(sec, "| alibi | 85.6 | 128 | s1 0, s2 32 | 16.0 (0-32) |"),
          "a failed gate leaves the seed out: %d: %s", effective(&c, &a, 1, -1), sec);
}


/* compare --collect over hand-made CSVs of a RULER task: the score's table, the effective length,
 * verdicts on the score, the plot's bar; the flags' refusals */
static void test_collect(void) {
    static char out[1 << 16], cmd[4096], path[600];
    const char *dir = test_tmpdir();
    snprintf(path, sizeof path, "%s/ruler-cmp", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/ruler-cmp/runs", dir);
    mkdir(path, 0755);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, "%s/ruler-cmp/runs/%s_s%d.csv", dir, SCHEMES[s], k + 1);
            FILE *f = fopen(path, "w");
            if (!f) continue;
            fprintf(f, "%s\n", CMP_CSV_COLUMNS);
            fprintf(f, "gate,%s,%d,none,64,32,exact,1,ok,,,32,5,-1,-1\n", SCHEMES[s], k + 1);
            for (int l = 0; l < N_LENS; l++) {
                double v = RECALL[s][k][l];
                if (isnan(v)) {
                    fprintf(f, "task,%s,%d,none,64,%d,recall,,n/a (past table of 64),,,%d,0,64,-1\n", SCHEMES[s], k + 1,
                            LENS[l], LENS[l]);
                    continue;
                }
                fprintf(f, "task,%s,%d,none,64,%d,exact,%g,ok,,,%d,5,-1,-1\n", SCHEMES[s], k + 1, LENS[l], v, LENS[l]);
                fprintf(f, "task,%s,%d,none,64,%d,recall,%g,ok,,,%d,5,-1,-1\n", SCHEMES[s], k + 1, LENS[l], v, LENS[l]);
                /* the grid: the score at depth 0, half of it at depth 1, a depth not asked for (0.5) left out */
                for (int d = 0; d < 3; d++)
                    fprintf(f, "grid,%s,%d,none,64,%d,recall,%g,ok,,,%d,5,-1,-1,,,%s\n", SCHEMES[s], k + 1, LENS[l],
                            d == 0 ? v : d == 1 ? v / 2 : 0.0, LENS[l], d == 0 ? "0.00" : d == 1 ? "1.00" : "0.50");
            }
            fclose(f);
        }
    const char *base = "compare --task niah_single:len=32-64 --task-lens 128,32,64,256 --schemes rope,alibi --seeds 1,2,3 "
                       "--seq-len 64 --task-depths 0,1 --collect";
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab %s --out %s/ruler-cmp", base, dir);
    int rc = run_pelab(cmd, out, sizeof out);
    snprintf(path, sizeof path, "%s/ruler-cmp/report.md", dir);
    const char *rep = test_slurp(path);
    CHECK(rc == 0 && strstr(out, "effective length (RULER score >= 85.6%): rope 64, alibi 128") &&
              strstr(out, "RULER score of greedy answers"),
          "compare --collect prints the effective lengths (exit %d): %s", rc, out);
    const char *needles[] = {"## RULER score", "| rope | none | 53.3 ± 35.1 | 100.0 ± 0.0 | 90.3 ± 4.5 | 3.3 ± 5.8 |",
                             "| rope | 85.6 | 64 | s1 64, s2 128, s3 64 | 85.3 (64-128) |",
                             "| alibi | 85.6 | 128 | s1 0, s2 32, s3 256 | 96.0 (0-256) |", "RULER score (%)"};
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        CHECK(rep && strstr(rep, needles[i]), "report.md has '%s'", needles[i]);
    /* the grid by increasing length, the mean over seeds (alibi's seed 2 n/a past 32) */
    const char *grid[] = {"### rope\n\n| depth | 32 | 64 | 128 | 256 |", "| 0.00 | 100.0 | 90.3 | 53.3 | 3.3 |",
                          "| 1.00 | 50.0 | 45.2 | 26.7 | 1.7 |", "### alibi", "| 0.00 | 90.0 | 90.0 | 90.0 | 45.0 |",
                          "![alibi depth x length](plots/grid_alibi.png)", "; needle depths of the grid (as trained): 0 1"};
    for (size_t i = 0; i < sizeof grid / sizeof grid[0]; i++)
        CHECK(rep && strstr(rep, grid[i]), "report.md's grid has '%s'", grid[i]);
    snprintf(path, sizeof path, "%s/ruler-cmp/plots/grid_rope.dat", dir);
    const char *dat = test_slurp(path);
    CHECK(dat && strcmp(dat, "100.000 90.333 53.333 3.333\n50.000 45.167 26.667 1.667\n") == 0, "grid_rope.dat: %s",
          dat ? dat : "(missing)");
    snprintf(path, sizeof path, "%s/ruler-cmp/plots/grid.gp", dir);
    const char *ggp = test_slurp(path);
    CHECK(ggp && strstr(ggp, "set output 'grid_alibi.svg'") && strstr(ggp, "plot 'grid_rope.dat' matrix with image"),
          "grid.gp draws each scheme's grid");
    snprintf(path, sizeof path, "%s/ruler-cmp/plots/plots.gp", dir);
    const char *gp = test_slurp(path);
    CHECK(gp && strstr(gp, "first 85.6 nohead dashtype 4") && strstr(gp, "RULER score (%), mean and std"),
          "the plot: RULER's score with the threshold's bar: %s", gp ? gp : "(missing)");
    snprintf(path, sizeof path, "%s/ruler-cmp/verdicts.csv", dir);
    const char *v = test_slurp(path);
    CHECK(v && strstr(v, "\nrecall,"), "verdicts on the RULER score: %.300s", v ? v : "(missing)");
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab %s --effective-relative 0.9 --out %s/ruler-cmp", base, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "effective length (RULER score >= 0.9 x its own inside L): rope 64, alibi 128"),
          "--effective-relative (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab %s --effective-relative 0.9 --effective-threshold 50 --out %s/ruler-cmp", base, dir);
    expect_pelab_error(cmd, "--effective-threshold and --effective-relative: give one");
    snprintf(cmd, sizeof cmd, "./pelab compare --effective-threshold 50 --out %s/ruler-cmp2", dir);
    expect_pelab_error(cmd, "--effective-threshold and --effective-relative need --task");
    snprintf(cmd, sizeof cmd, "./pelab %s --effective-threshold 101 --out %s/ruler-cmp", base, dir);
    expect_pelab_error(cmd, "--effective-threshold");
    snprintf(cmd, sizeof cmd, "./pelab compare --task copy --task-depths 0.5 --out %s/ruler-cmp2", dir);
    expect_pelab_error(cmd, "--task-depths: task copy has no depth option");
    snprintf(cmd, sizeof cmd, "./pelab compare --task-depths 0.5 --out %s/ruler-cmp2", dir);
    expect_pelab_error(cmd, "--task-depths needs --task");
    snprintf(cmd, sizeof cmd, "./pelab compare --task niah_single --task-depths 0.5,1.5 --out %s/ruler-cmp2", dir);
    expect_pelab_error(cmd, "--task-depths");
}

/* a micro compare with --task-depths: every run's grid rows (depths x lengths, rule none), a learned
 * table's n/a past its end */
static void test_grid_end_to_end(void) {
    static char out[1 << 16], cmd[4096], path[600];
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare --task niah_single:len=24-40 --task-lens 24,40,80 "
             "--task-depths 0,0.5,1 --task-n 3 --schemes rope,learned --seeds 1 --dim 16 --layers 1 --heads 2 "
             "--seq-len 40 --steps 3 --synth-bytes 20000 --batch 4 --threads 1 --gate 0 --out %s/ruler-grid",
             test_tmpdir());
    int rc = run_pelab(cmd, out, sizeof out);
    snprintf(path, sizeof path, "%s/ruler-grid/runs/learned_s1.csv", test_tmpdir());
    const char *csv = test_slurp(path);
    int rows = 0;
    for (const char *p = csv; p && (p = strstr(p, "\ngrid,learned,1,none,40,")); p++) rows++;
    CHECK(rc == 0 && rows == 9 && strstr(csv, "\ngrid,learned,1,none,40,80,recall,,n/a (past table of 40),") &&
              strstr(csv, ",0.50\n") && strstr(csv, "\ntask,learned,1,none,40,24,recall,"),
          "compare --task-depths: 9 grid rows a run (exit %d, %d rows): %s", rc, rows, csv ? csv : out);
    snprintf(path, sizeof path, "%s/ruler-grid/report.md", test_tmpdir());
    const char *rep = test_slurp(path);
    CHECK(rep && strstr(rep, "## Depth x length") && strstr(rep, "| 0.50 | 0.0 | 0.0 | — |"),
          "the grid section of a run: %s", rep ? rep : "(missing)");
}

void test_ruler_report(void) {
    test_effective_rows();
    test_collect();
    test_grid_end_to_end();
}
