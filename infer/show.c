/* show.c: the data of `pelab show` (show.h), through the schemes' own hooks. */
#include "show.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"

int show_scheme_init(PosCtx *pc, const char *spec, int dim, int n_heads, int n_layers, int seq_len, float **params) {
    *params = NULL;
    if (pos_init(pc, spec, dim, n_heads, n_heads, n_layers, seq_len) != 0) return -1;
    size_t n = pos_n_params(pc);
    if (n == 0) return 0;
    *params = xcalloc(n, sizeof(float));
    Rng rng;
    rng_seed(&rng, 1);
    if (pc->scheme->init_params) pc->scheme->init_params(pc, *params, &rng);
    pc->params = *params;
    return 0;
}

/* positions 0..n-1, checked against the scheme's limits (and its tables grown to n) */
static int *positions(PosCtx *pc, int n) {
    int *pos = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) pos[i] = i;
    if (pos_check_positions(pc, pos, (size_t)n) == 0) return pos;
    free(pos);
    return NULL;
}

int show_similarity(PosCtx *pc, int n, float *sim) {
    if (!pc->scheme->input_forward)
        return pelab_fail("the %s scheme adds nothing at the input (expected learned or sinusoidal)",
                          pc->scheme->name);
    int D = pc->dim, *pos = positions(pc, n);
    if (!pos) return -1;
    float *x = xcalloc((size_t)n * D, sizeof(float));
    pc->scheme->input_forward(pc, x, pos, n);
    double *norm = xmalloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < D; k++) s += (double)x[(size_t)i * D + k] * x[(size_t)i * D + k];
        norm[i] = sqrt(s);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double dot = 0;
            for (int k = 0; k < D; k++) dot += (double)x[(size_t)i * D + k] * x[(size_t)j * D + k];
            sim[(size_t)i * n + j] = (float)(dot / (norm[i] * norm[j])); /* a zero vector: NaN, no direction */
        }
    free(x), free(norm), free(pos);
    return 0;
}

int show_rotary_phases(PosCtx *pc, long len, int n, double *re, double *im) {
    int P = pos_rotary_pairs(pc), hd = pc->head_dim, half = pos_rotary_half(pc);
    if (P == 0 || !pc->scheme->qk_forward)
        return pelab_fail("the %s scheme has no rotary pairs (expected rope or xpos)", pc->scheme->name);
    if (len < 1 || len > INT_MAX) return pelab_fail("current length %ld: expected 1..%d", len, INT_MAX);
    int *pos = positions(pc, n > len ? n : (int)len); /* the current length a dynamic rule sees */
    if (!pos) return -1;
    /* one head's query and key at each position (head 0: a map with one head is head 0's): (1, 0)
     * in every pair, so the map's output is the pair's (C, S) */
    size_t row = (size_t)hd;
    float *q = xcalloc((size_t)n * row, sizeof(float)), *k = xcalloc(row, sizeof(float));
    for (int t = 0; t < n; t++)
        for (int j = 0; j < P; j++) q[t * row + (half ? j : 2 * j)] = 1.0f;
    for (int j = 0; j < P; j++) k[half ? j : 2 * j] = 1.0f;
    pc->scheme->qk_forward(pc, q, pos, n, 1, 0, 0);
    pc->scheme->qk_forward(pc, k, pos, 1, 1, 1, 0);
    for (int t = 0; t < n; t++)
        for (int j = 0; j < P; j++) {
            int a = half ? j : 2 * j, b = half ? j + P : 2 * j + 1;
            /* q_m conj(k_0), normalised: the phase the score sees (attention factors and xPos's
             * decay are magnitudes, left out) */
            double qr = q[t * row + a], qi = q[t * row + b], kr = k[a], ki = k[b];
            double zr = qr * kr + qi * ki, zi = qi * kr - qr * ki, r = hypot(zr, zi);
            re[(size_t)t * P + j] = r > 0 ? zr / r : 1.0;
            im[(size_t)t * P + j] = r > 0 ? zi / r : 0.0;
        }
    free(q), free(k), free(pos);
    return 0;
}

int show_wavelengths(PosCtx *pc, long len, double *wl) {
    int P = pos_rotary_pairs(pc);
    double *re = xmalloc(sizeof(double) * 2 * (P ? P : 1)), *im = xmalloc(sizeof(double) * 2 * (P ? P : 1));
    int rc = show_rotary_phases(pc, len, 2, re, im);
    /* the angle between positions 0 and 1: RoPE's fastest pair turns 1 rad per position and the
     * rules only slow pairs down, inside atan2's (-pi, pi]; a LongRoPE factor below 1/pi would
     * alias (none of the published ones is) */
    for (int j = 0; rc == 0 && j < P; j++) {
        double theta = atan2(im[P + j], re[P + j]);
        wl[j] = theta > 0 ? 2.0 * M_PI / theta : INFINITY;
    }
    free(re), free(im);
    return rc;
}

int show_decay(PosCtx *pc, long len, int n, double *bound) {
    int P = pos_rotary_pairs(pc);
    double *re = xmalloc(sizeof(double) * (size_t)n * (P ? P : 1)), *im = xmalloc(sizeof(double) * (size_t)n * (P ? P : 1));
    int rc = show_rotary_phases(pc, len, n, re, im);
    for (int m = 0; rc == 0 && m < n; m++) {
        /* S_j = sum_{k<j} e^{i m theta_k}, j = 1..d/2 (RoFormer eq. 35-36, pairs fastest first) */
        double sr = 0, si = 0, sum = 0;
        for (int j = 0; j < P; j++) {
            sr += re[(size_t)m * P + j], si += im[(size_t)m * P + j];
            sum += hypot(sr, si);
        }
        bound[m] = sum / P;
    }
    free(re), free(im);
    return rc;
}

int show_bias_map(PosCtx *pc, int T, int head, int layer, float *map) {
    if (!pc->scheme->bias_row)
        return pelab_fail("the %s scheme has no score bias b(i, j) of the two positions alone (alibi, t5, kerple and fire "
                          "have; CoPE's depends on the query and the scores of a text)",
                          pc->scheme->name);
    if (head < 0 || head >= pc->n_heads) return pelab_fail("--head %d: expected 0..%d", head, pc->n_heads - 1);
    if (layer < 0 || layer >= pc->n_layers) return pelab_fail("--layer %d: expected 0..%d", layer, pc->n_layers - 1);
    int *pos = positions(pc, T);
    if (!pos) return -1;
    for (int i = 0; i < T; i++) {
        float *row = map + (size_t)i * T;
        memset(row, 0, sizeof(float) * (size_t)(i + 1));
        pc->scheme->bias_row(pc, row, i, pos, i + 1, head, layer);
        for (int j = i + 1; j < T; j++) row[j] = NAN;
    }
    free(pos);
    return 0;
}
