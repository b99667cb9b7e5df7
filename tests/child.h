/* child.h: the binary under test (PELAB_BIN) run as a child with an argv, never through a shell,
 * so hostile names reach it intact; its exit status, output, peak memory and CPU time measured. */
#ifndef PELAB_TEST_CHILD_H
#define PELAB_TEST_CHILD_H

typedef struct {
    int status;        /* exit status, 128 + signal if killed */
    int timed_out;     /* killed by run_argv after its limit */
    long maxrss_kb;    /* of the child */
    double cpu_s;      /* user + system time of the child */
    char out[1 << 15]; /* stdout + stderr */
} Run;

/* the binary under test as an absolute path (children may run in another directory) */
const char *pelab_bin(void);
/* runs pelab with args (NULL-terminated; args[0] is the subcommand) in cwd (NULL: here), extra
 * environment entries "K=V" (NULL-terminated, may be NULL), killed after limit_s seconds. With
 * PELAB_CHILD_VERBOSE set, one line per run: the command, exit status, CPU time, peak memory and
 * the first line of output. */
void run_argv(Run *r, const char *const *args, const char *cwd, const char *const *env, int limit_s);
/* the command must exit 1 with one line "pelab: ..." containing needle, within 20 s */
void expect_argv_refused(const char *what, const char *const *args, const char *needle);

#endif
