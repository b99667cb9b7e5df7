/* bench.c: `pelab bench`: training and sampling speed on fixed configurations (S and M of the
 * design), medians over repeated runs with min and max, and the fraction of this machine's own
 * sgemm throughput that training reaches. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "../infer/decode.h"
#include "../model/model.h"
#include "../train/adamw.h"
#include "args.h"
#include "commands.h"

typedef struct {
    const char *name;
    int dim, layers, heads, hidden, vocab, seq_len, batch;
} BenchConfig;

static const BenchConfig configs[] = {
    {"S", 128, 4, 4, 384, 256, 128, 16},
    {"M", 288, 6, 6, 768, 256, 256, 8},
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double median, min, max;
} Stat;

static Stat stats(double *v, int n) {
    qsort(v, n, sizeof(double), cmp_double);
    Stat s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1]};
    return s;
}

/* GFLOP/s of a large square sgemm: the ceiling training is measured against */
static double sgemm_gflops(void) {
    int n = 1024;
    float *a = xmalloc(sizeof(float) * n * n), *b = xmalloc(sizeof(float) * n * n), *c = xmalloc(sizeof(float) * n * n);
    for (int i = 0; i < n * n; i++) a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.1f;
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double g = 2.0 * n * n * n / (now_seconds() - t0) / 1e9;
        if (g > best) best = g;
    }
    free(a), free(b), free(c);
    return best;
}

/* one model with its batch and optimizer state, ready to time training steps */
typedef struct {
    Model m;
    int B, T, vocab;
    int *in, *tg, *pos;
    float *am, *av;
    long step;
} Rig;

static void rig_init(Rig *g, const BenchConfig *bc, const char *spec) {
    ModelConfig cfg = {.vocab_size = bc->vocab, .dim = bc->dim, .n_layers = bc->layers, .n_heads = bc->heads,
                       .n_kv_heads = bc->heads, .hidden_dim = bc->hidden, .seq_len = bc->seq_len, .norm_eps = 1e-5f,
                       .tied = 1};
    if (model_create(&g->m, &cfg, spec) != 0) pelab_die("bench: %s", pelab_errmsg);
    model_init_weights(&g->m, 1);
    g->B = bc->batch, g->T = bc->seq_len, g->vocab = bc->vocab, g->step = 1;
    int n = g->B * g->T;
    model_alloc_train(&g->m, g->B, g->T);
    g->in = xmalloc(sizeof(int) * n), g->tg = xmalloc(sizeof(int) * n), g->pos = xmalloc(sizeof(int) * n);
    Rng rng;
    rng_seed(&rng, 5);
    for (int i = 0; i < n; i++)
        g->in[i] = (int)rng_below(&rng, g->vocab), g->tg[i] = (int)rng_below(&rng, g->vocab), g->pos[i] = i % g->T;
    g->am = xcalloc(g->m.n_params, sizeof(float)), g->av = xcalloc(g->m.n_params, sizeof(float));
}

static void rig_free(Rig *g) {
    free(g->in), free(g->tg), free(g->pos), free(g->am), free(g->av);
    model_free(&g->m);
}

/* times `steps` training steps; seconds in forward, backward and optimizer */
static void rig_steps(Rig *g, int steps, double *tf, double *tb, double *to) {
    AdamWConfig opt = {.lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
    *tf = *tb = *to = 0;
    for (int s = 0; s < steps; s++) {
        double t0 = now_seconds();
        model_zero_grad(&g->m);
        model_forward(&g->m, g->in, g->tg, g->pos, g->B, g->T);
        double t1 = now_seconds();
        model_backward(&g->m);
        double t2 = now_seconds();
        clip_grad_norm(g->m.grads_mem, g->m.n_params, 1.0f);
        adamw_update(&g->m, g->am, g->av, &opt, g->step++);
        if (g->m.pos.scheme->after_update && g->m.tensors[T_POS].numel)
            g->m.pos.scheme->after_update(&g->m.pos, g->m.params.pos);
        double t3 = now_seconds();
        *tf += t1 - t0, *tb += t2 - t1, *to += t3 - t2;
    }
}

static void bench_config(const BenchConfig *bc, const char *spec, int repeats, int steps, double peak) {
    Rig g;
    rig_init(&g, bc, spec);
    Model *m = &g.m;
    int B = g.B, T = g.T;
    double *tps = xmalloc(sizeof(double) * repeats), *fwd = xmalloc(sizeof(double) * repeats);
    double *bwd = xmalloc(sizeof(double) * repeats), *upd = xmalloc(sizeof(double) * repeats);
    for (int r = -1; r < repeats; r++) { /* r = -1: warm-up */
        double tf, tb, to;
        rig_steps(&g, steps, &tf, &tb, &to);
        if (r < 0) continue;
        tps[r] = (double)steps * B * T / (tf + tb + to);
        fwd[r] = tf / steps * 1e3, bwd[r] = tb / steps * 1e3, upd[r] = to / steps * 1e3;
    }
    Stat st = stats(tps, repeats), sf = stats(fwd, repeats), sb = stats(bwd, repeats), so = stats(upd, repeats);
    /* matmul FLOPs: 6 per weight per token (fwd + 2 bwd), attention 12 * L * T * D */
    size_t matmul_params = m->n_params - m->tensors[T_ATTN_NORM].numel - m->tensors[T_MLP_NORM].numel -
                           m->tensors[T_FINAL_NORM].numel;
    double flops_per_token = 6.0 * matmul_params + 12.0 * bc->layers * T * bc->dim;
    double gflops = st.median * flops_per_token / 1e9;
    printf("%s train   %8.0f tokens/s (min %.0f, max %.0f)  %.1f GFLOP/s = %.0f%% of sgemm peak  "
           "fwd %.1f / bwd %.1f / opt %.1f ms per step\n",
           bc->name, st.median, st.min, st.max, gflops, 100.0 * gflops / peak, sf.median, sb.median, so.median);

    /* sampling: batch 1, greedy, KV cache, 256 new tokens after a 1-token prompt */
    int n_tok = 256;
    KVCache kv;
    kvcache_init(&kv, m, n_tok, 64);
    float *logits = xmalloc(sizeof(float) * bc->vocab);
    for (int r = -1; r < repeats; r++) {
        kvcache_reset(&kv);
        int tok = 1;
        double t0 = now_seconds();
        for (int i = 0; i < n_tok; i++) {
            decode_forward(m, &kv, &tok, &i, 1, logits, 0);
            int best = 0;
            for (int v = 1; v < bc->vocab; v++) best = logits[v] > logits[best] ? v : best;
            tok = best;
        }
        if (r >= 0) tps[r] = n_tok / (now_seconds() - t0);
    }
    st = stats(tps, repeats);
    printf("%s sample  %8.0f tokens/s (min %.0f, max %.0f)  batch 1, greedy, KV cache, %d tokens\n", bc->name,
           st.median, st.min, st.max, n_tok);
    kvcache_free(&kv);
    free(logits), free(tps), free(fwd), free(bwd), free(upd);
    rig_free(&g);
}

/* training tokens/s of each scheme relative to rope on one configuration: the schemes take turns
 * within every repetition, so machine noise hits them alike; the ratio is of medians */
static void bench_schemes(const BenchConfig *bc, const char *list, int repeats, int steps) {
    enum { MAX = 32 };
    char buf[512], *names[MAX], *save = NULL;
    snprintf(buf, sizeof buf, "rope,%s", list);
    int n = 0;
    for (char *t = strtok_r(buf, ",", &save); t && n < MAX; t = strtok_r(NULL, ",", &save))
        if (n == 0 || strcmp(t, "rope") != 0) names[n++] = t;
    Rig *rigs = xmalloc(sizeof(Rig) * n);
    double *tps = xmalloc(sizeof(double) * n * repeats);
    for (int i = 0; i < n; i++) rig_init(&rigs[i], bc, names[i]);
    for (int r = -1; r < repeats; r++)
        for (int i = 0; i < n; i++) {
            double tf, tb, to;
            rig_steps(&rigs[i], steps, &tf, &tb, &to);
            if (r >= 0) tps[i * repeats + r] = (double)steps * rigs[i].B * rigs[i].T / (tf + tb + to);
        }
    printf("%s training tokens/s by scheme (median of %d, %d steps each, schemes interleaved)\n", bc->name, repeats,
           steps);
    Stat ref = stats(tps, repeats);
    for (int i = 0; i < n; i++) {
        Stat st = stats(tps + i * repeats, repeats);
        char spec[256];
        pos_spec(&rigs[i].m.pos, spec, sizeof spec);
        printf("  %-12s %8.0f tokens/s (min %.0f, max %.0f)  x%.2f of rope   %s\n", names[i], st.median, st.min,
               st.max, st.median / ref.median, spec);
        rig_free(&rigs[i]);
    }
    free(rigs), free(tps);
}

int cmd_bench(int argc, char **argv) {
    int repeats = 5, steps = 3, threads = 0;
    const char *which = "S,M", *spec = "rope", *schemes = NULL;
    const OptSpec opts[] = {
        {"--configs", OPT_STR, &which, 0, 0, "comma-separated configurations to run (S, M)"},
        {"--repeats", OPT_INT, &repeats, 1, 1000, "timed repetitions (the median is reported)"},
        {"--steps", OPT_INT, &steps, 1, 1000, "training steps per repetition"},
        {"--pos", OPT_STR, &spec, 0, 0, "position scheme of the benchmarked model"},
        {"--schemes", OPT_STR, &schemes, 0, 0, "compare training speed of these schemes with rope instead"},
        {"--threads", OPT_INT, &threads, 0, 1024, "threads (0: all cores)"},
    };
    args_parse("bench", "[flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    set_threads(threads);
    double peak = sgemm_gflops();
    printf("sgemm 1024^3: %.1f GFLOP/s (best of 5)\n", peak);
    printf("S = dim 128, 4 layers, 4 heads, hidden 384, vocab 256, T 128, batch 16\n");
    printf("M = dim 288, 6 layers, 6 heads, hidden 768, vocab 256, T 256, batch 8\n");
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char want[8];
        snprintf(want, sizeof want, "%s", configs[i].name);
        if (!strstr(which, want)) continue;
        if (schemes) bench_schemes(&configs[i], schemes, repeats, steps);
        else bench_config(&configs[i], spec, repeats, steps, peak);
    }
    printf("peak RSS %.1f MB\n", peak_rss_kb() / 1024.0);
    return 0;
}
