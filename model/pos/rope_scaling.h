/* rope_scaling.h: RoPE context-extension rules (position-encodings.md sections 6 and 8). A rule
 * only changes how the rotary table is built: per-pair frequencies, an attention factor that
 * multiplies cos and sin of q and k alike (so logits scale by its square), or, for DynaTan, the
 * angle as a function of position. Rules are options of the rotary schemes: rope:scale=pi:4. */
#ifndef PELAB_ROPE_SCALING_H
#define PELAB_ROPE_SCALING_H

#include <stddef.h>

typedef enum {
    RULE_NONE,
    RULE_PI,          /* pi:S         theta_j / S */
    RULE_NTK,         /* ntk:S        base * S^(d/(d-2)) */
    RULE_DYNAMIC_NTK, /* dynamic-ntk[:F]  base * (F*n/L - (F-1))^(d/(d-2)), n = max(length, L) */
    RULE_YARN,        /* yarn:S       NTK-by-parts ramp (code variant), mscale 0.1 ln S + 1 */
    RULE_LLAMA3,      /* llama3:S     piecewise by wavelength, low 1, high 4 */
    RULE_DYNATAN,     /* dynatan[:L]  phi = theta * L * tanh(pos / L) (project-defined) */
    RULE_DYNATAN_A,   /* dynatan-a[:L] phi = theta * tanh(pos / L), the literal reading */
    RULE_LONGROPE,    /* longrope:PATH theta_j / short_j up to length L, theta_j / long_j past it */
} RopeRuleKind;

/* LongRoPE (Ding et al. 2024, arXiv 2402.13753; HF rope_type "longrope"): per-pair divisors of the
 * frequencies found by a search, read from a JSON file when the rule is parsed. They are held by
 * value so that a RopeRule stays a plain value that option tables and pos_set_scale copy freely:
 * nothing is shared or freed. The canonical spec keeps only the path, so a checkpoint trained or
 * scored with the rule needs the file where the path says. */
enum { ROPE_MAX_PAIRS = 256, ROPE_PATH_MAX = 256 };
typedef struct {
    char path[ROPE_PATH_MAX];
    int n_pairs; /* factors in each set: must equal the model's rotary pairs */
    double short_factor[ROPE_MAX_PAIRS], long_factor[ROPE_MAX_PAIRS];
    long orig_len;      /* original_max_position_embeddings (the switch length); 0: the model's L */
    double factor;      /* max_position_embeddings / orig_len, or the file's "factor"; 1: none */
    double attn_factor; /* the file's attention_factor; 0: sqrt(1 + ln factor / ln L) (1 if factor <= 1) */
} LongRopeFactors;

typedef struct {
    RopeRuleKind kind;
    double s;      /* scale factor (pi, ntk, yarn, llama3); dynamic-ntk: its factor */
    double tan_len; /* DynaTan's L; 0 = the training length */
    LongRopeFactors longrope; /* RULE_LONGROPE only */
} RopeRule;

/* "none", "pi:4", "ntk:4", "dynamic-ntk", "dynamic-ntk:2", "yarn:4", "llama3:8", "dynatan",
 * "dynatan:256", "dynatan-a", "dynatan-a:256", "longrope:PATH" (reads the file: an HF config.json
 * with rope_scaling, or a bare object with short_factor, long_factor and optionally
 * original_max_position_embeddings, max_position_embeddings, factor, attention_factor; PATH
 * may not hold ',' or '+', the spec's separators); -1 with pelab_errmsg naming what was expected */
int rope_rule_parse(const char *text, RopeRule *r);
void rope_rule_describe(const RopeRule *r, char *buf, size_t n);
/* 1 if the frequencies depend on the current sequence length (the KV cache must re-rotate) */
int rope_rule_is_dynamic(const RopeRule *r);
/* 1 if the rule's frequencies at length b differ from those at length a (original length L): never
 * for a static rule, for dynamic NTK at any two lengths past L, for LongRoPE only across L */
int rope_rule_changes(const RopeRule *r, int L, long a, long b);
/* the rule's original length L for a model whose rules' L is otherwise model_len (LongRoPE's file
 * may name its own) */
int rope_rule_length(const RopeRule *r, int model_len);
/* 0 if the rule fits rot_pairs rotary pairs (LongRoPE: one factor per pair), else -1 and one line
 * naming the scheme, the file and the field */
int rope_rule_check_pairs(const RopeRule *r, int rot_pairs, const char *scheme);
/* Per-pair frequencies for rotary dimension rot_dim (pairs = rot_dim/2), base b, training length L,
 * current length n (dynamic rules), and the attention factor applied to cos and sin. LongRoPE
 * takes its long set when n > L, as HF's seq_len > original_max_position_embeddings; its
 * pairs must have been checked (rope_rule_check_pairs). */
void rope_rule_freqs(const RopeRule *r, int rot_dim, double base, int L, long n, double *freq,
                     double *attn_factor);
/* LongRoPE's attention factor on cos and sin: given when > 0 (the file's attention_factor), else
 * sqrt(1 + ln s / ln L) for scale s > 1 and original length L > 1, else 1 (HF's and pelab's one formula) */
double rope_longrope_attn_factor(double given, double s, long L);
/* the whole pairs that rotate in a head of head_dim at this fraction (partial rotary): what a
 * rule's per-pair factors count */
int rope_rotary_pairs(int head_dim, double fraction);
/* rotation angle of pair j at pos given freq[j] (pos * freq except DynaTan) */
double rope_rule_angle(const RopeRule *r, double freq, long pos, int L);

#endif
