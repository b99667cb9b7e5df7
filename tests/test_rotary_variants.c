/* test_rotary_variants.c: xPos and FoPE (model/pos/xpos.c, fope.c) against
 * docs/position-encodings.md sections 7 and 9, the partial-rotary vector of section 4,
 * and p-RoPE (rope:keep=P, Barbero et al. 2024) from its definition. (The shared checks of both schemes: test_schemes.c, from the registry.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/rng.h"
#include "../model/pos/fope.h"
#include "../model/pos/rotary.h"
#include "test.h"

static int near_vec(const float *got, const double *want, int n, double tol) {
    for (int i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol)) return 0;
    return 1;
}

/* one head_dim-wide scheme on a single-layer model with n_heads query and n_kv key heads */
static int init_scheme(PosCtx *pc, const char *spec, int head_dim, int n_heads, int n_kv, int n_layers, int L) {
    int rc = pos_init(pc, spec, head_dim * n_heads, n_heads, n_kv, n_layers, L);
    CHECK(rc == 0, "pos_init %s: %s", spec, pelab_errmsg);
    return rc;
}

/* transform one row of n_heads heads at position p, in place */
static void apply(PosCtx *pc, float *v, int p, int n_heads, int is_key, int layer) {
    pos_check_positions(pc, &p, 1);
    pc->scheme->qk_forward(pc, v, &p, 1, n_heads, is_key, layer);
}

/* q(m).k(n) for one head of dimension hd */
static double qk_dot(PosCtx *pc, const float *q0, const float *k0, int hd, int m, int n) {
    float q[64], k[64];
    memcpy(q, q0, sizeof(float) * hd);
    memcpy(k, k0, sizeof(float) * hd);
    apply(pc, q, m, 1, 0, 0);
    apply(pc, k, n, 1, 1, 0);
    double dot = 0;
    for (int i = 0; i < hd; i++) dot += (double)q[i] * k[i];
    return dot;
}

/* section 4: head_dim 16, rotary_pct 0.25 -> rotary dims 4, theta [1, 0.01], x = 1..16 at pos 1.
 * GPT-NeoX rotates the slice with the half convention: pairs (0, 2), (1, 3). */
static void partial_rotary(void) {
    static const double want[16] = {-1.984111, 1.959901, 2.462378, 4.0198, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    const char *specs[2] = {"rope:fraction=0.25,layout=half", "rope:fraction=0.25"};
    for (int s = 0; s < 2; s++) {
        PosCtx pc;
        if (init_scheme(&pc, specs[s], 16, 1, 1, 1, 16) != 0) continue;
        float x[16];
        for (int i = 0; i < 16; i++) x[i] = (float)(i + 1);
        apply(&pc, x, 1, 1, 0, 0);
        int match = near_vec(x, want, 16, 2e-6);
        if (s == 0) CHECK(match, "%s pos=1 matches section 4 (got %g %g %g %g)", specs[s], x[0], x[1], x[2], x[3]);
        else CHECK(!match && x[4] == 5.0f, "%s (interleaved pairs (0,1),(2,3)) differs from the NeoX vector", specs[s]);
        pos_free(&pc);
    }
}

/* p-RoPE from its definition: head_dim 8 (4 pairs, theta_j = 10000^(-2j/8) = 1, 0.1, 0.01, 0.001),
 * x = 1..8 at position 5. keep=0.5 rotates floor(0.5 x 4) = 2 pairs, the two fastest, by
 * 5 theta_j; the slow pairs pass through untouched at every position. */
static void p_rope(void) {
    static const int layout_half[2] = {0, 1};
    for (int l = 0; l < 2; l++) {
        PosCtx pc;
        const char *spec = layout_half[l] ? "rope:keep=0.5,layout=half" : "rope:keep=0.5";
        if (init_scheme(&pc, spec, 8, 1, 1, 1, 16) != 0) continue;
        float x[8];
        double want[8];
        for (int i = 0; i < 8; i++) x[i] = (float)(i + 1), want[i] = i + 1;
        for (int j = 0; j < 2; j++) { /* pair j: dims (2j, 2j+1), or (j, j + 4) in the half layout */
            int a = layout_half[l] ? j : 2 * j, b = layout_half[l] ? j + 4 : 2 * j + 1;
            double th = 5.0 * pow(10000.0, -2.0 * j / 8), x0 = a + 1, x1 = b + 1;
            want[a] = x0 * cos(th) - x1 * sin(th), want[b] = x0 * sin(th) + x1 * cos(th);
        }
        apply(&pc, x, 5, 1, 0, 0);
        CHECK(near_vec(x, want, 8, 2e-6), "%s at 5: the two fastest pairs rotate, the two slowest do not (%g %g %g %g "
              "%g %g %g %g)", spec, x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
        pos_free(&pc);
    }
    /* keep=1 is RoPE bit for bit; keep=0 is NoPE: the scores ignore the positions entirely */
    float q[8] = {0.3f, -0.7f, 1.1f, 0.4f, -0.2f, 0.9f, 0.5f, -1.3f}, k[8] = {0.9f, 0.2f, -0.5f, 1.3f, 0.6f, -0.4f, 1.0f, 0.1f};
    PosCtx rope, keep1, keep0, keep75, frac;
    if (init_scheme(&rope, "rope", 8, 1, 1, 1, 16) || init_scheme(&keep1, "rope:keep=1", 8, 1, 1, 1, 16) ||
        init_scheme(&keep0, "rope:keep=0", 8, 1, 1, 1, 16) || init_scheme(&keep75, "rope:keep=0.75", 8, 1, 1, 1, 16) ||
        init_scheme(&frac, "rope:fraction=0.5", 8, 1, 1, 1, 16))
        return;
    CHECK(qk_dot(&rope, q, k, 8, 9, 2) == qk_dot(&keep1, q, k, 8, 9, 2), "rope:keep=1 equals rope");
    double free0 = 0;
    for (int i = 0; i < 8; i++) free0 += (double)q[i] * k[i];
    CHECK(fabs(qk_dot(&keep0, q, k, 8, 9, 2) - free0) < 1e-6 && fabs(qk_dot(&keep0, q, k, 8, 100, 0) - free0) < 1e-6,
          "rope:keep=0 is NoPE: q.k without position");
    CHECK(fabs(qk_dot(&keep75, q, k, 8, 9, 2) - qk_dot(&keep75, q, k, 8, 47, 40)) < 1e-5 &&
              fabs(qk_dot(&keep75, q, k, 8, 9, 2) - qk_dot(&keep75, q, k, 8, 7, 2)) > 1e-4,
          "rope:keep=0.75 (3 pairs) scores depend on the offset only, and on it");
    /* fraction=0.5 is not keep=0.5: it rotates dims 0..3 at the frequencies of a 4-dim head (1, 0.01),
     * keep=0.5 pairs 0, 1 at those of the whole head (1, 0.1) */
    PosCtx k50;
    if (init_scheme(&k50, "rope:keep=0.5", 8, 1, 1, 1, 16) == 0) {
        CHECK(fabs(qk_dot(&frac, q, k, 8, 9, 2) - qk_dot(&k50, q, k, 8, 9, 2)) > 1e-4,
              "rope:fraction=0.5 and rope:keep=0.5 are different maps");
        pos_free(&k50);
    }
    /* the count is a floor, as the paper's code (int(p * head_dim // 2)): keep=0.7 on 8 pairs rotates
     * 5 (keep=0.625), not round(5.6) = 6 (keep=0.75) */
    PosCtx k70, k625, k750;
    float q16[16], k16[16];
    for (int i = 0; i < 16; i++) q16[i] = (float)sin(1.3 * i + 0.2), k16[i] = (float)cos(0.7 * i - 0.4);
    if (!init_scheme(&k70, "rope:keep=0.7", 16, 1, 1, 1, 16) && !init_scheme(&k625, "rope:keep=0.625", 16, 1, 1, 1, 16) &&
        !init_scheme(&k750, "rope:keep=0.75", 16, 1, 1, 1, 16)) {
        int same5 = 1;
        for (int m = 0; m < 16; m++) same5 &= qk_dot(&k70, q16, k16, 16, m, 0) == qk_dot(&k625, q16, k16, 16, m, 0);
        CHECK(same5 && qk_dot(&k70, q16, k16, 16, 15, 0) != qk_dot(&k750, q16, k16, 16, 15, 0),
              "rope:keep=0.7 on 8 pairs rotates floor(5.6) = 5 pairs, as keep=0.625, not 6");
        pos_free(&k70), pos_free(&k625), pos_free(&k750);
    }
    /* HoPE's cut by period: theta = 1, 0.1, 0.01, 0.001 turn once in 6.28, 62.8, 628, 6283 positions */
    static const char *hope[][2] = {
        {"rope:max_period=16", "rope:keep=0.25"},  /* only the fastest pair turns within 16 */
        {"rope:max_period=100", "rope:keep=0.5"},  /* two pairs */
        {"rope:max_period=6", "rope:keep=0"},      /* 6.28 > 6: none, NoPE */
        {"rope:max_period=100000", "rope"},       /* every pair */
        {"rope:max_period=100,keep=0.25", "rope:keep=0.25"}, /* the stricter cut wins */
    };
    for (int c = 0; c < 5; c++) {
        PosCtx a, b;
        if (init_scheme(&a, hope[c][0], 8, 1, 1, 1, 16) || init_scheme(&b, hope[c][1], 8, 1, 1, 1, 16)) continue;
        int same = 1;
        for (int m = 0; m < 16; m++) same &= qk_dot(&a, q, k, 8, m, 0) == qk_dot(&b, q, k, 8, m, 0);
        CHECK(same, "%s rotates the same pairs as %s", hope[c][0], hope[c][1]);
        pos_free(&a), pos_free(&b);
    }
    pos_free(&rope), pos_free(&keep1), pos_free(&keep0), pos_free(&keep75), pos_free(&frac);
    PosCtx bad;
    CHECK(pos_init(&bad, "rope:max_period=-1", 8, 1, 1, 1, 16) == -1 && strstr(pelab_errmsg, "max_period"),
          "max_period=-1 refused: %s", pelab_errmsg);
    CHECK(pos_init(&bad, "rope:keep=1.5", 8, 1, 1, 1, 16) == -1 && strstr(pelab_errmsg, "keep"), "keep=1.5 refused: %s",
          pelab_errmsg);
    CHECK(pos_init(&bad, "rope:keep=-0.1", 8, 1, 1, 1, 16) == -1 && strstr(pelab_errmsg, "keep"),
          "keep=-0.1 refused: %s", pelab_errmsg);
}

/* xPos by hand: d = 4 (theta = [1, 0.01], zeta = [0.4/1.4, 0.9/1.4]), interleaved,
 * q = [0.3, -0.7, 1.1, 0.4] at n = 3, k = [0.9, 0.2, -0.5, 1.3] at m = 1. Pair j of q.k is
 * zeta_j^((n-m)/gamma) * [cos(2 theta_j)(q0 k0 + q1 k1) + sin(2 theta_j)(q0 k1 - q1 k0)].
 * Vectors and dots below computed in float64 (Python) from the definition. */
static void xpos_by_hand(void) {
    static const float q0[4] = {0.3f, -0.7f, 1.1f, 0.4f}, k0[4] = {0.9f, 0.2f, -0.5f, 1.3f};
    static const double q_g4[4] = {-0.0774609342, 0.287363559, 0.780760532, 0.310733605};
    static const double k_g4[4] = {0.434924546, 1.18365748, -0.57288493, 1.4461701};
    const struct {
        const char *spec;
        double gamma, dot;
    } cases[2] = {{"xpos:scale_base=4", 4, 0.3085380706}, {"xpos", 512, 0.5731167428}};
    for (int c = 0; c < 2; c++) {
        PosCtx pc;
        if (init_scheme(&pc, cases[c].spec, 4, 1, 1, 1, 16) != 0) continue;
        double want = 0;
        for (int j = 0; j < 2; j++) {
            double theta = pow(10000.0, -2.0 * j / 4), zeta = (2.0 * j / 4 + 0.4) / 1.4, a = 2 * theta;
            const float *q = q0 + 2 * j, *k = k0 + 2 * j;
            double same = (double)q[0] * k[0] + (double)q[1] * k[1], cross = (double)q[0] * k[1] - (double)q[1] * k[0];
            want += pow(zeta, 2.0 / cases[c].gamma) * (cos(a) * same + sin(a) * cross);
        }
        double got = qk_dot(&pc, q0, k0, 4, 3, 1);
        CHECK(fabs(got - want) < 1e-6 && fabs(want - cases[c].dot) < 1e-7,
              "%s: q(3).k(1) = %.10f, closed form %.10f, stated %.10f", cases[c].spec, got, want, cases[c].dot);
        if (c == 0) {
            float q[4], k[4];
            memcpy(q, q0, sizeof q);
            memcpy(k, k0, sizeof k);
            apply(&pc, q, 3, 1, 0, 0);
            apply(&pc, k, 1, 1, 1, 0);
            CHECK(near_vec(q, q_g4, 4, 1e-6) && near_vec(k, k_g4, 4, 1e-6), "xpos:scale_base=4 q(3), k(1) vectors");
        }
        pos_free(&pc);
    }
}

/* same origin for q and k: q(m + delta).k(m) is the same for every m, far out too; and the limit */
static void xpos_relative_and_range(void) {
    static const float q0[8] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f};
    static const float k0[8] = {0.9f, 0.1f, -0.3f, 0.2f, 0.5f, -0.4f, 0.3f, 0.2f};
    const char *specs[2] = {"xpos", "xpos:layout=half,scale_base=64"};
    for (int s = 0; s < 2; s++) {
        PosCtx pc;
        if (init_scheme(&pc, specs[s], 8, 1, 1, 1, 16) != 0) continue;
        long limit = pc.scheme->computable_position(&pc);
        double ref = qk_dot(&pc, q0, k0, 8, 7, 0), worst = 0;
        for (long m = 3; m + 7 < limit; m += limit / 23) {
            double d = fabs(qk_dot(&pc, q0, k0, 8, (int)m + 7, (int)m) - ref) / fabs(ref);
            if (d > worst) worst = d;
        }
        double last = qk_dot(&pc, q0, k0, 8, (int)limit - 1, (int)limit - 8);
        CHECK(worst < 1e-5 && fabs(last - ref) < 1e-5 * fabs(ref),
              "%s: q(m+7).k(m) independent of m up to %ld (worst rel %.3g, at the limit %.10f vs %.10f)", specs[s],
              limit - 1, worst, last, ref);
        /* decay, not plain RoPE: the delta-7 score differs from the delta-0-shifted one */
        double near = qk_dot(&pc, q0, k0, 8, 0, 0);
        CHECK(fabs(near - ref) > 1e-3, "%s: distance changes the score (%.6f vs %.6f)", specs[s], near, ref);
        pos_free(&pc);
    }
    /* computable limit: |pos/gamma * ln zeta_0| <= 64 ln 2, zeta_0 = 0.4/1.4 -> floor(64 ln2 gamma / ln 3.5) */
    PosCtx pc;
    if (init_scheme(&pc, "xpos", 8, 1, 1, 1, 16) != 0) return;
    long limit = pc.scheme->computable_position(&pc);
    CHECK(limit == 18131, "xpos gamma 512: computable position %ld, expected 18131 (last 18130)", limit);
    float k[8] = {1, 0, 0, 0, 0, 0, 0, 0}, q[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    apply(&pc, k, (int)limit - 1, 1, 1, 0);
    apply(&pc, q, (int)limit - 1, 1, 0, 0);
    double ks = hypot(k[0], k[1]), qs = hypot(q[0], q[1]), want_ks = pow(0.4 / 1.4, -(limit - 1) / 512.0);
    int past = (int)limit;
    CHECK(pos_check_positions(&pc, &past, 1) == -1 && strstr(pelab_errmsg, "xpos"),
          "xpos position %d past the computable range rejected: %s", past, pelab_errmsg);
    CHECK(isfinite(ks) && fabs(ks / want_ks - 1) < 1e-5 && ks <= 0x1p64 && qs >= 0x1p-64 && fabs(ks * qs - 1) < 1e-5,
          "xpos key scale at the limit %.6g (want %.6g <= 2^64), query scale %.6g", ks, want_ks, qs);
    pos_free(&pc);
    CHECK(init_scheme(&pc, "xpos:scale_base=64", 8, 1, 1, 1, 16) == 0 && pc.scheme->computable_position(&pc) == 2267,
          "xpos gamma 64: computable position 2267");
    pos_free(&pc);
}

/* section 7 floor-frequency table (b = 10000) */
static void fope_floor_table(void) {
    static const struct {
        int head_dim, L, kept, total;
        double lowest;
        int out, zero_pairs, identity_cols;
    } rows[] = {
        {8, 128, 2, 4, 0.1, 2, 2, 2},
        {64, 512, 16, 32, 0.0133352, 16, 16, 16},
        {64, 1024, 18, 32, 0.00749894, 16, 16, 9},
        {128, 512, 31, 64, 0.0133352, 31, 33, 31},
        {128, 1024, 36, 64, 0.00649382, 32, 32, 18},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        PosCtx pc;
        if (init_scheme(&pc, "fope", rows[i].head_dim, 1, 1, 1, rows[i].L) != 0) continue;
        const FopeSetup *b = fope_setup(&pc);
        CHECK(b->kept == rows[i].kept && b->n_pairs == rows[i].total &&
                  fabs(b->lowest_kept / rows[i].lowest - 1) < 1e-5 && b->n_out == rows[i].out &&
                  b->n_pairs - b->n_out == rows[i].zero_pairs &&
                  b->identity_cols == rows[i].identity_cols && fabs(b->floor_freq - 2 * M_PI / rows[i].L) < 1e-15,
              "fope head_dim %d L %d: kept %d/%d lowest %g out %d zero %d identity %d", rows[i].head_dim, rows[i].L,
              b->kept, b->n_pairs, b->lowest_kept, b->n_out, b->n_pairs - b->n_out, b->identity_cols);
        pos_free(&pc);
    }
    /* item 1: gain 0.3 over (H=8, 16, 16) -> std 0.02165; sigma_mode=std -> 0.3 itself */
    PosCtx pc;
    if (init_scheme(&pc, "fope", 64, 8, 8, 1, 512) == 0)
        CHECK(fabs(fope_setup(&pc)->noise_std - 0.0216506) < 1e-6, "fope gain std %.7f", fope_setup(&pc)->noise_std);
    pos_free(&pc);
    if (init_scheme(&pc, "fope:sigma_mode=std", 64, 8, 8, 1, 512) == 0)
        CHECK(fope_setup(&pc)->noise_std == 0.3, "fope sigma_mode=std uses sigma as the std");
    pos_free(&pc);
}

/* the toy of section 7: head_dim 8, L 128, kept [1, 0.1], hand-set A and B */
typedef struct {
    int pad_official;
} ToyCtx;
static const double TOY_FREQ[2] = {1, 0.1}, TOY_A[4] = {1, 0.05, 0.02, 1}, TOY_B[4] = {1, -0.03, 0.04, 1};

static void toy_row(const void *ctx, long pos, int n, double *c, double *s) {
    FopeSeries f = {.freq = TOY_FREQ, .A = TOY_A, .B = TOY_B, .n_in = 2, .n_out = 2, .n_pairs = n,
                    .pad_official = ((const ToyCtx *)ctx)->pad_official};
    fope_head_row(&f, pos, c, s);
}

static void fope_toy(void) {
    static const double want_c[2][2] = {{0.5602024, 1.022019}, {0.3012138, 0.8917657}};
    static const double want_s[2][2] = {{0.8454643, 0.07458929}, {-0.9397473, 0.5081933}};
    /* [pos][pad]; pos 5 official pad is not in the doc: derived as C=S=1 on pairs 2, 3 */
    static const double want_y[2][2][8] = {
        {{-3.667119, 1.596503, 3, 4, 3.646476, 6.281294, 7, 8},
         {-3.667119, 1.596503, -4, -4, 3.646476, 6.281294, 10, 12}},
        {{4.99995, -1.265628, 3, 4, 0.5663219, 6.366981, 7, 8},
         {4.99995, -1.265628, -4, -4, 0.5663219, 6.366981, 10, 12}},
    };
    const int poss[2] = {1, 5};
    RotaryLayout layout = {.head_dim = 8, .rot_pairs = 4, .half_layout = 1};
    for (int pad = 0; pad < 2; pad++) {
        ToyCtx ctx = {pad};
        SinCosTable t;
        sincos_table_init_direct(&t, 4, toy_row, &ctx);
        sincos_table_reserve(&t, 8);
        for (int i = 0; i < 2; i++) {
            const float *c = t.cos_t + poss[i] * 4, *s = t.sin_t + poss[i] * 4;
            CHECK(near_vec(c, want_c[i], 2, 1e-6) && near_vec(s, want_s[i], 2, 1e-6) && c[2] == 1 && s[2] == pad,
                  "fope toy pos=%d pad=%d: C, S match section 7", poss[i], pad);
            float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
            rotary_apply(&layout, &(RotaryTable){&t, 4, 1}, x, &poss[i], 1, 1, 1.0f);
            CHECK(near_vec(x, want_y[i][pad], 8, 2e-6), "fope toy forward pos=%d pad=%s (got %g %g %g %g ...)", poss[i],
                  pad ? "official" : "identity", x[0], x[1], x[2], x[4]);
        }
        /* backward = M^T, checked by central differences of w . y(x) (C^2 + S^2 = 1.029 here) */
        float c1 = t.cos_t[4], s1 = t.sin_t[4];
        CHECK(fabs(c1 * c1 + s1 * s1 - 1) > 0.02, "toy map is not a rotation (C^2+S^2 = %g)", c1 * c1 + s1 * s1);
        float x0[8] = {0.3f, -1.2f, 0.7f, 2.0f, -0.4f, 0.9f, 1.5f, -0.6f};
        float w[8] = {1, -0.5f, 0.25f, 2, -1.5f, 0.75f, 0.1f, 1};
        float g[8];
        memcpy(g, w, sizeof g);
        rotary_apply(&layout, &(RotaryTable){&t, 4, 1}, g, &poss[0], 1, 1, -1.0f);
        double worst = 0;
        for (int i = 0; i < 8; i++) {
            double f[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                float x[8];
                memcpy(x, x0, sizeof x);
                x[i] += sgn ? -1e-2f : 1e-2f;
                rotary_apply(&layout, &(RotaryTable){&t, 4, 1}, x, &poss[0], 1, 1, 1.0f);
                f[sgn] = 0;
                for (int j = 0; j < 8; j++) f[sgn] += (double)w[j] * x[j];
            }
            worst = worse(worst, fabs((f[0] - f[1]) / 2e-2 - g[i]));
        }
        CHECK(worst < 1e-4, "fope toy backward = transpose (pad %d): worst |fd - analytic| %.3g", pad, worst);
        sincos_table_free(&t);
    }
}

/* through the scheme, grouped-query: 4 query heads on 2 KV heads, 2 layers, head_dim 8, L 64 */
static void fope_scheme_maps(void) {
    PosCtx pc;
    if (init_scheme(&pc, "fope", 8, 4, 2, 2, 64) != 0) return;
    Rng rng;
    rng_seed(&rng, 3);
    float x0[32], w[32];
    for (int i = 0; i < 32; i++) x0[i] = rng_normal(&rng), w[i] = rng_normal(&rng);
    /* backward = transpose for queries (4 heads) and keys (2 heads) of layer 1 */
    for (int is_key = 0; is_key < 2; is_key++) {
        int nh = is_key ? 2 : 4, n = nh * 8, p = 9;
        float g[32];
        pos_check_positions(&pc, &p, 1);
        memcpy(g, w, sizeof g);
        pc.scheme->qk_backward(&pc, g, &p, 1, nh, is_key, 1);
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double f[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                float x[32];
                memcpy(x, x0, sizeof x);
                x[i] += sgn ? -1e-2f : 1e-2f;
                apply(&pc, x, p, nh, is_key, 1);
                f[sgn] = 0;
                for (int j = 0; j < n; j++) f[sgn] += (double)w[j] * x[j];
            }
            worst = worse(worst, fabs((f[0] - f[1]) / 2e-2 - g[i]));
        }
        CHECK(worst < 1e-4, "fope %s backward = transpose: worst |fd - analytic| %.3g", is_key ? "key" : "query",
              worst);
    }
    /* queries use their KV head's coefficients; heads and layers get different draws */
    float q[32], k[16], q2[8];
    for (int h = 0; h < 4; h++) memcpy(q + 8 * h, x0, sizeof(float) * 8);
    memcpy(k, q, sizeof k);
    memcpy(q2, x0, sizeof q2);
    apply(&pc, q, 6, 4, 0, 0);
    apply(&pc, k, 6, 2, 1, 0);
    apply(&pc, q2, 6, 1, 1, 1);
    CHECK(!memcmp(q, q + 8, 32) && !memcmp(q, k, 32) && !memcmp(q + 16, q + 24, 32) && !memcmp(q + 16, k + 8, 32),
          "fope: query heads 0,1 use KV head 0 and heads 2,3 use KV head 1");
    CHECK(memcmp(q, q + 16, 32) && memcmp(q, q2, 32), "fope: KV heads and layers have their own coefficients");
    pos_free(&pc);
}

/* sigma = 0: A = B = I on the kept pairs = RoPE there, identity elsewhere, exactly relative;
 * with noise the score of a fixed offset drifts with the absolute position (item 6) */
static void fope_rope_limit_and_relativity(void) {
    PosCtx fz, rh;
    if (init_scheme(&fz, "fope:sigma=0", 8, 1, 1, 1, 128) != 0) return;
    if (init_scheme(&rh, "rope:layout=half", 8, 1, 1, 1, 128) != 0) return;
    const int poss[3] = {1, 3, 50};
    for (int i = 0; i < 3; i++) {
        float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, r[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        apply(&fz, a, poss[i], 1, 0, 0);
        apply(&rh, r, poss[i], 1, 0, 0);
        double want[8] = {r[0], r[1], 3, 4, r[4], r[5], 7, 8};
        CHECK(near_vec(a, want, 8, 1e-6),
              "fope:sigma=0 pos=%d = half RoPE on pairs 0,1 (freqs 1, 0.1), identity on 2,3", poss[i]);
    }
    pos_free(&rh);
    static const float q0[8] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f};
    static const float k0[8] = {0.9f, 0.1f, -0.3f, 0.2f, 0.5f, -0.4f, 0.3f, 0.2f};
    double a = qk_dot(&fz, q0, k0, 8, 5, 2), b = qk_dot(&fz, q0, k0, 8, 3, 0), c = qk_dot(&fz, q0, k0, 8, 10003, 10000);
    CHECK(fabs(a - b) < 1e-6 && fabs(a - c) < 1e-5, "fope:sigma=0 relative: %.8f %.8f %.8f", a, b, c);
    pos_free(&fz);
    PosCtx fn;
    if (init_scheme(&fn, "fope", 8, 1, 1, 1, 128) != 0) return;
    a = qk_dot(&fn, q0, k0, 8, 5, 2), b = qk_dot(&fn, q0, k0, 8, 3, 0), c = qk_dot(&fn, q0, k0, 8, 103, 100);
    CHECK(fabs(a - b) > 1e-4 && fabs(a - c) > 1e-4, "fope with noise only approximately relative: %.6f %.6f %.6f", a, b,
          c);
    pos_free(&fn);
}

static void specs_and_errors(void) {
    const char *cases[][2] = {
        {"fope", "fope:base=10000,layout=half,sigma=0.3,sigma_mode=gain,pad=identity,seed=1"},
        {"fope:pad=official,sigma=0.1,sigma_mode=std,seed=7,layout=interleaved",
         "fope:base=10000,layout=interleaved,sigma=0.1,sigma_mode=std,pad=official,seed=7"},
        /* the shared rotary options come first (rotary_core_describe); ours last */
        {"xpos", ",scale_base=512"},
        {"xpos:layout=half,scale_base=64", ",scale_base=64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        PosCtx pc, again;
        char spec[256], spec2[256];
        if (init_scheme(&pc, cases[i][0], 8, 2, 2, 2, 128) != 0) continue;
        pos_spec(&pc, spec, sizeof spec);
        init_scheme(&again, spec, 8, 2, 2, 2, 128);
        pos_spec(&again, spec2, sizeof spec2);
        size_t ls = strlen(spec), lw = strlen(cases[i][1]);
        int ok = cases[i][1][0] == ',' ? ls > lw && !strcmp(spec + ls - lw, cases[i][1]) && strstr(spec, "scale=none")
                                       : !strcmp(spec, cases[i][1]);
        CHECK(ok && !strcmp(spec, spec2), "%s spells out %s (round trip %s)", cases[i][0], spec, spec2);
        pos_free(&pc);
        pos_free(&again);
    }
    const char *bad[][2] = {{"fope:fraction=0.5", "fraction"}, {"fope:pad=ones", "pad"},
                            {"fope:sigma_mode=var", "sigma_mode"}, {"fope:sigma=-1", "sigma"},
                            {"xpos:scale_base=0", "scale_base"}, {"xpos:decay=1", "decay"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PosCtx pc;
        CHECK(pos_init(&pc, bad[i][0], 16, 2, 2, 1, 128) == -1 && strstr(pelab_errmsg, bad[i][1]), "%s rejected: %s",
              bad[i][0], pelab_errmsg);
    }
    PosCtx pc;
    CHECK(pos_init(&pc, "fope", 16, 2, 2, 1, 4) == -1 && strstr(pelab_errmsg, "no pair would carry position"),
          "fope with L = 4 (floor 1.57 > every frequency) rejected: %s", pelab_errmsg);
    /* the buffers are regenerated from the seed */
    const char *seeds[3] = {"fope", "fope:seed=1", "fope:seed=2"};
    float y[3][8];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 8; j++) y[i][j] = (float)(j + 1);
        if (init_scheme(&pc, seeds[i], 8, 1, 1, 1, 128) != 0) return;
        apply(&pc, y[i], 3, 1, 0, 0);
        pos_free(&pc);
    }
    CHECK(!memcmp(y[0], y[1], sizeof y[0]) && memcmp(y[0], y[2], sizeof y[0]),
          "fope coefficients are a function of seed");
}

void test_rotary_variants(void) {
    partial_rotary();
    p_rope();
    xpos_by_hand();
    xpos_relative_and_range();
    fope_floor_table();
    fope_toy();
    fope_scheme_maps();
    fope_rope_limit_and_relativity();
    specs_and_errors();
}
