/* bench_clock.h: the clock and the sort order of the single-file probes in tools/bench (read_bandwidth.c,
 * rows_stream.c): each includes it and builds alone. */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H
#include <time.h>

static inline double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* qsort's order of doubles, ascending */
static inline int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#endif
