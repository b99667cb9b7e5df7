/* test_pope.c: Polar Coordinate Position Embeddings (model/pos/pope.c). One layer's attention
 * weights against the paper's score computed here in double from the raw projections,
 *     a_ts = sum_c softplus(q_t,c) softplus(k_s,c) cos((s - t) theta_c + delta_c) / sqrt(hd),
 * with random phase biases delta and grouped-query heads; the score depends on content only through
 * the magnitudes (a query's sign pattern moves no phase); the modifiers it refuses. (Gradients of
 * pos.weight and every tensor, KV cache, causality, permutation: the shared scheme checks,
 * test_schemes.c; a checkpoint round trip: test_checkpoint.c; under an extension method:
 * test_extend.c.) */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../model/model.h"
#include "test.h"

static double softplus_d(double x) { return x > 30 ? x : log1p(exp(x)); }

static void reference_weights(void) {
    enum { T = 10 };
    Model m;
    if (tiny_model_shaped(&m, "pope:base=100", 4, 2, 1, 1, 19) != 0) {
        CHECK(0, "pope: %s", pelab_errmsg);
        return;
    }
    int D = m.cfg.dim, H = m.cfg.n_heads, KVH = m.cfg.n_kv_heads, hd = m.head_dim, d = hd / 2, in[T], pos[T];
    for (size_t i = 0; i < (size_t)H * d; i++) m.params.pos[i] = (float)(0.7 * sin(3.0 * i)); /* delta */
    for (int i = 0; i < T; i++) in[i] = (i * 5 + 2) % m.cfg.vocab_size, pos[i] = i;
    model_keep_attention(&m, 1);
    model_alloc_train(&m, 1, T);
    int rc = model_forward(&m, in, NULL, pos, 1, T);
    double q[T][64], k[T][64];
    for (int t = 0; t < T; t++) {
        const float *x = m.params.tok_emb + (size_t)in[t] * D;
        double ms = 0, ln[64];
        for (int e = 0; e < D; e++) ms += (double)x[e] * x[e];
        double rstd = 1.0 / sqrt(ms / D + m.cfg.norm_eps);
        for (int e = 0; e < D; e++) ln[e] = x[e] * rstd * m.params.attn_norm[e];
        for (int o = 0; o < H * hd; o++) {
            q[t][o] = 0;
            for (int e = 0; e < D; e++) q[t][o] += m.params.wq[(size_t)o * D + e] * ln[e];
        }
        for (int o = 0; o < KVH * hd; o++) {
            k[t][o] = 0;
            for (int e = 0; e < D; e++) k[t][o] += m.params.wk[(size_t)o * D + e] * ln[e];
        }
    }
    double worst = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++) {
            double row[T], mx = -1e300, sum = 0;
            for (int j = 0; j <= i; j++) {
                double s = 0;
                for (int c = 0; c < d; c++) { /* component c: the first dim of pair c */
                    double theta = pow(100.0, -2.0 * c / hd), delta = m.params.pos[h * d + c];
                    s += softplus_d(q[i][h * hd + 2 * c]) * softplus_d(k[j][(h / (H / KVH)) * hd + 2 * c]) *
                         cos((j - i) * theta + delta);
                }
                row[j] = s / sqrt((double)hd);
                mx = row[j] > mx ? row[j] : mx;
            }
            for (int j = 0; j <= i; j++) sum += row[j] = exp(row[j] - mx);
            const float *got = m.acts.att_probs + ((size_t)h * T + i) * T;
            for (int j = 0; j < T; j++) worst = worse(worst, fabs(got[j] - (j <= i ? row[j] / sum : 0)));
        }
    CHECK(rc == 0 && worst < 2e-5, "pope: attention weights = the paper's score in double (max |diff| %.3g)", worst);
    model_free(&m);
}

/* the map itself: magnitude softplus(x), phase the position alone (a negative x moves no phase) */
static void polar_map(void) {
    PosCtx pc;
    if (pos_init(&pc, "pope", 8, 2, 2, 1, 8) != 0) {
        CHECK(0, "pope: %s", pelab_errmsg);
        return;
    }
    float delta[2 * 2] = {0}, v[8] = {1.5f, 9.0f, -2.0f, -7.0f, 0.0f, 1.0f, -0.5f, 3.0f};
    pc.params = delta;
    int p = 5, bad = 0;
    pc.scheme->qk_forward(&pc, v, &p, 1, 2, 1, 0);
    const float x[4] = {1.5f, -2.0f, 0.0f, -0.5f};
    for (int c = 0; c < 4; c++) {
        double mu = softplus_d(x[c]), th = 5.0 * pow(10000.0, -2.0 * (c % 2) / 4);
        bad += fabs(v[2 * c] - mu * cos(th)) > 1e-6 || fabs(v[2 * c + 1] - mu * sin(th)) > 1e-6;
    }
    CHECK(!bad, "pope map: (softplus(x) cos(p theta), softplus(x) sin(p theta)) per pair (%d wrong)", bad);
    pos_free(&pc);
    static const char *refused[][2] = {{"pope+logn", "+logn on pope"}, {"pope+ssmax", "+ssmax on pope"},
                                       {"pope+temp", "+temp on pope"}};
    for (int i = 0; i < 3; i++)
        CHECK(pos_init(&pc, refused[i][0], 16, 4, 2, 2, 8) == -1 && strstr(pelab_errmsg, refused[i][1]),
              "%s refused: %s", refused[i][0], pelab_errmsg);
}

void test_pope(void) {
    reference_weights();
    polar_map();
}
