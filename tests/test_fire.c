/* test_fire.c: FIRE (model/pos/fire.c) through the PosScheme interface.
 *   1. bias_row against an independent double-precision re-implementation of the paper's
 *      reference code (its appendix), evaluated from the parameter values read out of
 *      "pos.weight" by the documented layout: rows below, at and past the threshold, i = j,
 *      a key after the query, rows longer than the 64-key block, both layers, every head;
 *      learn=mlp (c and L fixed, from the options) and layers=shared.
 *   2. bias_backward against central differences of bias_row, every parameter, the L
 *      multiplier both reached (threshold > i) and not.
 *   3. FIRE fits T5's, ALiBi's and KERPLE's biases (the paper's representation claim): Adam on
 *      the mean squared difference, targets from pelab's own schemes' bias_row.
 *   4. bad options refused in one line.
 * (The model-level checks, gradients through the whole model, KV cache, causality, canonical
 * spec: test_schemes.c, from the registry.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/sys.h"
#include "../model/pos/pos.h"
#include "test.h"

/* the paper's reference code in double, one (i, j, head) from one parameter set:
 *   threshold = |m * L|; normaliser = max(i, threshold)
 *   rel = ln(|c (i - j)| + 1); normaliser = ln(|c normaliser| + 1) + 1e-6
 *   bias = b2[h] + sum_k w2[h][k] relu(w1[k] rel / normaliser + b1[k]) */
static double ref_bias(const float *set, int W, int H, double c, double m, int L0, long i, long j, int h) {
    const float *w1 = set, *b1 = set + W, *w2 = set + 2 * W + (size_t)h * W, *b2 = set + 2 * W + (size_t)H * W;
    double threshold = fabs(m * L0), normaliser = (double)i > threshold ? (double)i : threshold;
    double rel = log(fabs(c * (double)(i - j)) + 1.0);
    double x = rel / (log(fabs(c * normaliser) + 1.0) + 1e-6);
    double out = b2[h];
    for (int k = 0; k < W; k++) out += w2[k] * fmax(0.0, w1[k] * x + b1[k]);
    return out;
}

typedef struct {
    PosCtx pc;
    float *params;
    int W, H, n_sets, per_set, learn_all;
} FireCase;

/* pos_init + init_params (seeded), on a shape of H heads, n_layers layers, training length L */
static int fire_case(FireCase *f, const char *spec, int H, int n_layers, int L, uint64_t seed) {
    memset(f, 0, sizeof *f);
    if (pos_init(&f->pc, spec, 4 * H, H, H, n_layers, L) != 0) return -1;
    int nd, shape[4];
    f->pc.scheme->param_shape(&f->pc, &nd, shape);
    f->n_sets = shape[0], f->per_set = shape[1], f->H = H;
    f->params = xcalloc(pos_n_params(&f->pc), sizeof(float));
    Rng rng;
    rng_seed(&rng, seed);
    f->pc.scheme->init_params(&f->pc, f->params, &rng);
    f->pc.params = f->params;
    /* width from the layout: per_set = W (2 + H) + H (+ 2) */
    f->learn_all = (f->per_set - H) % (2 + H) == 2;
    f->W = (f->per_set - H - (f->learn_all ? 2 : 0)) / (2 + H);
    return 0;
}

static void fire_case_free(FireCase *f) {
    pos_free(&f->pc);
    free(f->params);
}

/* 1. bias_row against ref_bias; c, m: the values the reference should use for set l (NAN: read
 * them from the set's last two entries) */
static void reference_rows(const char *spec, int n_layers, int L, double c_fixed, int L0, int set_c_m) {
    FireCase f;
    if (fire_case(&f, spec, 4, n_layers, L, 11) != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    CHECK(f.n_sets == (strstr(spec, "shared") ? 1 : n_layers), "%s: %d parameter sets", spec, f.n_sets);
    if (set_c_m) /* away from the initial 0.1 and 1: a threshold of 0.75 L, c < 0 acting as |c| */
        for (int l = 0; l < f.n_sets; l++) {
            float *set = f.params + (size_t)l * f.per_set;
            set[f.per_set - 2] = l ? 0.3f : -0.3f;
            set[f.per_set - 1] = l ? 0.75f : -0.75f;
        }
    /* query positions below, at and past the threshold, far past L; keys incl. j = i and j > i */
    static const long qs[] = {0, 1, 5, 11, 12, 13, 16, 40, 1000};
    enum { NK = 150 };
    int kpos[NK];
    float row[NK];
    double worst = 0;
    long worst_i = -1, worst_j = -1;
    for (int l = 0; l < n_layers; l++) {
        const float *set = f.params + (size_t)(f.n_sets > 1 ? l : 0) * f.per_set;
        double c = f.learn_all ? set[f.per_set - 2] : c_fixed, m = f.learn_all ? set[f.per_set - 1] : 1.0;
        for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
            long i = qs[qi];
            int nk = (int)(i + 2 < NK ? i + 2 : NK); /* keys 0 .. i (a long row: the last NK up to i), one after */
            for (int j = 0; j < nk - 1; j++) kpos[j] = (int)(i - (nk - 2) + j);
            kpos[nk - 1] = (int)i + 3;
            for (int h = 0; h < f.H; h++) {
                for (int j = 0; j < nk; j++) row[j] = 0.25f * (float)j; /* bias_row adds */
                f.pc.scheme->bias_row(&f.pc, row, (int)i, kpos, nk, h, l);
                for (int j = 0; j < nk; j++) {
                    double want = ref_bias(set, f.W, f.H, c, m, L0, i, kpos[j], h) + 0.25 * j;
                    double d = fabs(row[j] - want) / (1.0 + fabs(want));
                    if (d > worst) worst = d, worst_i = i, worst_j = kpos[j];
                }
            }
        }
    }
    CHECK(worst < 1e-5, "%s: bias_row equals the reference code (worst %.3g relative at i=%ld j=%ld)", spec, worst,
          worst_i, worst_j);
    fire_case_free(&f);
}

/* sum over rows, heads and layers of g . bias_row: the loss whose gradient bias_backward gives */
typedef struct {
    int n_rows;
    int qpos[6], nk[6];
    int kpos[6][80];
    float g[6][80];
} Probe;

static double probe_loss(const FireCase *f, const Probe *p, int n_layers) {
    double loss = 0;
    float row[80];
    for (int l = 0; l < n_layers; l++)
        for (int r = 0; r < p->n_rows; r++)
            for (int h = 0; h < f->H; h++) {
                memset(row, 0, sizeof row);
                f->pc.scheme->bias_row(&f->pc, row, p->qpos[r], p->kpos[r], p->nk[r], h, l);
                for (int j = 0; j < p->nk[r]; j++) loss += (double)p->g[r][j] * row[j];
            }
    return loss;
}

/* 2. central differences of every parameter (one-sided where a ReLU kink is within eps, as
 * gradcheck in test_model.c) */
static void gradient_rows(const char *spec, int n_layers, int L) {
    FireCase f;
    if (fire_case(&f, spec, 4, n_layers, L, 5) != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    if (f.learn_all) /* c below 0 (acts as |c|), a threshold of 0.75 L: rows on both sides */
        for (int l = 0; l < f.n_sets; l++) {
            float *set = f.params + (size_t)l * f.per_set;
            set[f.per_set - 2] = l ? 0.2f : -0.2f;
            set[f.per_set - 1] = l ? -0.75f : 0.75f;
        }
    Probe p = {.n_rows = 6, .qpos = {0, 3, 7, 14, 16, 70}};
    Rng rng;
    rng_seed(&rng, 99);
    for (int r = 0; r < p.n_rows; r++) {
        p.nk[r] = p.qpos[r] + 1 < 80 ? p.qpos[r] + 1 : 80;
        for (int j = 0; j < p.nk[r]; j++) p.kpos[r][j] = p.qpos[r] - p.nk[r] + 1 + j, p.g[r][j] = rng_normal(&rng);
    }
    size_t n = pos_n_params(&f.pc);
    float *analytic = xcalloc(n, sizeof(float));
    for (int l = 0; l < n_layers; l++)
        for (int r = 0; r < p.n_rows; r++)
            for (int h = 0; h < f.H; h++)
                f.pc.scheme->bias_backward(&f.pc, p.g[r], p.qpos[r], p.kpos[r], p.nk[r], h, l, analytic);
    const double eps = 1e-3;
    double base = probe_loss(&f, &p, n_layers), err2 = 0, num2 = 0, worst = 0;
    size_t worst_k = 0, n_zero_c_m = 0;
    for (size_t k = 0; k < n; k++) {
        float saved = f.params[k];
        f.params[k] = saved + (float)eps;
        double lp = probe_loss(&f, &p, n_layers);
        f.params[k] = saved - (float)eps;
        double lm = probe_loss(&f, &p, n_layers);
        f.params[k] = saved;
        double cands[3] = {(lp - lm) / (2 * eps), (lp - base) / eps, (base - lm) / eps};
        double a = analytic[k], d = fabs(a - cands[0]), numeric = cands[0];
        if (d > 2e-3 + 1e-2 * fabs(numeric))
            for (int e = 1; e < 3; e++)
                if (fabs(a - cands[e]) < d) d = fabs(a - cands[e]), numeric = cands[e];
        err2 += d * d, num2 += numeric * numeric;
        d /= 1.0 + fabs(numeric);
        if (d > worst) worst = d, worst_k = k;
        if (f.learn_all && (k % f.per_set) >= (size_t)f.per_set - 2 && fabs(a) < 1e-6) n_zero_c_m++;
    }
    CHECK(worst < 5e-3 && sqrt(err2) < 2e-3 * sqrt(num2) + 1e-4 * sqrt((double)n),
          "%s: bias_backward against central differences: worst element %zu (of a set of %d) off by %.3g, |err| "
          "%.3g vs |grad| %.3g",
          spec, worst_k, f.per_set, worst, sqrt(err2), sqrt(num2));
    CHECK(n_zero_c_m == 0, "%s: c and the L multiplier get a gradient (%zu zero)", spec, n_zero_c_m);
    free(analytic);
    fire_case_free(&f);
}

/* 3. fit FIRE to a target scheme's bias on every causal (i, j), i, j < 64, for each of 4 heads, one
 * layer, width 32. Targets: ALiBi's fixed slopes, KERPLE at its init (p ~ U(0,2), a ~ U(0,1)), and
 * T5 (32 buckets, max_distance 128) with a trained-like table: -0.1 (h + 1) per bucket plus 0.3 times
 * its N(0, 1/dim) init. (T5 at its bare random init, independent values per distance below 16, is a
 * memorisation task with discontinuities between adjacent distances; 32 ReLU units fitted by
 * Adam in this budget get only to ~0.9 of its std, so it is not asserted.)
 * Adam (lr 0.05 -> 0.005, cosine, 2000 steps) on the mean squared error with each head weighted
 * by 1/var(target_h), so every head counts whatever its scale (ALiBi's slopes span 64x); the
 * fit sees rows i = 7, 15, ..., 63 (every distance 0 .. 63: below the threshold the bias is a
 * function of i - j alone), the residual is measured on every causal pair. Returns the largest
 * over heads of rms(FIRE - target) / std(target). */
static double fit_to(const char *target_spec, double *seconds, double *initial) {
    enum { H = 4, LF = 64, STEPS = 2000 };
    const double LR0 = 0.05;
    double t0 = now_seconds();
    PosCtx tgt;
    if (pos_init(&tgt, target_spec, 64, H, H, 1, LF) != 0) return INFINITY;
    float *tparams = NULL;
    if (pos_n_params(&tgt)) {
        tparams = xcalloc(pos_n_params(&tgt), sizeof(float));
        Rng r;
        rng_seed(&r, 3);
        tgt.scheme->init_params(&tgt, tparams, &r);
        if (!strcmp(target_spec, "t5")) { /* a trained-like table: decaying with the bucket, plus noise */
            size_t nb = pos_n_params(&tgt) / H;
            for (size_t b = 0; b < nb; b++)
                for (int h = 0; h < H; h++) tparams[b * H + h] = -0.1f * (h + 1) * (float)b + 0.3f * tparams[b * H + h];
        }
        tgt.params = tparams;
    }
    /* targets: T[i][h][j] for j <= i */
    static float T[LF][H][LF];
    int kpos[LF];
    for (int j = 0; j < LF; j++) kpos[j] = j;
    double mean[H] = {0}, var[H] = {0};
    long n_pairs = LF * (LF + 1) / 2;
    for (int i = 0; i < LF; i++)
        for (int h = 0; h < H; h++) {
            memset(T[i][h], 0, sizeof T[i][h]);
            tgt.scheme->bias_row(&tgt, T[i][h], i, kpos, i + 1, h, 0);
            for (int j = 0; j <= i; j++) mean[h] += T[i][h][j] / (double)n_pairs;
        }
    for (int i = 0; i < LF; i++)
        for (int h = 0; h < H; h++)
            for (int j = 0; j <= i; j++) var[h] += pow(T[i][h][j] - mean[h], 2) / (double)n_pairs;
    pos_free(&tgt);
    free(tparams);

    FireCase f;
    if (fire_case(&f, "fire", H, 1, LF, 1) != 0) return INFINITY;
    size_t n = pos_n_params(&f.pc);
    float *grad = xcalloc(n, sizeof(float)), *m1 = xcalloc(n, sizeof(float)), *m2 = xcalloc(n, sizeof(float));
    float row[LF], drow[LF];
    double worst = 0;
    for (int step = 0; step <= STEPS; step++) {
        int final = step == STEPS;
        memset(grad, 0, n * sizeof(float));
        double worst_h = 0;
        for (int h = 0; h < H; h++) {
            double sse = 0, cnt = 0;
            for (int i = final || step == 0 ? 0 : 7; i < LF; i += final || step == 0 ? 1 : 8) {
                memset(row, 0, sizeof row);
                f.pc.scheme->bias_row(&f.pc, row, i, kpos, i + 1, h, 0);
                for (int j = 0; j <= i; j++) {
                    double r = row[j] - T[i][h][j];
                    sse += r * r, cnt++;
                    drow[j] = (float)(2.0 * r / var[h] / (8.0 * 36.0 * H)); /* d mean / d row, weighted */
                }
                if (!final && step) f.pc.scheme->bias_backward(&f.pc, drow, i, kpos, i + 1, h, 0, grad);
            }
            double rel = sqrt(sse / cnt / var[h]);
            if (rel > worst_h) worst_h = rel;
        }
        if (step == 0) *initial = worst_h;
        if (final) {
            worst = worst_h;
            break;
        }
        if (!step) continue;
        double lr = 0.1 * LR0 + 0.45 * LR0 * (1 + cos(M_PI * step / STEPS));
        double bc1 = 1 - pow(0.9, step), bc2 = 1 - pow(0.999, step);
        for (size_t k = 0; k < n; k++) {
            m1[k] = 0.9f * m1[k] + 0.1f * grad[k];
            m2[k] = 0.999f * m2[k] + 0.001f * grad[k] * grad[k];
            f.params[k] -= (float)(lr * (m1[k] / bc1) / (sqrt(m2[k] / bc2) + 1e-8));
        }
    }
    free(grad), free(m1), free(m2);
    fire_case_free(&f);
    *seconds = now_seconds() - t0;
    return worst;
}

static void fits(void) {
    static const struct {
        const char *spec;
        double limit;
    } targets[] = {{"t5", 0.10}, {"alibi", 0.03}, {"kerple", 0.05}};
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        double secs = 0, initial = 0, rel = fit_to(targets[t].spec, &secs, &initial);
        fprintf(stderr, "  FIRE fit to %-6s: residual rms / target std %.4f (worst head; %.3f before), %.2f s\n",
                targets[t].spec, rel, initial, secs);
        CHECK(rel < targets[t].limit && rel < 0.2 * initial, "FIRE fits %s: residual %.4f of the target's std (< %.2f)",
              targets[t].spec, rel, targets[t].limit);
    }
}

/* 4. refusals, one line each; the canonical spec */
static void options(void) {
    static const char *bad[][2] = {
        {"fire:width=0", "width=0"},   {"fire:c=-1", "c=-1"},         {"fire:c=0", "c=0"},
        {"fire:layers=foo", "foo"},    {"fire:learn=some", "some"},   {"fire:L=0", "L=0"},
        {"fire:width=32,nope=1", "nope"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PosCtx pc;
        pelab_errmsg[0] = 0;
        int rc = pos_init(&pc, bad[i][0], 16, 4, 4, 2, 8);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i][1]) && !strchr(pelab_errmsg, '\n'),
              "%s refused in one line naming %s: %s", bad[i][0], bad[i][1], pelab_errmsg);
        if (rc == 0) pos_free(&pc);
    }
    PosCtx pc;
    char spec[256] = "";
    if (pos_init(&pc, "fire:learn=mlp,c=0.25,layers=shared", 16, 4, 4, 2, 8) == 0) {
        pos_spec(&pc, spec, sizeof spec);
        CHECK(!strcmp(spec, "fire:width=32,c=0.25,L=8,layers=shared,learn=mlp") && pos_max_position(&pc) < 0 &&
                  pos_n_params(&pc) == 32 * 6 + 4,
              "fire canonical spec %s, unbounded, %zu parameters", spec, pos_n_params(&pc));
        pos_free(&pc);
    } else CHECK(0, "fire:learn=mlp: %s", pelab_errmsg);
}

void test_fire(void) {
    reference_rows("fire", 2, 16, 0, 16, 0);
    reference_rows("fire", 2, 16, 0, 16, 1); /* c < 0, threshold 0.75 L = 12 */
    reference_rows("fire:layers=shared,width=8,L=5", 2, 16, 0, 5, 1);
    reference_rows("fire:learn=mlp,c=0.25,L=5", 2, 16, 0.25, 5, 0);
    reference_rows("fire:learn=mlp,width=70", 1, 16, 0.1, 16, 0);
    gradient_rows("fire", 2, 20);
    gradient_rows("fire:layers=shared,width=8", 2, 20);
    gradient_rows("fire:learn=mlp", 1, 20);
    fits();
    options();
}
