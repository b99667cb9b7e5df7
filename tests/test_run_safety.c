/* test_run_safety.c: what `pelab train` reads back and who writes its outputs (the
 * hostile-inputs review, round 3).
 *  - resume: every entry of the training state a checkpoint stores (step, data_rng, losses, cooldown,
 *    curve_loss, train.steps) is read typed and in range, and so are AdamW's second moments (>= 0)
 *    and the rows of the loss curve a resume copies: a bad one is refused in one line naming the
 *    file and the entry, never a silent restart, a wrong step or a NaN later;
 *  - one writer per --out: a run holds OUT.lock, a second run is refused naming the first's pid
 *    (--force does not override it), and a killed holder leaves no lock that refuses anything;
 *  - a new run over an earlier run's checkpoint: killed before its first checkpoint, the earlier
 *    checkpoint and curve are both intact and resume together; once its own checkpoint is written,
 *    the earlier curve is kept as CURVE.1, then CURVE.2.
 * Each check waits on a condition (a log line, a child's exit), never on a delay. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../io/checkpoint.h"
#include "child.h"
#include "test.h"

#define TINY                                                                                                    \
    "--dim", "16", "--layers", "1", "--heads", "2", "--seq-len", "16", "--batch", "2", "--synth-bytes", "20000", \
        "--threads", "1", "--eval-every", "5", "--log-every", "5"

static char dir[600];

static const char *in_dir(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

/* `pelab train TINY --steps STEPS --out OUT [extra]`: its exit status (output in r) */
static int train(Run *r, const char *out, const char *steps, const char *extra) {
    const char *args[40] = {"train", TINY, "--quiet", "--steps", steps, "--out", out, extra, NULL};
    run_argv(r, args, NULL, NULL, 60);
    return r->status;
}

static unsigned char *snapshot(const char *path, size_t *n) {
    unsigned char *x = NULL;
    *n = 0;
    return read_file(path, &x, n) == 0 ? x : NULL;
}

static int same_as(const char *path, const unsigned char *was, size_t n) {
    size_t m;
    unsigned char *now = snapshot(path, &m);
    int same = was && now && m == n && memcmp(was, now, n) == 0;
    free(now);
    return same;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* `pelab train ARGS` in the background, stdout and stderr into log */
static pid_t spawn_train(const char *const *args, const char *log) {
    const char *argv[48] = {"pelab"};
    int n = 1;
    for (int i = 0; args[i] && n < 47; i++) argv[n++] = args[i];
    argv[n] = NULL;
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) { /* async-signal-safe calls only: the runner has threads */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
        execv(pelab_bin(), (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* until the child's log holds needle, or it ended (then 0); 60 s at most */
static int wait_for_line(pid_t pid, const char *log, const char *needle) {
    for (int i = 0; i < 60000; i++) {
        const char *text = test_slurp(log); /* its first 64 KB, in a static buffer */
        if (text && strstr(text, needle)) return 1;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return 0;
        usleep(1000);
    }
    return 0;
}

static int kill_and_reap(pid_t pid, int sig) {
    int st = 0;
    kill(pid, sig);
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* --- 6: the training state a resume reads --- */

/* base with one metadata entry set to val (NULL: as it is) and, with negative_v, a second moment
 * made negative, written to out */
static int forge(const char *base, const char *out, const char *key, const char *val, int negative_v) {
    Model m;
    CkptMeta meta;
    float *adam_m, *adam_v;
    if (checkpoint_load(base, &m, &meta, &adam_m, &adam_v) != 0) return -1;
    int rc = key ? meta_set(&meta, key, "%s", val) : 0;
    if (negative_v) adam_v[m.n_params / 2] = -0.25f;
    if (rc == 0) rc = checkpoint_save(out, &m, &meta, adam_m, adam_v);
    free(adam_m), free(adam_v);
    meta_free(&meta);
    model_free(&m);
    return rc;
}

static void resume_refuses(const char *base, const char *key, const char *val, int negative_v, const char *needle) {
    char out[700], what[200];
    in_dir(out, sizeof out, "forged.safetensors");
    remove(out);
    if (forge(base, out, key, val, negative_v) != 0) {
        CHECK(0, "forge %s='%s': %s", key ? key : "optim.v", val ? val : "", pelab_errmsg);
        return;
    }
    const char *args[] = {"train", TINY, "--quiet", "--steps", "10", "--out", out, "--resume", NULL};
    snprintf(what, sizeof what, "resume, %s='%s'", key ? key : "a second moment", val ? val : "-0.25");
    expect_argv_refused(what, args, needle);
}

static void resume_state(const char *base) {
    static const struct { const char *key, *val, *needle; } cases[] = {
        {"step", "abc", "metadata step='abc': expected an integer from 1 to 10"}, /* was: step 0, trained weights */
        {"step", "1e3", "metadata step='1e3': expected an integer"},              /* was: step 1 */
        {"step", "-1", "metadata step='-1': expected an integer"},                /* was: a NaN message */
        {"step", "11", "metadata step='11': expected an integer from 1 to 10"},    /* past train.steps */
        {"step", " 5", "metadata step=' 5'"},
        {"step", "5\n", "metadata step='5?'"}, /* one line whatever the value holds */
        {"train.steps", "ten", "metadata train.steps='ten'"},
        {"data_rng", "x", "metadata data_rng='x': expected an unsigned integer"}, /* was: 0 */
        {"data_rng", "0", "metadata data_rng='0'"}, /* xorshift's fixed point: every batch the same */
        {"data_rng", "-5", "metadata data_rng='-5'"},
        {"data_rng", "18446744073709551616", "metadata data_rng='18446744073709551616'"},
        {"train_loss", "-1", "metadata train_loss='-1': expected a finite number >= 0"},
        {"train_loss", "nan", "metadata train_loss='nan'"},
        {"val_loss", "inf", "metadata val_loss='inf'"},
        {"val_loss", "x", "metadata val_loss='x'"},
        {"cooldown", "3 x plateau", "metadata cooldown='3 x plateau': field 2 ('x'): expected an integer"},
        {"cooldown", "3 9 maybe", "field 3 ('maybe'): expected one of cap, plateau"},
        {"cooldown", "3 9 plateau extra", "metadata cooldown='3 9 plateau extra': expected 3 fields"},
        {"cooldown", "9 5 cap", "field 2 ('5'): expected an integer from 9 to 10"}, /* ends before it began */
        {"cooldown", "3 9", "metadata cooldown='3 9': field 3 (''): expected one of"},
        {"curve_loss", "abc 3", "metadata curve_loss='abc 3': field 1 ('abc'): expected a finite number"},
        {"curve_loss", "1.5 -2", "field 2 ('-2'): expected an integer from 0 to 10"},
        {"curve_loss", "1.5", "metadata curve_loss='1.5': field 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        resume_refuses(base, cases[i].key, cases[i].val, 0, cases[i].needle);
    /* AdamW's v is a mean of squares: negative, sqrt(v) is a NaN some steps later */
    resume_refuses(base, NULL, NULL, 1, "tensor optim.v.");
    resume_refuses(base, NULL, NULL, 1, "expected a second moment, >= 0");
    /* the same entries through the checkpoint's reader, as every caller gets them */
    Model m;
    CkptMeta meta;
    CkptTrainState st;
    if (checkpoint_load(base, &m, &meta, NULL, NULL) == 0) {
        CHECK(checkpoint_train_state(&meta, base, &st) == 0 && st.step == 10 && st.data_rng != 0 &&
                  st.cooldown_start == -1 && st.curve_loss_n == 0,
              "a checkpoint of train reads back: step %ld, curve_loss_n %ld (%s)", st.step, st.curve_loss_n, pelab_errmsg);
        meta_free(&meta);
        model_free(&m);
    } else CHECK(0, "load %s: %s", base, pelab_errmsg);
}

/* the loss curve a resume copies: a row that does not read is refused, a last row cut short is not */
static void resume_curve(const char *base) {
    char out[700], curve[700];
    in_dir(out, sizeof out, "curve.safetensors");
    in_dir(curve, sizeof curve, "curve.curve.csv");
    if (forge(base, out, NULL, NULL, 0) != 0) {
        CHECK(0, "copy %s: %s", base, pelab_errmsg);
        return;
    }
    FILE *f = fopen(curve, "w");
    if (f) fputs("step,tokens,lr,train_loss,val_loss\n5,160,0.002,5.5,abc\n10,320,0.0004,5.3,5.2\n", f), fclose(f);
    const char *args[] = {"train", TINY, "--quiet", "--steps", "20", "--out", out, "--resume", NULL};
    expect_argv_refused("resume, a curve row's val_loss 'abc'", args, "curve.curve.csv line 2: val_loss 'abc'");
    f = fopen(curve, "w");
    if (f) fputs("step,tokens,lr,train_loss,val_loss\n10,320,0.0004,5.3,5.2\n5,160,0.002,5.5,5.4\n", f), fclose(f);
    expect_argv_refused("resume, curve steps going back", args, "curve.curve.csv line 3: expected a step above 10");
    f = fopen(curve, "w"); /* a run killed mid-row: the row is dropped, the resume goes on */
    if (f) fputs("step,tokens,lr,train_loss,val_loss\n5,160,0.002,5.5,5.4\n10,32", f), fclose(f);
    Run r;
    CHECK(train(&r, out, "20", "--resume") == 0, "resume, a last curve row cut short (exit %d): %.300s", r.status, r.out);
}

/* --- 7: one writer per --out --- */

static void one_writer(void) {
    char out[700], lock[720], log[700], want[120];
    in_dir(out, sizeof out, "locked.safetensors");
    snprintf(lock, sizeof lock, "%s.lock", out);
    in_dir(log, sizeof log, "first.log");
    /* the lock held by this process (as a run holds it), its pid in the file */
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        CHECK(0, "lock %s", lock);
        if (fd >= 0) close(fd);
        return;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    CHECK(write(fd, pid, (size_t)len) == len, "write the pid into %s", lock);
    snprintf(want, sizeof want, "another process (pid %ld) is writing it", (long)getpid());
    const char *args[] = {"train", TINY, "--quiet", "--steps", "5", "--out", out, NULL};
    expect_argv_refused("train while another holds the lock", args, want);
    const char *forced[] = {"train", TINY, "--quiet", "--steps", "5", "--out", out, "--force", NULL};
    expect_argv_refused("train --force while another holds the lock", forced, want);
    const char *resumed[] = {"train", TINY, "--quiet", "--steps", "5", "--out", out, "--resume", NULL};
    expect_argv_refused("train --resume while another holds the lock", resumed, "one run per checkpoint");
    CHECK(!exists(out), "the refused runs wrote no checkpoint");
    close(fd); /* released: the next run takes it, and removes the file when it ends */
    Run r;
    CHECK(train(&r, out, "5", NULL) == 0 && exists(out) && !exists(lock),
          "train once the lock is free: exit 0, the lock file removed at the end (exit %d): %.300s", r.status, r.out);

    /* two real runs: the first holds --out for as long as it trains */
    const char *first[] = {"train", TINY, "--steps", "1000000", "--ckpt-every", "0", "--log-every", "1", "--out", out,
                           NULL};
    pid_t a = spawn_train(first, log);
    int running = wait_for_line(a, log, "step 1/");
    snprintf(want, sizeof want, "another process (pid %ld) is writing it", (long)a);
    if (running) {
        expect_argv_refused("a second train on the same --out", args, want);
        expect_argv_refused("a second train --force on the same --out", forced, want);
    } else CHECK(0, "the first run started: %s", test_slurp(log));
    /* killed as the OOM killer kills: the kernel releases the lock, nothing stale refuses the next */
    int code = kill_and_reap(a, SIGKILL);
    CHECK(code == 128 + SIGKILL, "the first run killed by SIGKILL (exit %d)", code);
    CHECK(train(&r, out, "5", NULL) == 0, "train after the holder was killed (exit %d): %.300s", r.status, r.out);
    /* --seeds: each seed's run locks its own checkpoint */
    CHECK(train(&r, out, "5", "--seeds=1,2") == 0, "train --seeds 1,2 (exit %d): %.300s", r.status, r.out);
}

/* --- 9: a new run over an earlier one --- */

static void earlier_curve(void) {
    char out[700], curve[700], kept1[720], kept2[720], log[700];
    in_dir(out, sizeof out, "hist.safetensors");
    in_dir(curve, sizeof curve, "hist.curve.csv");
    snprintf(kept1, sizeof kept1, "%s.1", curve);
    snprintf(kept2, sizeof kept2, "%s.2", curve);
    in_dir(log, sizeof log, "fresh.log");
    Run r;
    if (train(&r, out, "10", NULL) != 0) {
        CHECK(0, "the earlier run (exit %d): %.300s", r.status, r.out);
        return;
    }
    size_t nc, nk;
    unsigned char *was_curve = snapshot(curve, &nc), *was_ckpt = snapshot(out, &nk);
    /* a new run over it, killed after some steps but before its first checkpoint (--ckpt-every 0 and
     * a million steps: it cannot get there) */
    const char *fresh[] = {"train", TINY, "--steps", "1000000", "--ckpt-every", "0", "--log-every", "1",
                           "--eval-every", "1", "--lr", "0.01", "--out", out, NULL};
    pid_t a = spawn_train(fresh, log);
    int ran = wait_for_line(a, log, "step 3/");
    kill_and_reap(a, SIGKILL);
    CHECK(ran && same_as(curve, was_curve, nc) && same_as(out, was_ckpt, nk) && !exists(kept1),
          "a new run killed before its first checkpoint: the earlier checkpoint and curve both intact (ran %d, "
          "curve %s, checkpoint %s)", ran, same_as(curve, was_curve, nc) ? "same" : "changed",
          same_as(out, was_ckpt, nk) ? "same" : "changed");
    /* ... and they still go together: --resume continues the earlier run, its rows first */
    CHECK(train(&r, out, "20", "--resume") == 0, "resume the earlier run (exit %d): %.300s", r.status, r.out);
    size_t n2;
    unsigned char *resumed = snapshot(curve, &n2);
    CHECK(resumed && n2 > nc && memcmp(resumed, was_curve, nc) == 0,
          "the resumed run's curve begins with the earlier run's rows (%zu then %zu bytes)", nc, n2);
    /* a new run that writes its checkpoint: the earlier curve kept as CURVE.1, then CURVE.2 */
    CHECK(train(&r, out, "10", "--lr=0.01") == 0 && same_as(kept1, resumed, n2) && !exists(kept2),
          "a new run over it: its checkpoint written, the earlier curve kept as %s (exit %d): %.300s", kept1,
          r.status, r.out);
    size_t n3;
    unsigned char *second = snapshot(curve, &n3);
    CHECK(second && n3 > 0 && strncmp((const char *)second, "step,", 5) == 0 && strstr((const char *)second, "\n10,"),
          "the new run's own curve is at %s", curve);
    CHECK(train(&r, out, "10", NULL) == 0 && same_as(kept1, resumed, n2) && same_as(kept2, second, n3),
          "a third run: the second's curve kept as %s, the first's still %s (exit %d)", kept2, kept1, r.status);
    free(was_curve), free(was_ckpt), free(resumed), free(second);
}

void test_run_safety(void) {
    snprintf(dir, sizeof dir, "%s/run-safety", test_tmpdir());
    mkdir(dir, 0755);
    char base[700];
    in_dir(base, sizeof base, "base.safetensors");
    Run r;
    if (train(&r, base, "10", NULL) != 0) {
        CHECK(0, "the base run (exit %d): %.300s", r.status, r.out);
        return;
    }
    resume_state(base);
    resume_curve(base);
    one_writer();
    earlier_curve();
}
