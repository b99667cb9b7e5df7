#include "rotary.h"

#include "../../core/error.h"
#include "../../core/mem.h"
#include "../../core/sys.h"

/* one head's pairs: a[j * step], b[j * step] rotated by (c[j], s[j]) times sin_sign; the two
 * layouts as their own loops (a constant step), so both vectorize */
static inline void rotate_pairs(float *restrict a, float *restrict b, int step, const float *restrict c,
                                const float *restrict sn, int np, float sin_sign) {
    for (int j = 0; j < np; j++) {
        float cs = c[j], si = sin_sign * sn[j], x0 = a[j * step], x1 = b[j * step];
        a[j * step] = x0 * cs - x1 * si;
        b[j * step] = x0 * si + x1 * cs;
    }
}

void rotary_apply(const RotaryLayout *l, const RotaryTable *rt, float *v, const int *pos, int n, int n_heads,
                  float sin_sign) {
    const SinCosTable *t = rt->table;
    int hd = l->head_dim, np = l->rot_pairs, nf = t->n_freq, half = l->half_layout;
    int head_slots = rt->head_slots, head_div = rt->head_div;
    PAR_FOR((size_t)n * n_heads * np >= PAR_MIN_WORK / 4, int, r, n,
        const float *crow = t->cos_t + (size_t)pos[r] * nf, *srow = t->sin_t + (size_t)pos[r] * nf;
        for (int h = 0; h < n_heads; h++) {
            const float *c = crow + (h / head_div) * head_slots, *sn = srow + (h / head_div) * head_slots;
            float *x = v + ((size_t)r * n_heads + h) * hd;
            if (half) rotate_pairs(x, x + np, 1, c, sn, np, sin_sign); /* x[j], x[np + j] */
            else rotate_pairs(x, x + 1, 2, c, sn, np, sin_sign);       /* x[2j], x[2j + 1] */
        }
    );
}

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pos.h"

int rotary_core_prepare(RotaryCore *c, const char *scheme, int head_dim, int train_len) {
    int rot_dim = 2 * rope_rotary_pairs(head_dim, c->fraction);
    if (rot_dim < 2)
        return pelab_fail("--pos %s: fraction=%g of head_dim %d rotates no pair; expected at least 2 dims", scheme,
                          c->fraction, head_dim);
    c->layout.head_dim = head_dim;
    c->layout.rot_pairs = rot_dim / 2;
    if (rope_rule_check_pairs(&c->rule, c->layout.rot_pairs, scheme) != 0) return -1;
    /* a model fine-tuned at a longer length keeps the rule's original L (the PI recipe); LongRoPE's
     * file may name the length its factors were searched for */
    c->train_len = rope_rule_length(&c->rule, c->orig_len > 0 ? c->orig_len : train_len);
    c->freq = xmalloc(sizeof(double) * c->layout.rot_pairs);
    c->rule_len = c->train_len;
    rope_rule_freqs(&c->rule, rot_dim, c->base, c->train_len, c->train_len, c->freq, &c->attn_factor);
    return 0;
}

int rotary_core_set_length(RotaryCore *c, long n) {
    if (!rope_rule_is_dynamic(&c->rule)) return 0;
    long len = n > c->train_len ? n : c->train_len;
    if (len == c->rule_len) return 0;
    c->rule_len = len;
    /* LongRoPE's frequencies change only when the length crosses L: say so only then, so the
     * tables are not rebuilt at every step */
    int np = c->layout.rot_pairs;
    double *old = xmalloc(sizeof(double) * np), old_af = c->attn_factor;
    memcpy(old, c->freq, sizeof(double) * np);
    rope_rule_freqs(&c->rule, 2 * np, c->base, c->train_len, len, c->freq, &c->attn_factor);
    int changed = old_af != c->attn_factor || memcmp(old, c->freq, sizeof(double) * np) != 0;
    free(old);
    return changed;
}

long rotary_core_dynamic_from(const RotaryCore *c) { return rope_rule_is_dynamic(&c->rule) ? c->train_len : -1; }

int rotary_core_changes(const RotaryCore *c, long from_len, long to_len) {
    return rope_rule_changes(&c->rule, c->train_len, from_len, to_len);
}

double rotary_core_angle(const RotaryCore *c, int j, long pos) {
    return rope_rule_angle(&c->rule, c->freq[j], pos, c->train_len);
}

void rotary_core_free(RotaryCore *c) {
    free(c->freq);
    c->freq = NULL;
}
