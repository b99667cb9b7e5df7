#include "sincos_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

void sincos_table_init(SinCosTable *t, const double *freq, int n_freq) {
    memset(t, 0, sizeof *t);
    t->n_freq = n_freq;
    t->freq = xmalloc(sizeof(double) * n_freq);
    memcpy(t->freq, freq, sizeof(double) * n_freq);
}

int sincos_table_reserve(SinCosTable *t, long n_pos) {
    if (n_pos <= t->n_pos) return 0;
    long want = t->n_pos ? t->n_pos : 256;
    while (want < n_pos) want *= 2; /* amortise growth when decoding one token at a time */
    size_t bytes = sizeof(float) * (size_t)want * t->n_freq;
    float *c = realloc(t->cos_t, bytes), *s = c ? realloc(t->sin_t, bytes) : NULL;
    if (!c || !s) {
        if (c) t->cos_t = c;
        return pelab_fail("out of memory growing the position table to %ld positions", want);
    }
    t->cos_t = c;
    t->sin_t = s;
    for (long p = t->n_pos; p < want; p++)
        for (int i = 0; i < t->n_freq; i++) {
            double angle = (double)p * t->freq[i]; /* double: float32 angles lose ~1e-3 rad at 1e4 */
            t->cos_t[(size_t)p * t->n_freq + i] = (float)cos(angle);
            t->sin_t[(size_t)p * t->n_freq + i] = (float)sin(angle);
        }
    t->n_pos = want;
    return 0;
}

void sincos_table_free(SinCosTable *t) {
    free(t->freq);
    free(t->cos_t);
    free(t->sin_t);
    memset(t, 0, sizeof *t);
}
