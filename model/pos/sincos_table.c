#include "sincos_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/mem.h"

void sincos_table_init(SinCosTable *t, const double *freq, int n_freq) {
    memset(t, 0, sizeof *t);
    t->n_freq = n_freq;
    t->freq = xmalloc(sizeof(double) * n_freq);
    memcpy(t->freq, freq, sizeof(double) * n_freq);
}

void sincos_table_init_fn(SinCosTable *t, int n_freq, SinCosRowFn fn, const void *ctx) {
    memset(t, 0, sizeof *t);
    t->n_freq = n_freq;
    t->row_fn = fn;
    t->ctx = ctx;
}

void sincos_table_init_direct(SinCosTable *t, int n_freq, CosSinRowFn fn, const void *ctx) {
    memset(t, 0, sizeof *t);
    t->n_freq = n_freq;
    t->direct_fn = fn;
    t->ctx = ctx;
}

void sincos_table_invalidate(SinCosTable *t) { t->n_pos = 0; }

int sincos_table_reserve(SinCosTable *t, long n_pos) {
    if (n_pos <= t->n_pos) return 0;
    if (n_pos > t->cap) {
        long want = t->cap ? t->cap : 256;
        while (want < n_pos) want *= 2; /* amortise growth when decoding one token at a time */
        size_t bytes = sizeof(float) * (size_t)want * t->n_freq;
        float *c = realloc(t->cos_t, bytes);
        if (c) t->cos_t = c;
        float *s = c ? realloc(t->sin_t, bytes) : NULL;
        if (s) t->sin_t = s;
        if (!c || !s) return pelab_fail("out of memory growing the position table to %ld positions", want);
        t->cap = want;
    }
    int nf = t->n_freq;
    double *a = xmalloc(sizeof(double) * 2 * nf), *b = a + nf;
    for (long p = t->n_pos; p < t->cap; p++) {
        float *crow = t->cos_t + (size_t)p * nf, *srow = t->sin_t + (size_t)p * nf;
        if (t->direct_fn) {
            t->direct_fn(t->ctx, p, nf, a, b);
            for (int i = 0; i < nf; i++) crow[i] = (float)a[i], srow[i] = (float)b[i];
            continue;
        }
        if (t->row_fn) t->row_fn(t->ctx, p, nf, a, b);
        else
            for (int i = 0; i < nf; i++) a[i] = (double)p * t->freq[i], b[i] = 1.0;
        /* double: float32 angles lose ~1e-3 rad at 1e4 */
        for (int i = 0; i < nf; i++) crow[i] = (float)(b[i] * cos(a[i])), srow[i] = (float)(b[i] * sin(a[i]));
    }
    free(a);
    t->n_pos = t->cap;
    return 0;
}

void sincos_table_free(SinCosTable *t) {
    free(t->freq);
    free(t->cos_t);
    free(t->sin_t);
    memset(t, 0, sizeof *t);
}
