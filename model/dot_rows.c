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

void rows_product(const void *w, int is_bf16, const float *x, int N, int C, int OC, float *out) {
    const Kernels *k = kernels();
    size_t elem = is_bf16 ? sizeof(bf16) : sizeof(float);
    int parallel = (size_t)N * OC * C >= 2 * PAR_MIN_WORK, rows = rows_per_block(OC, parallel);
    int n_blocks = (OC + rows - 1) / rows;
    PAR_FOR(parallel, int, blk, n_blocks,
            int o0 = blk * rows, n = OC - o0 < rows ? OC - o0 : rows;
            const char *wb = (const char *)w + (size_t)o0 * C * elem;
            for (int r = 0; r < N; r++)
                k->dot_rows(wb, is_bf16, (size_t)C, n, x + (size_t)r * C, C, 1.0f, out + (size_t)r * OC + o0););
}
