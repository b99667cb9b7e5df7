/* test_regress.c: every input kept under tests/fuzz/regress/NAME/ (fuzzing findings and hostile
 * files from attacking pelab) runs through the harness NAME with the fuzzer's own checks, built
 * with a plain main (tests/fuzz/replay_main.c) into $PELAB_REPLAY/fuzz_NAME: under `make test`
 * with gcc -O3, under `make sanitize` with ASan + UBSan. One child process per input, so one
 * failure names its file and the rest still run. A regress directory without a harness fails. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/files.h"
#include "test.h"

#define REGRESS_DIR "tests/fuzz/regress"

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* sorted names of the entries of dir (no dot files); *n set; NULL when dir cannot be opened */
static char **list_dir(const char *dir, int *n) {
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) return NULL;
    int cap = 16;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while (names && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (*n == cap) {
            char **grown = realloc(names, (cap *= 2) * sizeof *names);
            if (!grown) break;
            names = grown;
        }
        names[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (names) qsort(names, *n, sizeof *names, by_name);
    return names;
}

static void free_list(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

/* runs bin on input, output to log; returns the wait status (-1 if it could not start) */
static int replay(const char *bin, const char *input, const char *log) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
        /* a sanitizer report must end the run (UBSan alone would print and go on) */
        setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1", 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        execl(bin, bin, input, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return status;
}

/* the child's output, NUL-terminated (freed by the caller); "" if unreadable */
static char *read_log(const char *path) {
    unsigned char *text;
    size_t n;
    if (read_file(path, &text, &n) != 0) return strdup("");
    char *s = realloc(text, n + 1);
    if (!s) return text ? (free(text), strdup("")) : strdup("");
    s[n] = 0;
    return s;
}

void test_regress(void) {
    const char *replay_dir = getenv("PELAB_REPLAY") ? getenv("PELAB_REPLAY") : "./build/replay";
    int n_harness;
    char **harnesses = list_dir(REGRESS_DIR, &n_harness);
    CHECK(harnesses && n_harness > 0, "%s lists the regression inputs", REGRESS_DIR);
    if (!harnesses) return;
    char log[600];
    snprintf(log, sizeof log, "%s/replay.log", test_tmpdir());
    int total = 0;
    for (int h = 0; h < n_harness; h++) {
        char bin[600], dir[600], input[1200];
        snprintf(bin, sizeof bin, "%s/fuzz_%s", replay_dir, harnesses[h]);
        snprintf(dir, sizeof dir, "%s/%s", REGRESS_DIR, harnesses[h]);
        CHECK(access(bin, X_OK) == 0, "%s: a harness for the inputs in %s (tests/fuzz/fuzz_%s.c)", bin, dir,
              harnesses[h]);
        if (access(bin, X_OK) != 0) continue;
        int n;
        char **inputs = list_dir(dir, &n);
        for (int i = 0; inputs && i < n; i++) {
            if (strstr(inputs[i], ".md")) continue;
            snprintf(input, sizeof input, "%s/%s", dir, inputs[i]);
            int status = replay(bin, input, log);
            char *out = read_log(log);
            CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(out, "ok ") &&
                      !strstr(out, "runtime error") && !strstr(out, "Sanitizer"),
                  "regression input %s through fuzz_%s: %s", input, harnesses[h],
                  WIFSIGNALED(status) ? "killed by a signal (a failed check or a sanitizer report)" : out);
            free(out);
            total++;
        }
        free_list(inputs, n);
    }
    free_list(harnesses, n_harness);
    fprintf(stderr, "  replayed %d regression inputs from %s\n", total, REGRESS_DIR);
}
