/* cli.c: what every command shares: the thread count and the one-line fatal error. */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"

void openblas_set_num_threads(int num_threads);

void set_threads(int n) {
    if (n <= 0) return;
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}

void pelab_die(const char *fmt, ...) {
    fflush(stdout);
    fprintf(stderr, "pelab: ");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}
