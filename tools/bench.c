/* bench.c: `pelab bench`: training, sampling and evaluation speed on fixed configurations (S and M
 * of the design): medians over repeated runs with min and max, the fraction of this machine's own
 * sgemm throughput reached, the forward/backward/optimizer split and the peak memory of every
 * workload. Each workload runs in a child process of its own (fork), so its peak RSS is its own
 * and not the running maximum of everything before it; the parent never enters an OpenMP region
 * before forking (libgomp's thread pool does not survive fork). --json writes every figure for
 * tools/bench/compare.py, which sets them beside the PyTorch reference's. */
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/blas.h"
#include "../core/cpu.h"
#include "../core/error.h"
#include "../core/files.h"
#include "../core/kernels.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/sys.h"
#include "../infer/decode.h"
#include "../infer/eval.h"
#include "../io/results.h"
#include "../model/model.h"
#include "../train/adamw.h"
#include "../train/train.h"
#include "args.h"
#include "commands.h"

typedef struct {
    const char *name;
    int dim, layers, heads, hidden, vocab, seq_len, batch;
} BenchConfig;

static const BenchConfig configs[] = {
    {"XS", 64, 2, 4, 192, 256, 64, 16}, /* the lab's experiments (docs/EXPERIMENTS.md): tiny, many seeds */
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

/* ---- workloads: what is timed, and what one run of it measured ---- */

/* WORK_SEEDS: n_seeds same-shaped models trained side by side (train --seeds: lockstep_run, one
 * model per thread at a time); WORK_SEEDS_APART: the same models one after another, each with every
 * thread (as separate runs would) */
typedef enum { WORK_SGEMM, WORK_TRAIN, WORK_SAMPLE, WORK_EVAL, WORK_SEEDS, WORK_SEEDS_APART, WORK_BF16_GEMM } WorkKind;
static const char *const work_names[] = {"sgemm", "train", "sample", "eval", "train_seeds", "train_seeds_apart",
                                         "bf16_gemm"};

typedef struct {
    WorkKind kind;
    const BenchConfig *bc; /* NULL for sgemm */
    const char *spec;      /* position scheme */
    int len;               /* tokens per row: T (train), tokens generated (sample), window (eval) */
    int batch;             /* train: rows per step */
    int repeats, steps, eval_tokens;
    int n_seeds;           /* WORK_SEEDS*: models */
    Precision precision;   /* of the weight products */
} Work;

typedef struct {
    Stat rate;                   /* tokens/s (sgemm: GFLOP/s) over the timed repetitions */
    Stat fwd_ms, bwd_ms, opt_ms; /* train: per step */
    double flops_per_token;      /* model FLOPs per token (0: not counted) */
    long tokens;                 /* tokens per timed repetition */
    long n_params;
    long peak_rss_kb; /* of the process that ran the workload */
    long limit;       /* eval: > 0 if the length is past what the scheme accepts or computes */
} WorkResult;

/* GFLOP/s of a large square sgemm, 5 runs: the best is the ceiling training is measured against */
static void work_sgemm(WorkResult *r) {
    enum { N = 1024, RUNS = 5 };
    float *a = xmalloc(sizeof(float) * N * N), *b = xmalloc(sizeof(float) * N * N), *c = xmalloc(sizeof(float) * N * N);
    for (int i = 0; i < N * N; i++) a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.1f;
    double g[RUNS];
    for (int k = 0; k < RUNS; k++) {
        double t0 = now_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
        g[k] = 2.0 * N * N * N / (now_seconds() - t0) / 1e9;
    }
    free(a), free(b), free(c);
    r->rate = stats(g, RUNS);
}

/* the same for the bf16 products (bf16_gemm, A B^T as the weight products run): their own ceiling */
static void work_bf16_gemm(WorkResult *r) {
    enum { N = 1024, RUNS = 5 };
    bf16 *a = xmalloc(sizeof(bf16) * N * N), *b = xmalloc(sizeof(bf16) * N * N);
    float *c = xmalloc(sizeof(float) * N * N);
    for (int i = 0; i < N * N; i++) a[i] = bf16_from_float((float)(i % 7) * 0.1f), b[i] = bf16_from_float((float)(i % 5) * 0.1f);
    double g[RUNS];
    bf16_gemm(1, N, N, N, a, N, b, N, c, N, 0); /* oneDNN builds its kernel at the first call */
    for (int k = 0; k < RUNS; k++) {
        double t0 = now_seconds();
        bf16_gemm(1, N, N, N, a, N, b, N, c, N, 0);
        g[k] = 2.0 * N * N * N / (now_seconds() - t0) / 1e9;
    }
    free(a), free(b), free(c);
    r->rate = stats(g, RUNS);
}

/* the model of a configuration, parameters allocated but not initialised; -1 with pelab_errmsg */
static int bench_model_alloc(Model *m, const BenchConfig *bc, const char *spec) {
    ModelConfig cfg = {.vocab_size = bc->vocab, .dim = bc->dim, .n_layers = bc->layers, .n_heads = bc->heads,
                       .n_kv_heads = bc->heads, .hidden_dim = bc->hidden, .seq_len = bc->seq_len, .norm_eps = 1e-5f,
                       .tied = 1};
    return model_create(m, &cfg, spec);
}

static void bench_model_create(Model *m, const BenchConfig *bc, const char *spec, Precision precision) {
    if (bench_model_alloc(m, bc, spec) != 0) pelab_die("bench: %s", pelab_errmsg);
    model_init_weights(m, 1);
    if (model_set_precision(m, precision) != 0) pelab_die("bench: %s", pelab_errmsg);
}

/* Model FLOPs per token of a causal forward over windows of len tokens: 2 per weight of every
 * matrix product (norm gains excluded), plus q.k and p.v over the p + 1 keys of query p
 * (4 * dim per key and layer), averaged over the window: 2 * layers * dim * (len + 1).
 * Training counts 3 forwards (the backward does twice the forward's products). */
static double forward_flops_per_token(const Model *m, int len) {
    size_t matmul_params = m->n_params - m->tensors[T_ATTN_NORM].numel - m->tensors[T_MLP_NORM].numel -
                           m->tensors[T_FINAL_NORM].numel - m->tensors[T_POS].numel -
                           m->tensors[T_ATTN_SCALE].numel - m->tensors[T_SINKS].numel;
    return 2.0 * matmul_params + 2.0 * m->cfg.n_layers * m->cfg.dim * (len + 1.0);
}

/* one model with its batch and optimizer state, ready to time training steps */
typedef struct {
    Model m;
    int B, T, vocab;
    int *in, *tg, *pos;
    float *am, *av;
    long step;
} Rig;

/* B rows of T tokens per step */
static void rig_init(Rig *g, const BenchConfig *bc, const char *spec, Precision precision, int B, int T) {
    bench_model_create(&g->m, bc, spec, precision);
    g->B = B, g->T = T, g->vocab = bc->vocab, g->step = 1;
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

/* times `steps` training steps; seconds in forward, backward and optimizer (clipping included) */
static void rig_steps(Rig *g, int steps, double *tf, double *tb, double *to) {
    AdamWConfig opt = {.lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
    *tf = *tb = *to = 0;
    for (int s = 0; s < steps; s++) {
        double t0 = now_seconds();
        model_zero_grad(&g->m);
        if (model_forward(&g->m, g->in, g->tg, g->pos, g->B, g->T) != 0) pelab_die("bench: %s", pelab_errmsg);
        double t1 = now_seconds();
        model_backward(&g->m);
        double t2 = now_seconds();
        clip_grad_norm(g->m.grads_mem, g->m.n_params, 1.0f);
        adamw_update(&g->m, g->am, g->av, &opt, g->step++);
        if (g->m.pos.scheme->after_update && g->m.tensors[T_POS].numel)
            g->m.pos.scheme->after_update(&g->m.pos, g->m.params.pos);
        model_sync_bf16(&g->m); /* bf16: the weights rounded once per step, as train does */
        double t3 = now_seconds();
        *tf += t1 - t0, *tb += t2 - t1, *to += t3 - t2;
    }
}

/* training: `steps` steps of [batch, T] per repetition, after one untimed repetition */
static void work_train(const Work *w, WorkResult *r) {
    Rig g;
    rig_init(&g, w->bc, w->spec, w->precision, w->batch, w->len);
    int n = w->repeats;
    double *tps = xmalloc(sizeof(double) * n), *fwd = xmalloc(sizeof(double) * n);
    double *bwd = xmalloc(sizeof(double) * n), *upd = xmalloc(sizeof(double) * n);
    for (int k = -1; k < n; k++) { /* k = -1: warm-up */
        double tf, tb, to;
        rig_steps(&g, w->steps, &tf, &tb, &to);
        if (k < 0) continue;
        tps[k] = (double)w->steps * g.B * g.T / (tf + tb + to);
        fwd[k] = tf / w->steps * 1e3, bwd[k] = tb / w->steps * 1e3, upd[k] = to / w->steps * 1e3;
    }
    r->rate = stats(tps, n), r->fwd_ms = stats(fwd, n), r->bwd_ms = stats(bwd, n), r->opt_ms = stats(upd, n);
    r->flops_per_token = 3.0 * forward_flops_per_token(&g.m, g.T);
    r->tokens = (long)w->steps * g.B * g.T;
    r->n_params = (long)g.m.n_params;
    free(tps), free(fwd), free(bwd), free(upd);
    rig_free(&g);
}

typedef struct {
    Rig *rigs;
    int *left; /* steps each model has still to take in this repetition */
} SeedRigs;

static int seed_rig_step(void *ctx, int k) {
    SeedRigs *sr = ctx;
    double tf, tb, to;
    rig_steps(&sr->rigs[k], 1, &tf, &tb, &to);
    return --sr->left[k] == 0;
}

/* n_seeds models of one configuration, `steps` steps each per repetition: side by side in
 * lockstep, or one after another; tokens/s counts every model's */
static void work_seeds(const Work *w, WorkResult *r) {
    int n = w->n_seeds, threads = omp_get_max_threads();
    Rig *rigs = xmalloc(sizeof(Rig) * n);
    for (int k = 0; k < n; k++) rig_init(&rigs[k], w->bc, w->spec, w->precision, w->batch, w->len);
    int *left = xmalloc(sizeof(int) * n);
    SeedRigs sr = {rigs, left};
    double *tps = xmalloc(sizeof(double) * w->repeats);
    for (int rep = -1; rep < w->repeats; rep++) {
        double t0 = now_seconds(), tf, tb, to;
        if (w->kind == WORK_SEEDS) {
            for (int k = 0; k < n; k++) left[k] = w->steps;
            lockstep_run(n, w->precision == PRECISION_FP32 ? threads : 1, seed_rig_step, &sr);
        } else
            for (int k = 0; k < n; k++) rig_steps(&rigs[k], w->steps, &tf, &tb, &to);
        if (rep >= 0) tps[rep] = (double)n * w->steps * w->batch * w->len / (now_seconds() - t0);
    }
    r->rate = stats(tps, w->repeats);
    r->flops_per_token = 3.0 * forward_flops_per_token(&rigs[0].m, w->len);
    r->tokens = (long)n * w->steps * w->batch * w->len;
    r->n_params = (long)rigs[0].m.n_params;
    for (int k = 0; k < n; k++) rig_free(&rigs[k]);
    free(rigs), free(left), free(tps);
}

/* sampling: w->batch texts side by side (1: decode_forward), greedy, KV cache, w->len new tokens
 * each after a 1-token prompt; tokens/s counts every text's */
static void work_sample(const Work *w, WorkResult *r) {
    Model m;
    bench_model_create(&m, w->bc, w->spec, w->precision);
    int V = w->bc->vocab, n_tok = w->len, S = w->batch > 1 ? w->batch : 1;
    KVCache kv;
    kvcache_init_batch(&kv, &m, S, n_tok, 64);
    float *logits = xmalloc(sizeof(float) * V * S);
    int *tok = xmalloc(sizeof(int) * S), *pos = xmalloc(sizeof(int) * S);
    double *tps = xmalloc(sizeof(double) * w->repeats);
    for (int k = -1; k < w->repeats; k++) {
        kvcache_reset(&kv);
        for (int b = 0; b < S; b++) tok[b] = 1 + b % (V - 1);
        double t0 = now_seconds();
        for (int i = 0; i < n_tok; i++) {
            for (int b = 0; b < S; b++) pos[b] = i;
            if (decode_forward_batch(&m, &kv, tok, pos, 1, logits, 0) != 0) pelab_die("bench: %s", pelab_errmsg);
            for (int b = 0; b < S; b++) {
                const float *row = logits + (size_t)b * V;
                int best = 0;
                for (int v = 1; v < V; v++) best = row[v] > row[best] ? v : best;
                tok[b] = best;
            }
        }
        if (k >= 0) tps[k] = (double)S * n_tok / (now_seconds() - t0);
    }
    free(tok), free(pos);
    r->rate = stats(tps, w->repeats);
    r->flops_per_token = forward_flops_per_token(&m, n_tok);
    r->tokens = n_tok;
    r->n_params = (long)m.n_params;
    kvcache_free(&kv);
    free(logits), free(tps);
    model_free(&m);
}

/* evaluation: forward only, batch 1, through `pelab eval`'s own path (eval_windows: the KV-cache
 * decoder in blocks of queries, log-softmax of every row): non-overlapping windows of w->len
 * tokens, as many as make at least w->eval_tokens predictions per repetition */
static void work_eval(const Work *w, WorkResult *r) {
    Model m;
    bench_model_create(&m, w->bc, w->spec, w->precision);
    long table = pos_max_position(&m.pos), comp = pos_computable_position(&m.pos);
    if ((table >= 0 && w->len > table) || (comp >= 0 && w->len > comp)) { /* as pelab eval: n/a */
        r->limit = table >= 0 && w->len > table ? table : comp;
        model_free(&m);
        return;
    }
    int len = w->len, windows = (w->eval_tokens + len - 1) / len;
    if (windows < 1) windows = 1;
    size_t n = (size_t)windows * len + 1;
    int *tokens = xmalloc(sizeof(int) * n);
    Rng rng;
    rng_seed(&rng, 7);
    for (size_t i = 0; i < n; i++) tokens[i] = (int)rng_below(&rng, w->bc->vocab);
    double *tps = xmalloc(sizeof(double) * w->repeats);
    for (int k = -1; k < w->repeats; k++) {
        ScoreResult sr;
        double t0 = now_seconds();
        if (eval_windows(&m, tokens, n, len, len, DYNAMIC_WINDOW, 0, NULL, NULL, NULL, &sr) != 0)
            pelab_die("bench: %s", pelab_errmsg);
        if (k >= 0) tps[k] = (double)sr.n_scored / (now_seconds() - t0);
    }
    r->rate = stats(tps, w->repeats);
    r->flops_per_token = forward_flops_per_token(&m, len);
    r->tokens = (long)(n - 1);
    r->n_params = (long)m.n_params;
    free(tokens), free(tps);
    model_free(&m);
}

static void work_run(const Work *w, WorkResult *r) {
    memset(r, 0, sizeof *r);
    switch (w->kind) {
    case WORK_SGEMM: work_sgemm(r); break;
    case WORK_BF16_GEMM: work_bf16_gemm(r); break;
    case WORK_TRAIN: work_train(w, r); break;
    case WORK_SAMPLE: work_sample(w, r); break;
    case WORK_EVAL: work_eval(w, r); break;
    case WORK_SEEDS:
    case WORK_SEEDS_APART: work_seeds(w, r); break;
    }
    r->peak_rss_kb = peak_rss_kb();
}

/* Runs the workload in a forked child that sends its WorkResult back through a pipe; the peak
 * RSS is the child's own (wait4), which starts from the small parent's pages. in_process: run
 * here instead (peak RSS is then the running maximum of this process). */
static void work_isolated(const Work *w, WorkResult *r, int in_process) {
    if (in_process) {
        work_run(w, r);
        return;
    }
    int fd[2];
    if (pipe(fd) != 0) pelab_die("bench: pipe: %s", strerror(errno));
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) pelab_die("bench: fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        WorkResult res;
        work_run(w, &res);
        ssize_t put = write(fd[1], &res, sizeof res);
        _exit(put == (ssize_t)sizeof res ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t k = read(fd[0], (char *)r + got, sizeof *r - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) pelab_die("bench: wait4: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != sizeof *r)
        pelab_die("bench: the %s%s%s workload failed (%s %d)", w->bc ? w->bc->name : "", w->bc ? " " : "",
                  work_names[w->kind], WIFSIGNALED(status) ? "signal" : "exit status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    r->peak_rss_kb = maxrss_kb(ru.ru_maxrss);
}

/* resident set of this process now (/proc/self/statm), else its peak (getrusage): what every
 * forked child starts with. ru_maxrss alone would include whatever ran before exec (Linux keeps
 * the peak across exec, e.g. the Python that launched us). */
static long current_rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages_total, pages_resident;
    int got = f ? fscanf(f, "%ld %ld", &pages_total, &pages_resident) : 0;
    if (f) fclose(f);
    if (got != 2) return peak_rss_kb();
    return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ---- output ---- */

/* environment variables that change thread behaviour: recorded with the figures */
static const char *const thread_env[] = {"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_PROC_BIND",
                                         "OMP_PLACES", "OPENBLAS_NUM_THREADS"};
enum { N_THREAD_ENV = sizeof thread_env / sizeof thread_env[0] };

static void print_thread_env(void) {
    int any = 0;
    for (int i = 0; i < N_THREAD_ENV; i++)
        if (getenv(thread_env[i]))
            printf("%s%s=%s", any++ ? " " : "environment: ", thread_env[i], getenv(thread_env[i]));
    if (any) printf("\n");
}

static void print_result(const Work *w, const WorkResult *r, double peak) {
    char label[48];
    const char *prec = precision_name(w->precision);
    if (w->kind == WORK_EVAL) snprintf(label, sizeof label, "eval %d %s", w->len, prec);
    else if (w->kind == WORK_TRAIN && w->len != w->bc->seq_len) snprintf(label, sizeof label, "train T%d %s", w->len, prec);
    else if (w->kind == WORK_SAMPLE && w->batch > 1) snprintf(label, sizeof label, "sample B%d %s", w->batch, prec);
    else if (w->kind == WORK_SEEDS) snprintf(label, sizeof label, "train x%d together %s", w->n_seeds, prec);
    else if (w->kind == WORK_SEEDS_APART) snprintf(label, sizeof label, "train x%d apart %s", w->n_seeds, prec);
    else snprintf(label, sizeof label, "%s %s", work_names[w->kind], prec);
    if (r->limit > 0) {
        printf("%s %-16s      n/a (past the %ld positions the scheme accepts or computes)\n", w->bc->name, label,
               r->limit);
        return;
    }
    printf("%s %-16s %8.0f tokens/s (min %.0f, max %.0f)", w->bc->name, label, r->rate.median, r->rate.min,
           r->rate.max);
    double gflops = r->rate.median * r->flops_per_token / 1e9;
    if (w->kind != WORK_SAMPLE) printf("  %5.1f GFLOP/s = %3.0f%% of sgemm peak", gflops, 100.0 * gflops / peak);
    if (w->kind == WORK_SEEDS || w->kind == WORK_SEEDS_APART)
        printf("  batch %d, %d models %s", w->batch, w->n_seeds,
               w->kind == WORK_SEEDS ? "side by side (train --seeds)" : "one after another");
    if (w->kind == WORK_TRAIN)
        printf("  batch %d  fwd %.1f / bwd %.1f / opt %.1f ms per step", w->batch, r->fwd_ms.median, r->bwd_ms.median,
               r->opt_ms.median);
    if (w->kind == WORK_SAMPLE) printf("  batch %d, greedy, KV cache, %d tokens each", w->batch, w->len);
    if (w->kind == WORK_EVAL) {
        long windows = r->tokens / w->len;
        printf("  batch 1, %ld window%s of %d", windows, windows == 1 ? "" : "s", w->len);
    }
    printf("  peak RSS %.1f MB\n", r->peak_rss_kb / 1024.0);
    fflush(stdout);
}


static void json_stat(FILE *f, const char *key, Stat s) {
    fprintf(f, ", \"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", key, s.median, s.min, s.max);
}

/* one row per workload; the schema tools/bench/bench_torch.py writes too */
static void json_row(FILE *f, const Work *w, const WorkResult *r, double peak, int first) {
    fprintf(f, "%s    {", first ? "" : ",\n");
    json_field(f, "", "config", w->bc->name);
    json_field(f, ", ", "workload", work_names[w->kind]);
    json_field(f, ", ", "precision", precision_name(w->precision));
    if (r->limit > 0) {
        fprintf(f, ", \"len\": %d, \"skipped\": \"past the %ld positions the scheme accepts or computes\"}", w->len,
                r->limit);
        return;
    }
    fprintf(f, ", \"len\": %d, \"batch\": %d, \"tokens_per_repeat\": %ld, \"repeats\": %d, \"params\": %ld",
            w->len, w->kind == WORK_EVAL ? 1 : w->batch, r->tokens, w->repeats, r->n_params);
    if (w->n_seeds) fprintf(f, ", \"seeds\": %d", w->n_seeds);
    json_stat(f, "tokens_per_s", r->rate);
    double gflops = r->rate.median * r->flops_per_token / 1e9;
    fprintf(f, ", \"flops_per_token\": %.6g, \"gflops\": %.4g, \"peak_fraction\": %.4g", r->flops_per_token, gflops,
            gflops / peak);
    if (w->kind == WORK_TRAIN) {
        json_stat(f, "fwd_ms", r->fwd_ms);
        json_stat(f, "bwd_ms", r->bwd_ms);
        json_stat(f, "opt_ms", r->opt_ms);
    }
    fprintf(f, ", \"peak_rss_mb\": %.1f}", r->peak_rss_kb / 1024.0);
}

/* baseline_kb < 0: every workload ran in this process */
static void json_write(const char *path, const char *spec, int threads, const WorkResult *sgemm, long baseline_kb,
                       const Work *works, const WorkResult *results, int n) {
    MemFile mf; /* composed once the workloads ran, written whole: never a file cut mid-row */
    FILE *f = memfile_open(&mf);
    if (!f) pelab_die("bench: --json %s: %s", path, pelab_errmsg);
    json_field(f, "{\n  ", "tool", "pelab");
    json_field(f, ", ", "pos", spec);
    fprintf(f, ", \"threads\": %d, \"isolated\": %s", threads, baseline_kb >= 0 ? "true" : "false");
    if (baseline_kb >= 0) fprintf(f, ", \"baseline_rss_mb\": %.1f", baseline_kb / 1024.0);
    json_stat(f, "sgemm_gflops", sgemm->rate);
    CpuIsa isa;
    cpu_isa(&isa);
    char isa_s[96];
    cpu_isa_str(&isa, isa_s, sizeof isa_s);
    const char *core = blas_core_name();
    json_field(f, ", ", "blas_core", core ? core : "unknown");
    json_field(f, ", ", "blas_kernels", blas_family_name(blas_family(core)));
    json_field(f, ", ", "cpu_isa", isa_s);
    json_field(f, ", ", "kernels", kernels()->name);
    fprintf(f, ", \"env\": {");
    for (int i = 0, any = 0; i < N_THREAD_ENV; i++)
        if (getenv(thread_env[i])) json_field(f, any++ ? ", " : "", thread_env[i], getenv(thread_env[i]));
    fprintf(f, "},\n  \"results\": [\n");
    for (int i = 0; i < n; i++) json_row(f, &works[i], &results[i], sgemm->rate.max, i == 0);
    fprintf(f, "\n  ]\n}\n");
    if (memfile_commit(&mf, path) != 0) pelab_die("bench: --json %s", pelab_errmsg);
}

/* ---- scheme comparison (in this process) ---- */

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
    for (int i = 0; i < n; i++) rig_init(&rigs[i], bc, names[i], PRECISION_FP32, bc->batch, bc->seq_len);
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

/* ---- the command ---- */

/* does the comma-separated list hold this word? */
static int list_has(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* every word of the comma-separated list is one of the allowed ones */
static void list_check(const char *flag, const char *list, const char *const *allowed, int n_allowed) {
    char *buf = strdup(list); /* strtok_r writes into it; never a cut-short copy */
    if (!buf) pelab_die("bench: out of memory");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int ok = 0;
        for (int i = 0; i < n_allowed; i++) ok |= strcmp(t, allowed[i]) == 0;
        if (!ok) pelab_die("bench: %s %s: unknown '%s'", flag, list, t);
    }
    free(buf);
}

enum { MAX_EVAL = 16, MAX_WORKS = 128, MAX_TRAIN_LENS = 8 };

/* eval lengths of one configuration: --eval-mult times its T, then --eval-extra for S */
static int eval_lengths(const BenchConfig *bc, const char *mult, const char *extra, int *out) {
    int n = 0;
    if (strcmp(mult, "none") != 0) {
        n = eval_parse_lengths(NULL, mult, bc->seq_len, out, MAX_EVAL);
        if (n < 0) pelab_die("bench: --eval-mult %s: expected up to %d positive multiples, or none", mult, MAX_EVAL);
    }
    if (strcmp(bc->name, "S") == 0 && strcmp(extra, "none") != 0) {
        int k = eval_parse_lengths(extra, NULL, bc->seq_len, out + n, MAX_EVAL - n);
        if (k < 0) pelab_die("bench: --eval-extra %s: expected positive lengths (%d in all with --eval-mult), or none",
                             extra, MAX_EVAL);
        n += k;
    }
    return n;
}

/* the workloads of one configuration and precision, in the order they run; train_lens: long
 * training at batch 1 (attention memory), M only */
static int plan_config(const BenchConfig *bc, const char *which, const char *spec, Precision precision,
                       const char *mult, const char *extra, const int *train_lens, int n_train_lens, int repeats,
                       int steps, int sample_tokens, int sample_batch, int eval_tokens, int n_seeds, Work *out) {
    Work base = {.bc = bc, .spec = spec, .repeats = repeats, .steps = steps, .eval_tokens = eval_tokens,
                 .precision = precision};
    int n = 0;
    if (list_has(which, "train")) {
        out[n] = base, out[n].kind = WORK_TRAIN, out[n].batch = bc->batch, out[n++].len = bc->seq_len;
        for (int i = 0; i < n_train_lens && strcmp(bc->name, "M") == 0; i++) {
            /* one step per repetition, at most 3: a step at 16384 takes tens of seconds */
            out[n] = base, out[n].kind = WORK_TRAIN, out[n].batch = 1, out[n].len = train_lens[i];
            out[n].steps = 1, out[n++].repeats = repeats < 3 ? repeats : 3;
        }
        for (int apart = 0; apart < 2 && n_seeds > 1; apart++) {
            out[n] = base, out[n].kind = apart ? WORK_SEEDS_APART : WORK_SEEDS, out[n].batch = bc->batch;
            out[n].len = bc->seq_len, out[n++].n_seeds = n_seeds;
        }
    }
    if (list_has(which, "sample")) {
        out[n] = base, out[n].kind = WORK_SAMPLE, out[n].batch = 1, out[n++].len = sample_tokens;
        if (sample_batch > 1) out[n] = base, out[n].kind = WORK_SAMPLE, out[n].batch = sample_batch, out[n++].len = sample_tokens;
    }
    if (list_has(which, "eval")) {
        int lens[MAX_EVAL], k = eval_lengths(bc, mult, extra, lens);
        for (int i = 0; i < k; i++) out[n] = base, out[n].kind = WORK_EVAL, out[n++].len = lens[i];
    }
    return n;
}

int cmd_bench(int argc, char **argv) {
    int repeats = 5, steps = 3, threads = 0, sample_tokens = 256, eval_tokens = 4096, in_process = 0, sample_batch = 16;
    int n_seeds = 0;
    const char *which = "S,M", *spec = "rope", *schemes = NULL, *workloads = "train,sample,eval";
    const char *mult = "1,4,16", *extra = "8192", *json_path = NULL, *precisions = "fp32,bf16", *train_lens_s = "1024,4096";
    const OptSpec opts[] = {
        {"--configs", OPT_STR, &which, 0, 0, "comma-separated configurations to run (XS, S, M)"},
        {"--workloads", OPT_STR, &workloads, 0, 0, "comma-separated workloads (train, sample, eval)"},
        {"--repeats", OPT_INT, &repeats, 1, 1000, "timed repetitions (the median is reported)"},
        {"--steps", OPT_INT, &steps, 1, 1000, "training steps per repetition"},
        {"--sample-tokens", OPT_INT, &sample_tokens, 1, 1 << 20, "tokens generated per sampling repetition"},
        {"--sample-batch", OPT_INT, &sample_batch, 1, 4096,
         "also sample this many texts side by side (sample --prompts; 1: only batch 1)"},
        {"--eval-mult", OPT_STR, &mult, 0, 0, "evaluation lengths, multiples of each config's T (none: skip)"},
        {"--eval-extra", OPT_STR, &extra, 0, 0, "more evaluation lengths, config S only (none: skip)"},
        {"--eval-tokens", OPT_INT, &eval_tokens, 1, 1 << 26, "predictions per evaluation repetition (>= 1 window)"},
        {"--json", OPT_OUT_FILE, &json_path, 0, 0, "also write every figure as JSON to this file"},
        {"--no-fork", OPT_FLAG, &in_process, 0, 0, "run every workload in this process (peak RSS: running max)"},
        {"--precision", OPT_STR, &precisions, 0, 0,
         "comma-separated precisions of the weight products (fp32, bf16: skipped with the reason where unsupported)"},
        {"--train-lens", OPT_STR, &train_lens_s, 0, 0,
         "long training of M at batch 1 at these lengths: speed and peak memory of attention (none: skip)"},
        {"--seeds", OPT_INT, &n_seeds, 0, 64,
         "also train this many models of each configuration side by side (train --seeds) and one after another"},
        {"--pos", OPT_STR, &spec, 0, 0, "position scheme of the benchmarked model"},
        {"--schemes", OPT_STR, &schemes, 0, 0, "compare training speed of these schemes with rope instead"},
        OPT_THREADS_ROW(&threads),
    };
    args_parse("bench", "[flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    static const char *const config_names[] = {"XS", "S", "M"}, *const workload_names[] = {"train", "sample", "eval"};
    list_check("--configs", which, config_names, 3);
    list_check("--workloads", workloads, workload_names, 3);
    static const char *const precision_names[] = {"fp32", "bf16"};
    list_check("--precision", precisions, precision_names, 2);
    int train_lens[MAX_TRAIN_LENS], n_train_lens = 0;
    if (strcmp(train_lens_s, "none") != 0) {
        n_train_lens = eval_parse_lengths(train_lens_s, NULL, 1, train_lens, MAX_TRAIN_LENS);
        if (n_train_lens < 0)
            pelab_die("bench: --train-lens %s: expected up to %d positive lengths, or none", train_lens_s, MAX_TRAIN_LENS);
    }
    char bf16_why[160] = "";
    int run_bf16 = list_has(precisions, "bf16"), bf16_trains = bf16_native(bf16_why, sizeof bf16_why);
    if (schemes && json_path) pelab_die("bench: --json applies to the workloads, not to --schemes");
    set_threads(threads);

    Work works[MAX_WORKS];
    int n = 0;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        if (schemes || !list_has(which, configs[i].name)) continue;
        Model m; /* a bad --pos fails here, once, not in every child (no OpenMP: model_create is serial) */
        if (bench_model_alloc(&m, &configs[i], spec) != 0) pelab_die("bench: %s", pelab_errmsg);
        model_free(&m);
        for (int p = 0; p < 2; p++) {
            if (p == 0 ? !list_has(precisions, "fp32") : !run_bf16) continue;
            if (n + 2 * MAX_EVAL + MAX_TRAIN_LENS + 4 > MAX_WORKS) pelab_die("bench: too many workloads");
            int planned = plan_config(&configs[i], workloads, spec, p ? PRECISION_BF16 : PRECISION_FP32, mult, extra,
                                      train_lens, n_train_lens, repeats, steps, sample_tokens, sample_batch, eval_tokens,
                                      n_seeds, works + n);
            for (int w = n; w < n + planned; w++) /* bf16 without native products: inference only */
                if (p && !bf16_trains && works[w].kind != WORK_SAMPLE && works[w].kind != WORK_EVAL) {
                    memmove(works + w, works + w + 1, (size_t)(n + planned - w - 1) * sizeof works[0]);
                    planned--, w--;
                }
            n += planned;
        }
    }

    long baseline_kb = in_process ? -1 : current_rss_kb(); /* every child starts with these pages */
    Work sgemm_work = {.kind = WORK_SGEMM};
    WorkResult sgemm;
    work_isolated(&sgemm_work, &sgemm, in_process);
    double peak = sgemm.rate.max;
    printf("sgemm 1024^3: %.1f GFLOP/s (best of 5)  threads %d\n", peak, omp_get_max_threads());
    print_thread_env();
    print_machine(stdout, 1); /* figures mean little without the kernels they ran on */
    char kern_line[256];
    kernels_report(kern_line, sizeof kern_line);
    printf("%s\n", kern_line);
    printf("XS = dim 64, 2 layers, 4 heads, hidden 192, vocab 256, T 64, batch 16\n");
    printf("S = dim 128, 4 layers, 4 heads, hidden 384, vocab 256, T 128, batch 16\n");
    printf("M = dim 288, 6 layers, 6 heads, hidden 768, vocab 256, T 256, batch 8\n");
    if (run_bf16 && !bf16_trains)
        printf("bf16: weights widened to fp32 in registers by the %s kernels; sample and eval only (%s)\n",
               kernels()->name, bf16_why);
    else if (run_bf16) {
        Work bf16_work = {.kind = WORK_BF16_GEMM};
        WorkResult bf16_peak;
        work_isolated(&bf16_work, &bf16_peak, in_process);
        printf("bf16 gemm 1024^3 (oneDNN, A B^T as the weight products): %.1f GFLOP/s (best of 5): the bf16 products' "
               "ceiling\n", bf16_peak.rate.max);
        printf("bf16: weight products through oneDNN, fp32 accumulation; attention and the rest fp32\n");
    }
    if (!in_process)
        printf("each workload in its own process; peak RSS includes a %.1f MB baseline\n", baseline_kb / 1024.0);
    if (schemes) {
        for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
            if (list_has(which, configs[i].name)) bench_schemes(&configs[i], schemes, repeats, steps);
        printf("peak RSS %.1f MB\n", peak_rss_kb() / 1024.0);
        return 0;
    }
    WorkResult results[MAX_WORKS];
    for (int i = 0; i < n; i++) {
        work_isolated(&works[i], &results[i], in_process);
        print_result(&works[i], &results[i], peak);
    }
    if (json_path) json_write(json_path, spec, omp_get_max_threads(), &sgemm, baseline_kb, works, results, n);
    return 0;
}
