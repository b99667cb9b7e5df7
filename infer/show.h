/* show.h: the data behind `pelab show`'s pictures of the position schemes, computed through each
 * scheme's own hooks (input_forward, qk_forward, bias_row) so a picture shows what the model
 * does, one code path. Arrays in, errors out; tools/show_cmd.c writes the files. */
#ifndef PELAB_SHOW_H
#define PELAB_SHOW_H

#include "../model/pos/pos.h"

/* A scheme set up without a checkpoint: pos_init on this shape, then its learned parameters (if
 * any) from the scheme's own init_params (seed 1), owned in *params (free it after pos_free). */
int show_scheme_init(PosCtx *pc, const char *spec, int dim, int n_heads, int n_layers, int seq_len, float **params);

/* Cosine similarity of the vectors the scheme adds at the input (input_forward on zero rows) at
 * positions 0..n-1: sim [n, n]. Sinusoidal from its formula, learned from its table. */
int show_similarity(PosCtx *pc, int n, float *sim);

/* Unit phases of the rotary map of head 0, pair j, between a query at position m and a key at 0,
 * for m = 0..n-1: re, im [n, pairs] (pairs = pos_rotary_pairs). len: the current length a dynamic
 * rule sees. A pair that does not rotate (p-RoPE, HoPE) has phase 1. */
int show_rotary_phases(PosCtx *pc, long len, int n, double *re, double *im);

/* Wavelength 2 pi / theta_j of each rotary pair at current length len (theta_j: the angle the
 * scheme's table turns pair j by between positions 0 and 1); INFINITY for a pair that does not
 * rotate. wl [pairs]. */
int show_wavelengths(PosCtx *pc, long len, double *wl);

/* RoFormer's (Su et al. 2021, section 3.4.3, eq. 36 and figure 2) upper bound of the relative
 * score against distance m = 0..n-1: (1/(d/2)) sum_{j=1}^{d/2} |S_j|, S_j = sum_{k<j} e^{i m theta_k},
 * d/2 the rotary pairs; at m = 0 it is (d/2 + 1) / 2. bound [n]. */
int show_decay(PosCtx *pc, long len, int n, double *bound);

/* Score-bias map of one head and layer over positions 0..T-1 through bias_row: map [T, T],
 * map[i][j] = b(i, j) for j <= i, NaN above the diagonal (masked). */
int show_bias_map(PosCtx *pc, int T, int head, int layer, float *map);

#endif
