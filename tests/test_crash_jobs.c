/* test_crash_jobs.c: SIGKILL campaigns over the commands that run many trainings: `compare` run as
 * its --jobs lines then --collect, and `suite` run whole or as its --jobs lines then --collect. Each
 * command is started in its own process group and the group is killed (SIGKILL) at a random moment
 * of a seeded schedule, the way a scheduler or the OOM killer ends a job, then the same command is
 * run again, until it exits 0. What must hold wherever a kill lands:
 *  - after every kill, each run CSV that exists is byte for byte the unkilled run's (a CSV is a
 *    finished run: never torn), and no finished run's CSV is gone;
 *  - at the end, the run CSVs, loss curves, verdicts.csv and claims.csv equal those of the same
 *    command run once without kills (an in-process compare / suite: --jobs too must equal it), and
 *    no temporary file is left.
 * PELAB_CRASH_KILLS=N kills per campaign (default 3: the compare and the suite's --jobs lines; the
 * whole-suite campaign only when N is set), PELAB_CRASH_SEED the schedule, PELAB_CRASH_VERBOSE=1
 * one line per kill. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/files.h"
#include "../core/rng.h"
#include "../core/sys.h"
#include "child.h"
#include "test.h"

#define MAX_CMDS 24

typedef struct {
    const char *name;
    char ref[512], dir[512], log[560];
    char *cmd[MAX_CMDS]; /* run in order, each until it exits 0 */
    double ref_s[MAX_CMDS];
    int n_cmd;
    const char *csv_dirs[4]; /* under ref/dir: folders whose *.csv must match (runs, reports) */
    /* tallies */
    int kills, ended_first, trials, runs_complete, csv_checked, csv_torn, csv_lost, exact, temps_left;
} Campaign;

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* sh -c CMD in a process group of its own (so the kill reaches pelab, not only the shell), output
 * appended to log */
static pid_t spawn_group(const char *cmd, const char *log) {
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) { /* only async-signal-safe calls until exec: the runner may have threads */
        setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) setpgid(pid, pid); /* also here: the kill may come before the child ran */
    return pid;
}

static int status_code(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

/* the command to its end: its exit status */
static int run_to_end(const char *cmd, const char *log, double *seconds) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    pid_t pid = spawn_group(cmd, log);
    waitpid(pid, &st, 0);
    if (seconds) *seconds = seconds_since(&t0);
    return status_code(st);
}

/* waits up to delay seconds; SIGKILLs the group if it still runs. 1: killed, 0: it ended first
 * (its status in *status) */
static int kill_after(pid_t pid, double delay, int *status) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = 0;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            *status = status_code(st);
            return 0;
        }
        if (seconds_since(&t0) >= delay) break;
        usleep(2000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &st, 0);
    kill(-pid, SIGKILL); /* a child the shell had started, if the group outlived it */
    *status = status_code(st);
    return 1;
}

static int is_csv(const char *name) {
    size_t n = strlen(name);
    return n > 4 && strcmp(name + n - 4, ".csv") == 0;
}

static int is_temp(const char *name) { return strstr(name, ".tmp") != NULL; }

/* 1: the file's bytes equal the reference's; with `prefix`, they may be the reference's first whole
 * lines instead (a loss curve is written as the run goes: killed, it holds the rows so far) */
static int same_file(const char *path, const char *ref, int prefix) {
    unsigned char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    int same = read_file(path, &x, &nx) == 0 && read_file(ref, &y, &ny) == 0 &&
               (nx == ny || (prefix && nx < ny && (nx == 0 || x[nx - 1] == '\n'))) && memcmp(x, y, nx) == 0;
    free(x), free(y);
    return same;
}

static int is_curve(const char *name) {
    size_t n = strlen(name);
    return n > 10 && strcmp(name + n - 10, ".curve.csv") == 0;
}

/* every *.csv of dir/sub against ref/sub; with `all`, the same set of names too. Counts what it
 * saw; returns the number of CSVs that differ or are missing/extra (their first name in bad) */
static int check_csvs(Campaign *cp, const char *sub, int all, int *temps, char *bad, size_t cap) {
    char path[1200], rpath[1200];
    snprintf(path, sizeof path, "%s/%s", cp->dir, sub);
    DIR *d = opendir(path);
    int wrong = 0, n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (is_temp(e->d_name)) {
            if (temps && !(*temps)++) fprintf(stderr, "  crash %s: a temporary file: %s/%s\n", cp->name, sub, e->d_name);
            continue;
        }
        if (!is_csv(e->d_name)) continue;
        n++;
        snprintf(path, sizeof path, "%s/%s/%s", cp->dir, sub, e->d_name);
        snprintf(rpath, sizeof rpath, "%s/%s/%s", cp->ref, sub, e->d_name);
        cp->csv_checked++;
        if (!same_file(path, rpath, !all && is_curve(e->d_name))) {
            if (!wrong++) snprintf(bad, cap, "%s", path);
        }
    }
    if (d) closedir(d);
    if (all) { /* as many as the reference has */
        snprintf(rpath, sizeof rpath, "%s/%s", cp->ref, sub);
        int want = 0;
        DIR *r = opendir(rpath);
        for (struct dirent *e; r && (e = readdir(r));) want += is_csv(e->d_name) && !is_temp(e->d_name);
        if (r) closedir(r);
        if (want != n) {
            if (!wrong) snprintf(bad, cap, "%s/%s: %d CSVs, the unkilled run has %d", cp->dir, sub, n, want);
            wrong += want > n ? want - n : n - want;
        }
    }
    return wrong;
}

static int count_csvs(const Campaign *cp) {
    int n = 0;
    char path[1200];
    for (int i = 0; cp->csv_dirs[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", cp->dir, cp->csv_dirs[i]);
        DIR *d = opendir(path);
        for (struct dirent *e; d && (e = readdir(d));) n += is_csv(e->d_name) && !is_temp(e->d_name);
        if (d) closedir(d);
    }
    return n;
}

/* the command with every "@D" replaced by dir (a growing heap string) */
static char *expand(const char *tmpl, const char *dir) {
    size_t n = strlen(tmpl) + 1;
    for (const char *p = tmpl; (p = strstr(p, "@D")); p += 2) n += strlen(dir);
    char *s = malloc(n), *o = s;
    if (!s) return NULL;
    for (const char *p = tmpl; *p;) {
        if (p[0] == '@' && p[1] == 'D') o += sprintf(o, "%s", dir), p += 2;
        else *o++ = *p++;
    }
    *o = 0;
    return s;
}

/* one trial: a fresh directory, each command killed at random moments (each kill in the first 90% of
 * the command's unkilled time) until it ends by itself with exit 0, then the whole output checked */
static void trial(Campaign *cp, Rng *rng, int kills_wanted) {
    char cmd[1400], bad[1300] = "";
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", cp->dir, cp->dir);
    if (system(cmd) != 0) {
        CHECK(0, "crash %s: cannot set up %s", cp->name, cp->dir);
        return;
    }
    cp->trials++;
    for (int i = 0; i < cp->n_cmd; i++) {
        for (int attempt = 0;; attempt++) {
            int before = count_csvs(cp), st = 0;
            pid_t pid = spawn_group(cp->cmd[i], cp->log);
            int kill_it = cp->kills < kills_wanted && attempt < 12;
            double delay = rng_f32(rng) * 0.9 * cp->ref_s[i];
            if (!kill_it) {
                waitpid(pid, &st, 0);
                st = status_code(st);
                CHECK(st == 0, "crash %s: command %d ends (exit %d; log %s): %.300s", cp->name, i, st, cp->log, cp->cmd[i]);
                break;
            }
            int killed = kill_after(pid, delay, &st);
            cp->kills += killed;
            cp->ended_first += !killed;
            /* wherever it landed: every CSV there is the unkilled run's, none that was there is gone */
            int torn = 0, after = count_csvs(cp);
            for (int k = 0; cp->csv_dirs[k]; k++) torn += check_csvs(cp, cp->csv_dirs[k], 0, NULL, bad, sizeof bad);
            cp->csv_torn += torn;
            cp->csv_lost += after < before;
            if (getenv("PELAB_CRASH_VERBOSE"))
                fprintf(stderr, "  crash %s: command %d attempt %d: %s at %.3f s, CSVs %d -> %d%s\n", cp->name, i,
                        attempt, killed ? "killed" : "had ended", delay, before, after, torn ? " (one differs)" : "");
            CHECK(torn == 0, "crash %s: after a kill of command %d at %.3f s a CSV differs from the unkilled run's: %s",
                  cp->name, i, delay, bad);
            CHECK(after >= before, "crash %s: a kill of command %d at %.3f s lost finished runs (%d CSVs before, %d after)",
                  cp->name, i, delay, before, after);
            if (!killed) {
                CHECK(st == 0, "crash %s: command %d ends (exit %d; log %s)", cp->name, i, st, cp->log);
                break;
            }
        }
    }
    int wrong = 0, temps = 0;
    for (int k = 0; cp->csv_dirs[k]; k++) wrong += check_csvs(cp, cp->csv_dirs[k], 1, &temps, bad, sizeof bad);
    cp->exact += wrong == 0;
    cp->temps_left += temps;
    CHECK(wrong == 0, "crash %s trial %d: %d CSVs differ from the unkilled run's, e.g. %s", cp->name, cp->trials, wrong,
          bad);
    CHECK(temps == 0, "crash %s trial %d: %d temporary files left", cp->name, cp->trials, temps);
}

/* the reference: the unkilled commands in cp->ref, timed; then trials until `kills` kills */
static void campaign(Campaign *cp, Rng *rng, const char *ref_cmd, int kills) {
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", cp->ref, cp->ref);
    snprintf(cp->log, sizeof cp->log, "%s.log", cp->dir);
    if (system(cmd) != 0) return;
    char *ref = expand(ref_cmd, cp->ref);
    double ref_all = 0;
    int rc = run_to_end(ref, cp->log, &ref_all);
    free(ref);
    CHECK(rc == 0, "crash %s: the unkilled reference run ends (exit %d, log %s)", cp->name, rc, cp->log);
    if (rc != 0) return;
    /* each command's own time: the first trial's unkilled pass (commands are run once unkilled to time them) */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", cp->dir, cp->dir);
    if (system(cmd) != 0) return;
    for (int i = 0; i < cp->n_cmd; i++) {
        rc = run_to_end(cp->cmd[i], cp->log, &cp->ref_s[i]);
        CHECK(rc == 0, "crash %s: command %d ends unkilled (exit %d, log %s)", cp->name, i, rc, cp->log);
        if (rc != 0) return;
    }
    char bad[1300] = "";
    int temps = 0, wrong = 0;
    for (int k = 0; cp->csv_dirs[k]; k++) wrong += check_csvs(cp, cp->csv_dirs[k], 1, &temps, bad, sizeof bad);
    CHECK(wrong == 0, "crash %s: the commands unkilled give the reference's CSVs (%d differ, e.g. %s)", cp->name, wrong,
          bad);
    double t0 = now_seconds();
    while (cp->kills < kills && cp->trials < kills + 4) trial(cp, rng, kills);
    fprintf(stderr,
            "  crash %-13s %d kills in %d trials (%d commands ended before their kill); CSVs checked after kills: "
            "%d, torn %d, lost %d; trials bit-exact %d/%d, temporary files left %d; %.1f s\n",
            cp->name, cp->kills, cp->trials, cp->ended_first, cp->csv_checked, cp->csv_torn, cp->csv_lost, cp->exact,
            cp->trials, cp->temps_left, now_seconds() - t0);
}

static void free_cmds(Campaign *cp) {
    for (int i = 0; i < cp->n_cmd; i++) free(cp->cmd[i]);
    cp->n_cmd = 0;
}

/* the lines of a --jobs file as commands, then `last` */
static void jobs_then(Campaign *cp, const char *jobs_cmd, const char *jobs_file, const char *last) {
    char out[4096];
    char *gen = expand(jobs_cmd, cp->dir);
    int rc = run_pelab(gen, out, sizeof out);
    free(gen);
    char *text = test_slurp(jobs_file);
    CHECK(rc == 0 && text, "crash %s: --jobs writes its commands (exit %d): %.500s", cp->name, rc, out);
    for (char *line = text; line && *line && cp->n_cmd < MAX_CMDS - 1;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (*line) cp->cmd[cp->n_cmd++] = strdup(line);
        line = nl ? nl + 1 : NULL;
    }
    cp->cmd[cp->n_cmd++] = expand(last, cp->dir);
}

void test_crash_jobs(void) {
    const char *env = getenv("PELAB_CRASH_KILLS"), *seed = getenv("PELAB_CRASH_SEED");
    int kills = env ? atoi(env) : 3;
    if (kills < 1) kills = 1;
    Rng rng;
    rng_seed(&rng, seed ? strtoull(seed, NULL, 10) : 1);
    const char *bin = pelab_bin(), *tmp = test_tmpdir();
    static char cmd[4096], tail[1600], jobs[600], whole[4096], collect[4200];

    /* compare: 2 schemes x 2 seeds, a PI fine-tune each for rope, checkpoints every 20 steps */
    static Campaign cmp = {.name = "compare-jobs", .csv_dirs = {"cmp/runs", "cmp", NULL}};
    snprintf(cmp.ref, sizeof cmp.ref, "%s/crashjobs-cmp-ref", tmp);
    snprintf(cmp.dir, sizeof cmp.dir, "%s/crashjobs-cmp", tmp);
    snprintf(tail, sizeof tail,
             "compare --out @D/cmp --schemes rope,alibi --seeds 2 --steps 200 --dim 32 --layers 1 --heads 2 "
             "--seq-len 32 --batch 4 --mult 1,2 --eval-tokens 2048 --threads 1 --finetune-scale 2 --finetune-steps 20 "
             "--rules pi:2 --synth-bytes 40000");
    snprintf(whole, sizeof whole, "PELAB_NO_GNUPLOT=1 %s %s", bin, tail);
    snprintf(collect, sizeof collect, "%s --collect", whole);
    snprintf(jobs, sizeof jobs, "%s/crashjobs-cmp.jobs", tmp);
    snprintf(cmd, sizeof cmd, "./pelab %s --jobs %s", tail, jobs);
    jobs_then(&cmp, cmd, jobs, collect);
    if (cmp.n_cmd == 5) campaign(&cmp, &rng, whole, kills);
    else CHECK(0, "crash compare-jobs: 4 job lines and the collect expected, got %d commands", cmp.n_cmd);
    free_cmds(&cmp);

    /* suite: the copy protocol of quick (nope and rope, and the series copy's claims add), 2 seeds, one
     * claim; its --jobs lines, then --collect; the reference is the same suite in one process */
    static Campaign sj = {.name = "suite-jobs", .csv_dirs = {"s/copy/runs", "s/copy", "s", NULL}};
    snprintf(sj.ref, sizeof sj.ref, "%s/crashjobs-suite-ref", tmp);
    snprintf(sj.dir, sizeof sj.dir, "%s/crashjobs-suite", tmp);
    char claims[600];
    snprintf(claims, sizeof claims, "%s/crashjobs-claims.txt", tmp);
    FILE *f = fopen(claims, "w");
    if (f) fputs("k | P | nope beats rope at 16 | copy | 16 | nope | better:rope |\n", f), fclose(f);
    snprintf(tail, sizeof tail,
             "suite quick --claims %s --schemes nope,rope --protocols copy --seeds 2 --steps 12 --task-n 2 "
             "--threads 1 --dir @D/s", claims);
    snprintf(whole, sizeof whole, "PELAB_NO_GNUPLOT=1 %s %s", bin, tail);
    snprintf(collect, sizeof collect, "%s --collect", whole);
    snprintf(jobs, sizeof jobs, "%s/crashjobs-suite.jobs", tmp);
    snprintf(cmd, sizeof cmd, "./pelab %s --jobs %s", tail, jobs);
    jobs_then(&sj, cmd, jobs, collect);
    if (sj.n_cmd >= 3) campaign(&sj, &rng, whole, kills);
    else CHECK(0, "crash suite-jobs: job lines and the collect expected, got %d commands", sj.n_cmd);
    free_cmds(&sj);

    /* the whole suite in one process, killed and rerun: only on request (it takes a minute a few kills) */
    if (env) {
        static Campaign sw = {.name = "suite-whole", .csv_dirs = {"s/copy/runs", "s/copy", "s", NULL}};
        snprintf(sw.ref, sizeof sw.ref, "%s", sj.ref);
        snprintf(sw.dir, sizeof sw.dir, "%s/crashjobs-suite-whole", tmp);
        sw.cmd[sw.n_cmd++] = expand(whole, sw.dir);
        campaign(&sw, &rng, whole, kills);
        free_cmds(&sw);
    } else {
        fprintf(stderr, "  crash suite-whole: skipped (set PELAB_CRASH_KILLS to run it)\n");
    }
}
