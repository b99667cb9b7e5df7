/* sincos_table.h: a growable table of amp * (cos, sin)(angle) per position and frequency slot,
 * computed in double, shared by the schemes that need sines of position (sinusoidal input, the
 * rotary family). Rows are grown only from the reserve hook, before any parallel region reads
 * them. By default angle = pos * freq[i] and amp = 1; a row function can define any angle and
 * amplitude (scaled RoPE rules, xPos decay, FoPE's per-head Fourier series). */
#ifndef PELAB_SINCOS_TABLE_H
#define PELAB_SINCOS_TABLE_H

/* fills angle[i] and amp[i] for the n slots of one position */
typedef void (*SinCosRowFn)(const void *ctx, long pos, int n, double *angle, double *amp);
/* or, for maps that are not rotations (FoPE), the two entries directly */
typedef void (*CosSinRowFn)(const void *ctx, long pos, int n, double *cos_out, double *sin_out);

typedef struct {
    int n_freq;       /* slots per position */
    double *freq;     /* [n_freq] angle per position (default row rule) */
    SinCosRowFn row_fn;
    CosSinRowFn direct_fn;
    const void *ctx;
    long n_pos;       /* rows computed */
    long cap;
    float *cos_t;     /* [cap, n_freq] */
    float *sin_t;     /* [cap, n_freq] */
} SinCosTable;

void sincos_table_init(SinCosTable *t, const double *freq, int n_freq);
void sincos_table_init_fn(SinCosTable *t, int n_freq, SinCosRowFn fn, const void *ctx);
void sincos_table_init_direct(SinCosTable *t, int n_freq, CosSinRowFn fn, const void *ctx);
int sincos_table_reserve(SinCosTable *t, long n_pos);
/* forget every row (the rule changed, e.g. a dynamic rule saw a new length); recomputed on reserve */
void sincos_table_invalidate(SinCosTable *t);
void sincos_table_free(SinCosTable *t);

#endif
