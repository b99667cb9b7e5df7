/* dot_rows.c: the decoding rows of dot_rows.h, run by the kernel set this CPU chose
 * (core/kernels.h; the loops themselves: core/kern_rows.h). */
#include "dot_rows.h"

#include <omp.h>

#include "../core/kernels.h"
#include "../core/sys.h"

void dot_rows(const float *rows, size_t ld, int n, const float *x, int hd, float scale, float *out) {
    kernels()->dot_rows(rows, 0, ld, n, x, hd, scale, out);
}

void weighted_rows(const float *rows, size_t ld, int n, const float *w, int hd, float *out) {
    kernels()->weighted_rows(rows, 0, ld, n, w, hd, out);
}

void dot_rows_bf16(const bf16 *rows, size_t ld, int n, const float *x, int hd, float scale, float *out) {
    kernels()->dot_rows(rows, 1, ld, n, x, hd, scale, out);
}

void weighted_rows_bf16(const bf16 *rows, size_t ld, int n, const float *w, int hd, float *out) {
    kernels()->weighted_rows(rows, 1, ld, n, w, hd, out);
}

/* rows of w per block: one block per thread, a multiple of 8 rows (so every row falls in the same
 * group of 8 of dot_rows whatever the thread count: the same bits); one block when not worth a fork */
static int rows_per_block(int OC, int parallel) {
    int threads = parallel ? omp_get_max_threads() : 1;
    int per = (OC + threads - 1) / threads;
    return (per + 7) / 8 * 8;
}

/* block k of a job's rows: n rows from row o0. Several rows of x go through the block a tile of
 * weight rows at a time (a multiple of 8 rows, about 16 KB: in L1 for the second row on), so the
 * block is read from memory once whatever N; the tiles start at multiples of 8, so every output
 * is the same group of 8 of dot_rows as untiled: the same bits for any N */
static void job_block(const RowsJob *j, int rows, int k, const float *x, int N, int C) {
    const Kernels *kern = kernels();
    size_t elem = j->is_bf16 ? sizeof(bf16) : sizeof(float);
    int o0 = k * rows, n = j->OC - o0 < rows ? j->OC - o0 : rows;
    int tile = N == 1 ? n : (int)((16384 / ((size_t)C * elem)) / 8 * 8);
    tile = tile < 8 ? 8 : tile;
    for (int t0 = 0; t0 < n; t0 += tile) {
        int nt = n - t0 < tile ? n - t0 : tile;
        const char *wb = (const char *)j->w + (size_t)(o0 + t0) * C * elem;
        for (int r = 0; r < N; r++)
            kern->dot_rows(wb, j->is_bf16, (size_t)C, nt, x + (size_t)r * C, C, 1.0f,
                           j->out + (size_t)r * j->OC + o0 + t0);
    }
}

void rows_product(const void *w, int is_bf16, const float *x, int N, int C, int OC, float *out) {
    RowsJob job = {w, is_bf16, OC, out};
    int parallel = (size_t)N * OC * C >= 2 * PAR_MIN_WORK, rows = rows_per_block(OC, parallel);
    PAR_FOR(parallel, int, k, (OC + rows - 1) / rows, job_block(&job, rows, k, x, N, C););
}

void rows_product_many(const RowsJob *jobs, int n_jobs, const float *x, int N, int C) {
    size_t work = 0;
    for (int i = 0; i < n_jobs; i++) work += (size_t)N * jobs[i].OC * C;
    if (work < 2 * PAR_MIN_WORK) {
        for (int i = 0; i < n_jobs; i++) job_block(&jobs[i], rows_per_block(jobs[i].OC, 0), 0, x, N, C);
        return;
    }
    /* each job in one block per thread, dealt round-robin: thread t takes block t of every job, so
     * the threads' shares are equal however the jobs' sizes differ (q against grouped k and v), and
     * each block is long enough for dot_rows' prefetch to run ahead of most of it */
    int threads = omp_get_max_threads();
#pragma omp parallel for schedule(static, 1)
    for (int b = 0; b < n_jobs * threads; b++) {
        const RowsJob *j = &jobs[b / threads];
        int rows = rows_per_block(j->OC, 1), k = b % threads;
        if (k * rows < j->OC) job_block(j, rows, k, x, N, C);
    }
}
