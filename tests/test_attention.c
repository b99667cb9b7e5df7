/* test_attention.c: the blocked attention (linear memory: query blocks of ATT_QBLOCK, scores
 * recomputed in the backward from each row's max and 1/sum) against a plain double-precision
 * implementation of the whole score matrix, with lengths that span several blocks and end in a
 * partial one, grouped-query heads, two sequences, explicit non-contiguous positions, a query
 * offset (a decoding chunk), and score-bias schemes with learned parameters (their gradient). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mem.h"
#include "../core/rng.h"
#include "../model/attention.h"
#include "test.h"

enum { H = 4, KVH = 2, HD = 8, NSEQ = 2 };

typedef struct {
    int nq, nk, q_offset;
    int kstart[NSEQ]; /* left padding: sequence b's keys before kstart[b] are never attended */
    float *q, *k, *v, *dout;
    int *qpos, *kpos;
} Case;

static float *randn(Rng *rng, size_t n, float s) {
    float *x = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = s * rng_normal(rng);
    return x;
}

static Case make_case(int nq, int nk, int q_offset, unsigned seed) {
    Rng rng;
    rng_seed(&rng, seed);
    Case c = {nq, nk, q_offset, {0, 0}, randn(&rng, (size_t)NSEQ * nq * H * HD, 1.0f), randn(&rng, (size_t)NSEQ * nk * KVH * HD, 1.0f),
              randn(&rng, (size_t)NSEQ * nk * KVH * HD, 1.0f), randn(&rng, (size_t)NSEQ * nq * H * HD, 1.0f),
              xmalloc(sizeof(int) * NSEQ * nq), xmalloc(sizeof(int) * NSEQ * nk)};
    /* sorted ids with gaps, different per sequence; query i is key q_offset + i */
    for (int b = 0; b < NSEQ; b++) {
        int p = b;
        for (int j = 0; j < nk; j++) c.kpos[b * nk + j] = p, p += 1 + (j % 3 == 0);
        for (int i = 0; i < nq; i++) c.qpos[b * nq + i] = c.kpos[b * nk + (q_offset + i < nk ? q_offset + i : nk - 1)];
    }
    return c;
}

static void free_case(Case *c) {
    free(c->q), free(c->k), free(c->v), free(c->dout), free(c->qpos), free(c->kpos);
}

static Attention view(const Case *c, float *out, float *probs, float *stats) {
    return (Attention){.q = c->q, .k = c->k, .v = c->v, .out = out, .probs = probs, .stats = stats, .qpos = c->qpos,
                       .kpos = c->kpos, .n_seq = NSEQ, .nq = c->nq, .nk = c->nk, .q_offset = c->q_offset,
                       .kstart = c->kstart,
                       .n_heads = H, .n_kv_heads = KVH, .head_dim = HD, .layer = 0};
}

/* the whole score matrix in double: out, and the gradients of sum(out * dout) */
static void reference(const Case *c, const PosCtx *pc, double *out, double *dq, double *dk, double *dv,
                      float *dpos) {
    int nq = c->nq, nk = c->nk, qd = H * HD, kvd = KVH * HD;
    double scale = 1.0 / sqrt((double)HD);
    double *P = xmalloc(sizeof(double) * nk), *dS = xmalloc(sizeof(double) * nk);
    float *bias = xmalloc(sizeof(float) * nk), *dSf = xmalloc(sizeof(float) * nk);
    memset(dk, 0, sizeof(double) * NSEQ * nk * kvd);
    memset(dv, 0, sizeof(double) * NSEQ * nk * kvd);
    for (int b = 0; b < NSEQ; b++)
        for (int h = 0; h < H; h++) {
            int kh = h / (H / KVH);
            for (int i = 0; i < nq; i++) {
                int nv = c->q_offset + i + 1 < nk ? c->q_offset + i + 1 : nk, ks = c->kstart[b];
                double *o = out + ((size_t)b * nq + i) * qd + h * HD, *dqi = dq + ((size_t)b * nq + i) * qd + h * HD;
                memset(o, 0, sizeof(double) * HD);
                memset(dqi, 0, sizeof(double) * HD);
                if (nv <= ks) continue; /* a padding query: output zero, no gradient */
                const float *qi = c->q + ((size_t)b * nq + i) * qd + h * HD;
                const float *doi = c->dout + ((size_t)b * nq + i) * qd + h * HD;
                memset(bias, 0, sizeof(float) * nk);
                if (pc && pc->scheme->bias_row)
                    pc->scheme->bias_row(pc, bias + ks, c->qpos[b * nq + i], c->kpos + b * nk + ks, nv - ks, h, 0);
                double mx = -1e300, sum = 0, dot = 0;
                for (int j = ks; j < nv; j++) {
                    const float *kj = c->k + ((size_t)b * nk + j) * kvd + kh * HD;
                    double s = 0;
                    for (int d = 0; d < HD; d++) s += (double)qi[d] * kj[d];
                    P[j] = s * scale + bias[j];
                    mx = worse(mx, P[j]);
                }
                for (int j = ks; j < nv; j++) sum += (P[j] = exp(P[j] - mx));
                for (int j = ks; j < nv; j++) {
                    P[j] /= sum;
                    const float *vj = c->v + ((size_t)b * nk + j) * kvd + kh * HD;
                    double dp = 0;
                    for (int d = 0; d < HD; d++) o[d] += P[j] * vj[d], dp += (double)doi[d] * vj[d];
                    dS[j] = dp;
                    dot += P[j] * dp;
                }
                for (int j = ks; j < nv; j++) {
                    dS[j] = P[j] * (dS[j] - dot);
                    dSf[j] = (float)dS[j];
                    const float *kj = c->k + ((size_t)b * nk + j) * kvd + kh * HD;
                    double *dkj = dk + ((size_t)b * nk + j) * kvd + kh * HD, *dvj = dv + ((size_t)b * nk + j) * kvd + kh * HD;
                    for (int d = 0; d < HD; d++) {
                        dqi[d] += scale * dS[j] * kj[d];
                        dkj[d] += scale * dS[j] * qi[d];
                        dvj[d] += P[j] * doi[d];
                    }
                }
                if (dpos)
                    pc->scheme->bias_backward(pc, dSf + ks, c->qpos[b * nq + i], c->kpos + b * nk + ks, nv - ks, h, 0,
                                              dpos);
            }
        }
    free(P), free(dS), free(bias), free(dSf);
}

/* max |got - want| / max(1, max |want|) */
static double rel_err(const float *got, const double *want, size_t n) {
    double worst = 0, scale = 1;
    for (size_t i = 0; i < n; i++) scale = worse(scale, fabs(want[i]));
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        if (!(d <= worst)) worst = d;
    }
    return worst / scale;
}

static void check_case(const char *spec, int nq, int nk, int q_offset, int backward, int pad) {
    PosCtx pc;
    if (pos_init(&pc, spec, H * HD, H, KVH, 1, nk) != 0) {
        CHECK(0, "attention %s: pos_init failed", spec);
        return;
    }
    Case c = make_case(nq, nk, q_offset, 7u + (unsigned)nq);
    c.kstart[1] = pad; /* the second sequence left-padded: its first `pad` keys are padding */
    size_t n_pos = pos_n_params(&pc);
    float *params = NULL;
    if (n_pos) {
        Rng rng;
        rng_seed(&rng, 11);
        params = xmalloc(n_pos * sizeof(float));
        pc.scheme->init_params(&pc, params, &rng);
        for (size_t i = 0; i < n_pos; i++) params[i] += 0.3f * rng_normal(&rng); /* not the init's symmetry */
        pc.params = params;
    }
    long max_pos = c.kpos[NSEQ * nk - 1] + 1;
    if (pc.scheme->reserve) pc.scheme->reserve(&pc, max_pos);
    size_t nout = (size_t)NSEQ * nq * H * HD, nkv = (size_t)NSEQ * nk * KVH * HD;
    double *out_ref = xmalloc(nout * sizeof(double)), *dq_ref = xmalloc(nout * sizeof(double));
    double *dk_ref = xmalloc(nkv * sizeof(double)), *dv_ref = xmalloc(nkv * sizeof(double));
    float *dpos_ref = n_pos ? xcalloc(n_pos, sizeof(float)) : NULL, *dpos = n_pos ? xcalloc(n_pos, sizeof(float)) : NULL;
    reference(&c, &pc, out_ref, dq_ref, dk_ref, dv_ref, dpos_ref);

    float *out = xmalloc(nout * sizeof(float)), *out_kept = xmalloc(nout * sizeof(float));
    float *stats = xmalloc((size_t)NSEQ * H * nq * 2 * sizeof(float));
    float *probs = xmalloc((size_t)NSEQ * H * nq * nk * sizeof(float));
    Attention a = view(&c, out, NULL, stats);
    attention_forward(&a, &pc);
    CHECK(rel_err(out, out_ref, nout) < 2e-6, "attention %s nq %d nk %d offset %d: forward differs from the reference by %.2e",
          spec, nq, nk, q_offset, rel_err(out, out_ref, nout));
    Attention kept = view(&c, out_kept, probs, NULL);
    attention_forward(&kept, &pc);
    CHECK(memcmp(out, out_kept, nout * sizeof(float)) == 0,
          "attention %s nq %d: keeping the softmax rows changed the output", spec, nq);
    long future = 0;
    for (int bh = 0; bh < NSEQ * H; bh++)
        for (int i = 0; i < nq; i++)
            for (int j = 0; j < nk; j++)
                if (j > q_offset + i || j < c.kstart[bh / H]) future += probs[((size_t)bh * nq + i) * nk + j] != 0.0f;
    CHECK(future == 0, "attention %s nq %d pad %d: %ld kept weights past the causal limit or on padding are not 0", spec,
          nq, pad, future);

    if (backward) {
        float *dq = xmalloc(nout * sizeof(float)), *dk = xmalloc(nkv * sizeof(float)), *dv = xmalloc(nkv * sizeof(float));
        /* garbage in: the backward must overwrite dq, dk, dv */
        for (size_t i = 0; i < nout; i++) dq[i] = 1e3f;
        for (size_t i = 0; i < nkv; i++) dk[i] = dv[i] = -1e3f;
        attention_backward(&a, c.dout, dq, dk, dv, dpos, &pc);
        CHECK(rel_err(dq, dq_ref, nout) < 2e-5, "attention %s nq %d: dq off by %.2e", spec, nq, rel_err(dq, dq_ref, nout));
        CHECK(rel_err(dk, dk_ref, nkv) < 2e-5, "attention %s nq %d: dk off by %.2e", spec, nq, rel_err(dk, dk_ref, nkv));
        CHECK(rel_err(dv, dv_ref, nkv) < 2e-5, "attention %s nq %d: dv off by %.2e", spec, nq, rel_err(dv, dv_ref, nkv));
        if (n_pos) {
            double worst = 0, scale = 1;
            for (size_t i = 0; i < n_pos; i++) scale = worse(scale, fabsf(dpos_ref[i]));
            for (size_t i = 0; i < n_pos; i++) worst = worse(worst, fabsf(dpos[i] - dpos_ref[i]));
            CHECK(worst / scale < 1e-4, "attention %s nq %d: bias parameter gradient off by %.2e", spec, nq, worst / scale);
        }
        free(dq), free(dk), free(dv);
    }
    free(out), free(out_kept), free(stats), free(probs), free(out_ref), free(dq_ref), free(dk_ref), free(dv_ref);
    free(dpos_ref), free(dpos), free(params);
    free_case(&c);
    pos_free(&pc);
}

void test_attention(void) {
    static const char *specs[] = {"nope", "alibi", "t5", "kerple:layers=shared"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        check_case(specs[s], 150, 150, 0, 1, 0);            /* training: blocks 64 + 64 + 22 */
        check_case(specs[s], ATT_QBLOCK, ATT_QBLOCK, 0, 1, 0); /* exactly one full block */
        check_case(specs[s], 70, 150, 80, 0, 0);            /* a decoding chunk after 80 cached keys */
        check_case(specs[s], 1, 150, 149, 0, 0);            /* one new token */
        check_case(specs[s], 150, 150, 0, 1, 37);           /* left padding, forward and backward */
        check_case(specs[s], 70, 150, 80, 0, 100);          /* padding past the chunk's first queries */
    }
}
