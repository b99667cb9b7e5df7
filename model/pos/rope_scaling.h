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
} RopeRuleKind;

typedef struct {
    RopeRuleKind kind;
    double s;      /* scale factor (pi, ntk, yarn, llama3); dynamic-ntk: its factor */
    double tan_len; /* DynaTan's L; 0 = the training length */
} RopeRule;

/* "none", "pi:4", "ntk:4", "dynamic-ntk", "dynamic-ntk:2", "yarn:4", "llama3:8", "dynatan",
 * "dynatan:256", "dynatan-a", "dynatan-a:256"; -1 with pelab_errmsg naming what was expected */
int rope_rule_parse(const char *text, RopeRule *r);
void rope_rule_describe(const RopeRule *r, char *buf, size_t n);
/* 1 if the frequencies depend on the current sequence length (the KV cache must re-rotate) */
int rope_rule_is_dynamic(const RopeRule *r);
/* Per-pair frequencies for rotary dimension rot_dim (pairs = rot_dim/2), base b, training length L,
 * current length n (dynamic rules), and the attention factor applied to cos and sin. */
void rope_rule_freqs(const RopeRule *r, int rot_dim, double base, int L, long n, double *freq,
                     double *attn_factor);
/* rotation angle of pair j at pos given freq[j] (pos * freq except DynaTan) */
double rope_rule_angle(const RopeRule *r, double freq, long pos, int L);

#endif
