/* test_cope.c: CoPE (model/pos/cope.c) against the paper's formulas, written here a second time
 * in double precision from arXiv 2405.18719 section 3 and the authors' module (gates on the scaled
 * scores, suffix sums, cap at npos - 1, linear interpolation between q.e[floor p] and q.e[ceil p]),
 * for one attention head over whole rows; gradients of q, k, v and e by central differences of
 * that double forward (not of pelab's), so the hand-written backward is checked against the
 * formula itself. Also: a vector worked by hand, blocks of 64 crossed, grouped-query heads, the
 * cap, left padding, a decoding chunk, and refusals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../model/attention.h"
#include "test.h"

enum { H = 2, HD = 4 };

typedef struct {
    int nq, nk, q_offset, kvh, kstart, npos, separate;
    double *q, *k, *v, *e, *w; /* w: the weights of the loss sum(out * w) */
} Cope;

/* the CoPE logit of query i against its visible keys ks..nv-1 into t[] (double) */
static void cope_terms(const Cope *c, const double *qi, const double *e, const double *s, int ks, int nv, double *t) {
    double acc = 0;
    for (int j = nv - 1; j >= ks; j--) {
        acc += 1.0 / (1.0 + exp(-s[j]));
        double p = fmin(acc, c->npos - 1.0), fl = floor(p), ce = ceil(p), zf = 0, zc = 0;
        for (int d = 0; d < HD; d++) zf += qi[d] * e[(int)fl * HD + d], zc += qi[d] * e[(int)ce * HD + d];
        t[j] = zc * (p - fl) + zf * (1.0 - (p - fl));
    }
}

/* sum(out * w) of the whole attention, in double */
static double loss(const Cope *c, double *out) {
    int kvd = c->kvh * HD, qd = H * HD;
    double total = 0, *s = xmalloc(sizeof(double) * c->nk), *t = xmalloc(sizeof(double) * c->nk);
    for (int h = 0; h < H; h++) {
        int kh = h / (H / c->kvh);
        const double *e = c->e + (c->separate ? (size_t)h * c->npos * HD : 0);
        for (int i = 0; i < c->nq; i++) {
            int nv = c->q_offset + i + 1 < c->nk ? c->q_offset + i + 1 : c->nk, ks = c->kstart;
            const double *qi = c->q + (size_t)i * qd + h * HD;
            if (nv <= ks) continue;
            for (int j = ks; j < nv; j++) {
                s[j] = 0;
                for (int d = 0; d < HD; d++) s[j] += qi[d] * c->k[(size_t)j * kvd + kh * HD + d];
                s[j] /= sqrt((double)HD);
            }
            cope_terms(c, qi, e, s, ks, nv, t);
            double mx = -1e300, sum = 0;
            for (int j = ks; j < nv; j++) mx = worse(mx, s[j] + t[j]);
            for (int j = ks; j < nv; j++) sum += exp(s[j] + t[j] - mx);
            for (int d = 0; d < HD; d++) {
                double o = 0;
                for (int j = ks; j < nv; j++) o += exp(s[j] + t[j] - mx) / sum * c->v[(size_t)j * kvd + kh * HD + d];
                if (out) out[(size_t)i * qd + h * HD + d] = o;
                total += o * c->w[(size_t)i * qd + h * HD + d];
            }
        }
    }
    free(s), free(t);
    return total;
}

static double *rand_d(Rng *rng, size_t n, double s) {
    double *x = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) x[i] = s * rng_normal(rng);
    return x;
}

static float *to_f(const double *x, size_t n) {
    float *y = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
    return y;
}

/* round the case's numbers to float, so the double reference sees pelab's inputs exactly */
static void round_to_float(double *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = (float)x[i];
}

/* d loss / d x[i] by central differences of the double forward, against got (float) */
static double fd_error(Cope *c, double *x, size_t n, const float *got) {
    double worst = 0, scale = 1e-3;
    for (size_t i = 0; i < n; i++) {
        double saved = x[i], eps = 1e-5;
        x[i] = saved + eps;
        double lp = loss(c, NULL);
        x[i] = saved - eps;
        double lm = loss(c, NULL);
        x[i] = saved;
        double num = (lp - lm) / (2 * eps);
        scale = worse(scale, fabs(num));
        worst = worse(worst, fabs(num - got[i]));
    }
    return worst / scale;
}

static void check_case(int nq, int nk, int q_offset, int kvh, int kstart, int npos, int separate, int backward) {
    char spec[64];
    snprintf(spec, sizeof spec, "cope:npos=%d,heads=%s", npos, separate ? "separate" : "shared");
    PosCtx pc;
    if (pos_init(&pc, spec, H * HD, H, kvh, 1, nk) != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    Rng rng;
    rng_seed(&rng, 5u + (unsigned)nq + (unsigned)npos);
    int qd = H * HD, kvd = kvh * HD;
    size_t nqe = (size_t)nq * qd, nke = (size_t)nk * kvd, ne = pos_n_params(&pc);
    Cope c = {nq, nk, q_offset, kvh, kstart, npos, separate, rand_d(&rng, nqe, 1.0), rand_d(&rng, nke, 1.0),
              rand_d(&rng, nke, 1.0), rand_d(&rng, ne, 0.5), rand_d(&rng, nqe, 1.0)};
    round_to_float(c.q, nqe), round_to_float(c.k, nke), round_to_float(c.v, nke), round_to_float(c.e, ne);
    float *q = to_f(c.q, nqe), *k = to_f(c.k, nke), *v = to_f(c.v, nke), *e = to_f(c.e, ne), *w = to_f(c.w, nqe);
    pc.params = e;
    int *qpos = xmalloc(sizeof(int) * nq), *kpos = xmalloc(sizeof(int) * nk);
    for (int j = 0; j < nk; j++) kpos[j] = 3 * j + 1; /* CoPE reads no position id: any will do */
    for (int i = 0; i < nq; i++) qpos[i] = kpos[q_offset + i < nk ? q_offset + i : nk - 1];
    float *out = xcalloc(nqe, sizeof(float)), *stats = xmalloc(sizeof(float) * H * nq * 2);
    double *out_ref = xcalloc(nqe, sizeof(double));
    loss(&c, out_ref);
    Attention a = {.q = q, .k = k, .v = v, .out = out, .stats = stats, .qpos = qpos, .kpos = kpos, .n_seq = 1, .nq = nq,
                   .nk = nk, .q_offset = q_offset, .kstart = &kstart, .n_heads = H, .n_kv_heads = kvh, .head_dim = HD};
    attention_forward(&a, &pc);
    double worst = 0;
    for (size_t i = 0; i < nqe; i++) worst = worse(worst, fabs(out[i] - out_ref[i]));
    CHECK(worst < 2e-5, "%s nq %d nk %d offset %d kvh %d pad %d: forward off the formula by %.2e", spec, nq, nk, q_offset,
          kvh, kstart, worst);
    if (backward) {
        float *dq = xmalloc(nqe * sizeof(float)), *dk = xmalloc(nke * sizeof(float)), *dv = xmalloc(nke * sizeof(float));
        float *de = xcalloc(ne, sizeof(float));
        attention_backward(&a, w, dq, dk, dv, de, &pc);
        double eq = fd_error(&c, c.q, nqe, dq), ek = fd_error(&c, c.k, nke, dk), ev = fd_error(&c, c.v, nke, dv);
        double ee = fd_error(&c, c.e, ne, de);
        CHECK(eq < 1e-3 && ek < 1e-3 && ev < 1e-3 && ee < 1e-3,
              "%s nq %d kvh %d pad %d: gradients against central differences of the formula: q %.2e k %.2e v %.2e e %.2e",
              spec, nq, kvh, kstart, eq, ek, ev, ee);
        free(dq), free(dk), free(dv), free(de);
    }
    free(q), free(k), free(v), free(e), free(w), free(out), free(stats), free(out_ref), free(qpos), free(kpos);
    free(c.q), free(c.k), free(c.v), free(c.e), free(c.w);
    pos_free(&pc);
}

/* One query at head_dim 2 against three keys with zero scores: every gate is 1/2, so the keys
 * from newest to oldest sit at p = 0.5, 1, 1.5. With q = (1, 2) and e[0] = (1, 0), e[1] = (0, 1),
 * e[2] = (1, 1): z = (1, 2, 3), and the terms are 1.5, 2, 2.5 (oldest first: 2.5, 2, 1.5). With
 * npos = 2 the cap holds p at 1: 2, 2, 1.5. */
static void by_hand(void) {
    for (int cap = 0; cap < 2; cap++) {
        PosCtx pc;
        const char *spec = cap ? "cope:npos=2" : "cope:npos=3";
        if (pos_init(&pc, spec, 2, 1, 1, 1, 3) != 0) {
            CHECK(0, "%s: %s", spec, pelab_errmsg);
            continue;
        }
        float e[] = {1, 0, 0, 1, 1, 1}, q[] = {1, 2}, row[] = {0, 0, 0};
        pc.params = e;
        pc.scheme->content_row(&pc, row, q, 3, 0, 0);
        float want[2][3] = {{2.5f, 2.0f, 1.5f}, {2.0f, 2.0f, 1.5f}};
        CHECK(fabsf(row[0] - want[cap][0]) < 1e-6f && fabsf(row[1] - want[cap][1]) < 1e-6f &&
                  fabsf(row[2] - want[cap][2]) < 1e-6f,
              "%s by hand: terms %g %g %g, want %g %g %g", spec, row[0], row[1], row[2], want[cap][0], want[cap][1],
              want[cap][2]);
        pos_free(&pc);
    }
}

static void refusals(void) {
    static const char *bad[][2] = {
        {"cope:npos=1", "npos=1"}, {"cope:npos=5000", "npos=5000"}, {"cope:heads=all", "heads=all"},
        {"cope:base=10", "unknown option 'base'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PosCtx pc;
        pelab_errmsg[0] = 0;
        CHECK(pos_init(&pc, bad[i][0], 8, 2, 2, 1, 8) == -1 && strstr(pelab_errmsg, bad[i][1]) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s refused in one line naming %s: %s", bad[i][0], bad[i][1], pelab_errmsg);
    }
}

void test_cope(void) {
    by_hand();
    check_case(12, 12, 0, 2, 0, 16, 0, 1);     /* no cap */
    check_case(12, 12, 0, 1, 0, 4, 1, 1);      /* the cap, GQA, a table per head */
    check_case(70, 70, 0, 2, 0, 80, 0, 1);     /* two query blocks */
    check_case(10, 10, 0, 2, 3, 8, 1, 1);      /* left padding */
    check_case(5, 40, 35, 1, 0, 50, 0, 0);     /* a decoding chunk after 35 cached keys */
    refusals();
}
