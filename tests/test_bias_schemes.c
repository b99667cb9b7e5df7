/* test_bias_schemes.c: the score-bias schemes (ALiBi, T5, KERPLE) against the reference vectors
 * of docs/position-encodings.md (sections 3, 5, 9, and the numbers listed there),
 * driven through the PosScheme interface and the real attention kernel. (The shared checks,
 * gradients incl. pos.weight, KV cache and causality: test_schemes.c, from the registry.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../model/attention.h"
#include "../model/model.h"
#include "test.h"

static int close_rel(double got, double want, double rel) { return fabs(got - want) <= rel * fabs(want) + 1e-12; }

/* ALiBi slope of each head, read back through bias_row: the bias of distance 1 is -m */
static int alibi_slopes(int H, float *slopes) {
    PosCtx pc;
    if (pos_init(&pc, "alibi", 4 * H, H, H, 1, 8) != 0) return -1;
    int k0 = 0;
    for (int h = 0; h < H; h++) {
        float row = 0.0f;
        pc.scheme->bias_row(&pc, &row, 1, &k0, 1, h, 0);
        slopes[h] = -row;
    }
    pos_free(&pc);
    return 0;
}

/* probs of one head, 3 queries at positions 0..2 against 3 keys, zero content scores (q = 0) */
static void zero_content_probs(const PosCtx *pc, int head, float probs[9]) {
    enum { HD = 4 };
    float q[3 * HD] = {0}, k[3 * HD], v[3 * HD], out[3 * HD];
    int pos[3] = {0, 1, 2};
    for (int i = 0; i < 3 * HD; i++) k[i] = 0.3f * (float)(i % 5) - 0.5f, v[i] = (float)i;
    AttnHead a = {.q = q, .k = k, .v = v, .out = out, .probs = probs, .ldq = HD, .ldkv = HD, .qpos = pos,
                  .kpos = pos, .nq = 3, .nk = 3, .q_offset = 0, .hd = HD, .head = head, .layer = 0};
    attention_head_forward(&a, pc);
}

static void test_alibi(void) {
    /* docs/position-encodings.md section 5, "official" (7 significant digits where not a power of 2) */
    static const struct {
        int H;
        double m[16];
    } official[] = {
        {1, {0.00390625}},
        {2, {0.0625, 0.00390625}},
        {3, {0.0625, 0.00390625, 0.25}},
        {4, {0.25, 0.0625, 0.015625, 0.00390625}},
        {5, {0.25, 0.0625, 0.015625, 0.00390625, 0.5}},
        {6, {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}},
        {8, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625}},
        {12, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.7071068, 0.3535534, 0.1767767,
              0.08838835}},
        {16, {0.7071068, 0.5, 0.3535534, 0.25, 0.1767767, 0.125, 0.08838835, 0.0625, 0.04419417, 0.03125, 0.02209709,
              0.015625, 0.01104854, 0.0078125, 0.005524272, 0.00390625}},
    };
    for (size_t c = 0; c < sizeof official / sizeof official[0]; c++) {
        int H = official[c].H, bad = -1;
        float m[16];
        CHECK(alibi_slopes(H, m) == 0, "alibi H=%d: %s", H, pelab_errmsg);
        for (int h = 0; h < H; h++)
            if (!close_rel(m[h], official[c].m[h], 1e-6)) bad = h;
        CHECK(bad < 0, "alibi H=%d: slope of head %d is %.9g, expected %.9g", H, bad, bad < 0 ? 0 : m[bad],
              bad < 0 ? 0 : official[c].m[bad]);
    }
    /* the wrong variants of section 5 must not be what we produce */
    static const double wrong6[3][6] = {{0.3968503, 0.1574901, 0.0625, 0.02480314, 0.009843133, 0.00390625},
                                        {0.25, 0.0625, 0.015625, 0.00390625, 0.00390625, 0.00390625},
                                        {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625}};
    static const double wrong12[3][12] = {
        {0.6299605, 0.3968503, 0.25, 0.1574901, 0.09921257, 0.0625, 0.03937253, 0.02480314, 0.015625, 0.009843133,
         0.006200785, 0.00390625},
        {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.00390625, 0.00390625, 0.00390625,
         0.00390625},
        {0.7071068, 0.5, 0.3535534, 0.25, 0.1767767, 0.125, 0.08838835, 0.0625, 0.04419417, 0.03125, 0.02209709,
         0.015625}};
    float m6[6], m12[12];
    alibi_slopes(6, m6);
    alibi_slopes(12, m12);
    for (int w = 0; w < 3; w++) {
        double d6 = 0, d12 = 0;
        for (int h = 0; h < 6; h++) d6 = worse(d6, fabs(m6[h] - wrong6[w][h]));
        for (int h = 0; h < 12; h++) d12 = worse(d12, fabs(m12[h] - wrong12[w][h]));
        CHECK(d6 > 1e-3 && d12 > 1e-3, "alibi: slopes match wrong variant %d (naive / repeat-last / truncate)", w);
    }

    /* H=4 bias rows, query 4, keys 0..4, every head: -m * (i - j), exact in float */
    PosCtx pc;
    pos_init(&pc, "alibi", 16, 4, 4, 1, 8);
    int keys[5] = {0, 1, 2, 3, 4};
    const float m4[4] = {0.25f, 0.0625f, 0.015625f, 0.00390625f};
    for (int h = 0; h < 4; h++) {
        float row[5] = {0}, want[5];
        for (int j = 0; j < 5; j++) want[j] = -m4[h] * (float)(4 - j);
        pc.scheme->bias_row(&pc, row, 4, keys, 5, h, 1);
        CHECK(max_abs_diff(row, want, 5) == 0.0f,
              "alibi H=4 head %d row: [%g %g %g %g %g]", h, row[0], row[1], row[2], row[3], row[4]);
    }
    CHECK(pc.scheme->param_shape == NULL && pos_n_params(&pc) == 0, "alibi has no parameters");
    pos_free(&pc);

    /* slope 0.5 (head 0 of 8), zero content scores, query 2 */
    pos_init(&pc, "alibi", 32, 8, 8, 1, 8);
    float probs[9];
    zero_content_probs(&pc, 0, probs);
    const float want2[3] = {0.18632372f, 0.30719589f, 0.50648039f};
    CHECK(max_abs_diff(probs + 6, want2, 3) <= 1e-6f, "alibi slope 0.5 query 2 probs [%.8f %.8f %.8f]", probs[6],
          probs[7], probs[8]);

    /* the bias goes in after the 1/sqrt(d) scaling, unscaled: compare with a hand softmax */
    enum { HD = 16 };
    float q[HD], k[3 * HD], v[3 * HD], out[HD], p1[3];
    int pos[3] = {5, 7, 9}; /* explicit, non-contiguous ids: distances 4 and 2 */
    for (int i = 0; i < HD; i++) q[i] = 0.1f * (float)(i % 7) - 0.3f;
    for (int i = 0; i < 3 * HD; i++) k[i] = 0.05f * (float)(i % 11) - 0.2f, v[i] = 1.0f;
    AttnHead a = {.q = q, .k = k, .v = v, .out = out, .probs = p1, .ldq = HD, .ldkv = HD, .qpos = pos + 2,
                  .kpos = pos, .nq = 1, .nk = 3, .q_offset = 2, .hd = HD, .head = 1, .layer = 0};
    attention_head_forward(&a, &pc);
    double s[3], mx = -1e30, sum = 0;
    for (int j = 0; j < 3; j++) {
        double dot = 0;
        for (int i = 0; i < HD; i++) dot += (double)q[i] * k[j * HD + i];
        s[j] = dot / sqrt((double)HD) - 0.25 * (pos[2] - pos[j]); /* head 1 of 8: m = 1/4 */
        mx = worse(mx, s[j]);
    }
    for (int j = 0; j < 3; j++) sum += exp(s[j] - mx);
    int ok = 1;
    for (int j = 0; j < 3; j++) ok &= fabs(p1[j] - exp(s[j] - mx) / sum) <= 1e-6;
    CHECK(ok, "alibi: probs != softmax(q.k/sqrt(d) - m(i-j)): [%g %g %g]", p1[0], p1[1], p1[2]);
    pos_free(&pc);
}

/* T5 buckets of distances 0..n-1 read back through bias_row with w[b] = b (one head) */
static int t5_buckets(const char *spec, int n, int *buckets) {
    PosCtx pc;
    if (pos_init(&pc, spec, 8, 1, 1, 2, 8) != 0) return -1;
    size_t nw = pos_n_params(&pc);
    float *w = xmalloc(nw * sizeof(float)), *row = xcalloc((size_t)n, sizeof(float));
    int *kpos = xmalloc((size_t)n * sizeof(int));
    for (size_t b = 0; b < nw; b++) w[b] = (float)b;
    pc.params = w;
    for (int j = 0; j < n; j++) kpos[j] = n - 1 - j; /* distance j from a query at n - 1 */
    pc.scheme->bias_row(&pc, row, n - 1, kpos, n, 0, 1);
    for (int j = 0; j < n; j++) buckets[j] = (int)row[j];
    free(w), free(row), free(kpos);
    pos_free(&pc);
    return 0;
}

static void test_t5(void) {
    /* docs/position-encodings.md section 3: num_buckets 32, max_distance 128, d = 0..119; 31 after */
    static const int table[120] = {
        0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 16, 16, 17, 17, 18, 18, 18,
        19, 19, 19, 20, 20, 20, 20, 21, 21, 21, 21, 22, 22, 22, 22, 22, 23, 23, 23, 23, 23, 23, 24, 24,
        24, 24, 24, 24, 25, 25, 25, 25, 25, 25, 25, 26, 26, 26, 26, 26, 26, 26, 26, 27, 27, 27, 27, 27,
        27, 27, 27, 27, 27, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 29, 29, 29, 29, 29, 29, 29, 29, 29,
        29, 29, 29, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 31, 31, 31, 31, 31, 31, 31};
    enum { N = 1001 };
    int got[N], bad = -1;
    CHECK(t5_buckets("t5", N, got) == 0, "t5: %s", pelab_errmsg);
    for (int d = 0; d <= 200; d++)
        if (got[d] != (d < 120 ? table[d] : 31)) bad = d;
    CHECK(bad < 0, "t5 bucket of distance %d is %d, expected %d", bad, bad < 0 ? 0 : got[bad],
          bad < 0 ? 0 : (bad < 120 ? table[bad] : 31));
    /* bucket -> distance ranges (0..15 exact; 31 from 113 on, past max_distance too) */
    static const int first[32] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                                   16, 19, 21, 24, 27, 31, 35, 40, 46, 52, 59, 67, 77, 87, 99, 113};
    int lo[32], hi[32];
    for (int b = 0; b < 32; b++) lo[b] = N, hi[b] = -1;
    for (int d = 0; d < N; d++) lo[got[d]] = d < lo[got[d]] ? d : lo[got[d]], hi[got[d]] = d;
    int range_ok = 1;
    for (int b = 0; b < 32; b++) range_ok &= lo[b] == first[b] && hi[b] == (b < 31 ? first[b + 1] - 1 : N - 1);
    CHECK(range_ok, "t5 bucket ranges (16:[%d,%d] 30:[%d,%d] 31:[%d,%d])", lo[16], hi[16], lo[30], hi[30], lo[31],
          hi[31]);

    /* forward, zero content scores, w = {0: 0.5, 1: -0.2, 2: 0.1} (one head) */
    PosCtx pc;
    pos_init(&pc, "t5", 8, 1, 1, 2, 8);
    float w[32] = {0.5f, -0.2f, 0.1f};
    pc.params = w;
    float probs[9];
    zero_content_probs(&pc, 0, probs);
    const float want1[2] = {0.33181223f, 0.66818777f}, want2[3] = {0.3093444f, 0.22916797f, 0.46148762f};
    CHECK(max_abs_diff(probs + 3, want1, 2) <= 1e-6f && probs[5] == 0.0f, "t5 query 1 probs [%.8f %.8f %g]",
          probs[3], probs[4], probs[5]);
    CHECK(max_abs_diff(probs + 6, want2, 3) <= 1e-6f, "t5 query 2 probs [%.8f %.8f %.8f]", probs[6], probs[7],
          probs[8]);

    /* backward on a 3x3 causal example: dw[k] sums dS over the entries at distance k */
    float dS[3][3] = {{0.7f, 0, 0}, {-0.3f, 0.11f, 0}, {0.05f, 0.2f, -0.9f}}, dw[32] = {0};
    int pos[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++) pc.scheme->bias_backward(&pc, dS[i], i, pos, i + 1, 0, 0, dw);
    float want_dw[3] = {dS[0][0] + dS[1][1] + dS[2][2], dS[1][0] + dS[2][1], dS[2][0]};
    CHECK(max_abs_diff(dw, want_dw, 3) <= 1e-6f && dw[3] == 0.0f, "t5 dw = [%g %g %g], expected [%g %g %g]", dw[0],
          dw[1], dw[2], want_dw[0], want_dw[1], want_dw[2]);
    /* one table for every layer: layer 1 reads and accumulates into the same entries */
    for (int i = 0; i < 3; i++) pc.scheme->bias_backward(&pc, dS[i], i, pos, i + 1, 0, 1, dw);
    CHECK(fabsf(dw[1] - 2 * want_dw[1]) <= 1e-6f, "t5: layers share one table (dw[1] = %g)", dw[1]);
    char spec[128];
    pos_spec(&pc, spec, sizeof spec);
    CHECK(strcmp(spec, "t5:buckets=32,max_distance=128") == 0, "t5 default spec '%s'", spec);
    pos_free(&pc);

    /* init: N(0, 1/dim), shape [buckets, heads] */
    pos_init(&pc, "t5", 64, 8, 8, 2, 8);
    int nd, shape[4];
    pc.scheme->param_shape(&pc, &nd, shape);
    CHECK(nd == 2 && shape[0] == 32 && shape[1] == 8, "t5 param shape [%d, %d]", shape[0], shape[1]);
    float init[256];
    Rng rng;
    rng_seed(&rng, 3);
    pc.scheme->init_params(&pc, init, &rng);
    double var = 0;
    for (int i = 0; i < 256; i++) var += (double)init[i] * init[i] / 256;
    CHECK(fabs(sqrt(var) - 0.125) < 0.02, "t5 init std %.4f, expected 1/sqrt(64) = 0.125", sqrt(var));
    pos_free(&pc);

    /* options change the table: 8 buckets (4 exact), log-spaced up to 16 */
    static const int small[20] = {0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7};
    int got8[40];
    CHECK(t5_buckets("t5:buckets=8,max_distance=16", 40, got8) == 0, "t5:buckets=8: %s", pelab_errmsg);
    int small_ok = 1;
    for (int d = 0; d < 40; d++) small_ok &= got8[d] == (d < 20 ? small[d] : 7);
    CHECK(small_ok, "t5:buckets=8,max_distance=16 table (d=5..12: %d %d %d %d %d %d %d %d)", got8[5], got8[6],
          got8[7], got8[8], got8[9], got8[10], got8[11], got8[12]);
    pos_init(&pc, "t5:max_distance=64,buckets=16", 8, 2, 2, 1, 8);
    pos_spec(&pc, spec, sizeof spec);
    CHECK(strcmp(spec, "t5:buckets=16,max_distance=64") == 0 && pos_n_params(&pc) == 32, "t5 options spec '%s'",
          spec);
    pos_free(&pc);

    static const struct {
        const char *spec, *names;
    } bad_specs[] = {{"t5:buckets=1", "buckets=1"},          {"t5:buckets=eight", "buckets=eight"},
                     {"t5:max_distance=0", "max_distance=0"}, {"t5:buckets=32,max_distance=16", "max_distance=16"},
                     {"t5:bucket=8", "'bucket'"},             {"t5:max_distance=12.5", "max_distance=12.5"}};
    for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
        pelab_errmsg[0] = 0;
        int rc = pos_init(&pc, bad_specs[i].spec, 8, 1, 1, 1, 8);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad_specs[i].names), "%s rejected naming %s (got '%s')",
              bad_specs[i].spec, bad_specs[i].names, pelab_errmsg);
    }
}

/* sum_j drow[j] * B(j) for one head: the loss whose gradient bias_backward returns */
static double kerple_dot(const PosCtx *pc, const float *drow, int qpos, const int *kpos, int nk, int head, int layer) {
    float row[8] = {0};
    pc->scheme->bias_row(pc, row, qpos, kpos, nk, head, layer);
    double s = 0;
    for (int j = 0; j < nk; j++) s += (double)drow[j] * row[j];
    return s;
}

static void test_kerple(void) {
    /* two layers, two heads; layout [layer][p|a][head] */
    PosCtx pc;
    CHECK(pos_init(&pc, "kerple:layers=separate", 8, 2, 2, 2, 8) == 0, "kerple: %s", pelab_errmsg);
    int nd, shape[4];
    pc.scheme->param_shape(&pc, &nd, shape);
    CHECK(nd == 3 && shape[0] == 2 && shape[1] == 2 && shape[2] == 2, "kerple shape [n_layers, 2, n_heads]");
    float w[8] = {0.3f, 0.8f, 0.6f, 0.2f, /* layer 1: */ 1.5f, 0.9f, 0.5f, 0.05f};
    pc.params = w;
    /* by hand, p = 1.5, a = 0.5 (layer 1, head 0): B(D) = -1.5 ln(1 + D/2)
     * D=0: 0; D=1: -1.5 ln 1.5 = -0.60819766; D=2: -1.5 ln 2 = -1.03972077; D=3: -1.5 ln 2.5 = -1.37443610 */
    int kpos[4] = {3, 2, 1, 0};
    float row[4] = {0}, want[4] = {0.0f, -0.60819766f, -1.03972077f, -1.37443610f};
    pc.scheme->bias_row(&pc, row, 3, kpos, 4, 0, 1);
    CHECK(max_abs_diff(row, want, 4) <= 1e-6f, "kerple p=1.5 a=0.5 row [%.8f %.8f %.8f %.8f]", row[0], row[1], row[2],
          row[3]);
    /* layer 0 head 0 (p = 0.3, a = 0.6) is a different row: each layer has its own pair */
    float row0[4] = {0};
    pc.scheme->bias_row(&pc, row0, 3, kpos, 4, 0, 0);
    CHECK(fabsf(row0[3] - (float)(-0.3 * log(1 + 0.6 * 3))) <= 1e-6f, "kerple layer 0 row[3] = %g", row0[3]);

    /* backward = finite differences of sum_j drow[j] B(j), for p and a of every (layer, head) */
    const float drow[6] = {0.4f, -0.7f, 0.25f, 0.9f, -0.1f, 0.3f};
    int keys[6] = {0, 1, 2, 3, 4, 5};
    float dparams[8] = {0};
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++) pc.scheme->bias_backward(&pc, drow, 5, keys, 6, h, l, dparams);
    int worst = -1;
    double worst_err = 0;
    for (int i = 0; i < 8; i++) {
        int l = i / 4, h = i % 2;
        float saved = w[i], e = 1e-3f;
        w[i] = saved + e;
        double up = kerple_dot(&pc, drow, 5, keys, 6, h, l);
        w[i] = saved - e;
        double down = kerple_dot(&pc, drow, 5, keys, 6, h, l);
        w[i] = saved;
        double numeric = (up - down) / (2.0 * e), err = fabs(numeric - dparams[i]);
        if (err > 2e-3 * fmax(1.0, fabs(numeric)) && err > worst_err) worst = i, worst_err = err;
    }
    CHECK(worst < 0, "kerple backward: parameter %d off by %.3g from finite differences", worst, worst_err);

    /* the clamp: after_update projects onto >= 0.01; the forward never sees less either */
    float raw[8] = {-1.0f, 0.0f, 0.005f, 0.01f, 0.5f, 2.5f, NAN, 0.0100001f};
    pc.scheme->after_update(&pc, raw);
    const float clamped[8] = {0.01f, 0.01f, 0.01f, 0.01f, 0.5f, 2.5f, 0.01f, 0.0100001f};
    CHECK(memcmp(raw, clamped, sizeof raw) == 0, "kerple after_update: [%g %g %g %g %g %g %g %g]", raw[0], raw[1],
          raw[2], raw[3], raw[4], raw[5], raw[6], raw[7]);
    float neg[8] = {1.0f, 1.0f, -0.5f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f}, at_floor[8] = {1.0f, 1.0f, 0.01f, 0.5f};
    float rn[4] = {0}, rf[4] = {0}, dn[8] = {0};
    pc.params = neg;
    pc.scheme->bias_row(&pc, rn, 3, kpos, 4, 0, 0);
    pc.scheme->bias_backward(&pc, drow, 3, kpos, 4, 0, 0, dn);
    pc.params = at_floor;
    pc.scheme->bias_row(&pc, rf, 3, kpos, 4, 0, 0);
    CHECK(memcmp(rn, rf, sizeof rn) == 0 && dn[2] == 0.0f && dn[0] != 0.0f,
          "kerple: a = -0.5 acts as 0.01 with zero gradient (row[3] %g vs %g, da %g)", rn[3], rf[3], dn[2]);

    /* init: p ~ U(0,2), a ~ U(0,1), both inside the domain */
    float init[8];
    Rng rng;
    rng_seed(&rng, 11);
    pc.scheme->init_params(&pc, init, &rng);
    int init_ok = 1;
    for (int i = 0; i < 8; i++) init_ok &= init[i] >= 0.01f && init[i] < ((i % 4) < 2 ? 2.0f : 1.0f);
    CHECK(init_ok, "kerple init: p in [0.01, 2), a in [0.01, 1)");
    char spec[64];
    pos_spec(&pc, spec, sizeof spec);
    CHECK(strcmp(spec, "kerple:layers=separate") == 0, "kerple spec '%s'", spec);
    pos_free(&pc);

    /* layers=shared: one [2, H] block (the authors' code), used by every layer */
    CHECK(pos_init(&pc, "kerple:layers=shared", 8, 2, 2, 3, 8) == 0, "kerple:layers=shared: %s", pelab_errmsg);
    pc.scheme->param_shape(&pc, &nd, shape);
    CHECK(nd == 2 && shape[0] == 2 && shape[1] == 2 && pos_n_params(&pc) == 4, "kerple shared shape [2, n_heads]");
    pc.params = w;
    float r2[4] = {0};
    pc.scheme->bias_row(&pc, r2, 3, kpos, 4, 0, 2);
    CHECK(memcmp(r2, row0, sizeof r2) == 0, "kerple shared: layer 2 uses the layer-0 block");
    pos_free(&pc);
    pelab_errmsg[0] = 0;
    CHECK(pos_init(&pc, "kerple:layers=all", 8, 2, 2, 2, 8) == -1 && strstr(pelab_errmsg, "layers=all"),
          "kerple bad option rejected naming it: '%s'", pelab_errmsg);
    CHECK(pos_init(&pc, "kerple:p=1", 8, 2, 2, 2, 8) == -1 && strstr(pelab_errmsg, "'p'"),
          "kerple unknown option rejected: '%s'", pelab_errmsg);
}

/* kerple:layers=shared is kerple with every layer's block equal: same loss, and the shared gradient
 * is the sum of the per-layer gradients. Checked exactly on the tiny model (finite differences of the
 * shared variant are dominated by truncation error on some of tiny_model's random weights). */
static void kerple_shared_vs_separate(void) {
    Model sep, sh;
    tiny_model(&sep, "kerple:layers=separate", 2, 0, 21);
    tiny_model(&sh, "kerple:layers=shared", 2, 0, 21);
    for (int t = 0; t < N_PARAM_TENSORS; t++)
        if (t != T_POS)
            memcpy(sh.params_mem + sh.tensors[t].offset, sep.params_mem + sep.tensors[t].offset,
                   sep.tensors[t].numel * sizeof(float));
    const float block[8] = {0.7f, 1.2f, 0.05f, 1.9f, 0.3f, 0.9f, 0.6f, 0.02f}; /* p[4], a[4] */
    memcpy(sh.params.pos, block, sizeof block);
    for (int l = 0; l < 2; l++) memcpy(sep.params.pos + 8 * l, block, sizeof block);
    enum { B = 2, T = 7 };
    int in[B * T], tg[B * T], pos[B * T];
    for (int i = 0; i < B * T; i++) in[i] = (5 * i + 2) % 13, tg[i] = (3 * i + 1) % 13, pos[i] = i % T + 3 * (i / T);
    Model *ms[2] = {&sep, &sh};
    for (int k = 0; k < 2; k++) {
        model_alloc_train(ms[k], B, T);
        model_zero_grad(ms[k]);
        model_forward(ms[k], in, tg, pos, B, T);
        model_backward(ms[k]);
    }
    float sum[8];
    for (int i = 0; i < 8; i++) sum[i] = sep.grads.pos[i] + sep.grads.pos[8 + i];
    CHECK(fabsf(sep.mean_loss - sh.mean_loss) <= 1e-6f && max_abs_diff(sum, sh.grads.pos, 8) <= 1e-5f,
          "kerple shared: loss %g vs %g, gradient off by %g from the sum over layers", sh.mean_loss, sep.mean_loss,
          max_abs_diff(sum, sh.grads.pos, 8));
    model_free(&sep);
    model_free(&sh);
}

void test_bias_schemes(void) {
    test_alibi();
    test_t5();
    test_kerple();
    kerple_shared_vs_separate();
}
