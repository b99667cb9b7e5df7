/* test_fox.c: the Forgetting Transformer (model/pos/fox.c). One layer's attention weights against
 * the paper's formula computed here in double from the raw weights (f_l = sigmoid(w_h . x_l + b_h)
 * on the normed input, p_ij = softmax_j(q_i . k_j / sqrt(hd) + sum_{l in (j, i]} log f_l)), heads
 * sharing keys (GQA) included; gates near 1 (b = 30) give NoPE's logits; the stream cache refused.
 * (Gradients of pos.weight and of every tensor upstream of x, KV cache, causality, the permutation
 * check: the shared scheme checks, test_schemes.c; a checkpoint round trip: test_checkpoint.c.) */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../model/model.h"
#include "test.h"

static void reference_weights(void) {
    enum { T = 12 };
    Model m;
    if (tiny_model_shaped(&m, "fox", 4, 2, 1, 1, 17) != 0) {
        CHECK(0, "fox: %s", pelab_errmsg);
        return;
    }
    int D = m.cfg.dim, H = m.cfg.n_heads, KVH = m.cfg.n_kv_heads, hd = m.head_dim, in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 5 + 2) % m.cfg.vocab_size, pos[i] = i;
    const float *fw = m.params.pos; /* [1, H, D + 1] */
    model_keep_attention(&m, 1);
    model_alloc_train(&m, 1, T);
    int rc = model_forward(&m, in, NULL, pos, 1, T);
    double q[T][64], k[T][64], logf[T][8];
    for (int t = 0; t < T; t++) {
        const float *x = m.params.tok_emb + (size_t)in[t] * D;
        double ms = 0, ln[64];
        for (int d = 0; d < D; d++) ms += (double)x[d] * x[d];
        double rstd = 1.0 / sqrt(ms / D + m.cfg.norm_eps);
        for (int d = 0; d < D; d++) ln[d] = x[d] * rstd * m.params.attn_norm[d];
        for (int o = 0; o < H * hd; o++) {
            q[t][o] = 0;
            for (int d = 0; d < D; d++) q[t][o] += m.params.wq[(size_t)o * D + d] * ln[d];
        }
        for (int o = 0; o < KVH * hd; o++) {
            k[t][o] = 0;
            for (int d = 0; d < D; d++) k[t][o] += m.params.wk[(size_t)o * D + d] * ln[d];
        }
        for (int h = 0; h < H; h++) {
            double z = fw[h * (D + 1) + D];
            for (int d = 0; d < D; d++) z += fw[h * (D + 1) + d] * ln[d];
            logf[t][h] = log(1.0 / (1.0 + exp(-z)));
        }
    }
    double worst = 0, spread = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < T; i++) {
            double row[T], mx = -1e300, sum = 0;
            for (int j = 0; j <= i; j++) {
                double s = 0, decay = 0;
                for (int d = 0; d < hd; d++) s += q[i][h * hd + d] * k[j][(h / (H / KVH)) * hd + d];
                for (int l = j + 1; l <= i; l++) decay += logf[l][h];
                row[j] = s / sqrt((double)hd) + decay;
                mx = row[j] > mx ? row[j] : mx;
                spread = worse(spread, -decay);
            }
            for (int j = 0; j <= i; j++) sum += row[j] = exp(row[j] - mx);
            const float *got = m.acts.att_probs + ((size_t)h * T + i) * T;
            for (int j = 0; j < T; j++) worst = worse(worst, fabs(got[j] - (j <= i ? row[j] / sum : 0)));
        }
    CHECK(rc == 0 && worst < 2e-5 && spread > 1, "fox: attention weights = the paper's formula in double (max |diff| "
          "%.3g; the gates take up to %.3g off a logit)", worst, spread);
    model_free(&m);
}

/* with every gate's bias at 30, f = 1 - 1e-13: FoX is NoPE */
static void open_gates(void) {
    enum { T = 8 };
    Model a, b;
    tiny_model(&a, "nope", 2, 0, 4);
    tiny_model(&b, "fox", 2, 0, 4);
    for (int t = 0; t < N_PARAM_TENSORS; t++)
        if (t != T_POS)
            memcpy(b.params_mem + b.tensors[t].offset, a.params_mem + a.tensors[t].offset,
                   a.tensors[t].numel * sizeof(float));
    int D = b.cfg.dim, H = b.cfg.n_heads, in[T], pos[T];
    for (size_t g = 0; g < (size_t)b.cfg.n_layers * H; g++) b.params.pos[g * (D + 1) + D] = 30.0f;
    for (int i = 0; i < T; i++) in[i] = (3 * i + 1) % 13, pos[i] = i;
    model_alloc_train(&a, 1, T), model_alloc_train(&b, 1, T);
    model_forward(&a, in, NULL, pos, 1, T), model_forward(&b, in, NULL, pos, 1, T);
    float gap = max_abs_diff(a.acts.logits, b.acts.logits, T * a.cfg.vocab_size);
    CHECK(gap < 1e-5f, "fox with open gates (b = 30) gives NoPE's logits (%.3g)", gap);
    for (size_t g = 0; g < (size_t)b.cfg.n_layers * H; g++) b.params.pos[g * (D + 1) + D] = 0.0f;
    model_forward(&b, in, NULL, pos, 1, T);
    gap = max_abs_diff(a.acts.logits, b.acts.logits, T * a.cfg.vocab_size);
    CHECK(gap > 1e-3f, "fox with b = 0 does not (%.3g)", gap);
    model_free(&a), model_free(&b);
}

static void refusals(void) {
    Model m;
    tiny_model(&m, "fox", 2, 0, 4);
    static const char *methods[][2] = {{"stream:2:4", "sliding cache"}, {"rerope:4", "no q/k map"},
                                       {"dca", "no q/k map"}};
    for (int i = 0; i < 3; i++)
        CHECK(pos_set_scale(&m.pos, methods[i][0]) == -1 && strstr(pelab_errmsg, methods[i][1]) &&
                  strstr(pelab_errmsg, "fox"),
              "--scale %s on fox refused: %s", methods[i][0], pelab_errmsg);
    model_free(&m);
    PosCtx pc;
    CHECK(pos_init(&pc, "fox+ssmax", 16, 4, 2, 2, 8) == -1 && strstr(pelab_errmsg, "+ssmax on fox"),
          "fox+ssmax refused: %s", pelab_errmsg);
    CHECK(pos_init(&pc, "fox:bias=x", 16, 4, 2, 2, 8) == -1 && strstr(pelab_errmsg, "bias=x"), "fox:bias=x refused");
}

void test_fox(void) {
    reference_weights();
    open_gates();
    refusals();
}
