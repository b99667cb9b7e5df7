/* sincos_table.h: a growable table of (cos, sin)(pos * freq[i]) computed in double, shared by
 * the schemes that need sines of position (sinusoidal input, the RoPE family). Grown only from
 * the reserve hook, before any parallel region reads it. */
#ifndef PELAB_SINCOS_TABLE_H
#define PELAB_SINCOS_TABLE_H

typedef struct {
    int n_freq;
    double *freq;  /* [n_freq] angle per position */
    long n_pos;    /* rows computed */
    float *cos_t;  /* [n_pos, n_freq] */
    float *sin_t;  /* [n_pos, n_freq] */
} SinCosTable;

void sincos_table_init(SinCosTable *t, const double *freq, int n_freq);
int sincos_table_reserve(SinCosTable *t, long n_pos);
void sincos_table_free(SinCosTable *t);

#endif
