/* test_pos.c: the position schemes against the reference vectors of
 * docs/position-encodings.md (sinusoidal section 2, RoPE section 4, learned section 1). */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../model/pos/pos.h"
#include "test.h"

static int near_vec(const float *got, const double *want, int n, double tol) {
    for (int i = 0; i < n; i++)
        if (fabs(got[i] - want[i]) > tol) return 0;
    return 1;
}

static void sinusoidal_vectors(void) {
    PosCtx pc;
    CHECK(pos_init(&pc, "sinusoidal:scale=1", 8, 1, 1, 1, 16) == 0, "sinusoidal init: %s", pelab_errmsg);
    static const double want[3][8] = {
        {0, 1, 0, 1, 0, 1, 0, 1},
        {0.841471, 0.5403023, 0.09983342, 0.9950042, 0.009999833, 0.99995, 0.0009999998, 0.9999995},
        {-0.9589243, 0.2836622, 0.4794255, 0.8775826, 0.04997917, 0.9987503, 0.004999979, 0.9999875},
    };
    int pos[3] = {0, 1, 5};
    float x[24] = {0};
    pos_check_positions(&pc, pos, 3);
    pc.scheme->input_forward(&pc, x, pos, 3);
    for (int r = 0; r < 3; r++)
        CHECK(near_vec(x + 8 * r, want[r], 8, 1e-6), "sinusoidal d=8 pos=%d interleaved matches section 2", pos[r]);
    pos_free(&pc);
    /* the default amplitude is 0.02 */
    pos_init(&pc, "sinusoidal", 8, 1, 1, 1, 16);
    float y[8] = {0};
    pos_check_positions(&pc, pos + 1, 1);
    pc.scheme->input_forward(&pc, y, pos + 1, 1);
    double want_scaled[8];
    for (int i = 0; i < 8; i++) want_scaled[i] = 0.02 * want[1][i];
    CHECK(near_vec(y, want_scaled, 8, 1e-8), "sinusoidal default scale 0.02");
    pos_free(&pc);
}

static void rope_one(const char *spec, int p, const double *want) {
    PosCtx pc;
    pos_init(&pc, spec, 8, 1, 1, 1, 16);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    pos_check_positions(&pc, &p, 1);
    pc.scheme->qk_forward(&pc, x, &p, 1, 1, 0, 0);
    CHECK(near_vec(x, want, 8, 2e-6), "%s pos=%d matches section 4 (got %g %g %g ...)", spec, p, x[0], x[1], x[2]);
    pos_free(&pc);
}

static double rope_dot(const char *spec, int m, int n) {
    static const float q0[8] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f};
    static const float k0[8] = {0.9f, 0.1f, -0.3f, 0.2f, 0.5f, -0.4f, 0.3f, 0.2f};
    PosCtx pc;
    pos_init(&pc, spec, 8, 1, 1, 1, 16);
    float q[8], k[8];
    memcpy(q, q0, sizeof q);
    memcpy(k, k0, sizeof k);
    int mm = m, nn = n;
    pos_check_positions(&pc, &mm, 1);
    pos_check_positions(&pc, &nn, 1);
    pc.scheme->qk_forward(&pc, q, &mm, 1, 1, 0, 0);
    pc.scheme->qk_forward(&pc, k, &nn, 1, 1, 1, 0);
    double dot = 0;
    for (int i = 0; i < 8; i++) dot += (double)q[i] * k[i];
    pos_free(&pc);
    return dot;
}

static void rope_vectors(void) {
    static const double i1[8] = {-1.1426397, 1.9220756, 2.5856788, 4.2795169, 4.939751, 6.0496992, 6.9919965, 8.006996};
    static const double h1[8] = {-3.6670526, 1.3910078, 2.9298512, 3.991998, 3.5429825, 6.1696918, 7.0296495, 8.003996};
    static const double i3[8] = {-1.2722325, -1.838865, 1.6839286, 4.7079066, 4.8177772, 6.1472777, 6.9759685, 8.020964};
    static const double h3[8] = {-1.6955925, 0.13755174, 2.7886816, 3.975982, -4.8088425, 6.3230593, 7.0868367, 8.011964};
    rope_one("rope", 1, i1);
    rope_one("rope:layout=interleaved", 3, i3);
    rope_one("rope:layout=half", 1, h1);
    rope_one("rope:layout=half", 3, h3);
    static const double x0[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    rope_one("rope", 0, x0);

    /* the relative-position identity: q(m).k(n) depends only on m - n */
    double a = rope_dot("rope", 5, 2), b = rope_dot("rope", 3, 0), c = rope_dot("rope", 103, 100);
    CHECK(fabs(a - -0.4404856942) < 1e-6 && fabs(b - -0.4404856942) < 1e-6 && fabs(c - -0.4404856942) < 1e-5,
          "rope interleaved q(5).k(2)=q(3).k(0)=q(103).k(100)=-0.4404856942 (got %.10f %.10f %.10f)", a, b, c);
    a = rope_dot("rope:layout=half", 5, 2), b = rope_dot("rope:layout=half", 3, 0);
    CHECK(fabs(a - 0.0361467335) < 1e-6 && fabs(b - 0.0361467335) < 1e-6,
          "rope half q(5).k(2)=q(3).k(0)=0.0361467335 (got %.10f %.10f)", a, b);
    /* and at long range: scores at offset 7 agree for every absolute start up to 20000 */
    double ref = rope_dot("rope", 7, 0), worst = 0;
    for (int m = 7; m < 20000; m += 997) {
        double d = fabs(rope_dot("rope", m + 7, m) - ref);
        if (d > worst) worst = d;
    }
    CHECK(worst < 1e-5, "rope scores depend only on the offset up to position 20000 (worst %.3g)", worst);

    /* backward: dy = e0 at pos 3 -> dx = R(-phi) dy */
    PosCtx pc;
    pos_init(&pc, "rope", 8, 1, 1, 1, 16);
    float dy[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    int p = 3;
    pos_check_positions(&pc, &p, 1);
    pc.scheme->qk_backward(&pc, dy, &p, 1, 1, 0, 0);
    static const double want_dx[8] = {-0.9899925, -0.14112001, 0, 0, 0, 0, 0, 0};
    CHECK(near_vec(dy, want_dx, 8, 1e-6), "rope backward pos=3 dy=e0 matches section 4");
    pos_free(&pc);

    /* permutation: gather even dims then odd, half-layout RoPE, scatter back == interleaved */
    float xi[8] = {1, 2, 3, 4, 5, 6, 7, 8}, xp[8];
    for (int j = 0; j < 4; j++) xp[j] = xi[2 * j], xp[j + 4] = xi[2 * j + 1];
    PosCtx ph;
    pos_init(&ph, "rope:layout=half", 8, 1, 1, 1, 16);
    pos_check_positions(&ph, &p, 1);
    ph.scheme->qk_forward(&ph, xp, &p, 1, 1, 0, 0);
    float back[8];
    for (int j = 0; j < 4; j++) back[2 * j] = xp[j], back[2 * j + 1] = xp[j + 4];
    CHECK(near_vec(back, i3, 8, 2e-6), "rope: permute -> half -> unpermute equals interleaved");
    pos_free(&ph);
}

static void learned_scatter(void) {
    /* section 1: batch 2, T=3, d_model=1: dP[0..2] = [11, 22, 33], dP[3..] = 0 */
    PosCtx pc;
    pos_init(&pc, "learned:max_len=5", 1, 1, 1, 1, 3);
    float dx[6] = {1, 2, 3, 10, 20, 30}, dP[5] = {0};
    int pos[6] = {0, 1, 2, 0, 1, 2};
    pc.scheme->input_backward(&pc, dx, pos, 6, dP);
    static const double want[5] = {11, 22, 33, 0, 0};
    CHECK(near_vec(dP, want, 5, 0), "learned scatter-add matches section 1");
    CHECK(pos_max_position(&pc) == 5, "learned max position = table size");
    int bad = 5;
    CHECK(pos_check_positions(&pc, &bad, 1) == -1, "learned rejects position 5 of a 5-row table");
    pos_free(&pc);
    CHECK(pos_init(&pc, "learned:max_len=0", 1, 1, 1, 1, 3) == -1 && strstr(pelab_errmsg, "max_len"),
          "learned max_len=0 rejected: %s", pelab_errmsg);
}

void test_pos_reference(void) {
    sinusoidal_vectors();
    rope_vectors();
    learned_scatter();
    char spec[256];
    PosCtx pc;
    pos_init(&pc, "rope:layout=half", 8, 1, 1, 1, 16);
    pos_spec(&pc, spec, sizeof spec);
    CHECK(strcmp(spec, "rope:base=10000,layout=half,fraction=1,scale=none,orig_len=16,keep=1,max_period=0") == 0, "canonical spec spells out defaults: %s", spec);
    pos_free(&pc);
}
