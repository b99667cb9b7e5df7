/* cli.c: what every command shares: the thread count, the one-line fatal error and what the
 * matrix products run on. */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/blas.h"
#include "../core/cpu.h"
#include "../core/error.h"
#include "../core/files.h"
#include "../model/bf16.h"
#include "commands.h"

void set_threads(int n) {
    if (n <= 0) return;
    omp_set_num_threads(n);
    if (blas_set_threads(n) != 0) fprintf(stderr, "pelab: warning: %s\n", pelab_errmsg);
}

void pelab_die(const char *fmt, ...) {
    atomic_discard_all(); /* an output half written is never left, not even as a temporary file */
    fflush(stdout);
    fprintf(stderr, "pelab: ");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

void print_machine(FILE *report, int report_line) {
    char line[512];
    if (report_line) {
        blas_report(line, sizeof line);
        fprintf(report, "%s\n", line);
        bf16_report(line, sizeof line);
        fprintf(report, "%s\n", line);
    }
    CpuIsa isa;
    cpu_isa(&isa);
    if (blas_narrow_kernels(blas_core_name(), &isa, line, sizeof line)) fprintf(stderr, "pelab: %s\n", line);
}
