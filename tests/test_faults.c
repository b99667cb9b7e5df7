/* test_faults.c: a disk that fills up and a folder that turns read-only while pelab writes into
 * it. A small tmpfs is mounted under the test directory (root or CAP_SYS_ADMIN; without them the
 * group says so and skips): train's checkpoint writes hit ENOSPC and EROFS mid-run, a compare is
 * cut by a full disk between its runs, and compare's and suite's --collect meet a full disk and a
 * read-only folder. Each time: exit 1 with one line naming the file and the cause, the previous
 * checkpoint or report intact byte for byte, no temporary file left (but where the folder forbids
 * removing it); then, the fault gone, the same command resumes and ends as an unfaulted run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mount.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "../core/files.h"
#include "child.h"
#include "test.h"

#ifdef __linux__
static char fs[600]; /* the tmpfs */

static int same_bytes(const char *a, const char *b) {
    unsigned char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    int same = read_file(a, &x, &nx) == 0 && read_file(b, &y, &ny) == 0 && nx == ny && memcmp(x, y, nx) == 0;
    free(x), free(y);
    return same;
}

/* the files of dir whose names contain ".tmp" */
static int temps_in(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp") != NULL;
    if (d) closedir(d);
    return n;
}

/* fills the file system of dir to the last byte: a file of zeros written until ENOSPC */
static int fill_disk(const char *dir) {
    char path[800];
    snprintf(path, sizeof path, "%s/filler", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    static char block[4096];
    while (write(fd, block, sizeof block) > 0) {}
    while (write(fd, block, 1) > 0) {} /* the last partial block */
    int full = errno == ENOSPC;
    close(fd);
    return full ? 0 : -1;
}

static void unfill_disk(const char *dir) {
    char path[800];
    snprintf(path, sizeof path, "%s/filler", dir);
    unlink(path);
}

/* a shell command ("./pelab " the binary under test): its exit status, output in out */
static int sh(const char *cmd, char *out, size_t cap) { return run_pelab(cmd, out, cap); }

/* the last line of out that starts with "pelab: " (NULL if none), and how many there are */
static const char *error_line(const char *out, int *n) {
    const char *last = NULL;
    *n = 0;
    for (const char *p = out; (p = strstr(p, "pelab: ")); p++)
        if (p == out || p[-1] == '\n') last = p, (*n)++;
    return last;
}

#define TRAIN_FLAGS "--dim 32 --layers 2 --heads 2 --seq-len 32 --batch 4 --synth-bytes 30000 --threads 1 --ckpt-every 3"

/* train: the disk fills at the second checkpoint (423 KB each, 700 KB of disk: the new one cannot be
 * written beside the old), then, given room, --resume ends as the unfaulted run */
static void train_enospc(const char *ref) {
    static char out[1 << 15];
    char cmd[2400], path[800];
    if (mount("pelab-faults", fs, "tmpfs", MS_REMOUNT, "size=700k") != 0) {
        CHECK(0, "faults: remount %s to 700 KB: %s", fs, strerror(errno));
        return;
    }
    snprintf(path, sizeof path, "%s/m.safetensors", fs);
    snprintf(cmd, sizeof cmd, "./pelab train " TRAIN_FLAGS " --steps 60 --eval-every 20 --out %s", path);
    int rc = sh(cmd, out, sizeof out), n = 0;
    const char *line = error_line(out, &n);
    CHECK(rc == 1 && n == 1 && line && strstr(line, path) && strstr(line, "No space left on device") &&
              strstr(line, "stopped at step 6. The checkpoint of step 3 is intact: --resume continues from it"),
          "train, the disk full at its second checkpoint: exit 1, one line naming the file, ENOSPC and the "
          "checkpoint kept (exit %d): %.600s", rc, out);
    CHECK(temps_in(fs) == 0, "train, disk full: the temporary file is removed (%d left)", temps_in(fs));
    snprintf(cmd, sizeof cmd, "./pelab info %s", path);
    rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "present (resumable)") && strstr(out, "\nstep            3\n"),
          "train, disk full: the checkpoint of step 3 loads and is resumable (exit %d): %.400s", rc, out);
    if (mount("pelab-faults", fs, "tmpfs", MS_REMOUNT, "size=64m") != 0) return;
    snprintf(cmd, sizeof cmd, "./pelab train " TRAIN_FLAGS " --steps 60 --eval-every 20 --out %s --resume", path);
    rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0 && same_bytes(path, ref),
          "train, disk full then freed: --resume ends with the unfaulted run's checkpoint byte for byte (exit %d): "
          "%.300s", rc, out);
}

/* the run stopped (SIGSTOP, confirmed by waitpid) at a moment when no temporary file of a checkpoint
 * write is in dir: between two writes, or before a write's temporary file is created (its creation
 * then meets whatever is mounted meanwhile). 1 when so; 0 when the run ended first. */
static int stop_between_writes(pid_t pid, const char *dir) {
    for (int tries = 0; tries < 10000; tries++) {
        int st;
        if (kill(pid, SIGSTOP) != 0 || waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) return 0;
        if (temps_in(dir) == 0) return 1;
        kill(pid, SIGCONT); /* inside a write: let it finish it */
        usleep(500);
    }
    return 0;
}

/* train: the folder turns read-only (a read-only tmpfs mounted over it) after the first checkpoint,
 * while the run goes on (600 steps, about half a second); then, the folder writable again, --resume
 * ends the run. The mount lands while the run is stopped between two checkpoint writes: a mount
 * during a write would leave that write's temporary file in the covered folder, where no process
 * can see it to remove it (the message says so; the next run in that folder removes it). */
static void train_erofs(void) {
    static char out[1 << 15];
    char cmd[2400], dir[800], path[900], log[900];
    snprintf(dir, sizeof dir, "%s/ro", fs);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    snprintf(log, sizeof log, "%s/faults-train.log", test_tmpdir());
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
        execl(pelab_bin(), "pelab", "train", "--dim", "32", "--layers", "2", "--heads", "2", "--seq-len", "32",
              "--batch", "4", "--synth-bytes", "30000", "--threads", "1", "--ckpt-every", "3", "--steps", "600",
              "--eval-every", "20", "--out", path, (char *)NULL);
        _exit(127);
    }
    struct stat st;
    for (int i = 0; i < 5000 && stat(path, &st) != 0; i++) usleep(2000); /* its first checkpoint, 10 s at most */
    int stopped = stop_between_writes(pid, dir);
    int mounted = stopped && mount("pelab-faults-ro", dir, "tmpfs", MS_RDONLY, "size=64k") == 0;
    kill(pid, SIGCONT);
    int status = 0;
    waitpid(pid, &status, 0);
    char *text = test_slurp(log);
    int n = 0;
    const char *line = text ? error_line(text, &n) : NULL;
    CHECK(mounted && WIFEXITED(status) && WEXITSTATUS(status) == 1 && n == 1 && line && strstr(line, path) &&
              strstr(line, "Read-only file system") && strstr(line, "is intact: --resume continues from it"),
          "train, the folder read-only after the first checkpoint: exit 1, one line naming the file, EROFS and the "
          "checkpoint kept (stopped between writes %d, mounted %d, status %d): %.600s", stopped, mounted, status,
          text ? text : "");
    if (!mounted) return;
    if (umount2(dir, 0) != 0) {
        CHECK(0, "faults: umount %s: %s", dir, strerror(errno));
        return;
    }
    CHECK(temps_in(dir) == 0, "train, read-only folder: no temporary file (%d)", temps_in(dir));
    snprintf(cmd, sizeof cmd, "./pelab info %s", path);
    int rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "present (resumable)"),
          "train, read-only folder: the checkpoint before the fault loads and is resumable (exit %d): %.400s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab train " TRAIN_FLAGS " --steps 600 --eval-every 20 --out %s --resume >/dev/null 2>&1 && ./pelab info %s",
             path, path);
    rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "\nstep            600\n"),
          "train, read-only folder made writable: --resume ends the run (exit %d): %.600s", rc, out);
}

#define CMP_FLAGS                                                                                              \
    "--schemes rope,alibi --seeds 2 --steps 200 --dim 32 --layers 1 --heads 2 --seq-len 32 --batch 4 --mult 1,2 "   \
    "--eval-tokens 2048 --threads 1 --finetune-scale 2 --finetune-steps 20 --rules pi:2 --synth-bytes 40000"

/* every *.csv of dir/sub equals ref/sub's (a loss curve may be its first lines); with `all`, each of
 * ref's is there too. The number that differ or are missing. */
static int csvs_differ(const char *dir, const char *ref, const char *sub, int all) {
    char path[1200], rpath[1200];
    int wrong = 0, n = 0, want = 0;
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0) continue;
        n++;
        snprintf(path, sizeof path, "%s/%s/%s", dir, sub, e->d_name);
        snprintf(rpath, sizeof rpath, "%s/%s/%s", ref, sub, e->d_name);
        unsigned char *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        int curve = len > 10 && strcmp(e->d_name + len - 10, ".curve.csv") == 0 && !all;
        int same = read_file(path, &x, &nx) == 0 && read_file(rpath, &y, &ny) == 0 &&
                   (nx == ny || (curve && nx < ny && (!nx || x[nx - 1] == '\n'))) && memcmp(x, y, nx) == 0;
        free(x), free(y);
        if (!same && getenv("PELAB_FAULTS_VERBOSE")) fprintf(stderr, "  faults: %s differs\n", path);
        wrong += !same;
    }
    if (d) closedir(d);
    snprintf(rpath, sizeof rpath, "%s/%s", ref, sub);
    if ((d = opendir(rpath))) {
        for (struct dirent *e; (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            want += len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0;
        }
        closedir(d);
    }
    return wrong + (all && want != n ? abs(want - n) : 0);
}

/* the bytes of a file, to compare with later (NULL: absent) */
static unsigned char *snapshot(const char *path, size_t *n) {
    unsigned char *x = NULL;
    return read_file(path, &x, n) == 0 ? x : NULL;
}

static int unchanged(const char *path, const unsigned char *was, size_t n) {
    size_t m = 0;
    unsigned char *now = snapshot(path, &m);
    int same = was && now && m == n && memcmp(was, now, n) == 0;
    free(now);
    return same;
}

/* a finished report's --collect meets a full disk, then a read-only folder: exit 1, one line, and
 * the files it would rewrite (names, under dir) as they were */
static void collect_faults(const char *what, const char *collect_cmd, const char *dir, const char *const *names) {
    static char out[1 << 15];
    unsigned char *was[4] = {0};
    size_t len[4] = {0};
    char path[900];
    for (int i = 0; names[i]; i++) snprintf(path, sizeof path, "%s/%s", dir, names[i]), was[i] = snapshot(path, &len[i]);
    for (int fault = 0; fault < 2; fault++) {
        int set = fault == 0 ? fill_disk(fs) : mount("pelab-faults", fs, "tmpfs", MS_REMOUNT | MS_RDONLY, NULL);
        if (set != 0) {
            CHECK(0, "faults: cannot %s %s: %s", fault ? "make read-only" : "fill", fs, strerror(errno));
            continue;
        }
        int rc = sh(collect_cmd, out, sizeof out), n = 0;
        const char *line = error_line(out, &n);
        const char *cause = fault ? "Read-only file system" : "No space left on device";
        CHECK(rc == 1 && n == 1 && line && strstr(line, cause) && strstr(line, dir),
              "%s --collect, %s: exit 1, one line naming the folder and the cause (exit %d): %.800s", what,
              fault ? "read-only folder" : "disk full", rc, out);
        for (int i = 0; names[i]; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            CHECK(unchanged(path, was[i], len[i]), "%s --collect, %s: %s is as it was", what,
                  fault ? "read-only folder" : "disk full", names[i]);
        }
        if (fault == 0) unfill_disk(fs);
        else mount("pelab-faults", fs, "tmpfs", MS_REMOUNT, NULL);
    }
    for (int i = 0; names[i]; i++) free(was[i]);
}

/* compare: the disk fills while its runs go on; the runs already written stay whole and the
 * unfinished ones resume when the same command is run again with room */
static void compare_full_disk(void) {
    static char out[1 << 15];
    char cmd[2400], ref[800], dir[800], runs[900], log[900];
    snprintf(ref, sizeof ref, "%s/faults-cmp-ref", test_tmpdir());
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare --out %s " CMP_FLAGS, ref);
    int rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0, "faults: the unfaulted compare (exit %d): %.300s", rc, out);
    if (rc != 0) return;
    snprintf(dir, sizeof dir, "%s/cmp", fs);
    snprintf(runs, sizeof runs, "%s/runs", dir);
    snprintf(log, sizeof log, "%s/faults-cmp.log", test_tmpdir());
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 exec %s compare --out %s " CMP_FLAGS " > %s 2>&1", pelab_bin(), dir, log);
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* the disk fills once the first run's CSV is written, 20 s at most */
    char first[1000];
    snprintf(first, sizeof first, "%s/rope_s1.csv", runs);
    struct stat st;
    for (int i = 0; i < 10000 && stat(first, &st) != 0; i++) usleep(2000);
    int filled = fill_disk(fs) == 0, status = 0;
    waitpid(pid, &status, 0);
    char *text = test_slurp(log);
    int n = 0;
    const char *line = text ? error_line(text, &n) : NULL;
    CHECK(filled && WIFEXITED(status) && WEXITSTATUS(status) == 1 && n == 1 && line && strstr(line, dir) &&
              strstr(line, "No space left on device"),
          "compare, the disk full after its first run: exit 1, one line naming the file and ENOSPC (status %d): %.800s",
          status, text ? text : "");
    CHECK(csvs_differ(dir, ref, "runs", 0) == 0 && temps_in(runs) == 0 && temps_in(dir) == 0,
          "compare, disk full: every run CSV written is the unfaulted run's, no temporary file (%d differ, %d temps)",
          csvs_differ(dir, ref, "runs", 0), temps_in(runs) + temps_in(dir));
    unfill_disk(fs);
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare --out %s " CMP_FLAGS, dir);
    rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "skip rope_s1 ") && csvs_differ(dir, ref, "runs", 1) == 0 &&
              csvs_differ(dir, ref, "", 1) == 0,
          "compare, disk freed: the same command keeps the finished runs, resumes the rest and ends with the "
          "unfaulted CSVs and verdicts (exit %d; %d differ): %.600s",
          rc, csvs_differ(dir, ref, "runs", 1) + csvs_differ(dir, ref, "", 1), out);
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare --out %s " CMP_FLAGS " --collect", dir);
    const char *names[] = {"report.md", "verdicts.csv", NULL};
    collect_faults("compare", cmd, dir, names);
}

/* suite: its --collect over finished runs meets a full disk and a read-only folder */
static void suite_collect(void) {
    static char out[1 << 15];
    char cmd[2400], claims[800], dir[800];
    snprintf(claims, sizeof claims, "%s/faults-claims.txt", test_tmpdir());
    FILE *f = fopen(claims, "w");
    if (f) fputs("k | P | nope beats rope at 16 | copy | 16 | nope | better:rope |\n", f), fclose(f);
    snprintf(dir, sizeof dir, "%s/suite", fs);
    const char *tail = "--schemes nope,rope --protocols copy --seeds 2 --steps 12 --task-n 2 --threads 1";
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab suite quick --claims %s %s --dir %s", claims, tail, dir);
    int rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0, "faults: a tiny suite (exit %d): %.300s", rc, out);
    if (rc != 0) return;
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab suite quick --claims %s %s --dir %s --collect", claims, tail, dir);
    const char *names[] = {"claims.csv", "suite.md", "copy/report.md", "copy/verdicts.csv", NULL};
    collect_faults("suite", cmd, dir, names);
}

void test_faults(void) {
    snprintf(fs, sizeof fs, "%s/faults-fs", test_tmpdir());
    mkdir(fs, 0755);
    if (mount("pelab-faults", fs, "tmpfs", 0, "size=64m") != 0) {
        fprintf(stderr, "  test_faults: skipped: cannot mount a tmpfs at %s (%s; needs root or CAP_SYS_ADMIN)\n", fs,
                strerror(errno));
        return;
    }
    static char out[1 << 15];
    char cmd[2400], ref[800];
    snprintf(ref, sizeof ref, "%s/faults-ref.safetensors", test_tmpdir());
    snprintf(cmd, sizeof cmd, "./pelab train " TRAIN_FLAGS " --steps 60 --eval-every 20 --out %s", ref);
    int rc = sh(cmd, out, sizeof out);
    CHECK(rc == 0, "faults: the unfaulted reference run (exit %d): %.300s", rc, out);
    if (rc == 0) {
        train_enospc(ref);
        train_erofs();
    }
    compare_full_disk();
    suite_collect();
    umount2(fs, MNT_DETACH);
}
#else
void test_faults(void) { fprintf(stderr, "  test_faults: skipped: the tmpfs faults need Linux mounts\n"); }
#endif
