/* rows_stream.c: how fast decoding's row kernel (core/kern_rows.h's kern_dot_rows, the AVX2 build)
 * streams one token's weights: config M's 25 matrices (per layer q/k/v 864 x 288, o 288 x 288,
 * gate/up 1536 x 288, down 288 x 768; the logits 256 x 288), 24.2 MB, one pass per repetition,
 * each matrix's rows split evenly over the threads as rows_product splits them. Compare with
 * tools/bench/read_bandwidth.c, the machine's own read speed. Build and run (x86-64 with AVX2):
 *   gcc -O2 -mavx2 -mfma -fopenmp tools/bench/rows_stream.c -o /tmp/rows_stream
 *   OMP_NUM_THREADS=1 /tmp/rows_stream 300
 * (a kernel of another commit: `git show REV:core/kern_rows.h > /tmp/kern_rows.h` and build with
 * -DKERN_ROWS_AVX2=1 -include /tmp/kern_rows.h -DROWS_HEADER_INCLUDED) */
#ifndef KERN_ROWS_AVX2
#define KERN_ROWS_AVX2 1
#endif
#ifndef ROWS_HEADER_INCLUDED
#include "../../core/kern_rows.h"
#endif
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench_clock.h"

typedef struct {
    int rows, cols;
    float *w;
} Matrix;

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 300;
    if (reps < 3) {
        fprintf(stderr, "usage: rows_stream [REPETITIONS >= 3]\n");
        return 2;
    }
    enum { DIM = 288, HIDDEN = 768, LAYERS = 6, VOCAB = 256 };
    Matrix m[4 * LAYERS + 1];
    int n = 0;
    for (int l = 0; l < LAYERS; l++) {
        const int rows[4] = {3 * DIM, DIM, 2 * HIDDEN, DIM}, cols[4] = {DIM, DIM, DIM, HIDDEN};
        for (int i = 0; i < 4; i++) m[n].rows = rows[i], m[n].cols = cols[i], n++;
    }
    m[n].rows = VOCAB, m[n].cols = DIM, n++;
    double bytes = 0;
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)m[i].rows * m[i].cols;
        m[i].w = malloc(count * sizeof(float));
        if (!m[i].w) {
            fprintf(stderr, "rows_stream: out of memory\n");
            return 1;
        }
        for (size_t k = 0; k < count; k++) m[i].w[k] = (float)(k % 13) * 1e-3f;
        bytes += (double)count * sizeof(float);
    }
    float x[HIDDEN], out[2 * HIDDEN];
    for (int i = 0; i < HIDDEN; i++) x[i] = 0.01f * i;
    double *secs = malloc((size_t)reps * sizeof(double)), keep = 0;
    if (!secs) return 1;
    int threads = omp_get_max_threads();
    (void)kern_weighted_rows; /* the header's other kernel */
    for (int r = 0; r < reps; r++) {
        double t0 = seconds();
        for (int i = 0; i < n; i++) {
            int per = ((m[i].rows + threads - 1) / threads + 7) / 8 * 8; /* rows_product's blocks */
#pragma omp parallel for schedule(static, 1)
            for (int k = 0; k < threads; k++) {
                int r0 = k * per, rows = m[i].rows - r0 < per ? m[i].rows - r0 : per;
                if (rows > 0)
                    kern_dot_rows(m[i].w + (size_t)r0 * m[i].cols, 0, (size_t)m[i].cols, rows, x, m[i].cols, 1.0f,
                                  out + r0);
            }
            keep += out[m[i].rows - 1];
        }
        secs[r] = seconds() - t0;
    }
    qsort(secs + 2, (size_t)reps - 2, sizeof(double), by_value); /* the first two warm up */
    double median = secs[2 + (reps - 2) / 2];
    printf("M's weights, %.1f MB, %d thread(s): median %.1f GB/s (%.0f passes/s), best %.1f GB/s over %d passes "
           "(checksum %g)\n",
           bytes / 1e6, threads, bytes / median / 1e9, 1 / median, bytes / secs[2] / 1e9, reps - 2, keep);
    return 0;
}
