/* test_sinks.c: learned attention sinks (model/pos/sinks.h), "+sinks" on any scheme: the spec and
 * its refusals; one head's weights and output against gpt-oss's formula computed here, in double
 * (p_j = exp(z_j) / (exp(s) + sum_k exp(z_k)), out = sum_j p_j v_j), the future exactly 0, under a
 * sliding window too; on a model: the tensor, a sink of -100 equal to no sink, d loss / d sink by
 * central differences; every gradient under a sliding window. (Gradients of every tensor, KV cache, causality: the shared scheme checks
 * run rope+sinks, alibi+sinks, nope+sinks, test_schemes.c; a checkpoint round trip:
 * test_checkpoint.c.) */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../model/attention.h"
#include "../model/model.h"
#include "../model/pos/pos.h"
#include "test.h"

static void specs(void) {
    static const char *cases[][2] = {
        {"rope+sinks", "+sinks:init=0"},
        {"alibi+sinks:init=-1.5+nope@1", "alibi+sinks:init=-1.5+nope@1"},
        {"rope+nope@1+sinks:init=0.1+logn", "+logn:len=8+sinks:init=0.1+nope@1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        PosCtx pc;
        char spec[512] = "";
        int rc = pos_init(&pc, cases[i][0], 16, 4, 2, 2, 8);
        if (rc == 0) pos_spec(&pc, spec, sizeof spec), pos_free(&pc);
        CHECK(rc == 0 && strstr(spec, cases[i][1]), "%s -> %s (%s)", cases[i][0], spec, rc ? pelab_errmsg : "");
    }
    static const char *bad[][2] = {{"rope+sinks:init=x", "init=x: expected a number"},
                                   {"rope+sinks:scale=1", "unknown option 'scale'"},
                                   {"rope+sinks+sinks", "+sinks given twice"},
                                   {"rope+sinks:init=1e9", "init=1e9"},
                                   {"rope+sinksx", "unknown"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        PosCtx pc;
        pelab_errmsg[0] = 0;
        CHECK(pos_init(&pc, bad[i][0], 16, 4, 2, 2, 8) != 0 && strstr(pelab_errmsg, bad[i][1]) &&
                  !strchr(pelab_errmsg, '\n'),
              "%s refused in one line naming %s: %s", bad[i][0], bad[i][1], pelab_errmsg);
    }
    PosCtx pc;
    pos_init(&pc, "rope", 16, 4, 2, 2, 8);
    CHECK(isinf(pos_sink_logit(&pc, 0, 0)) && pos_sink_logit(NULL, 0, 0) < 0, "no sinks: a logit of -inf");
    pos_free(&pc);
}

/* one head of 5 queries (positions 0..4) against 5 keys under nope+sinks:init=s, window w (0: none):
 * probs and out against the formula */
static void reference_head(double sink, int window) {
    enum { N = 5, HD = 4 };
    char spec[64];
    snprintf(spec, sizeof spec, "nope+sinks:init=%g", sink);
    PosCtx pc;
    if (pos_init(&pc, spec, 4 * HD, 4, 4, 1, 8) != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    float q[N * HD], k[N * HD], v[N * HD], out[N * HD], probs[N * N];
    int pos[N];
    for (int i = 0; i < N * HD; i++)
        q[i] = 0.37f * (float)((i * 7) % 11) - 1.5f, k[i] = 0.29f * (float)((i * 5) % 9) - 1.1f,
        v[i] = 0.5f * (float)((i * 3) % 7) - 1.0f;
    for (int i = 0; i < N; i++) pos[i] = i;
    memset(probs, 0x7f, sizeof probs); /* not zero: the future must be written as 0 */
    AttnHead a = {.q = q, .k = k, .v = v, .out = out, .probs = probs, .ldq = HD, .ldkv = HD, .qpos = pos,
                  .kpos = pos, .nq = N, .nk = N, .q_offset = 0, .window = window, .hd = HD, .head = 2, .layer = 0};
    attention_head_forward(&a, &pc);
    double worst_p = 0, worst_o = 0, below_one = 1;
    int future_zero = 1;
    for (int i = 0; i < N; i++) {
        int first = window > 0 && i - window + 1 > 0 ? i - window + 1 : 0;
        double z[N], denom = exp(sink), p[N] = {0};
        for (int j = first; j <= i; j++) {
            z[j] = 0;
            for (int d = 0; d < HD; d++) z[j] += (double)q[i * HD + d] * k[j * HD + d];
            z[j] /= sqrt((double)HD);
            denom += exp(z[j]);
        }
        double total = 0;
        for (int j = first; j <= i; j++) p[j] = exp(z[j]) / denom, total += p[j];
        below_one = total < below_one ? total : below_one;
        for (int j = 0; j < N; j++) {
            worst_p = worse(worst_p, fabs(probs[i * N + j] - p[j]));
            if (j > i || j < first) future_zero &= probs[i * N + j] == 0.0f;
        }
        for (int d = 0; d < HD; d++) {
            double o = 0;
            for (int j = first; j <= i; j++) o += p[j] * v[j * HD + d];
            worst_o = worse(worst_o, fabs(out[i * HD + d] - o));
        }
    }
    CHECK(worst_p < 2e-6 && worst_o < 4e-6, "sink %g window %d: weights exp(z)/(exp(s) + sum exp(z)) (off %.3g), "
          "out sum p v (off %.3g)", sink, window, worst_p, worst_o);
    CHECK(future_zero, "sink %g window %d: the future and the keys past the window get exactly 0", sink, window);
    CHECK(below_one < 0.99, "sink %g window %d: the weights sum below 1 (%.4f at the least)", sink, window, below_one);
    pos_free(&pc);
}

/* on a model: pos.sinks [L, H], no decay; a sink of -100 is no sink; d loss / d sink by central
 * differences, the gradient nonzero */
static void on_a_model(void) {
    Model a, b;
    tiny_model(&b, "rope+sinks:init=-100", 2, 0, 3);
    model_init_weights(&b, 5);
    CHECK(b.tensors[T_SINKS].numel == 2 * 4 && !strcmp(b.tensors[T_SINKS].name, "pos.sinks") &&
              !b.tensors[T_SINKS].decay && b.params.sinks[0] == -100.0f && b.params.sinks[7] == -100.0f,
          "pos.sinks [layers, heads], no decay, started at init");
    tiny_model(&a, "rope", 2, 0, 3); /* tiny_model's random weights, the sinks' too: set again below */
    CHECK(a.tensors[T_SINKS].numel == 0, "no pos.sinks without +sinks");
    for (int i = 0; i < 8; i++) b.params.sinks[i] = -100.0f;
    for (int t = 0; t < T_SINKS; t++)
            memcpy(b.params_mem + b.tensors[t].offset, a.params_mem + a.tensors[t].offset,
                   a.tensors[t].numel * sizeof(float));
    enum { T = 8 };
    int in[T], tg[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (5 * i + 2) % 13, tg[i] = (3 * i + 1) % 13, pos[i] = i;
    model_alloc_train(&a, 1, T), model_alloc_train(&b, 1, T);
    model_forward(&a, in, tg, pos, 1, T), model_forward(&b, in, tg, pos, 1, T);
    float gap = max_abs_diff(a.acts.logits, b.acts.logits, T * a.cfg.vocab_size);
    CHECK(gap < 1e-6f, "a sink of -100 changes no logit (%.3g)", gap);
    for (int i = 0; i < 8; i++) b.params.sinks[i] = 0.3f * (float)i - 1.0f;
    model_forward(&b, in, tg, pos, 1, T);
    gap = max_abs_diff(a.acts.logits, b.acts.logits, T * a.cfg.vocab_size);
    CHECK(gap > 1e-3f, "sinks near 0 change the logits (%.3g)", gap);
    model_zero_grad(&b);
    model_forward(&b, in, tg, pos, 1, T);
    model_backward(&b);
    double worst = 0, norm = 0;
    for (int i = 0; i < 8; i++) {
        float *s = b.params.sinks + i, saved = *s, eps = 1e-2f;
        *s = saved + eps;
        model_forward(&b, in, tg, pos, 1, T);
        double lp = b.mean_loss;
        *s = saved - eps;
        model_forward(&b, in, tg, pos, 1, T);
        double numeric = (lp - b.mean_loss) / (2.0 * eps);
        *s = saved;
        worst = worse(worst, fabs(numeric - b.grads.sinks[i]));
        norm += numeric * numeric;
    }
    CHECK(worst < 1e-4 + 1e-2 * sqrt(norm) && norm > 1e-10, "d loss / d sink: off by %.3g (|grad| %.3g)", worst,
          sqrt(norm));
    model_free(&a), model_free(&b);
}

void test_sinks(void) {
    specs();
    reference_head(0.0, 0);
    reference_head(0.8, 0);
    reference_head(-0.7, 3);
    on_a_model();
    gradcheck_window("rope+sinks:init=0.3", 3); /* every tensor, the sinks', under a sliding window */
    gradcheck_window("fox+sinks", 2);
}
