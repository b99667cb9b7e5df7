/* test_jobs.c: a sweep's --jobs file without a job engine (make check-parallel and make check-slurm
 * run it through GNU parallel and Slurm). A micro compare in a directory with a hostile name (quotes,
 * $(...), backticks, spaces): its job lines, run by sh, give the verdicts of the same compare run
 * in one process byte for byte, and nothing in the name runs; a finished sweep has no jobs; the
 * Slurm array script runs task i's run (sh FILE i) and refuses another i; a run whose CSV is gone
 * resumes its checkpoint instead of training again, and never one of other steps; bad flags are
 * refused in one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/files.h"
#include "../core/strbuf.h"
#include "../lab/jobs.h"
#include "test.h"

/* path's text until the next call; NULL when it does not read */
static const char *slurp(const char *path) {
    static unsigned char *buf;
    free(buf), buf = NULL;
    size_t n;
    return read_file(path, &buf, &n) == 0 ? (const char *)buf : NULL;
}

/* cmp -s, the names quoted as the job files quote them */
static int same_file(const char *a, const char *b) {
    StrBuf c = {0};
    sb_puts(&c, "cmp -s "), shell_quote(&c, a), sb_puts(&c, " "), shell_quote(&c, b);
    int rc = system(sb_str(&c));
    sb_free(&c);
    return rc == 0;
}

static long long mtime_ns(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

#define MICRO                                                                                                    \
    "--schemes rope,alibi --seeds 1,2 --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 20 --synth-bytes 20000 " \
    "--batch 4 --mult 0.5,1,2 --rules pi:2 --finetune-steps 5 --eval-tokens 1000 --threads 1"

static int compare(const char *out_q, const char *more, char *log, size_t cap) {
    char cmd[12000];
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare " MICRO " --out %s %s", out_q, more);
    return run_pelab(cmd, log, cap);
}

static void bad_flags(const char *tmp) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "./pelab compare " MICRO " --out %s/bad --jobs %s/bad.jobs --jobs-format pbs", tmp, tmp);
    expect_pelab_error(cmd, "--jobs-format pbs: expected lines (GNU parallel, xargs, sh) or slurm");
    snprintf(cmd, sizeof cmd, "./pelab compare " MICRO " --out %s/bad --jobs-format slurm", tmp);
    expect_pelab_error(cmd, "compare: --jobs-format slurm: needs --jobs FILE");
    snprintf(cmd, sizeof cmd, "./pelab compare --schemes rope --seeds auto --out %s/bad --jobs %s/bad.jobs", tmp, tmp);
    expect_pelab_error(cmd, "--seeds auto decides its seeds look by look: no --jobs");
    snprintf(cmd, sizeof cmd, "./pelab compare " MICRO " --out '%s/two\nlines' --jobs %s/bad.jobs", tmp, tmp);
    expect_pelab_error(cmd, "compare: --jobs: a flag holds a line break; a job file has one command per line");
    snprintf(cmd, sizeof cmd, "./pelab suite quick --protocols copy --dir %s/bad --jobs-format slurm", tmp);
    expect_pelab_error(cmd, "suite: --jobs-format slurm: needs --jobs FILE");
}

/* suite --jobs-format slurm: every protocol's runs in one array; --threads asks for as many CPUs */
static void suite_script(const char *tmp) {
    char cmd[2048], path[600];
    static char log[1 << 16];
    snprintf(path, sizeof path, "%s/suite.sbatch", tmp);
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab suite quick --schemes rope,alibi --protocols copy --seeds 2 "
             "--steps 4 --task-n 3 --threads 2 --dir %s/suite-jobs --jobs %s --jobs-format slurm", tmp, path);
    int rc = run_pelab(cmd, log, sizeof log);
    const char *s = slurp(path);
    CHECK(rc == 0 && s && strncmp(s, "#!/bin/sh\n", 10) == 0 && strstr(s, "\n#SBATCH --array=1-8\n") &&
              strstr(s, "\n#SBATCH --cpus-per-task=2\n") && strstr(s, "\n#SBATCH --job-name=pelab-suite\n") &&
              strstr(s, "\n8) cd ") && strstr(s, " --only rope-randpos-256_s102 ;;\n") && strstr(s, " --only fire_s102 ;;\n") &&
              !strstr(s, "\n9) ") && strstr(log, "wrote 8 commands of the next look's runs to") && strstr(log, "(sbatch --wait "),
          "suite --jobs-format slurm: one array of the look's 8 runs (copy adds randomized rope and FIRE), 2 CPUs a task "
          "(exit %d): %s", rc, s ? s : log);
}

void test_jobs(void) {
    const char *tmp = test_tmpdir();
    bad_flags(tmp);
    suite_script(tmp);
    static char log[1 << 16];
    char ref[600], out[900], jobs[1000], cmd[4096], a[1200], b[1200];
    snprintf(ref, sizeof ref, "%s/jobs-ref", tmp);
    int rc = compare(ref, "", log, sizeof log);
    CHECK(rc == 0, "the in-process micro compare (exit %d): %.2000s", rc, log);

    /* the hostile name, quoted once for the shell that runs our commands */
    snprintf(out, sizeof out, "%s/jobs it's \"a\" $(touch pwned) `touch pwned` dir", tmp);
    snprintf(jobs, sizeof jobs, "%s.jobs", out);
    StrBuf oq = {0}, jq = {0};
    shell_quote(&oq, out), shell_quote(&jq, jobs);
    snprintf(cmd, sizeof cmd, "--jobs %s", sb_str(&jq));
    rc = compare(sb_str(&oq), cmd, log, sizeof log);
    const char *j = slurp(jobs);
    CHECK(rc == 0 && j && count(j, "\n") == 4 && count(j, " --only ") == 4 && !strstr(j, "--jobs") &&
              strstr(log, "wrote 4 commands to") && strstr(log, "(parallel -j4 < '"),
          "--jobs: 4 commands for 4 runs (exit %d): %s", rc, j ? j : log);
    snprintf(cmd, sizeof cmd, "sh %s > /dev/null 2>&1", sb_str(&jq));
    rc = system(cmd);
    CHECK(rc == 0, "the job lines run by sh (exit %d)", rc);
    snprintf(cmd, sizeof cmd, "%s/pwned", tmp);
    CHECK(access("pwned", F_OK) != 0 && access(cmd, F_OK) != 0, "no part of the directory's name ran");
    rc = compare(sb_str(&oq), "--collect", log, sizeof log);
    snprintf(a, sizeof a, "%s/verdicts.csv", ref);
    snprintf(b, sizeof b, "%s/verdicts.csv", out);
    CHECK(rc == 0 && same_file(a, b), "the jobs' verdicts.csv equals the in-process compare's (exit %d)", rc);
    const char *names[] = {"rope_s1", "rope_s2", "alibi_s1", "alibi_s2", "rope_s1_ft-pi2", "rope_s2_ft-pi2"};
    for (int i = 0; i < 6; i++) {
        snprintf(a, sizeof a, "%s/runs/%s.csv", ref, names[i]);
        snprintf(b, sizeof b, "%s/runs/%s.csv", out, names[i]);
        CHECK(same_file(a, b), "runs/%s.csv: jobs and in-process the same", names[i]);
    }

    /* finished: no jobs */
    snprintf(cmd, sizeof cmd, "--jobs %s", sb_str(&jq));
    rc = compare(sb_str(&oq), cmd, log, sizeof log);
    j = slurp(jobs);
    CHECK(rc == 0 && j && !*j && strstr(log, "every run is finished"), "--jobs of a finished compare: empty (exit %d): %s",
          rc, log);

    /* two CSVs gone: the Slurm script's two tasks; the run resumes its (finished) checkpoint */
    snprintf(b, sizeof b, "%s/runs/alibi_s2.csv", out);
    remove(b);
    snprintf(b, sizeof b, "%s/runs/rope_s1_ft-pi2.csv", out);
    remove(b);
    snprintf(b, sizeof b, "%s/runs/rope_s1.csv", out);
    long long rope_mtime = mtime_ns(b);
    snprintf(cmd, sizeof cmd, "--jobs %s --jobs-format slurm", sb_str(&jq));
    rc = compare(sb_str(&oq), cmd, log, sizeof log);
    j = slurp(jobs);
    CHECK(rc == 0 && j && strstr(j, "\n#SBATCH --array=1-2\n") && strstr(j, "\n#SBATCH --cpus-per-task=1\n") &&
              strstr(j, "\n1) cd ") && strstr(j, " --only rope_s1 ;;\n2) cd ") && strstr(j, " --only alibi_s2 ;;\n*) ") &&
              strstr(log, "(2 runs finished already)") && strstr(log, "(sbatch --wait '"),
          "--jobs-format slurm: an array of the 2 unfinished runs (exit %d): %s", rc, j ? j : log);
    snprintf(cmd, sizeof cmd, "sh %s 2 2>&1", sb_str(&jq));
    rc = run_pelab(cmd, log, sizeof log);
    snprintf(b, sizeof b, "%s/runs/alibi_s2.csv", out);
    CHECK(rc == 0 && mtime_ns(b) > 0 && strstr(log, "pelab: task 2 of 2 on ") &&
              strstr(log, "train alibi seed 2: resumed from its checkpoint at step 20"),
          "task 2 re-evaluates alibi_s2 from its checkpoint, no training (exit %d): %s", rc, log);
    snprintf(cmd, sizeof cmd, "sh %s 1 > /dev/null 2>&1", sb_str(&jq));
    rc = system(cmd);
    snprintf(a, sizeof a, "%s/runs/rope_s1_ft-pi2.csv", out);
    snprintf(b, sizeof b, "%s/runs/rope_s1.csv", out);
    CHECK(rc == 0 && mtime_ns(a) > 0 && mtime_ns(b) == rope_mtime, "task 1 redoes rope_s1's fine-tune only (exit %d)", rc);
    snprintf(cmd, sizeof cmd, "sh %s 3 2>&1", sb_str(&jq));
    rc = run_pelab(cmd, log, sizeof log);
    CHECK(rc == 2 && strstr(log, "pelab: task '3': expected 1..2 (SLURM_ARRAY_TASK_ID, or the first argument)"),
          "task 3 of 2 refused (status %d): %s", rc, log);
    rc = compare(sb_str(&oq), "--collect", log, sizeof log);
    snprintf(a, sizeof a, "%s/verdicts.csv", ref);
    snprintf(b, sizeof b, "%s/verdicts.csv", out);
    CHECK(rc == 0 && same_file(a, b), "... and the verdicts are the in-process compare's still (exit %d)", rc);

    /* a checkpoint without its CSV is resumed only by the compare it was planned in */
    snprintf(b, sizeof b, "%s/runs/alibi_s2.csv", out);
    remove(b);
    char cmd2[4096];
    snprintf(cmd2, sizeof cmd2, "PELAB_NO_GNUPLOT=1 ./pelab compare " MICRO " --out %s --only alibi_s2 --steps 30",
             sb_str(&oq));
    rc = run_pelab(cmd2, log, sizeof log);
    CHECK(rc == 1 && count_lines(log) == 2 &&
              strstr(log, "cannot resume: train.steps is 20 in the checkpoint but 30 now"),
          "another --steps does not resume the checkpoint (status %d): %s", rc, log);
    sb_free(&oq), sb_free(&jq);
}
