/* dot_rows.h: one query against one head's cached keys and values, without a BLAS call. A decoded
 * token's head is a [n, hd] x [hd] product and a [hd] weighted sum of [n, hd] rows with hd 16-128:
 * sgemv's setup and its blocking for long rows cost more than the arithmetic there, and a dot
 * product of 24 floats per key is mostly its horizontal sum. With AVX2 and FMA (hd a multiple of
 * 8), eight keys go at once and their eight sums are folded together in registers, and the weighted
 * sum keeps the whole output row in registers across the keys; with NEON (hd a multiple of 4) four
 * keys; elsewhere (other CPUs, any hd) plain loops that the compiler vectorizes. The set is chosen
 * at run time (core/kernels.h). A bf16 KV cache's rows are widened to float32 as they
 * are loaded (exact: bf16 is float32's upper half). The order of operations is fixed for a given kernel
 * set: results do not depend on the thread count. */
#ifndef PELAB_DOT_ROWS_H
#define PELAB_DOT_ROWS_H

#include <stddef.h>

#include "bf16.h"

/* out[j] = scale * rows[j] . x for j < n (row j at rows + j * ld, hd floats) */
void dot_rows(const float *rows, size_t ld, int n, const float *x, int hd, float scale, float *out);

/* out[0..hd) = sum_j w[j] rows[j] for j < n (row j at rows + j * ld); out is overwritten */
void weighted_rows(const float *rows, size_t ld, int n, const float *w, int hd, float *out);

/* the same over bf16 rows (a bf16 KV cache), float32 arithmetic */
void dot_rows_bf16(const bf16 *rows, size_t ld, int n, const float *x, int hd, float scale, float *out);
void weighted_rows_bf16(const bf16 *rows, size_t ld, int n, const float *w, int hd, float *out);

/* out[N, OC] = x[N, C] w[OC, C]^T (w row-major, float32 or bf16 when is_bf16) for a few rows N: a
 * decoding step's weight products (one row per sequence) as dot_rows over blocks of weight rows,
 * one block per thread when large (64-row blocks left 288 rows split 192 : 96 over 2 threads),
 * each block read from memory once for the N rows of x. Each output's sum runs in one order: the result does not depend on the
 * thread count. */
void rows_product(const void *w, int is_bf16, const float *x, int N, int C, int OC, float *out);

/* one of several products of the same rows x: out[N, OC] = x w^T, w float32 or bf16 (is_bf16) */
typedef struct {
    const void *w;
    int is_bf16, OC;
    float *out;
} RowsJob;
/* rows_product of every job in one loop over threads (a decoded token's q, k and v, or its gate and
 * up: one fork and one barrier instead of one per product), each job cut as rows_product cuts it;
 * each row in the same group of 8 of dot_rows whatever the thread count, so the same bits */
void rows_product_many(const RowsJob *jobs, int n_jobs, const float *x, int N, int C);

#endif
