/* kern_gemm.h: the small-shape product of gemm.h, as a template: a kern_<isa>.c file defines
 * KERN_VL (floats per vector) and KERN_ROWS (rows of a tile) and includes it once, compiled for its
 * ISA, to define kern_gemm. C is computed in tiles of KERN_ROWS rows by two vectors of columns held
 * in registers; each step over k broadcasts one element of A per row and loads the tile's row of B
 * (B^T and the last, narrow panel are first copied into a zero-padded panel on the stack, KERN_KC
 * rows of k at a time). Every element of C is one sum over k in k's order, so a result does not
 * depend on where a product is split over threads; sets of different widths may round differently
 * (FMA or not, the tails' epilogues). */
#include <stddef.h>
#include <string.h>

#if !defined(KERN_VL) || !defined(KERN_ROWS)
#error "kern_gemm.h: define KERN_VL and KERN_ROWS first"
#endif

typedef float vf __attribute__((vector_size(KERN_VL * sizeof(float))));

enum {
    KERN_MR = KERN_ROWS,
    KERN_NR = 2 * KERN_VL, /* columns of a tile */
    KERN_KC = 256          /* k per pass: the panel (KC x NR floats, 8-32 KB) stays in L1 */
};

static inline vf vload(const float *p) {
    vf v;
    memcpy(&v, p, sizeof v); /* an unaligned load */
    return v;
}

static inline void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }

/* x in every lane: a broadcast alone (x - 0 is x for every x, so the subtraction folds away; x + 0
 * would stay: -0 + 0 is +0) */
static inline vf splat(float x) { return x - (vf){0}; }

/* C[mr, nc] = alpha * (rows of op(A)) x (panel b) + beta C, for a tile of mr rows and nv vectors
 * (nc columns, nc <= nv * KERN_VL): a[r * ars + k * aks] is row r's element k, b + k * ldb row k
 * of the panel. Inlined with constant mr and nv, the loops unroll and acc stays in registers. */
static inline __attribute__((always_inline)) void tile(int mr, int nv, int nc, int kc, const float *a, size_t ars,
                                                       size_t aks, const float *b, size_t ldb, float alpha, float beta,
                                                       float *c, size_t ldc) {
    vf acc[KERN_MR][2];
    for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) acc[r][v] = (vf){0};
    for (int k = 0; k < kc; k++) {
        const float *bk = b + (size_t)k * ldb, *ak = a + (size_t)k * aks;
        vf b0 = vload(bk), b1 = nv > 1 ? vload(bk + KERN_VL) : (vf){0};
        for (int r = 0; r < mr; r++) {
            vf ar = splat(ak[(size_t)r * ars]);
            acc[r][0] += ar * b0;
            if (nv > 1) acc[r][1] += ar * b1;
        }
    }
    for (int r = 0; r < mr; r++) {
        float *cr = c + (size_t)r * ldc;
        if (nc == nv * KERN_VL) {
            for (int v = 0; v < nv; v++) {
                vf x = acc[r][v] * alpha;
                if (beta != 0.0f) x += vload(cr + v * KERN_VL) * beta;
                vstore(cr + v * KERN_VL, x);
            }
        } else {
            float t[2 * KERN_VL] = {0}; /* (all of it written below; the initializer quiets gcc) */
            for (int v = 0; v < nv; v++) vstore(t + v * KERN_VL, acc[r][v]);
            for (int j = 0; j < nc; j++) cr[j] = alpha * t[j] + (beta != 0.0f ? beta * cr[j] : 0.0f);
        }
    }
}

/* every row tile of one column panel; the switch hands tile() constant shapes */
static void panel_rows(int M, int nv, int nc, int kc, const float *a, size_t ars, size_t aks, const float *b,
                       size_t ldb, float alpha, float beta, float *c, size_t ldc) {
    for (int i0 = 0; i0 < M; i0 += KERN_MR) {
        int mr = M - i0 < KERN_MR ? M - i0 : KERN_MR;
        const float *ai = a + (size_t)i0 * ars;
        float *ci = c + (size_t)i0 * ldc;
#define KERN_TILE(MR_, NV_)                                                                                      \
    case (MR_) * 4 + (NV_):                                                                                        \
        tile(MR_, NV_, nc, kc, ai, ars, aks, b, ldb, alpha, beta, ci, ldc);                                       \
        break;
        switch (mr * 4 + nv) {
#if KERN_ROWS == 8
            KERN_TILE(8, 2) KERN_TILE(7, 2) KERN_TILE(8, 1) KERN_TILE(7, 1)
#endif
            KERN_TILE(6, 2) KERN_TILE(5, 2) KERN_TILE(4, 2) KERN_TILE(3, 2) KERN_TILE(2, 2) KERN_TILE(1, 2)
            KERN_TILE(6, 1) KERN_TILE(5, 1) KERN_TILE(4, 1) KERN_TILE(3, 1) KERN_TILE(2, 1) KERN_TILE(1, 1)
        }
#undef KERN_TILE
    }
}

static void kern_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* no products: C = beta C, as BLAS */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] = beta != 0.0f ? beta * C[(size_t)i * ldc + j] : 0.0f;
        return;
    }
    size_t ars = trans_a ? 1 : (size_t)lda, aks = trans_a ? (size_t)lda : 1;
    float panel[KERN_KC * KERN_NR];
    for (int k0 = 0; k0 < K; k0 += KERN_KC) {
        int kc = K - k0 < KERN_KC ? K - k0 : KERN_KC;
        float beta_k = k0 == 0 ? beta : 1.0f; /* later passes add to what the first wrote */
        for (int j0 = 0; j0 < N; j0 += KERN_NR) {
            int nc = N - j0 < KERN_NR ? N - j0 : KERN_NR, nv = nc > KERN_VL ? 2 : 1;
            const float *b;
            size_t ldp;
            if (!trans_b && nc == nv * KERN_VL) { /* whole vectors of B's own rows: read in place */
                b = B + (size_t)k0 * ldb + j0;
                ldp = (size_t)ldb;
            } else { /* B^T, or a narrow last panel: copied, zero-padded to whole vectors */
                int w = nv * KERN_VL;
                for (int k = 0; k < kc; k++) memset(panel + (size_t)k * KERN_NR + nc, 0, (size_t)(w - nc) * sizeof(float));
                if (trans_b)
                    for (int j = 0; j < nc; j++) {
                        const float *src = B + (size_t)(j0 + j) * ldb + k0;
                        for (int k = 0; k < kc; k++) panel[(size_t)k * KERN_NR + j] = src[k];
                    }
                else
                    for (int k = 0; k < kc; k++)
                        memcpy(panel + (size_t)k * KERN_NR, B + (size_t)(k0 + k) * ldb + j0, (size_t)nc * sizeof(float));
                b = panel;
                ldp = KERN_NR;
            }
            panel_rows(M, nv, nc, kc, A + (size_t)k0 * aks, ars, aks, b, ldp, alpha, beta_k, C + j0, (size_t)ldc);
        }
    }
}
