/* test_crash.c: crash injection. `pelab train` is SIGKILLed at random moments (a seeded schedule;
 * where each kill lands still depends on timing, so every assertion must hold wherever it lands):
 * the checkpoint at --out, once written, is never missing nor corrupt; --resume carries on from it,
 * removes the temporary files a killed write left, and ends with a checkpoint that is byte for byte
 * the one of an uninterrupted run (the file holds no timing: weights, AdamW moments, step, sampler
 * state, losses; docs/FORMAT.md) and the same final loss line. A small model covers resume
 * arithmetic (checkpoints every 3 steps, so a resume replays steps); a 47 MB one (dim 512,
 * --ckpt-every 1) spends about half its time writing checkpoints, so kills land inside writes.
 * Also: SIGTERM exits 143 with a resumable checkpoint.
 * PELAB_CRASH_KILLS=N (default 10) sets the number of kills, PELAB_CRASH_SEED the schedule,
 * PELAB_CRASH_VERBOSE=1 prints every kill. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/rng.h"
#include "../core/sys.h"
#include "test.h"

typedef struct {
    const char *name;
    const char *args[40]; /* `pelab train` flags without --out / --resume, NULL-terminated */
    long steps;           /* their --steps */
    char dir[256], run[320], ref[320], out_log[320], err_log[320];
    double ref_seconds; /* kill window: the reference run's wall time, less when a run ends sooner */
    char ref_line[256]; /* the reference run's final line up to "  tokens/s" */
    /* tallies for the report */
    int kills, aimed, in_write, before_first, after_last, finished, trials, resumes_ok, exact_ok;
} CrashModel;

static const char *pelab_bin(void) { return getenv("PELAB_BIN") ? getenv("PELAB_BIN") : "./pelab"; }

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* fork + exec `pelab train ARGS --out OUT [--resume]`, stdout and stderr into the model's logs */
static pid_t spawn_train(const CrashModel *cm, const char *out, int resume) {
    const char *argv[64];
    int n = 0;
    argv[n++] = pelab_bin();
    argv[n++] = "train";
    for (int i = 0; cm->args[i]; i++) argv[n++] = cm->args[i];
    argv[n++] = "--out";
    argv[n++] = out;
    if (resume) argv[n++] = "--resume";
    argv[n] = NULL;
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) { /* only async-signal-safe calls between fork and exec: the runner has threads */
        int o = open(cm->out_log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(cm->err_log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* until `seconds` after t0 on the monotonic clock: relative sleeps of what is left (macOS has no
 * clock_nanosleep), again after a signal or an early wake */
static void sleep_until(const struct timespec *t0, double seconds) {
    for (double left; (left = seconds - seconds_since(t0)) > 0;) {
        struct timespec d = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&d, NULL);
    }
}

/* the P.tmp.* files beside the run's checkpoint (any suffix: a misnamed leftover counts too) that
 * are not in `known` ("/NAME/NAME/.../", NULL: none); all their names into `names` when given */
static int new_orphans(const CrashModel *cm, const char *known, char *names, size_t cap) {
    const char *base = strrchr(cm->run, '/') + 1;
    char prefix[128], slashed[300];
    snprintf(prefix, sizeof prefix, "%s.tmp.", base);
    if (names) snprintf(names, cap, "/");
    DIR *d = opendir(cm->dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        snprintf(slashed, sizeof slashed, "/%s/", e->d_name);
        n += !known || !strstr(known, slashed);
        if (names && strlen(names) + strlen(slashed) < cap) strcat(names, slashed + 1);
    }
    if (d) closedir(d);
    return n;
}

static int count_orphans(const CrashModel *cm) { return new_orphans(cm, NULL, NULL, 0); }

/* the whole text of a small file ("" when absent) */
static void slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = 0;
    if (f) fclose(f);
}

/* the final "step N  train_loss X  val_loss Y" of a run's stdout, without tokens/s and the path */
static void final_line(const CrashModel *cm, char *line, size_t cap) {
    char out[4096];
    slurp(cm->out_log, out, sizeof out);
    char *s = NULL;
    for (char *p = out; (p = strstr(p, "step ")); p++)
        if (p == out || p[-1] == '\n') s = p;
    line[0] = 0;
    if (!s) return;
    char *end = strstr(s, "  tokens/s");
    size_t n = end ? (size_t)(end - s) : strcspn(s, "\n");
    snprintf(line, cap, "%.*s", (int)(n < cap ? n : cap - 1), s);
}

/* exit status of a finished child: 0..255, or 128 + the signal that ended it */
static int status_code(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

/* the uninterrupted reference run; run `ref_runs` times, the fastest gives the kill schedule's time
 * scale (the first run of a cold binary is slow) and the others must give the same file */
static int compare_to_reference(CrashModel *cm, const char *what);
static void setup_model(CrashModel *cm, int ref_runs) {
    snprintf(cm->dir, sizeof cm->dir, "%s/crash-%s", test_tmpdir(), cm->name);
    mkdir(cm->dir, 0755);
    snprintf(cm->run, sizeof cm->run, "%s/run.safetensors", cm->dir);
    snprintf(cm->ref, sizeof cm->ref, "%s/ref.safetensors", cm->dir);
    snprintf(cm->out_log, sizeof cm->out_log, "%s/stdout.txt", cm->dir);
    snprintf(cm->err_log, sizeof cm->err_log, "%s/stderr.txt", cm->dir);
    for (int r = 0; r < ref_runs; r++) {
        remove(cm->run);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int st = 0;
        pid_t pid = spawn_train(cm, r ? cm->run : cm->ref, 0);
        waitpid(pid, &st, 0);
        double t = seconds_since(&t0);
        if (!r || t < cm->ref_seconds) cm->ref_seconds = t;
        char err[2048], line[256];
        slurp(cm->err_log, err, sizeof err);
        final_line(cm, line, sizeof line);
        CHECK(pid > 0 && status_code(st) == 0 && line[0], "crash %s: uninterrupted reference run (exit %d): %s",
              cm->name, status_code(st), err);
        if (!r) snprintf(cm->ref_line, sizeof cm->ref_line, "%s", line);
        else {
            CHECK(strcmp(line, cm->ref_line) == 0, "crash %s: two uninterrupted runs print '%s' and '%s'", cm->name,
                  cm->ref_line, line);
            compare_to_reference(cm, "a second uninterrupted run");
        }
        if (status_code(st) != 0) cm->ref_line[0] = 0;
    }
}

/* SIGKILL the child `delay` seconds after t0, or (aim_write = k > 0) `delay` seconds into its k-th
 * checkpoint write, then the checks every kill must pass: a checkpoint that existed before the kill
 * still exists, and whatever is at the path loads and is resumable */
static void kill_and_check(CrashModel *cm, pid_t pid, const struct timespec *t0, double delay, int aim_write,
                           const char *what, const char *known) {
    if (aim_write > 0) {
        char seen[4096] = "/", names[1024];
        siginfo_t si = {0}; /* WNOWAIT: only looks whether the child has ended, leaves it to waitpid */
        for (int writes = 0; writes < aim_write;) {
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != 0) break;
            if (new_orphans(cm, seen, names, sizeof names) > 0) { /* a temporary file seen for the first time */
                writes++;
                if (strlen(seen) + strlen(names) < sizeof seen) strcat(seen, names + 1);
            } else usleep(200); /* a write takes 15-60 ms here */
        }
        cm->aimed += new_orphans(cm, known, NULL, 0) > 0;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        sleep_until(&t, delay);
    } else sleep_until(t0, delay);
    int had = file_exists(cm->run); /* looked at before the kill: it must survive it */
    double at = seconds_since(t0);
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    int killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    cm->kills += killed;
    cm->finished += !killed;
    if (!killed && !aim_write && !strcmp(what, "fresh run") && at < cm->ref_seconds)
        cm->ref_seconds = at; /* a whole run took less than that: the machine is faster now, aim earlier */
    CHECK(killed || status_code(st) == 0, "crash %s: %s ended by itself with exit %d before the kill", cm->name, what,
          status_code(st));
    /* a temporary file that was not there when this run started: the kill landed inside a write */
    int orphans = count_orphans(cm), exists = file_exists(cm->run), landed_in_write = new_orphans(cm, known, NULL, 0);
    cm->in_write += landed_in_write > 0;
    cm->before_first += !exists;
    if (getenv("PELAB_CRASH_VERBOSE"))
        fprintf(stderr, "  crash %s: kill %s at %.3f s%s: %s, %d orphan(s) (%d new), checkpoint %s\n", cm->name, what,
                at, aim_write ? " (aimed)" : "", killed ? "killed" : "had ended", orphans, landed_in_write,
                exists ? "present" : "absent");
    CHECK(exists || !had, "crash %s: the checkpoint was there before the kill at %.3f s (%s) and is gone after it",
          cm->name, at, what);
    if (exists) {
        char cmd[512], out[4096];
        snprintf(cmd, sizeof cmd, "./pelab info %s", cm->run);
        int rc = run_pelab(cmd, out, sizeof out);
        CHECK(rc == 0 && strstr(out, "present (resumable)"),
              "crash %s: after a kill at %.3f s (%s, %d orphan temp file(s)) the checkpoint loads and is "
              "resumable (exit %d): %.300s",
              cm->name, at, what, orphans, rc, out);
        const char *s = strstr(out, "\nstep ");
        cm->after_last += s && strtol(s + 6, NULL, 10) == cm->steps; /* a finished run: nothing left to do */
    }
}

/* the run's checkpoint byte for byte against the reference's; on a difference says where
 * (the header holds the metadata, the rest the tensors) */
static int compare_to_reference(CrashModel *cm, const char *what) {
    unsigned char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    int same = 0;
    if (read_file(cm->ref, &a, &na) != 0 || read_file(cm->run, &b, &nb) != 0) {
        CHECK(0, "crash %s: %s: read checkpoints: %s", cm->name, what, pelab_errmsg);
    } else {
        size_t first = 0, n = na < nb ? na : nb;
        while (first < n && a[first] == b[first]) first++;
        uint64_t hlen = 0;
        for (int i = 7; i >= 0 && na >= 8; i--) hlen = hlen << 8 | a[i];
        same = na == nb && first == na;
        CHECK(same, "crash %s: %s: checkpoint differs from the uninterrupted run's (%zu vs %zu bytes, first "
              "difference at byte %zu, in the %s)", cm->name, what, nb, na, first,
              first < 8 + hlen ? "header/metadata" : "tensor data");
    }
    free(a), free(b);
    return same;
}

/* one trial: a fresh run killed at a random moment (with `aim`, every other trial: a random moment
 * in the first 6 ms of a random one of its checkpoint writes); half the time the resumed run killed
 * too; then a resume to the end, which must clean up and match the reference exactly */
static void crash_trial(CrashModel *cm, Rng *rng, int trial, int aim) {
    remove(cm->run);
    cm->trials++;
    double d1 = rng_f32(rng) * 0.9 * cm->ref_seconds, into = rng_f32(rng) * 0.006;
    int k = 1 + (int)rng_below(rng, (uint64_t)cm->steps); /* --ckpt-every 1: one write per step */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (aim && trial % 2) kill_and_check(cm, spawn_train(cm, cm->run, 0), &t0, into, k, "fresh run", NULL);
    else kill_and_check(cm, spawn_train(cm, cm->run, 0), &t0, d1, 0, "fresh run", NULL);
    if (rng_f32(rng) < 0.5f) { /* a resumed run is killed too: while loading, cleaning up or training */
        double left = cm->ref_seconds - d1 > 0.05 ? cm->ref_seconds - d1 : 0.05;
        double d2 = rng_f32(rng) * 0.8 * left; /* it has less to do than the reference had left */
        char known[1024];
        new_orphans(cm, NULL, known, sizeof known);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        kill_and_check(cm, spawn_train(cm, cm->run, 1), &t0, d2, 0, "resumed run", known);
    }
    int orphans = count_orphans(cm), st = 0;
    pid_t pid = spawn_train(cm, cm->run, 1);
    waitpid(pid, &st, 0);
    char err[8192], line[256], want[64];
    slurp(cm->err_log, err, sizeof err);
    final_line(cm, line, sizeof line);
    int ok = status_code(st) == 0;
    cm->resumes_ok += ok;
    CHECK(ok, "crash %s trial %d: --resume finishes (exit %d): %.500s", cm->name, trial, status_code(st), err);
    CHECK(count_orphans(cm) == 0, "crash %s trial %d: %d temporary file(s) remain after the resume", cm->name, trial,
          count_orphans(cm));
    snprintf(want, sizeof want, "removed %d temporary file", orphans);
    CHECK(orphans ? strstr(err, want) != NULL : strstr(err, "temporary file") == NULL,
          "crash %s trial %d: --resume reports removing the %d orphan(s) it found: %.500s", cm->name, trial, orphans,
          err);
    CHECK(strcmp(line, cm->ref_line) == 0, "crash %s trial %d: final line '%s', uninterrupted run '%s'", cm->name,
          trial, line, cm->ref_line);
    char what[64];
    snprintf(what, sizeof what, "trial %d, resumed", trial);
    cm->exact_ok += compare_to_reference(cm, what);
}

static void run_kills(CrashModel *cm, Rng *rng, int kills, int ref_runs, int aim) {
    setup_model(cm, ref_runs);
    if (!cm->ref_line[0]) return;
    double t0 = now_seconds();
    for (int trial = 0; cm->kills < kills && trial < 4 * kills + 4; trial++) crash_trial(cm, rng, trial, aim);
    fprintf(stderr,
            "  crash %-5s %d kills in %d trials: %d during a checkpoint write (%d aimed at one), %d before the first "
            "checkpoint, %d after the last, %d runs ended before their kill; %d/%d resumes ok, %d/%d bit-exact; "
            "kill window %.2f s; %.1f s\n",
            cm->name, cm->kills, cm->trials, cm->in_write, cm->aimed, cm->before_first, cm->after_last, cm->finished,
            cm->resumes_ok, cm->trials, cm->exact_ok, cm->trials, cm->ref_seconds, now_seconds() - t0);
}

/* a kill after the final checkpoint's rename leaves a finished run: --resume reports its losses */
static void resume_finished(CrashModel *cm) {
    if (!cm->ref_line[0]) return;
    int st = 0;
    pid_t pid = spawn_train(cm, cm->ref, 1);
    waitpid(pid, &st, 0);
    char line[256];
    final_line(cm, line, sizeof line);
    CHECK(status_code(st) == 0 && strcmp(line, cm->ref_line) == 0,
          "crash %s: --resume of a finished run (exit %d) prints '%s', the run itself printed '%s'", cm->name,
          status_code(st), line, cm->ref_line);
}

/* SIGTERM mid-training: a checkpoint, exit 143 (128 + 15), and --resume continues from it */
static void sigterm_checkpoints(void) {
    CrashModel cm = {.name = "term",
                     .args = {"--steps", "100000", "--dim", "32", "--layers", "1", "--heads", "2", "--seq-len", "32",
                              "--batch", "4", "--synth-bytes", "30000", "--threads", "1", "--ckpt-every", "0",
                              "--log-every", "1", NULL}};
    snprintf(cm.dir, sizeof cm.dir, "%s/crash-term", test_tmpdir());
    mkdir(cm.dir, 0755);
    snprintf(cm.run, sizeof cm.run, "%s/run.safetensors", cm.dir);
    snprintf(cm.out_log, sizeof cm.out_log, "%s/stdout.txt", cm.dir);
    snprintf(cm.err_log, sizeof cm.err_log, "%s/stderr.txt", cm.dir);
    pid_t pid = spawn_train(&cm, cm.run, 0);
    char err[4096] = "";
    /* the handler is installed before step 1: wait for a few steps, at most 10 s */
    for (int i = 0; i < 1000 && !strstr(err, "step 3/"); i++) {
        usleep(10000);
        slurp(cm.err_log, err, sizeof err);
    }
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(status_code(st) == 143, "SIGTERM: exit status 143 (got %d)", status_code(st));
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "./pelab info %s", cm.run);
    int rc = run_pelab(cmd, out, sizeof out);
    const char *s = strstr(out, "\nstep ");
    long step = s ? strtol(s + 6, NULL, 10) : -1;
    CHECK(rc == 0 && strstr(out, "present (resumable)") && step >= 3,
          "SIGTERM: the checkpoint it wrote is resumable, at step >= 3 (exit %d): %.300s", rc, out);
    /* --stop-after 2: two more steps from the stored one, then a clean stop */
    int n = 0;
    while (cm.args[n]) n++;
    cm.args[n] = "--stop-after", cm.args[n + 1] = "2", cm.args[n + 2] = NULL;
    pid = spawn_train(&cm, cm.run, 1);
    waitpid(pid, &st, 0);
    char line[256], want[64];
    final_line(&cm, line, sizeof line);
    snprintf(want, sizeof want, "step %ld ", step + 2);
    CHECK(status_code(st) == 0 && strncmp(line, want, strlen(want)) == 0,
          "SIGTERM: --resume continues from step %ld (exit %d): '%s'", step, status_code(st), line);
}

void test_crash(void) {
    const char *env = getenv("PELAB_CRASH_KILLS"), *seed = getenv("PELAB_CRASH_SEED");
    int kills = env ? atoi(env) : 10;
    if (kills < 2) kills = 2;
    Rng rng;
    rng_seed(&rng, seed ? strtoull(seed, NULL, 10) : 1);
    /* resume arithmetic: checkpoints every 3 steps (a resume replays up to 2), evaluations on the way */
    CrashModel small = {.name = "small",
                        .steps = 60,
                        .args = {"--steps", "60", "--dim", "32", "--layers", "2", "--heads", "2", "--seq-len", "32",
                                 "--batch", "4", "--synth-bytes", "30000", "--threads", "1", "--ckpt-every", "3",
                                 "--eval-every", "20", "--eval-windows", "8", NULL}};
    /* 3.9M parameters + AdamW moments = 47 MB per checkpoint, written after every 8-token step */
    CrashModel big = {.name = "big",
                      .steps = 12,
                      .args = {"--steps", "12", "--dim", "512", "--layers", "1", "--heads", "4", "--hidden", "1792",
                               "--seq-len", "8", "--batch", "1", "--synth-bytes", "20000", "--threads", "1",
                               "--ckpt-every", "1", "--eval-windows", "1", NULL}};
    run_kills(&small, &rng, kills * 2 / 5, 2, 0);
    run_kills(&big, &rng, kills - kills * 2 / 5, 1, 1);
    resume_finished(&small);
    sigterm_checkpoints();
}
