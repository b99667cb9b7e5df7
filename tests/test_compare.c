/* test_compare.c: `pelab compare` end to end on a micro config (2 schemes x 2 seeds, dim 16,
 * L 16, 20 steps): the report has every section and a row per scheme; a rerun skips finished
 * runs without touching their CSVs; --jobs writes one runnable command per run; --collect
 * rebuilds the report from the CSVs alone (and says so when gnuplot is missing, as in CI). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"

/* runs "PELAB compare ARGS" (PELAB_BIN: the binary under test); stdout+stderr into out */
static int run_compare(const char *env, const char *args, char *out, size_t cap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s ./pelab compare %s", env, args);
    return run_pelab(cmd, out, cap);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static long long mtime_ns(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

void test_compare(void) {
    static char out[1 << 16], args[2048], path[512], jobs[512];
    const char *dir = test_tmpdir();
    const char *micro = "--schemes rope,alibi --seeds 1,2 --dim 16 --layers 1 --heads 2 --train-len 16 --steps 20 "
                        "--synth-bytes 20000 --batch 4 --mult 0.5,1,2 --rules pi:2 --eval-tokens 1000 --threads 1";
    snprintf(args, sizeof args, "%s --out %s/cmp", micro, dir);
    int rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "report in"), "compare runs end to end (exit %d): %s", rc, out);

    const char *runs[] = {"rope_s1", "rope_s2", "alibi_s1", "alibi_s2"};
    long long mt[4];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/cmp/runs/%s.csv", dir, runs[i]);
        mt[i] = mtime_ns(path);
        CHECK(mt[i] > 0, "compare writes %s", path);
    }
    snprintf(path, sizeof path, "%s/cmp/report.md", dir);
    char *rep = slurp(path);
    CHECK(rep != NULL, "compare writes report.md");
    if (!rep) return;
    const char *needles[] = {"## Command", "pelab compare --schemes rope,alibi", "## Configuration",
                             "## Results: non-overlapping windows", "## Results: sliding windows", "## Reliable length",
                             "## Plots", "| rope | none |", "| rope | pi:2 |", "| alibi | none |", "| 16 (=L) |", " ± ",
                             "- rope: reliable length", "- rope+pi:2: reliable length", "- alibi: reliable length",
                             "accepted length unbounded", "runs: 4 of 4 finished"};
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        CHECK(strstr(rep, needles[i]) != NULL, "report.md has '%s'", needles[i]);
    int rows = 0; /* 3 series x 2 protocol tables */
    for (const char *p = rep; (p = strstr(p, "\n| rope |")); p++) rows++;
    for (const char *p = rep; (p = strstr(p, "\n| alibi |")); p++) rows++;
    CHECK(rows == 6, "a table row per scheme and rule in both tables (%d rows)", rows);
    int plotted = strstr(rep, "](plots/loss_vs_length.png)") != NULL;
    CHECK(plotted || strstr(rep, "gnuplot not found"), "report.md plots or says gnuplot is missing");
    snprintf(path, sizeof path, "%s/cmp/plots/plots.gp", dir);
    CHECK(slurp(path) && strstr(slurp(path), "loss_vs_length.svg"), "the gnuplot script is kept");

    /* rerun: every run skipped, nothing retrained, CSVs untouched */
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "skip rope_s1") && strstr(out, "skip alibi_s2") && !strstr(out, "train "),
          "rerun skips finished runs (exit %d): %s", rc, out);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/cmp/runs/%s.csv", dir, runs[i]);
        CHECK(mtime_ns(path) == mt[i], "rerun leaves %s untouched", path);
    }

    /* --jobs: one self-contained command per run */
    snprintf(jobs, sizeof jobs, "%s/cmp.jobs", dir);
    snprintf(args, sizeof args, "%s --out %s/cmp --jobs %s", micro, dir, jobs);
    rc = run_compare("", args, out, sizeof out);
    char *j = slurp(jobs);
    int lines = 0, only = 0;
    for (const char *p = j; p && *p; p++) lines += *p == '\n';
    for (const char *p = j; p && (p = strstr(p, " --only ")); p++) only++;
    CHECK(rc == 0 && lines == 4 && only == 4 && !strstr(j, "--jobs") && strstr(j, "--only alibi_s2\n"),
          "--jobs writes one command per run (exit %d, %d lines): %s", rc, lines, j ? j : "");
    /* the last command, run as is, redoes the run whose CSV is gone */
    snprintf(path, sizeof path, "%s/cmp/runs/alibi_s2.csv", dir);
    remove(path);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "tail -n 1 %s | sh > /dev/null 2>&1", jobs);
    rc = system(cmd);
    CHECK(rc == 0 && mtime_ns(path) > 0, "a --jobs command trains its run (exit %d)", rc);
    snprintf(path, sizeof path, "%s/cmp/report.md", dir);
    remove(path);

    /* --collect: the report from the CSVs alone (the gnuplot-less path CI takes) */
    snprintf(args, sizeof args, "%s --out %s/cmp --collect", micro, dir);
    rc = run_compare("PELAB_NO_GNUPLOT=1", args, out, sizeof out);
    rep = slurp(path);
    CHECK(rc == 0 && !strstr(out, "train ") && rep && strstr(rep, "gnuplot not found") &&
              strstr(rep, "| alibi | none |") && strstr(rep, "runs: 4 of 4 finished"),
          "--collect rebuilds report.md without training (exit %d): %s", rc, out);

    /* bad input: one line, exit 1 */
    snprintf(args, sizeof args, "--schemes rope,bogus --out %s/cmp2", dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "unknown position scheme 'bogus'"), "unknown scheme refused: %s", out);
    snprintf(args, sizeof args, "%s --out %s/cmp --only nope_s9", micro, dir);
    rc = run_compare("", args, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "no such run"), "--only of an unknown run refused: %s", out);
}
