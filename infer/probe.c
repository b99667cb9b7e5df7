#define _GNU_SOURCE /* memmem */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../data/synth.h"
#include "../model/layers.h"
#include "decode.h"

/* ---- distance ---- */

/* secret words of the built-in corpus, so a model trained on it knows each as a candidate */
static const char *const probe_words[] = {"plum", "moon", "apple", "river", "star", "cloud", "pickle", "button"};
enum { N_WORDS = sizeof probe_words / sizeof probe_words[0] };

/* filler: the built-in corpus (a seed no training run uses by default) without any sentence that
 * mentions a secret word, as one stream of in-distribution text */
static char *probe_filler(size_t *len) {
    char *text, *out;
    size_t n = 1 << 17;
    if (synth_generate("stories", 777, n, &text) != 0) return NULL;
    out = xmalloc(n + 1);
    size_t o = 0;
    for (char *s = text; *s;) {
        char *end = strpbrk(s, ".\n");
        size_t k = end ? (size_t)(end - s) + 1 : strlen(s);
        if (!memmem(s, k, "secret", 6)) {
            for (size_t i = 0; i < k; i++) out[o++] = s[i] == '\n' ? ' ' : s[i];
        }
        s += k;
    }
    out[o] = 0;
    free(text);
    *len = o;
    return out;
}

static void append_text(int *toks, int *n, const char *s) {
    for (; *s; s++) toks[(*n)++] = (unsigned char)*s;
}

/* log p(continuation | prefix) through the KV cache: prefix fed once, continuation teacher-forced */
static int continuation_logprob(Model *m, KVCache *kv, const int *prefix, int n_prefix, const char *cont,
                                float *logits, double *out) {
    int V = m->cfg.vocab_size, n_cont = (int)strlen(cont);
    int *pos = xmalloc(sizeof(int) * (n_prefix + n_cont)), *ids = xmalloc(sizeof(int) * n_cont);
    for (int i = 0; i < n_prefix + n_cont; i++) pos[i] = i;
    for (int i = 0; i < n_cont; i++) ids[i] = (unsigned char)cont[i];
    kvcache_reset(kv);
    double lp = 0;
    int rc = decode_forward(m, kv, prefix, pos, n_prefix, logits, 0);
    for (int i = 0; i < n_cont && rc == 0; i++) {
        log_softmax(logits, logits, V);
        lp += logits[ids[i]];
        if (i + 1 < n_cont) rc = decode_forward(m, kv, ids + i, pos + n_prefix + i, 1, logits, 0);
    }
    free(pos), free(ids);
    *out = lp;
    return rc;
}

int probe_distance(Model *m, const int *distances, int n_dist, int trials, unsigned long long seed, FILE *f,
                   double *accuracy, double *mean_logprob) {
    int max_d = 0;
    for (int k = 0; k < n_dist; k++) max_d = distances[k] > max_d ? distances[k] : max_d;
    int cap = max_d + 128;
    int *toks = xmalloc(sizeof(int) * cap);
    float *logits = xmalloc(sizeof(float) * m->cfg.vocab_size);
    KVCache kv;
    kvcache_init(&kv, m, cap, 128);
    Rng rng;
    rng_seed(&rng, seed);
    size_t filler_len;
    char *filler = probe_filler(&filler_len);
    if (!filler) return -1;
    fprintf(f, "distance probe: \"The secret word was W.\" + filler + \"The secret word was\"; rank of W among %d "
               "words, %d trials\n%10s %10s %14s\n",
            N_WORDS, trials, "distance", "accuracy", "mean log p(W)");
    int rc = 0;
    for (int k = 0; k < n_dist && rc == 0; k++) {
        int hits = 0;
        double lp_sum = 0;
        for (int t = 0; t < trials && rc == 0; t++) {
            int word = (int)rng_below(&rng, N_WORDS), n = 0;
            char fact[64];
            snprintf(fact, sizeof fact, "The secret word was %s. ", probe_words[word]);
            append_text(toks, &n, fact);
            /* filler from a random place until the query starts `distance` tokens after the fact */
            int target = n + distances[k];
            size_t at = (size_t)rng_below(&rng, filler_len);
            while (n < target) toks[n++] = (unsigned char)filler[at++ % filler_len];
            append_text(toks, &n, " The secret word was");
            double lp[N_WORDS];
            for (int w = 0; w < N_WORDS && rc == 0; w++) {
                char cont[32];
                snprintf(cont, sizeof cont, " %s.", probe_words[w]);
                rc = continuation_logprob(m, &kv, toks, n, cont, logits, &lp[w]);
            }
            int best = 0;
            for (int w = 1; w < N_WORDS; w++) best = lp[w] > lp[best] ? w : best;
            hits += best == word;
            lp_sum += lp[word];
        }
        accuracy[k] = (double)hits / trials;
        mean_logprob[k] = lp_sum / trials;
        if (rc == 0) fprintf(f, "%10d %9.0f%% %14.3f\n", distances[k], 100 * accuracy[k], mean_logprob[k]);
    }
    fprintf(f, "(chance: %.0f%%)\n", 100.0 / N_WORDS);
    kvcache_free(&kv);
    free(toks), free(logits), free(filler);
    return rc;
}

/* ---- permutation ---- */

/* log-softmax rows of the logits for the last nq positions of seq */
static int final_logprobs(Model *m, KVCache *kv, const int *seq, int n, int nq, float *out) {
    int V = m->cfg.vocab_size;
    int *pos = xmalloc(sizeof(int) * n);
    float *all = xmalloc(sizeof(float) * (size_t)n * V);
    for (int i = 0; i < n; i++) pos[i] = i;
    kvcache_reset(kv);
    int rc = decode_forward(m, kv, seq, pos, n, all, 1);
    for (int i = 0; rc == 0 && i < nq; i++) log_softmax(out + (size_t)i * V, all + (size_t)(n - nq + i) * V, V);
    free(pos), free(all);
    return rc;
}

int probe_permutation(Model *m, const int *tokens, size_t n, int seg_len, FILE *f, double *kl, double *dlogprob) {
    int total = 4 * seg_len, V = m->cfg.vocab_size;
    if (seg_len < 2 || n < (size_t)total + 1)
        return pelab_fail("probe permutation: need %d tokens of text for segments of %d, have %zu", total + 1,
                          seg_len, n);
    int *abc = xmalloc(sizeof(int) * total), *cba = xmalloc(sizeof(int) * total);
    memcpy(abc, tokens, sizeof(int) * total);
    for (int s = 0; s < 3; s++) memcpy(cba + s * seg_len, tokens + (2 - s) * seg_len, sizeof(int) * seg_len);
    memcpy(cba + 3 * seg_len, tokens + 3 * seg_len, sizeof(int) * seg_len);
    float *p = xmalloc(sizeof(float) * (size_t)seg_len * V), *q = xmalloc(sizeof(float) * (size_t)seg_len * V);
    KVCache kv;
    kvcache_init(&kv, m, total, 256);
    int rc = final_logprobs(m, &kv, abc, total, seg_len, p);
    if (rc == 0) rc = final_logprobs(m, &kv, cba, total, seg_len, q);
    double kl_sum = 0, d_sum = 0;
    for (int i = 0; rc == 0 && i < seg_len; i++) {
        const float *lp = p + (size_t)i * V, *lq = q + (size_t)i * V;
        for (int v = 0; v < V; v++) kl_sum += exp(lp[v]) * (lp[v] - lq[v]);
        int next = i + 1 < seg_len ? tokens[3 * seg_len + i + 1] : tokens[total];
        d_sum += fabs(lp[next] - lq[next]);
    }
    *kl = kl_sum / seg_len;
    *dlogprob = d_sum / seg_len;
    if (rc == 0)
        fprintf(f, "permutation probe: [A B C] Q vs [C B A] Q, segments of %d tokens\n"
                   "mean KL(next-token | ABC || next-token | CBA) over Q: %.5f nats\n"
                   "mean |change of log p(true next token)| over Q:       %.5f nats\n"
                   "(near zero: the order of the context is not reaching the model)\n",
                seg_len, *kl, *dlogprob);
    kvcache_free(&kv);
    free(abc), free(cba), free(p), free(q);
    return rc;
}

/* ---- attention ---- */

int probe_attention(Model *m, const int *tokens, int n, int layer, int head, float *weights, double *mean_dist) {
    const ModelConfig *c = &m->cfg;
    if (layer < 0 || layer >= c->n_layers) return pelab_fail("--layer %d: expected 0..%d", layer, c->n_layers - 1);
    if (head < 0 || head >= c->n_heads) return pelab_fail("--head %d: expected 0..%d", head, c->n_heads - 1);
    int *pos = xmalloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) pos[i] = i;
    model_keep_attention(m, 1);
    model_alloc_train(m, 1, n);
    int rc = model_forward(m, tokens, NULL, pos, 1, n);
    free(pos);
    if (rc != 0) return -1;
    /* att_probs: [layer][head][query][key] */
    const float *att = m->acts.att_probs + (size_t)layer * c->n_heads * n * n + (size_t)head * n * n;
    memcpy(weights, att, sizeof(float) * (size_t)n * n);
    double dist = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) dist += att[(size_t)i * n + j] * (i - j);
    *mean_dist = dist / n;
    return 0;
}

/* ---- attention sinks ---- */

int probe_sinks(Model *m, const int *tokens, size_t n, int len, int windows, int sink_token, double *mass,
                double *head_max, double *uniform) {
    const ModelConfig *c = &m->cfg;
    int H = c->n_heads, L = c->n_layers;
    if (len < 2 || (size_t)len > n) return pelab_fail("sinks: windows of %d tokens need 2..%zu (the text)", len, n);
    if (windows < 1) return pelab_fail("sinks: %d windows: expected at least 1", windows);
    if (sink_token >= c->vocab_size)
        return pelab_fail("sinks: --sink-token %d: expected a token id below %d", sink_token, c->vocab_size);
    int *pos = xmalloc(sizeof(int) * len), *win = xmalloc(sizeof(int) * len);
    double *per_head = xcalloc((size_t)L * H, sizeof(double));
    for (int i = 0; i < len; i++) pos[i] = i;
    model_keep_attention(m, 1);
    model_alloc_train(m, 1, len);
    int lo = len / 2, rows = len - lo, rc = 0;
    size_t span = n - (size_t)len;
    for (int w = 0; w < windows && rc == 0; w++) {
        size_t s = windows > 1 ? span * (size_t)w / (size_t)(windows - 1) : 0;
        memcpy(win, tokens + s, sizeof(int) * len);
        if (sink_token >= 0) win[0] = sink_token;
        if ((rc = model_forward(m, win, NULL, pos, 1, len)) != 0) break;
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                const float *att = m->acts.att_probs + ((size_t)l * H + h) * len * len; /* [L, 1, H, T, T] */
                for (int i = lo; i < len; i++) per_head[l * H + h] += att[(size_t)i * len];
            }
    }
    double u = 0;
    for (int i = lo; i < len; i++) u += 1.0 / (i + 1);
    *uniform = u / rows;
    for (int l = 0; l < L && rc == 0; l++) {
        mass[l] = 0, head_max[l] = 0;
        for (int h = 0; h < H; h++) {
            double v = per_head[l * H + h] / ((double)rows * windows);
            mass[l] += v / H;
            head_max[l] = v > head_max[l] ? v : head_max[l];
        }
    }
    free(pos), free(win), free(per_head);
    return rc;
}

/* ---- cache checklist ---- */

static float max_abs(const float *a, const float *b, int n) {
    float worst = 0;
    for (int i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= worst)) worst = d; /* NaN counts as the worst */
    }
    return worst;
}

int probe_cache(Model *m, const int *tokens, size_t n, int len, FILE *f) {
    int failed = 0, V = m->cfg.vocab_size;
    char lengths[160];
    pos_lengths(&m->pos, lengths, sizeof lengths);
    long acc = pos_max_position(&m->pos), comp = pos_computable_position(&m->pos);
    int ok = (acc < 0 || len <= acc) && (comp < 0 || len <= comp) && n >= (size_t)len + 1;
    fprintf(f, "[%s] input length %d vs the model's limits (%s), text of %zu tokens\n", ok ? "PASS" : "FAIL", len,
            lengths, n);
    failed += !ok;
    if (!ok) return failed;

    int *pos = xmalloc(sizeof(int) * 2 * len), *two = xmalloc(sizeof(int) * 2 * len);
    for (int i = 0; i < len; i++) pos[i] = pos[len + i] = i;
    fprintf(f, "[PASS] position ids 0..%d, restarting at 0 in every window (as score and eval use them)\n", len - 1);

    model_keep_attention(m, 1);
    model_alloc_train(m, 2, len);
    if (model_forward(m, tokens, NULL, pos, 1, len) != 0) { /* stream:S:W has no full forward */
        fprintf(f, "[FAIL] full forward: %s\n1 check failed\n", pelab_errmsg);
        free(pos), free(two);
        return failed + 1;
    }
    long future = 0;
    size_t per_layer = (size_t)m->cfg.n_heads * len * len;
    for (int l = 0; l < m->cfg.n_layers; l++)
        for (int h = 0; h < m->cfg.n_heads; h++)
            for (int i = 0; i < len; i++)
                for (int j = i + 1; j < len; j++)
                    future += m->acts.att_probs[l * per_layer + ((size_t)h * len + i) * len + j] != 0.0f;
    fprintf(f, "[%s] future attention weights exactly zero (%ld nonzero)\n", future ? "FAIL" : "PASS", future);
    failed += future != 0;

    float *full = xmalloc(sizeof(float) * (size_t)len * V), *step = xmalloc(sizeof(float) * V);
    memcpy(full, m->acts.logits, sizeof(float) * (size_t)len * V);
    KVCache kv;
    kvcache_init(&kv, m, len, 64);
    float worst = 0;
    for (int i = 0; i < len; i++) {
        if (decode_forward(m, &kv, tokens + i, pos + i, 1, step, 0) != 0) {
            worst = INFINITY;
            break;
        }
        float d = max_abs(full + (size_t)i * V, step, V);
        worst = d > worst ? d : worst;
    }
    kvcache_free(&kv);
    fprintf(f, "[%s] KV-cache decoding vs full recompute: max |logit diff| %.3g (limit 1e-4)\n",
            worst <= 1e-4f ? "PASS" : "FAIL", worst);
    failed += !(worst <= 1e-4f);

    memcpy(two, tokens, sizeof(int) * len);
    memcpy(two + len, tokens + (n > (size_t)2 * len ? len : 1), sizeof(int) * len);
    model_forward(m, two + len, NULL, pos, 1, len);
    memcpy(full, m->acts.logits, sizeof(float) * (size_t)len * V);
    model_forward(m, two, NULL, pos, 2, len);
    float batch = max_abs(full, m->acts.logits + (size_t)len * V, len * V);
    fprintf(f, "[%s] batch of two vs single: max |logit diff| %.3g (limit 1e-4)\n", batch <= 1e-4f ? "PASS" : "FAIL",
            batch);
    failed += !(batch <= 1e-4f);
    fprintf(f, "%d check%s failed\n", failed, failed == 1 ? "" : "s");
    free(pos), free(two), free(full), free(step);
    return failed;
}
