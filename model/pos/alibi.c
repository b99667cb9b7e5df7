/* alibi.c: attention with linear biases (Press et al., ICLR 2022). No position embedding; every
 * head adds -m_h * (i - n) to the logit of query position i against key position n, after the
 * 1/sqrt(d) scaling (the paper does not scale the bias). Written as -m*(i-n) rather than fairseq's
 * +m*n: identical after softmax (the row constant m*i cancels) but stays <= 0 and does not grow
 * with absolute position. No learned parameters, no options. */
#include <math.h>
#include <stdlib.h>

#include "../../core/mem.h"
#include "pos.h"

typedef struct {
    int n_heads;
    float slopes[]; /* m_h, in head order */
} Alibi;

/* The official rule (fairseq get_slopes), valid for any head count: with c the largest power of
 * two <= H, the first c heads take the c-head geometric sequence 2^(-8k/c), k = 1..c; the other
 * H - c heads take every other slope of the 2c-head sequence, 2^(-4(2k+1)/c), k = 0..H-c-1.
 * The extra heads go last and are not sorted. Exponents are multiples of 1/c, so exp2 gives the
 * same floats as the Python reference. */
static double alibi_slope(int head, int n_heads) {
    int c = 1;
    while (2 * c <= n_heads) c *= 2;
    if (head < c) return exp2(-8.0 * (head + 1) / c);
    return exp2(-4.0 * (2 * (head - c) + 1) / c);
}

static int alibi_prepare(PosCtx *pc) {
    Alibi *s = xcalloc(1, sizeof *s + (size_t)pc->n_heads * sizeof(float));
    s->n_heads = pc->n_heads;
    for (int h = 0; h < pc->n_heads; h++) s->slopes[h] = (float)alibi_slope(h, pc->n_heads);
    pc->state = s; /* a single block: pos_free's default free() releases it */
    return 0;
}

static void alibi_bias_row(const PosCtx *pc, float *row, int qpos, const int *kpos, int nk, int head, int layer) {
    (void)layer;
    float m = ((const Alibi *)pc->state)->slopes[head];
    for (int j = 0; j < nk; j++) row[j] -= m * (float)(qpos - kpos[j]);
}

const PosScheme pos_alibi = {
    .name = "alibi",
    /* with Qwen's log-n query scaling past 3 positions (a modifier: attn_scale.h) */
    .test_specs = {"alibi+logn:len=3", "alibi+temp:scale=0.2+nope@1", "alibi+sinks:init=0.5+nope@1"},
    .prepare = alibi_prepare,
    .bias_row = alibi_bias_row,
};
