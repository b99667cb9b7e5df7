/* test_hardening.c: the defects found by attacking pelab as a hostile file or a careless user
 * would, each pinned by a check that failed on the code before the fix:
 * 1. no user string reaches a shell (gnuplot runs by fork/exec in the report's directory);
 * 2. FIFOs and devices are refused before a loader reads (it used to block forever);
 * 3. atomic writes never follow a symlink at the temporary or the target path;
 * 4. a hostile checkpoint header is refused in bounded memory and time;
 * 5. compare --jobs keeps every byte of a long command line;
 * 6. absurd --threads counts are refused in every command;
 * 7. every output path is checked before any input is read or any step is trained.
 * (8, SIGTERM's exit status 143, is in test_crash.c with the other signal tests.)
 * Commands run through fork/exec with an argv (child.h), so hostile names reach pelab intact. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/json.h"
#include "child.h"
#include "test.h"

static int file_exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

static const char *tiny_train[] = {"--steps", "1", "--dim", "16", "--layers", "1", "--heads", "2", "--seq-len", "16",
                                   "--batch", "2", "--synth-bytes", "20000", "--threads", "1", "--quiet"};
enum { N_TINY = sizeof tiny_train / sizeof tiny_train[0] };

/* pelab train with the tiny config, --out out, then extra args (NULL-terminated) */
static void train_tiny(Run *r, const char *out, const char *const *extra) {
    const char *args[64];
    int n = 0;
    args[n++] = "train";
    for (int i = 0; i < N_TINY; i++) args[n++] = tiny_train[i];
    args[n++] = "--out";
    args[n++] = out;
    for (int i = 0; extra && extra[i]; i++) args[n++] = extra[i];
    args[n] = NULL;
    run_argv(r, args, NULL, NULL, 60);
}

/* 1. a report directory named to break out of any shell quoting: gnuplot (a recording stand-in
 * first, then the real one when installed) runs in that directory and nothing else runs */
static void check_no_shell(const char *dir) {
    static Run r;
    static char bin[512], log[512], fake[600], path_env[8192], log_env[600], out[1024], plots[1200], cwd[512];
    snprintf(bin, sizeof bin, "%s/fakebin", dir);
    mkdir(bin, 0755);
    snprintf(log, sizeof log, "%s/fake-gnuplot.log", dir);
    snprintf(fake, sizeof fake, "%s/gnuplot", bin);
    FILE *f = fopen(fake, "w");
    if (!f) {
        CHECK(0, "cannot write %s", fake);
        return;
    }
    fprintf(f, "#!/bin/sh\n{ pwd; echo \"$#:$1\"; } >> \"$FAKE_GNUPLOT_LOG\"\n"); /* every run, in order */
    fclose(f);
    chmod(fake, 0755);
    snprintf(cwd, sizeof cwd, "%s/shellcwd", dir);
    mkdir(cwd, 0755);
    const char *hostile = "x';touch PWNED1;'$(touch PWNED2)`touch PWNED3`\"; touch PWNED4 #\nnew line & sp";
    snprintf(out, sizeof out, "%s/%s", cwd, hostile);
    snprintf(path_env, sizeof path_env, "PATH=%s:%s", bin, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    snprintf(log_env, sizeof log_env, "FAKE_GNUPLOT_LOG=%s", log);
    mkdir(out, 0755); /* as a finished compare leaves it */
    const char *env[] = {path_env, log_env, "PELAB_NO_GNUPLOT=", NULL};
    const char *args[] = {"compare", "--schemes", "rope", "--seeds", "1", "--out", out, "--collect", NULL};
    run_argv(&r, args, cwd, env, 30);
    CHECK(r.status == 0, "compare --collect into a hostile directory name (exit %d): %s", r.status, r.out);
    snprintf(plots, sizeof plots, "%s/plots", out);
    char *got = test_slurp(log);
    char want[2600];
    /* then the scheme's picture (report_show.c): rope's wavelengths in plots/show_rope */
    snprintf(want, sizeof want, "%s\n1:plots.gp\n%s/show_rope\n1:wavelength.gp\n", plots, plots);
    CHECK(got && strcmp(got, want) == 0,
          "gnuplot is exec'ed in the plots directory with one argument plots.gp, then in plots/show_rope with "
          "wavelength.gp: %s", got ? got : "(never ran)");
    for (int i = 1; i <= 4; i++) {
        char p[1300];
        snprintf(p, sizeof p, "%s/PWNED%d", cwd, i);
        CHECK(!file_exists(p), "no shell ran the directory name (%s exists)", p);
        snprintf(p, sizeof p, "%s/PWNED%d", plots, i);
        CHECK(!file_exists(p), "no shell ran the directory name (%s exists)", p);
    }
    /* the real gnuplot, where installed: the same directory, plots drawn, still nothing run */
    const char *real_env[] = {"PELAB_NO_GNUPLOT=", NULL};
    run_argv(&r, args, cwd, real_env, 60);
    CHECK(r.status == 0, "compare --collect with the real gnuplot, if any (exit %d): %s", r.status, r.out);
    for (int i = 1; i <= 4; i++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/PWNED%d", cwd, i);
        CHECK(!file_exists(p), "no shell ran the directory name with the real gnuplot (%s exists)", p);
    }
}

/* 2. a FIFO (and a character device) where a file is expected: refused at once by every loader */
static void check_fifos(const char *dir, const char *ckpt) {
    static char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/input.fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s: %s", fifo, strerror(errno));
    char out[600];
    snprintf(out, sizeof out, "%s/fifo-out.st", dir);
    const char *cases[][12] = {
        {"info", fifo, NULL},
        {"sample", fifo, "-n", "4", NULL},
        {"score", fifo, "/etc/hostname", NULL},
        {"score", ckpt, fifo, NULL},
        {"eval", ckpt, "--data", fifo, NULL},
        {"train", "--data", fifo, "--quiet", "--out", out, NULL},
        {"train", "--tokenizer", fifo, "--quiet", "--out", out, NULL},
        {"train", "--init", fifo, "--quiet", "--out", out, NULL},
        {"probe", ckpt, "attention", "--text", fifo, NULL},
        {"import", "--llama2c", fifo, "--tokenizer", fifo, "--out", out, NULL},
        {"tokenizer", "encode", fifo, "/etc/hostname", NULL},
        {"tokenizer", "train", "--vocab", "300", fifo, "--out", out, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "pelab %s %s with a FIFO", cases[i][0], cases[i][1]);
        expect_argv_refused(what, cases[i], "FIFO");
    }
    const char *dev[] = {"info", "/dev/zero", NULL};
    expect_argv_refused("pelab info /dev/zero", dev, "character device");
    const char *dirarg[] = {"info", dir, NULL};
    expect_argv_refused("pelab info DIR", dirarg, "directory");
}

/* 3. symlinks at the temporary name and at the target are never written through */
static void check_symlinks(const char *dir) {
    static Run r;
    char victim[512], out[512], tmp[600];
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    snprintf(out, sizeof out, "%s/sym.st", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", out); /* the old fixed temporary name */
    FILE *f = fopen(victim, "w");
    fputs("precious", f);
    fclose(f);
    CHECK(symlink(victim, tmp) == 0, "symlink %s", tmp);
    train_tiny(&r, out, NULL);
    struct stat st;
    CHECK(r.status == 0 && lstat(out, &st) == 0 && S_ISREG(st.st_mode),
          "train writes a regular checkpoint beside a planted OUT.tmp symlink (exit %d): %s", r.status, r.out);
    char *v = test_slurp(victim);
    CHECK(v && strcmp(v, "precious") == 0, "the symlink's target is untouched (%s)", v ? v : "gone");
    mode_t mask = umask(0); /* read the umask the child inherited, then put it back */
    umask(mask);
    CHECK((st.st_mode & 0777) == (0644 & ~mask), "checkpoint mode %o (0644 less the umask %03o)", st.st_mode & 0777,
          mask);
    /* the target itself a symlink: replaced by the new file, never written through */
    remove(out);
    CHECK(symlink(victim, out) == 0, "symlink %s", out);
    train_tiny(&r, out, NULL);
    v = test_slurp(victim);
    CHECK(r.status == 0 && lstat(out, &st) == 0 && S_ISREG(st.st_mode) && v && strcmp(v, "precious") == 0,
          "a symlink at the target is replaced, its target untouched (exit %d, victim %s): %s", r.status,
          v ? v : "gone", r.out);

    /* write_bytes_atomic leaves nothing behind and never reuses a name */
    char path[600], name[700];
    snprintf(path, sizeof path, "%s/atomic.bin", dir);
    CHECK(write_bytes_atomic(path, "abc", 3) == 0 && write_bytes_atomic(path, "defg", 4) == 0,
          "write_bytes_atomic twice: %s", pelab_errmsg);
    v = test_slurp(path);
    CHECK(v && strcmp(v, "defg") == 0, "the second atomic write replaced the first (%s)", v ? v : "none");
    /* stale temporaries: regular files of the exact pattern go, symlinks and other names stay */
    const char *names[] = {"atomic.bin.tmp.Ab3xYz", "atomic.bin.tmp.000000", "atomic.bin.tmp.ab", "atomic.bin.tmp.Qq9-zz",
                           "atomic.bin.tmp.linkzz"};
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "%s/%s", dir, names[i]);
        if (i == 4) CHECK(symlink(victim, name) == 0, "symlink %s", name);
        else fclose(fopen(name, "w"));
    }
    int removed = remove_stale_temps(path);
    int left[5];
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof name, "%s/%s", dir, names[i]);
        left[i] = file_exists(name);
    }
    CHECK(removed == 2 && !left[0] && !left[1] && left[2] && left[3] && left[4],
          "remove_stale_temps removes the 2 regular PATH.tmp.XXXXXX files only (removed %d; left %d%d%d%d%d)", removed,
          left[0], left[1], left[2], left[3], left[4]);
    v = test_slurp(victim);
    CHECK(v && strcmp(v, "precious") == 0, "remove_stale_temps never follows a symlink");
}

/* 4. hostile headers: the parser's memory is bounded, the length checked before reading */
static void check_hostile_header(const char *dir) {
    static Run r;
    char path[512];
    /* memory is measured above what a refusal costs anyway (a sanitizer build starts near 100 MB) */
    const char *none[] = {"info", "/nonexistent.st", NULL};
    long base_kb;
    /* just under the 16 MB header limit: an array of 8 million zeros (the old parser took ~900 MB) */
    snprintf(path, sizeof path, "%s/zeros.st", dir);
    size_t hlen = (16u << 20) - 16;
    unsigned char *buf = xmalloc(8 + hlen);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    buf[8] = '[';
    for (size_t i = 1; i + 1 < hlen; i += 2) buf[8 + i] = '0', buf[8 + i + 1] = ',';
    buf[8 + hlen - 1] = ']';
    if (hlen % 2 == 0) buf[8 + hlen - 2] = '0'; /* "...,0]" */
    CHECK(write_bytes_atomic(path, buf, 8 + hlen) == 0, "write %s: %s", path, pelab_errmsg);
    free(buf);
    const char *args[] = {"info", path, NULL};
    /* a child's peak RSS includes what it inherited from this process before exec (a sanitizer
       keeps freed buffers in quarantine), so the baseline is taken just before each measurement */
    run_argv(&r, none, NULL, NULL, 30);
    base_kb = r.maxrss_kb;
    run_argv(&r, args, NULL, NULL, 30);
    CHECK(r.status == 1 && strstr(r.out, "values") && r.maxrss_kb - base_kb < 200 * 1024 && r.cpu_s < 1.0,
          "a 16 MB header of zeros: refused in %.2f s CPU and %ld MB over the baseline (limits 1 s, 200 MB): %s",
          r.cpu_s, (r.maxrss_kb - base_kb) / 1024, r.out);
    /* 100 MB declared (a sparse file): refused from its first 8 bytes */
    snprintf(path, sizeof path, "%s/huge.st", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    uint64_t big = 100u << 20;
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(big >> (8 * i));
    CHECK(fd >= 0 && write(fd, le, 8) == 8 && write(fd, "[0,0,0", 6) == 6 && ftruncate(fd, 8 + (off_t)big) == 0,
          "write %s", path);
    close(fd);
    const char *args2[] = {"info", path, NULL};
    run_argv(&r, none, NULL, NULL, 30);
    base_kb = r.maxrss_kb;
    run_argv(&r, args2, NULL, NULL, 30);
    CHECK(r.status == 1 && strstr(r.out, "16 MB limit") && r.maxrss_kb - base_kb < 16 * 1024,
          "a 100 MB header: refused before reading (%ld MB over the baseline): %s", (r.maxrss_kb - base_kb) / 1024,
          r.out);
    /* in this process (its memory would count in the children above): JSON itself: past the value cap, deep nesting, a long number */
    size_t n = 2 * (size_t)JSON_MAX_VALUES + 8;
    char *many = xmalloc(n);
    size_t k = 0;
    many[k++] = '[';
    for (int i = 0; i < JSON_MAX_VALUES; i++) many[k++] = '1', many[k++] = ',';
    many[k++] = '1', many[k++] = ']';
    JsonDoc d;
    CHECK(json_parse(&d, many, k) == -1 && strstr(pelab_errmsg, "values"), "json: the value cap: %s", pelab_errmsg);
    k = 1 + 2 * ((size_t)JSON_MAX_VALUES - 2), many[k++] = '1', many[k++] = ']'; /* the array + MAX - 1 ones */
    CHECK(json_parse(&d, many, k) == 0, "json: exactly the cap parses: %s", pelab_errmsg);
    json_free(&d);
    free(many);
    char num[100];
    memset(num, '7', 65);
    CHECK(json_parse(&d, num, 65) == -1 && strstr(pelab_errmsg, "longer than 64"), "json: a 65-digit number: %s",
          pelab_errmsg);
    CHECK(json_parse(&d, num, 64) == 0, "json: a 64-digit number parses");
    json_free(&d);
}

/* 5. compare --jobs with an 8 KB --data path: every byte and every later flag in each command */
static void check_long_jobs(const char *dir) {
    static Run r;
    static char data[8400], jobs[512], out[512];
    int n = snprintf(data, sizeof data, "%s/", dir);
    while (n < 8192) n += snprintf(data + n, sizeof data - n, "long-directory-name-%04d/", n);
    snprintf(data + n, sizeof data - n, "input.txt");
    snprintf(jobs, sizeof jobs, "%s/long.jobs", dir);
    snprintf(out, sizeof out, "%s/longcmp", dir);
    const char *args[] = {"compare", "--data", data, "--schemes", "rope,alibi", "--seeds", "1", "--out", out,
                          "--jobs", jobs, "--steps", "7", "--threads", "1", NULL};
    run_argv(&r, args, NULL, NULL, 30);
    CHECK(r.status == 0, "compare --jobs with an 8 KB --data path (exit %d): %s", r.status, r.out);
    FILE *f = fopen(jobs, "r");
    static char line[1 << 15];
    int lines = 0, whole = 0;
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        whole += strstr(line, data) && strstr(line, " --steps 7 --threads 1 --only ") && strchr(line, '\n');
    }
    if (f) fclose(f);
    CHECK(lines == 2 && whole == 2, "both commands keep the 8 KB path and every flag after it (%d of %d lines)", whole,
          lines);
}

/* 6. --threads: more than 4 x the online CPUs refused by every command that has it */
static void check_threads(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char too_many[32], limit[32];
    snprintf(too_many, sizeof too_many, "%ld", 4 * cpus + 1);
    snprintf(limit, sizeof limit, "%ld", 4 * cpus);
    const char *cmds[][3] = {{"train", NULL}, {"sample", "x.st"}, {"score", "x.st"}, {"eval", "x.st"},
                             {"passkey", "x.st"}, {"probe", "x.st"}, {"compare", NULL}, {"demo", NULL}, {"bench", NULL}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        const char *args[] = {cmds[i][0], "--threads", "1000", NULL};
        char what[64];
        snprintf(what, sizeof what, "pelab %s --threads 1000", cmds[i][0]);
        expect_argv_refused(what, args, "online CPUs");
        const char *args2[] = {cmds[i][0], "--threads", too_many, NULL};
        expect_argv_refused(what, args2, "online CPUs");
    }
    static Run r;
    const char *ok[] = {"train", "--threads", limit, "--help", NULL};
    run_argv(&r, ok, NULL, NULL, 10);
    CHECK(r.status == 0, "--threads %s (the limit) is accepted: %s", limit, r.out);
}

/* 7. outputs are checked first: a bad output path is the error even when the input is missing too
 * (the input would be read first otherwise), and train fails in a second, not at its first save */
static void check_outputs_first(const char *dir, const char *ckpt) {
    char missing[512], file_dir[512], model_bin[512];
    snprintf(model_bin, sizeof model_bin, "%s/x.bin", dir); /* never written: the check comes first */
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.out", dir);
    snprintf(file_dir, sizeof file_dir, "%s/victim.txt/sub", dir); /* a file where a directory should be */
    const char *no_input = "/nonexistent-input.txt";
    /* the flag that must be named first, then the command */
    const char *cases[][12] = {
        {"--out", "train", "--data", no_input, "--out", missing, NULL},
        {"--out", "train", "--steps", "100000000", "--out", dir, NULL},
        {"--csv", "eval", no_input, "--data", no_input, "--csv", missing, NULL},
        {"--json", "eval", no_input, "--data", no_input, "--json", dir, NULL},
        {"--per-token", "score", no_input, no_input, "--per-token", missing, NULL},
        {"--csv", "passkey", no_input, "--csv", missing, NULL},
        {"--csv", "probe", no_input, "attention", "--csv", missing, NULL},
        {"--png", "probe", no_input, "attention", "--png", dir, NULL},
        {"--out", "import", "--llama2c", no_input, "--tokenizer", no_input, "--out", missing, NULL},
        {"--llama2c", "export", no_input, "--llama2c", missing, NULL},
        {"--tokenizer-out", "export", ckpt, "--llama2c", model_bin, "--tokenizer-out", dir, NULL},
        {"--out", "tokenizer", "train", no_input, "--out", missing, NULL},
        {"--out", "compare", "--data", no_input, "--out", file_dir, NULL},
        {"--jobs", "compare", "--data", no_input, "--out", dir, "--jobs", missing, NULL},
        {"--out", "demo", "--out", file_dir, NULL},
        {"--json", "bench", "--json", missing, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[160];
        snprintf(what, sizeof what, "pelab %s ... %s BAD (input missing too)", cases[i][1], cases[i][0]);
        expect_argv_refused(what, cases[i] + 1, cases[i][0]);
    }
}

void test_hardening(void) {
    static char dir[256], ckpt[300];
    snprintf(dir, sizeof dir, "%s/hardening", test_tmpdir());
    mkdir(dir, 0755);
    snprintf(ckpt, sizeof ckpt, "%s/tiny.st", dir);
    static Run r;
    train_tiny(&r, ckpt, NULL);
    CHECK(r.status == 0, "tiny model for the hardening tests (exit %d): %s", r.status, r.out);
    check_no_shell(dir);
    check_fifos(dir, ckpt);
    check_symlinks(dir);
    check_hostile_header(dir);
    check_long_jobs(dir);
    check_threads();
    check_outputs_first(dir, ckpt);
}
