/* sys.h: wall clock and peak memory of this process, and when a loop is worth parallelising. */
#ifndef PELAB_SYS_H
#define PELAB_SYS_H

/* OpenMP loops with less work than this many elements run on one thread: forking costs more
 * than it saves, and on a busy machine a spinning team can stall for milliseconds */
#define PAR_MIN_WORK 32768

/* `for (type i = 0; i < n; i++) { body }`, forked over the threads only when `worth` holds. Not an
 * OpenMP if clause: libgomp enters even a region whose if clause is false through a futex wake
 * syscall (1.2 us each on this project's VMs), and a decoded token runs about 38 small loops:
 * S sampled a third slower for them. The body is a statement list and may contain commas. */
#define PAR_FOR(worth, type, i, n, ...)                             \
    do {                                                             \
        if (worth) {                                                 \
            _Pragma("omp parallel for schedule(static)")             \
            for (type i = 0; i < (n); i++) { __VA_ARGS__ }            \
        } else {                                                     \
            for (type i = 0; i < (n); i++) { __VA_ARGS__ }            \
        }                                                            \
    } while (0)

double now_seconds(void);
/* peak resident set of this process, KB */
long peak_rss_kb(void);
/* a struct rusage's ru_maxrss in KB: Linux and the BSDs count KB, macOS bytes */
long maxrss_kb(long ru_maxrss);
/* the path of this executable (malloc'd, however long), or NULL where the system cannot say:
 * /proc/self/exe on Linux, _NSGetExecutablePath on macOS */
char *self_exe_path(void);

#endif
