/* rotary.h: the one kernel of every rotary-family scheme (RoPE and its scaling rules, partial
 * rotary, xPos, FoPE): a 2x2 map per pair of dims of each q or k head,
 *     y0 = C x0 - S x1,   y1 = S x0 + C x1,
 * with C, S read from a SinCosTable row at the token's position. RoPE has C = cos, S = sin;
 * YaRN scales both by its attention factor; xPos by its decay; FoPE's C, S are Fourier series.
 * The backward is the transpose, [[C, S], [-S, C]]: the same kernel with S negated. */
#ifndef PELAB_ROTARY_H
#define PELAB_ROTARY_H

#include "sincos_table.h"

typedef struct {
    int head_dim;
    int rot_pairs;   /* pairs that are mapped; dims past 2 * rot_pairs pass through (partial rotary) */
    int half_layout; /* 0: pair j = dims (2j, 2j+1); 1: pair j = (j, j + rot_pairs) */
} RotaryLayout;

/* The table a map reads its C, S from, and which slots of a row each head's pairs read: pair j of
 * head h reads slot (h / head_div) * head_slots + j; head_slots = 0 shares one row across heads. */
typedef struct {
    const SinCosTable *table;
    int head_slots, head_div;
} RotaryTable;

/* v: [n, n_heads * head_dim], in place, each row's pairs mapped by the table's row at pos[row].
 * sin_sign: +1 forward, -1 the transpose (backward). */
void rotary_apply(const RotaryLayout *l, const RotaryTable *t, float *v, const int *pos, int n, int n_heads,
                  float sin_sign);

#endif

#include "pos.h"
#include "rope_scaling.h"

/* The options and frequencies every rotary scheme shares: base, layout, partial rotary
 * fraction and the scaling rule. Schemes embed one as `core` and build their tables from it. */
typedef struct {
    double base;
    double fraction;   /* share of each head's dims that rotate (GPT-NeoX partial rotary) */
    RopeRule rule;
    RotaryLayout layout;
    int orig_len;      /* option orig_len: the rules' original length L (0 where there is no such option) */
    int train_len;     /* L in force */
    long rule_len;     /* dynamic rules: the length freq was computed for */
    double *freq;      /* [rot_pairs] per-pair frequency under the rule */
    double attn_factor;
} RotaryCore;

/* the rows of the shared options in the option table of a scheme whose state T embeds a RotaryCore
 * named core, in canonical order */
#define ROTARY_OPTIONS(T)                                                                                      \
    POS_DOUBLE("base", T, core.base, 10000, 1.0001, 1e12, "pair j turns by base^(-2j/rot_dim) per position"), \
    POS_WORD("layout", T, core.layout.half_layout, 0, "pairs (2j, 2j+1) as llama2.c, or (j, j + rot_dim/2) as HF", \
             "interleaved", "half"),                                                                           \
    POS_DOUBLE("fraction", T, core.fraction, 1, 1e-9, 1, "share of each head's dims that rotate (partial rotary)"), \
    POS_RULE("scale", T, core.rule, "scaling rule"), /* --help lists the rules (rope_scaling.h) */            \
    POS_INT("orig_len", T, core.orig_len, 0, 1, 1 << 30, "the rules' original length L", .flags = POS_OPT_TRAIN_LEN)

int rotary_core_prepare(RotaryCore *c, const char *scheme, int head_dim, int train_len);
/* dynamic rules: recompute freq for a sequence of n positions; 1 if it changed (rebuild tables) */
int rotary_core_set_length(RotaryCore *c, long n);
/* -1, or the length past which a dynamic rule changes the frequencies (qk_dynamic_from) */
long rotary_core_dynamic_from(const RotaryCore *c);
/* qk_transform_changes of a rotary scheme: whether its rule's frequencies differ between lengths */
int rotary_core_changes(const RotaryCore *c, long from_len, long to_len);
/* RoPE angle of pair j at pos under the rule */
double rotary_core_angle(const RotaryCore *c, int j, long pos);
void rotary_core_free(RotaryCore *c);
