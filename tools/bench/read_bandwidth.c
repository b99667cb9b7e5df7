/* read_bandwidth.c: how fast this machine's cores read a buffer once, the roofline of decoding (a
 * decoded token reads every weight once: config M 24.2 MB in fp32). Build and run:
 *   gcc -O3 -march=native -fopenmp tools/bench/read_bandwidth.c -o /tmp/read_bandwidth
 *   OMP_NUM_THREADS=1 /tmp/read_bandwidth 24 30      # MB, repetitions
 * Prints the best and the median GB/s over the repetitions after the first (which faults the pages
 * in), the threads splitting the buffer evenly, as decoding's products split their rows. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench_clock.h"

int main(int argc, char **argv) {
    size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 24;
    int reps = argc > 2 ? atoi(argv[2]) : 30;
    if (mb < 1 || reps < 2) {
        fprintf(stderr, "usage: read_bandwidth [MB >= 1] [REPETITIONS >= 2]\n");
        return 2;
    }
    size_t n = mb * 1024 * 1024 / sizeof(float); /* a multiple of 64 */
    float *buf = malloc(n * sizeof(float));
    double *secs = malloc((size_t)reps * sizeof(double));
    if (!buf || !secs) {
        fprintf(stderr, "read_bandwidth: out of memory for %zu MB\n", mb);
        return 1;
    }
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i % 7) * 1e-9f;
    double keep = 0; /* the sums, printed, so that the reads are not optimized away */
    for (int r = 0; r < reps; r++) {
        double t0 = seconds();
        float sum = 0.0f;
#pragma omp parallel reduction(+ : sum)
        {
            /* 64 partial sums (eight vectors of AVX2): one would wait on its own adds, not on memory */
            float part[64] = {0};
            size_t blocks = n / 64, t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
            size_t b0 = blocks * t / nt, b1 = blocks * (t + 1) / nt;
            for (size_t b = b0; b < b1; b++) {
                const float *at = buf + b * 64;
#pragma omp simd
                for (int k = 0; k < 64; k++) part[k] += at[k];
            }
            for (int k = 0; k < 64; k++) sum += part[k];
        }
        secs[r] = seconds() - t0;
        keep += sum;
    }
    qsort(secs + 1, (size_t)reps - 1, sizeof(double), by_value);
    double bytes = (double)n * sizeof(float);
    printf("%zu MB, %d thread(s): best %.1f GB/s, median %.1f GB/s over %d repetitions (sum %g)\n", mb,
           omp_get_max_threads(), bytes / secs[1] / 1e9, bytes / secs[1 + (reps - 1) / 2] / 1e9, reps - 1, keep);
    free(buf), free(secs);
    return 0;
}
