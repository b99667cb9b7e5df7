/* dot_rows.c: the decoding rows of dot_rows.h, run by the kernel set this CPU chose
 * (core/kernels.h; the loops themselves: core/kern_rows.h). */
#include "dot_rows.h"

#include "../core/kernels.h"

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
