/* child.c: the binary under test run as a child process (see child.h). */
#include "child.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/sys.h"
#include "test.h"

const char *pelab_bin(void) {
    static char path[PATH_MAX];
    if (!path[0]) {
        const char *bin = getenv("PELAB_BIN") ? getenv("PELAB_BIN") : "./pelab";
        if (!realpath(bin, path)) snprintf(path, sizeof path, "%s", bin);
    }
    return path;
}

void run_argv(Run *r, const char *const *args, const char *cwd, const char *const *env, int limit_s) {
    memset(r, 0, sizeof *r);
    const char *bin = pelab_bin(); /* resolved here: the child may change directory first */
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        r->status = -1;
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        if (cwd && chdir(cwd) != 0) _exit(126);
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
        const char *argv[64];
        int n = 0;
        argv[n++] = "pelab";
        for (int i = 0; args[i] && n < 63; i++) argv[n++] = args[i];
        argv[n] = NULL;
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(pipefd[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    size_t used = 0;
    double deadline = now_seconds() + limit_s;
    int status = 0;
    struct rusage ru;
    for (;;) {
        ssize_t k = read(pipefd[0], r->out + used, sizeof r->out - 1 - used);
        if (k > 0) used += (size_t)k;
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid) break;
        if (now_seconds() > deadline) {
            kill(pid, SIGKILL);
            wait4(pid, &status, 0, &ru);
            r->timed_out = 1;
            break;
        }
        if (k <= 0) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    for (ssize_t k; (k = read(pipefd[0], r->out + used, sizeof r->out - 1 - used)) > 0;) used += (size_t)k;
    close(pipefd[0]);
    r->out[used] = 0;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->maxrss_kb = maxrss_kb(ru.ru_maxrss);
    r->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    if (getenv("PELAB_CHILD_VERBOSE")) { /* the figures of every run: pelab CMD ARG... (paths as their last part) */
        fprintf(stderr, "  pelab");
        for (int i = 0; args[i] && i < 8; i++) fprintf(stderr, " %.40s", strrchr(args[i], '/') ? strrchr(args[i], '/') + 1 : args[i]);
        fprintf(stderr, ": exit %d%s, %.2f s CPU, %.1f MB peak: %.*s\n", r->status, r->timed_out ? " (killed)" : "",
                r->cpu_s, r->maxrss_kb / 1024.0, (int)strcspn(r->out, "\n") < 160 ? (int)strcspn(r->out, "\n") : 160, r->out);
    }
}

void expect_argv_refused(const char *what, const char *const *args, const char *needle) {
    static Run r;
    run_argv(&r, args, NULL, NULL, 20);
    CHECK(!r.timed_out && r.status == 1 && count_lines(r.out) == 1 && strncmp(r.out, "pelab: ", 7) == 0 &&
              strstr(r.out, needle),
          "%s: exit 1 with one line naming '%s' (exit %d%s): %s", what, needle, r.status,
          r.timed_out ? ", hung and killed" : "", r.out);
}
