/* test_permutation.c: position has to come from somewhere. Without the causal mask, attention
 * with no position encoding is permutation-equivariant (permuting the input rows permutes the
 * output rows); every real scheme breaks that (equivariance_gap, run on every registered scheme by
 * test_schemes.c). With the causal mask even NoPE sees order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../model/attention.h"
#include "../model/layers.h"
#include "../model/model.h"
#include "test.h"

enum { N = 7, D = 16, H = 4, HD = D / H };

/* one attention sublayer without a mask at positions 0..N-1, after the scheme's input map:
 * out = attn(x' Wq, x' Wk, x' Wv), x' = x + p(pos) */
static void sublayer(PosCtx *pc, const float *x0, const float *wq, const float *wk, const float *wv, float *out) {
    float x[N * D], q[N * D], k[N * D], v[N * D], probs[N * N];
    int pos[N];
    for (int i = 0; i < N; i++) pos[i] = i;
    pos_check_positions(pc, pos, N);
    memcpy(x, x0, sizeof x);
    if (pc->scheme->input_forward) pc->scheme->input_forward(pc, x, pos, N);
    matmul_forward(q, x, wq, NULL, N, D, D);
    matmul_forward(k, x, wk, NULL, N, D, D);
    matmul_forward(v, x, wv, NULL, N, D, D);
    if (pc->scheme->qk_forward && pos_layer_active(pc, 0)) { /* as block_forward */
        pc->scheme->qk_forward(pc, q, pos, N, H, 0, 0);
        pc->scheme->qk_forward(pc, k, pos, N, H, 1, 0);
    }
    float gates[N * H]; /* a gate scheme (FoX): the running sums from the rows, as block_forward */
    int gated = pos_has_gate(pc, 0);
    if (gated) pos_gate_forward(pc, 0, x, N, 0, NULL, gates);
    for (int h = 0; h < H; h++) {
        AttnHead a = {.q = q + h * HD, .k = k + h * HD, .v = v + h * HD, .out = out + h * HD, .probs = probs,
                      .ldq = D, .ldkv = D, .qpos = pos, .kpos = pos, .nq = N, .nk = N,
                      .q_offset = N /* >= nk: no causal mask */, .hd = HD, .head = h, .layer = 0,
                      .gate = gated ? gates + h : NULL, .ldg = H};
        attention_head_forward(&a, pc);
    }
}

float equivariance_gap(const char *spec) {
    PosCtx pc;
    if (pos_init(&pc, spec, D, H, H, 2, 16) != 0) return -1; /* 2 layers: "+nope@1" parses; layer 0 runs */
    float *params = NULL;
    size_t np = pos_n_params(&pc);
    Rng rng;
    rng_seed(&rng, 11);
    if (np) { /* learned biases: random, so the test does not depend on an init that happens to be 0 */
        params = xmalloc(np * sizeof(float));
        for (size_t i = 0; i < np; i++) params[i] = 0.5f * rng_normal(&rng);
        pc.params = params;
    }
    float x[N * D], wq[D * D], wk[D * D], wv[D * D], out[N * D], xp[N * D], outp[N * D];
    for (int i = 0; i < N * D; i++) x[i] = rng_normal(&rng);
    for (int i = 0; i < D * D; i++) wq[i] = 0.5f * rng_normal(&rng), wk[i] = 0.5f * rng_normal(&rng),
                                    wv[i] = 0.5f * rng_normal(&rng);
    static const int perm[N] = {3, 0, 6, 1, 5, 2, 4};
    for (int i = 0; i < N; i++) memcpy(xp + i * D, x + perm[i] * D, sizeof(float) * D);
    sublayer(&pc, x, wq, wk, wv, out);
    sublayer(&pc, xp, wq, wk, wv, outp);
    float gap = 0;
    for (int i = 0; i < N; i++) {
        float d = max_abs_diff(outp + i * D, out + perm[i] * D, D);
        if (d > gap) gap = d;
    }
    free(params);
    pos_free(&pc);
    return gap;
}

void test_permutation(void) {
    /* with the causal mask, reordering the context changes a NoPE model's last prediction */
    Model m;
    tiny_model(&m, "nope", 4, 1, 21);
    enum { T = 6 };
    int in[T] = {1, 2, 3, 4, 5, 6}, rev[T] = {5, 4, 3, 2, 1, 6}, pos[T] = {0, 1, 2, 3, 4, 5};
    int V = m.cfg.vocab_size;
    model_alloc_train(&m, 1, T);
    model_forward(&m, in, NULL, pos, 1, T);
    float *last = xmalloc(sizeof(float) * V);
    memcpy(last, m.acts.logits + (T - 1) * V, sizeof(float) * V);
    model_forward(&m, rev, NULL, pos, 1, T);
    float d = max_abs_diff(last, m.acts.logits + (T - 1) * V, V);
    CHECK(d > 1e-3f, "nope with the causal mask: reversing the context changes the last logits (%.3g)", d);
    free(last);
    model_free(&m);
}
