/* fope.c: Fourier Position Embedding (Hua et al. 2024, docs/position-encodings.md section 7), as the
 * official OLMo code computes it. Per pair o of each q/k head the 2x2 map
 *     y0 = C x0 - S x1,   y1 = S x0 + C x1
 * has C, S = short Fourier series over the RoPE frequencies that complete a period within the
 * training length L (freq >= 2 pi / L; the others are clipped to frequency 0 and dropped):
 *     C[t][o] = sum_k A[k][o] cos(freq_k t),   S[t][o] = sum_k B[k][o] sin(freq_k t).
 * Only min(kept, head_dim/4) pairs are positional; the rest are zero-frequency (position-free).
 * A and B are FIXED random buffers (the paper's appendix B; not learned, not in the parameter
 * block), regenerated from seed=: identity (strided when kept > outputs) + noise, drawn separately
 * for cos and sin, per KV head (queries use their KV head's) and per layer (each official OLMo
 * block builds its own FourierEmbedding). Options, defaults = the official 60M config:
 *   sigma=0.3            noise scale
 *   sigma_mode=gain|std  gain (official): sigma is a xavier_normal gain over the (H = KV heads, in, out) tensor,
 *                        std = sigma sqrt(2 / (in*out + H*out)); std: the paper's N(0, sigma)
 *   pad=identity|official  zero-frequency pairs: C=1, S=0 (ours), or C=S=1 (official; a fixed
 *                        sqrt(2) R(45 deg) that doubles those dims in q.k)
 *   seed=N (1), base=F (10000), layout=half|interleaved (half, the official rotate_half).
 * C^2 + S^2 != 1, so the backward is the transpose M^T (the kernel with S negated), not R(-phi).
 * When kept > head_dim/4 the strided identity reaches only ceil-spaced columns: some positional
 * pairs carry noise only (docs/position-encodings.md section 7, the floor table); fope_setup() reports how many got an identity. */
#include "fope.h"

#include <math.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "../../core/rng.h"
#include "rotary.h"

typedef struct Fope Fope;
typedef struct {
    const Fope *s;
    int layer;
} FopeLayerCtx;

struct Fope {
    RotaryCore core; /* base, layout, and the RoPE frequencies the bank is cut from */
    double sigma;
    int sigma_is_std, pad_official, seed;
    FopeSetup setup;
    int n_kv_heads;
    double *coef_cos, *coef_sin; /* A, B: [n_layers][n_kv_heads][kept][n_out] */
    FopeLayerCtx *layer_ctx;     /* [n_layers] */
    SinCosTable *tables;         /* [n_layers], row = [kv_head][pair] */
    int n_tables;
};

const FopeSetup *fope_setup(const PosCtx *pc) { return &((const Fope *)pc->state)->setup; }

void fope_head_row(const FopeSeries *f, long t, double *C, double *S) {
    int n_out = f->n_out;
    for (int o = 0; o < n_out; o++) C[o] = 0.0, S[o] = 0.0;
    for (int k = 0; k < f->n_in; k++) {
        double ck = cos(f->freq[k] * (double)t), sk = sin(f->freq[k] * (double)t);
        for (int o = 0; o < n_out; o++) C[o] += f->A[k * n_out + o] * ck, S[o] += f->B[k * n_out + o] * sk;
    }
    for (int o = n_out; o < f->n_pairs; o++) C[o] = 1.0, S[o] = f->pad_official ? 1.0 : 0.0;
}

/* the shared rotary base and layout (the official rotate_half by default); FoPE clips its own low
 * frequencies, so fraction and scaling rules, which would change that bank, are not options */
static const PosOption fope_options[] = {
    POS_DOUBLE("base", Fope, core.base, 10000, 1.0001, 1e12, "the RoPE frequencies the bank is cut from",
               .flags = POS_OPT_SHORTEST),
    POS_WORD("layout", Fope, core.layout.half_layout, 1,
             "pairs (2j, 2j+1), or (j, j + head_dim/2) as the official code", "interleaved", "half"),
    POS_DOUBLE("sigma", Fope, sigma, 0.3, 0, 10, "scale of the coefficients' noise", .flags = POS_OPT_SHORTEST),
    POS_WORD("sigma_mode", Fope, sigma_is_std, 0, "sigma is a xavier-normal gain (official) or the std (the paper)",
             "gain", "std"),
    POS_WORD("pad", Fope, pad_official, 0, "zero-frequency pairs: C=1, S=0, or C=S=1 as the official code",
             "identity", "official"),
    POS_INT("seed", Fope, seed, 1, 0, 2147483647, "seed of the fixed random coefficients"),
};

static void fope_layer_row(const void *ctx, long pos, int n, double *cos_out, double *sin_out) {
    const FopeLayerCtx *lc = ctx;
    const Fope *s = lc->s;
    const FopeSetup *b = &s->setup;
    size_t per_head = (size_t)b->kept * b->n_out;
    (void)n;
    for (int h = 0; h < s->n_kv_heads; h++) {
        size_t off = ((size_t)lc->layer * s->n_kv_heads + h) * per_head;
        FopeSeries f = {.freq = s->core.freq, .A = s->coef_cos + off, .B = s->coef_sin + off, .n_in = b->kept,
                        .n_out = b->n_out, .n_pairs = b->n_pairs, .pad_official = s->pad_official};
        fope_head_row(&f, pos, cos_out + h * b->n_pairs, sin_out + h * b->n_pairs);
    }
}

/* identity (strided when kept > n_out: column o gets its 1 at row o * ceil(kept / n_out)) + noise */
static void fope_init_coefs(double *m, const FopeSetup *b, double noise_std, Rng *rng) {
    int step = (b->kept + b->n_out - 1) / b->n_out;
    for (int k = 0; k < b->kept; k++)
        for (int o = 0; o < b->n_out; o++)
            m[k * b->n_out + o] = noise_std * rng_normal(rng) + (k == o * step ? 1.0 : 0.0);
}

static int fope_prepare(PosCtx *pc) {
    Fope *s = pc->state;
    s->core.fraction = 1.0; /* every pair is mapped, positional or padded */
    if (rotary_core_prepare(&s->core, "fope", pc->head_dim, pc->seq_len) != 0) return -1;
    FopeSetup *b = &s->setup;
    b->n_pairs = s->core.layout.rot_pairs;
    b->floor_freq = 2.0 * M_PI / pc->seq_len;
    /* freq is decreasing, so the kept frequencies are a prefix of it */
    for (b->kept = 0; b->kept < b->n_pairs && s->core.freq[b->kept] >= b->floor_freq; b->kept++) {}
    b->n_out = b->kept < pc->head_dim / 4 ? b->kept : pc->head_dim / 4;
    if (b->n_out == 0)
        return pelab_fail("--pos fope: no pair would carry position: head_dim %d and training length %d keep %d "
                          "RoPE frequencies >= 2pi/L = %g and allow head_dim/4 = %d positional pairs (use a longer "
                          "seq_len or head_dim >= 4, or --pos nope)",
                          pc->head_dim, pc->seq_len, b->kept, b->floor_freq, pc->head_dim / 4);
    b->lowest_kept = s->core.freq[b->kept - 1];
    int step = (b->kept + b->n_out - 1) / b->n_out;
    b->identity_cols = 0;
    for (int o = 0; o < b->n_out; o++) b->identity_cols += o * step < b->kept;
    s->n_kv_heads = pc->n_kv_heads;
    /* PyTorch xavier_normal_ on (H, in, out): fan_in = in*out, fan_out = H*out */
    double fan_in = (double)b->kept * b->n_out, fan_out = (double)s->n_kv_heads * b->n_out;
    b->noise_std = s->sigma_is_std ? s->sigma : s->sigma * sqrt(2.0 / (fan_in + fan_out));

    size_t per_head = (size_t)b->kept * b->n_out, n_heads_all = (size_t)pc->n_layers * s->n_kv_heads;
    s->coef_cos = xmalloc(sizeof(double) * per_head * n_heads_all);
    s->coef_sin = xmalloc(sizeof(double) * per_head * n_heads_all);
    Rng rng;
    rng_seed(&rng, (uint64_t)s->seed);
    for (size_t i = 0; i < n_heads_all; i++) {
        fope_init_coefs(s->coef_cos + i * per_head, b, b->noise_std, &rng);
        fope_init_coefs(s->coef_sin + i * per_head, b, b->noise_std, &rng);
    }
    s->n_tables = pc->n_layers;
    s->layer_ctx = xmalloc(sizeof(FopeLayerCtx) * s->n_tables);
    s->tables = xmalloc(sizeof(SinCosTable) * s->n_tables);
    for (int l = 0; l < s->n_tables; l++) {
        s->layer_ctx[l] = (FopeLayerCtx){s, l};
        sincos_table_init_direct(&s->tables[l], s->n_kv_heads * b->n_pairs, fope_layer_row, &s->layer_ctx[l]);
    }
    return 0;
}

static int fope_reserve(PosCtx *pc, long n_positions) {
    Fope *s = pc->state;
    for (int l = 0; l < s->n_tables; l++)
        if (sincos_table_reserve(&s->tables[l], n_positions) != 0) return -1;
    return 0;
}

/* key head h is KV head h; query head h uses KV head h / (n_heads / n_kv_heads) */
static void fope_apply(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer,
                       float sin_sign) {
    const Fope *s = pc->state;
    int head_div = is_key ? 1 : pc->n_heads / pc->n_kv_heads;
    rotary_apply(&s->core.layout, &(RotaryTable){&s->tables[layer], s->setup.n_pairs, head_div}, v, pos, n, n_heads,
                 sin_sign);
}

static void fope_qk_forward(const PosCtx *pc, float *v, const int *pos, int n, int n_heads, int is_key, int layer) {
    fope_apply(pc, v, pos, n, n_heads, is_key, layer, 1.0f);
}

/* M^T = [[C, S], [-S, C]]: not R(-phi), since C^2 + S^2 != 1 */
static void fope_qk_backward(const PosCtx *pc, float *dv, const int *pos, int n, int n_heads, int is_key,
                             int layer) {
    fope_apply(pc, dv, pos, n, n_heads, is_key, layer, -1.0f);
}

static void fope_release(PosCtx *pc) {
    Fope *s = pc->state;
    for (int l = 0; l < s->n_tables; l++) sincos_table_free(&s->tables[l]);
    free(s->tables);
    free(s->layer_ctx);
    free(s->coef_cos);
    free(s->coef_sin);
    rotary_core_free(&s->core);
}

const PosScheme pos_fope = {
    .name = "fope",
    .caps = POS_CAP_ROTARY,
    POS_OPTIONS(fope_options),
    .state_size = sizeof(Fope),
    .test_specs = {"fope:pad=official,sigma=0.1"},
    .prepare = fope_prepare,
    .reserve = fope_reserve,
    .qk_forward = fope_qk_forward,
    .qk_backward = fope_qk_backward,
    .release = fope_release,
};
