/* fope.h: FoPE internals exposed for the reference tests (docs/position-encodings.md section 7). */
#ifndef PELAB_FOPE_H
#define PELAB_FOPE_H

#include "pos.h"

/* what the floor-frequency rule and the init leave for a model shape */
typedef struct {
    int n_pairs;       /* head_dim / 2: every pair is mapped, positional or padded */
    int kept;          /* RoPE frequencies >= floor_freq: the Fourier bank (official input_dim) */
    int n_out;         /* positional pairs, min(kept, head_dim / 4) (official output_dim) */
    int identity_cols; /* positional pairs whose coefficients get a 1 from the (strided) identity */
    double floor_freq; /* 2 pi / L, L = training length */
    double lowest_kept;
    double noise_std;  /* std of the coefficient noise actually drawn */
} FopeSetup;

/* the setup of a prepared "fope" context */
const FopeSetup *fope_setup(const PosCtx *pc);

/* One head's n_pairs pairs as FoPE maps them. Pairs o < n_out are Fourier series over the n_in
 * bank frequencies, C[o] = sum_k A[k][o] cos(freq[k] t), S[o] = sum_k B[k][o] sin(freq[k] t) (A, B
 * row-major [n_in][n_out]); the other pairs are zero-frequency padding: C = 1 and S = 0 (identity)
 * or S = 1 (pad_official, the official code's value). */
typedef struct {
    const double *freq, *A, *B;
    int n_in, n_out, n_pairs, pad_official;
} FopeSeries;

/* C[o], S[o] of the head's pairs at position t */
void fope_head_row(const FopeSeries *f, long t, double *C, double *S);

#endif
