#include "bf16.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h> /* AVX512_BF16 (bf16_gemv); x86-64 only */
#endif

#include "../core/cpu.h"
#include "../core/error.h"
#include "../core/kernels.h"
#include "../core/sys.h"

void bf16_convert(bf16 *dst, const float *src, size_t n) {
    PAR_FOR(n >= 4 * PAR_MIN_WORK, size_t, i, n, dst[i] = bf16_from_float(src[i]););
}

void bf16_convert_transposed(bf16 *dst, const float *src, int rows, int cols, int lds) {
    /* tiles of 32 x 32, so both the reads and the writes stay within a few cache lines */
    enum { TILE = 32 };
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)rows * cols >= 4 * PAR_MIN_WORK)
    for (int r0 = 0; r0 < rows; r0 += TILE)
        for (int c0 = 0; c0 < cols; c0 += TILE) {
            int r1 = r0 + TILE < rows ? r0 + TILE : rows, c1 = c0 + TILE < cols ? c0 + TILE : cols;
            for (int c = c0; c < c1; c++)
                for (int r = r0; r < r1; r++) dst[(size_t)c * rows + r] = bf16_from_float(src[(size_t)r * lds + c]);
        }
}

static struct {
    bf16 *buf;
    size_t cap;
} workspaces[3];

bf16 *bf16_workspace(int slot, size_t n) {
    if (workspaces[slot].cap < n) {
        free(workspaces[slot].buf);
        workspaces[slot].buf = malloc(n * sizeof(bf16));
        workspaces[slot].cap = workspaces[slot].buf ? n : 0;
    }
    return workspaces[slot].buf;
}

static void free_workspaces(void) {
    for (int i = 0; i < 3; i++) free(workspaces[i].buf);
    memset(workspaces, 0, sizeof workspaces);
}

#if defined(__x86_64__)
/* 32 pairs per instruction (vdpbf16ps); the tail through a masked load */
__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void dpbf16_rows(float *out, const bf16 *w, const bf16 *x,
                                                                          int o0, int o1, int C) {
    for (int o = o0; o < o1; o++) {
        const bf16 *row = w + (size_t)o * C;
        __m512 acc = _mm512_setzero_ps();
        int c = 0;
        for (; c + 32 <= C; c += 32)
            acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_loadu_si512(row + c), (__m512bh)_mm512_loadu_si512(x + c));
        if (c < C) {
            __mmask32 m = (__mmask32)((1ull << (C - c)) - 1);
            acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_maskz_loadu_epi16(m, row + c),
                                   (__m512bh)_mm512_maskz_loadu_epi16(m, x + c));
        }
        out[o] = _mm512_reduce_add_ps(acc);
    }
}
#endif

/* whether this CPU has AVX512_BF16 and the AVX-512 kernel set is in use (PELAB_ISA below it
 * emulates a CPU without) */
static int cpu_bf16_dot(void) {
    static int has = -1;
    if (has < 0) {
        CpuIsa isa;
        cpu_isa(&isa);
        has = isa.avx512bf16;
    }
    return has && kernels()->isa == ISA_AVX512;
}

int bf16_gemv(float *out, const bf16 *w, const float *x, int OC, int C) {
#if defined(__x86_64__)
    bf16 *xb = cpu_bf16_dot() ? bf16_workspace(0, (size_t)C) : NULL;
    if (!xb) return -1;
    bf16_convert(xb, x, (size_t)C);
    /* one block of rows per thread when the product is worth a fork (blocks of 64 left 288 rows
     * split 192 : 96 over 2 threads); each row's sum is its own, whatever the split */
    int par = (size_t)OC * C >= 2 * PAR_MIN_WORK, threads = par ? omp_get_max_threads() : 1;
    int rows = (OC + threads - 1) / threads, n_blocks = (OC + rows - 1) / rows;
    PAR_FOR(par, int, blk, n_blocks, dpbf16_rows(out, w, xb, blk * rows, blk * rows + rows < OC ? blk * rows + rows : OC, C););
    return 0;
#else
    (void)out, (void)w, (void)x, (void)OC, (void)C;
    return -1;
#endif
}

/* the line for a CPU without native bf16 products */
static void widened_report(char *buf, size_t n, const char *why) {
    snprintf(buf, n, "bf16 weights: widened to fp32 in registers by the %s kernels, for inference (--precision bf16 "
                     "samples, scores, evaluates; training needs native bf16 products: %s)", kernels()->name, why);
}

#ifdef PELAB_NO_DNNL

int bf16_native(char *why, size_t n) {
#if defined(__x86_64__)
    snprintf(why, n, "pelab was built without oneDNN (install libdnnl-dev and rebuild)");
#else
    /* a NEON BF16 path (BFDOT/BFMMLA: Apple M2, Graviton 3) is not written: nothing here could test it */
    snprintf(why, n, "bf16 products need an x86-64 CPU with AVX512_BF16 or AMX-BF16 (through oneDNN); pelab has no "
                     "bf16 product for this CPU architecture");
#endif
    return 0;
}
const char *bf16_impl_name(void) { return "none"; }
void bf16_report(char *buf, size_t n) {
    char why[160];
    bf16_native(why, sizeof why);
    widened_report(buf, n, why);
}
int bf16_gemm(int trans_b, int M, int N, int K, const bf16 *A, int lda, const bf16 *B, int ldb, float *C, int ldc,
              int accumulate) {
    (void)trans_b, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc,
        (void)accumulate;
    return pelab_fail("bf16 products: pelab was built without oneDNN");
}

void bf16_release(void) { free_workspaces(); }

#else

#include <oneapi/dnnl/dnnl.h>

/* one cached matmul primitive per product shape; training runs a few dozen shapes */
enum { N_CACHED = 64 };
typedef struct {
    int trans_b, M, N, K, lda, ldb, ldc, accumulate;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c;
    unsigned long last_use;
} Cached;

static struct {
    int ready;
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    Cached cache[N_CACHED];
    int n_cached;
    unsigned long clock;
    char impl[64];
} g;

static int dnnl_ok(dnnl_status_t st, const char *what) {
    if (st == dnnl_success) return 0;
    return pelab_fail("oneDNN: %s failed (status %d)", what, (int)st);
}

static int ensure_engine(void) {
    if (g.ready) return 0;
    if (dnnl_ok(dnnl_engine_create(&g.engine, dnnl_cpu, 0), "engine_create") != 0) return -1;
    if (dnnl_ok(dnnl_stream_create(&g.stream, g.engine, dnnl_stream_default_flags), "stream_create") != 0) return -1;
    g.ready = 1;
    return 0;
}

int bf16_native(char *why, size_t n) {
    static CpuIsa isa;
    static int known; /* cpuid once: a VM may trap it, and bf16_gemm asks at every product */
    if (!known) cpu_isa(&isa), known = 1;
    if (!isa.avx512bf16 && !isa.amx_bf16) {
        snprintf(why, n, "this CPU lacks AVX512_BF16 and AMX-BF16 (CPU: %s)", isa.avx512f ? "AVX-512F without BF16" : "no AVX-512");
        return 0;
    }
    if (kernels()->isa != ISA_AVX512) { /* PELAB_ISA=avx2 on this CPU: as one without AVX-512 */
        snprintf(why, n, "PELAB_ISA=%s leaves out AVX512_BF16 and AMX-BF16", kernels()->name);
        return 0;
    }
    return 1;
}



const char *bf16_impl_name(void) { return g.impl[0] ? g.impl : "none"; }

void bf16_report(char *buf, size_t n) {
    char why[160];
    const dnnl_version_t *v = dnnl_version();
    if (!bf16_native(why, sizeof why)) {
        widened_report(buf, n, why);
        return;
    }
    CpuIsa isa;
    cpu_isa(&isa);
    snprintf(buf, n, "bf16 products: oneDNN %d.%d.%d, %s (--precision bf16)", v->major, v->minor, v->patch,
             isa.amx_bf16 ? "AMX-BF16" : "AVX512_BF16");
}

static void drop(Cached *c) {
    dnnl_primitive_destroy(c->prim);
    dnnl_memory_destroy(c->a);
    dnnl_memory_destroy(c->b);
    dnnl_memory_destroy(c->c);
    memset(c, 0, sizeof *c);
}

static int create(Cached *c) {
    dnnl_memory_desc_t a_md, b_md, c_md;
    dnnl_dims_t a_dims = {c->M, c->K}, a_str = {c->lda, 1};
    dnnl_dims_t b_dims = {c->K, c->N}, b_str = {c->trans_b ? 1 : c->ldb, c->trans_b ? c->ldb : 1};
    dnnl_dims_t c_dims = {c->M, c->N}, c_str = {c->ldc, 1};
    if (dnnl_ok(dnnl_memory_desc_init_by_strides(&a_md, 2, a_dims, dnnl_bf16, a_str), "memory_desc A") ||
        dnnl_ok(dnnl_memory_desc_init_by_strides(&b_md, 2, b_dims, dnnl_bf16, b_str), "memory_desc B") ||
        dnnl_ok(dnnl_memory_desc_init_by_strides(&c_md, 2, c_dims, dnnl_f32, c_str), "memory_desc C"))
        return -1;
    dnnl_matmul_desc_t desc;
    if (dnnl_ok(dnnl_matmul_desc_init(&desc, &a_md, &b_md, NULL, &c_md), "matmul_desc_init")) return -1;
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t ops = NULL;
    if (dnnl_ok(dnnl_primitive_attr_create(&attr), "attr_create")) return -1;
    if (c->accumulate) {
        dnnl_post_ops_create(&ops);
        dnnl_post_ops_append_sum(ops, 1.0f);
        dnnl_primitive_attr_set_post_ops(attr, ops);
    }
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, g.engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (ops) dnnl_post_ops_destroy(ops);
    if (dnnl_ok(st, "matmul primitive_desc_create")) return -1;
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
        snprintf(g.impl, sizeof g.impl, "%s", impl);
    st = dnnl_primitive_create(&c->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (dnnl_ok(st, "matmul primitive_create")) return -1;
    /* memory objects with no buffer: the handles are set at every call */
    if (dnnl_ok(dnnl_memory_create(&c->a, &a_md, g.engine, DNNL_MEMORY_NONE), "memory A") ||
        dnnl_ok(dnnl_memory_create(&c->b, &b_md, g.engine, DNNL_MEMORY_NONE), "memory B") ||
        dnnl_ok(dnnl_memory_create(&c->c, &c_md, g.engine, DNNL_MEMORY_NONE), "memory C"))
        return -1;
    return 0;
}

static Cached *lookup(const Cached *want) {
    for (int i = 0; i < g.n_cached; i++) {
        Cached *c = &g.cache[i];
        if (c->trans_b == want->trans_b && c->M == want->M && c->N == want->N && c->K == want->K &&
            c->lda == want->lda && c->ldb == want->ldb && c->ldc == want->ldc && c->accumulate == want->accumulate)
            return c;
    }
    /* a free slot, or the least recently used one */
    Cached *slot = &g.cache[0];
    if (g.n_cached < N_CACHED) slot = &g.cache[g.n_cached++];
    else {
        for (int i = 1; i < N_CACHED; i++)
            if (g.cache[i].last_use < slot->last_use) slot = &g.cache[i];
        drop(slot);
    }
    *slot = *want;
    if (create(slot) != 0) {
        drop(slot);   /* whatever create made before it failed */
        slot->M = -1; /* matches nothing */
        return NULL;
    }
    return slot;
}

int bf16_gemm(int trans_b, int M, int N, int K, const bf16 *A, int lda, const bf16 *B, int ldb, float *C, int ldc,
              int accumulate) {
    char why[160];
    if (!bf16_native(why, sizeof why)) return pelab_fail("bf16 products: %s", why);
    if (ensure_engine() != 0) return -1;
    Cached want = {.trans_b = trans_b != 0, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc,
                   .accumulate = accumulate != 0};
    Cached *c = lookup(&want);
    if (!c) return -1;
    c->last_use = ++g.clock;
    dnnl_memory_set_data_handle(c->a, (void *)A);
    dnnl_memory_set_data_handle(c->b, (void *)B);
    dnnl_memory_set_data_handle(c->c, C);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, c->a}, {DNNL_ARG_WEIGHTS, c->b}, {DNNL_ARG_DST, c->c}};
    if (dnnl_ok(dnnl_primitive_execute(c->prim, g.stream, 3, args), "matmul execute")) return -1;
    return dnnl_ok(dnnl_stream_wait(g.stream), "stream_wait");
}

void bf16_release(void) {
    for (int i = 0; i < g.n_cached; i++)
        if (g.cache[i].prim) drop(&g.cache[i]);
    g.n_cached = 0;
    if (g.ready) {
        dnnl_stream_destroy(g.stream);
        dnnl_engine_destroy(g.engine);
    }
    memset(&g, 0, sizeof g);
    free_workspaces();
}

#endif
