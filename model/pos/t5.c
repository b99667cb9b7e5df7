/* t5.c: T5 relative position bias (Raffel et al. 2020), decoder form. Query position i and key
 * position n get w[bucket(i - n)][h], a learned scalar per (bucket, head) added to the logit after
 * the 1/sqrt(d) scaling. One table shared by every layer, as in T5 (HF gives only block 0 a
 * relative_attention_bias and passes the bias on): param shape [buckets, n_heads], and because
 * every layer's bias_backward accumulates into the same dparams, its gradient sums over layers.
 *
 * Bucketing is HF's _relative_position_bucket with bidirectional = False (is_decoder): distances
 * below buckets/2 get their own bucket, larger ones share log-spaced buckets up to max_distance,
 * everything from max_distance on falls in the last bucket. Keys after the query (which the causal
 * mask hides anyway) collapse to distance 0. */
#include <math.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "../../core/rng.h"
#include "pos.h"

typedef struct {
    int n_buckets, max_distance;
    int *bucket_of; /* [max_distance]: bucket of distance 0 .. max_distance-1 */
} T5;

static const PosOption t5_options[] = {
    POS_INT("buckets", T5, n_buckets, 32, 2, 1 << 16, "distance buckets: half exact, half log-spaced"),
    POS_INT("max_distance", T5, max_distance, 128, 2, 1 << 20, "distances from here on share the last bucket"),
};

/* The exact-distance branch is taken before the logarithm: HF evaluates log(0) = -inf for small
 * distances and discards it with torch.where, which C must not imitate. Double precision; the
 * reference checks that float32 (HF computes the log in float32) gives the same table. */
static int t5_bucket(int dist, int n_buckets, int max_distance) {
    int max_exact = n_buckets / 2;
    if (dist < max_exact) return dist;
    double frac = log((double)dist / max_exact) / log((double)max_distance / max_exact);
    int b = max_exact + (int)(frac * (n_buckets - max_exact)); /* frac >= 0: truncation is floor */
    return b < n_buckets - 1 ? b : n_buckets - 1;
}

/* The table covers 0 .. max_distance-1; every longer distance is in the last bucket (the log term
 * reaches n_buckets - max_exact there), so it never has to grow with the sequence and the reserve
 * hook is not needed. */
static int t5_prepare(PosCtx *pc) {
    T5 *s = pc->state;
    if (s->max_distance <= s->n_buckets / 2)
        return pelab_fail("--pos t5: option max_distance=%d: expected more than buckets/2 = %d (the log-spaced "
                          "buckets span buckets/2 .. max_distance)",
                          s->max_distance, s->n_buckets / 2);
    s->bucket_of = xmalloc((size_t)s->max_distance * sizeof(int));
    for (int d = 0; d < s->max_distance; d++) s->bucket_of[d] = t5_bucket(d, s->n_buckets, s->max_distance);
    return 0;
}

static void t5_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    *ndim = 2;
    shape[0] = ((const T5 *)pc->state)->n_buckets;
    shape[1] = pc->n_heads;
}

/* HF T5: N(0, (d_model^-0.5 * factor)^2) with factor 1.0, i.e. std 1/sqrt(dim) */
static void t5_init_params(const PosCtx *pc, float *p, Rng *rng) {
    size_t n = (size_t)((const T5 *)pc->state)->n_buckets * pc->n_heads;
    float std = 1.0f / sqrtf((float)pc->dim);
    for (size_t i = 0; i < n; i++) p[i] = std * rng_normal(rng);
}

static inline int t5_lookup(const T5 *s, long dist) {
    if (dist < 0) dist = 0; /* a key after the query: bucket 0, as HF's max(-rel, 0) */
    return dist < s->max_distance ? s->bucket_of[dist] : s->n_buckets - 1;
}

static void t5_bias_row(const PosCtx *pc, float *row, int qpos, const int *kpos, int nk, int head, int layer) {
    (void)layer;
    const T5 *s = pc->state;
    const float *w = pc->params;
    int H = pc->n_heads;
    for (int j = 0; j < nk; j++) row[j] += w[(size_t)t5_lookup(s, (long)qpos - kpos[j]) * H + head];
}

static void t5_bias_backward(const PosCtx *pc, const float *drow, int qpos, const int *kpos, int nk, int head,
                             int layer, float *dparams) {
    (void)layer;
    const T5 *s = pc->state;
    int H = pc->n_heads;
    for (int j = 0; j < nk; j++) dparams[(size_t)t5_lookup(s, (long)qpos - kpos[j]) * H + head] += drow[j];
}

static void t5_release(PosCtx *pc) { free(((T5 *)pc->state)->bucket_of); }

const PosScheme pos_t5 = {
    .name = "t5",
    .caps = POS_CAP_LEARNED,
    POS_OPTIONS(t5_options),
    .state_size = sizeof(T5),
    .test_specs = {"t5:buckets=8,max_distance=16", "t5+nope@1"},
    .prepare = t5_prepare,
    .param_shape = t5_param_shape,
    .init_params = t5_init_params,
    .bias_row = t5_bias_row,
    .bias_backward = t5_bias_backward,
    .release = t5_release,
};
