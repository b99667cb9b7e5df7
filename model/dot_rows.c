/* dot_rows.c: the decoding rows of dot_rows.h, run by the kernel set this CPU chose
 * (core/kernels.h; the loops themselves: core/kern_rows.h). */
#include "dot_rows.h"

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

void rows_product(const void *w, int is_bf16, const float *x, int N, int C, int OC, float *out) {
    const Kernels *k = kernels();
    size_t elem = is_bf16 ? sizeof(bf16) : sizeof(float);
    int n_blocks = (OC + 63) / 64;
    PAR_FOR((size_t)N * OC * C >= 2 * PAR_MIN_WORK, int, blk, n_blocks,
            int o0 = blk * 64, n = OC - o0 < 64 ? OC - o0 : 64;
            const char *wb = (const char *)w + (size_t)o0 * C * elem;
            for (int r = 0; r < N; r++)
                k->dot_rows(wb, is_bf16, (size_t)C, n, x + (size_t)r * C, C, 1.0f, out + (size_t)r * OC + o0););
}
