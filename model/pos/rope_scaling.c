/* rope_scaling.c: the RoPE scaling rules, one entry each in the table at the end (RopeRuleDef,
 * rope_scaling.h), and the generic parts every rule goes through: parsing, description, lists. */
#include "rope_scaling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"

/* pair j turns by b^(-2j/d) per position: the frequencies every rule starts from */
static void base_freqs(double b, int d, double *freq) {
    for (int j = 0; j < d / 2; j++) freq[j] = pow(b, -2.0 * j / d);
}

/* "rope_scaling": {"rope_type": TYPE, "factor": S} */
static void hf_factor_only(const RopeRule *r, int L, StrBuf *b) {
    (void)L;
    sb_printf(b, "  \"rope_scaling\": {\"rope_type\": \"%s\", \"factor\": %.17g},\n", r->def->hf_type, r->s);
}

/* --- pi:S: position interpolation (Chen et al. 2023), theta_j / S ------------------------------- */

static void pi_freqs(const RopeRule *r, int d, double b, int L, long n, double *freq, double *attn_factor) {
    (void)L, (void)n, (void)attn_factor;
    base_freqs(b, d, freq);
    for (int j = 0; j < d / 2; j++) freq[j] /= r->s;
}

/* --- ntk:S: NTK-aware base change, base * S^(d/(d-2)) -------------------------------------------- */

static double ntk_base(double base, double s, int d) { return base * pow(s, (double)d / (d - 2)); }

static void ntk_freqs(const RopeRule *r, int d, double b, int L, long n, double *freq, double *attn_factor) {
    (void)L, (void)n, (void)attn_factor;
    base_freqs(ntk_base(b, r->s, d), d, freq);
}

/* a static base change is plain RoPE at another base: the same frequencies */
static double ntk_hf_theta(const RopeRule *r, double base, int d, char *note, size_t n) {
    double b = ntk_base(base, r->s, d);
    snprintf(note, n, "ntk:%g has no HF rope_type: written as rope_theta %.17g (base %g x %g^(d/(d-2)))", r->s, b,
             base, r->s);
    return b;
}

/* --- dynamic-ntk[:F]: base * (F n/L - (F - 1))^(d/(d-2)), n = max(length, L) --------------------- */

static void dynamic_ntk_freqs(const RopeRule *r, int d, double b, int L, long n, double *freq, double *attn_factor) {
    (void)attn_factor;
    double len = n > L ? (double)n : (double)L;
    base_freqs(b * pow(r->s * len / L - (r->s - 1.0), (double)d / (d - 2)), d, freq);
}

static int changes_with_every_length(const RopeRule *r, int L, long a, long b) {
    (void)r, (void)L;
    return a != b;
}

/* --- yarn:S: NTK-by-parts ramp (code variant), attention factor 0.1 ln S + 1 --------------------- */

/* pair index at which a pair makes n_rot full turns within L positions (YaRN's find_correction_dim) */
static double yarn_corr_dim(double n_rot, int d, double base, int L) {
    return d * log(L / (n_rot * 2.0 * M_PI)) / (2.0 * log(base));
}

static void yarn_freqs(const RopeRule *r, int d, double base, int L, long n, double *freq, double *attn_factor) {
    (void)n;
    base_freqs(base, d, freq);
    /* code variant (yarn repo, HF truncate=True, llama.cpp): a linear ramp in the pair index
     * between floor/ceil-rounded correction dims for beta_fast 32 and beta_slow 1 */
    double low = floor(yarn_corr_dim(32.0, d, base, L)), high = ceil(yarn_corr_dim(1.0, d, base, L));
    if (low < 0) low = 0;
    if (high > d - 1) high = d - 1;
    if (low == high) high += 0.001;
    for (int j = 0; j < d / 2; j++) {
        double ramp = (j - low) / (high - low);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        double keep = 1.0 - ramp; /* weight of the original frequency */
        freq[j] = freq[j] / r->s * (1.0 - keep) + freq[j] * keep;
    }
    *attn_factor = 0.1 * log(r->s) + 1.0;
}

/* --- llama3:S: piecewise by wavelength, low_freq_factor 1, high_freq_factor 4 -------------------- */

enum { LLAMA3_LOW_FREQ = 1, LLAMA3_HIGH_FREQ = 4 };

static void llama3_freqs(const RopeRule *r, int d, double b, int L, long n, double *freq, double *attn_factor) {
    (void)n, (void)attn_factor;
    base_freqs(b, d, freq);
    double low_freq_factor = LLAMA3_LOW_FREQ, high_freq_factor = LLAMA3_HIGH_FREQ;
    double low_wavelen = L / low_freq_factor, high_wavelen = L / high_freq_factor;
    for (int j = 0; j < d / 2; j++) {
        double wavelen = 2.0 * M_PI / freq[j];
        if (wavelen < high_wavelen) continue;
        if (wavelen > low_wavelen) {
            freq[j] /= r->s;
            continue;
        }
        double smooth = (L / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
        freq[j] = (1.0 - smooth) * freq[j] / r->s + smooth * freq[j];
    }
}

/* per-pair divisors (convert_hf_to_gguf.py's rope_freqs for Llama 3) as llama3:S and L: S the
 * largest divisor; L from a pair in the smooth band, where 1/divisor = (1 - m)/S + m and
 * m = (L/wavelength - 1)/3, else the smallest length the unchanged pairs allow */
static int llama3_fit(const float *divisor, int pairs, double base, RopeRule *r, int *L) {
    double s = 1, longest_kept = 0;
    for (int j = 0; j < pairs; j++) s = divisor[j] > s ? divisor[j] : s;
    if (!(s > 1 && s <= 1e6)) return -1;
    r->s = s;
    for (int j = 0; j < pairs; j++) {
        double wavelen = 2.0 * M_PI * pow(base, 2.0 * j / (2.0 * pairs)), f = divisor[j];
        if (f > 1 + 1e-6 && f < s * (1 - 1e-6)) {
            double m = (1.0 / f - 1.0 / s) / (1.0 - 1.0 / s), len = wavelen * (LLAMA3_HIGH_FREQ - LLAMA3_LOW_FREQ) * m +
                                                                    wavelen * LLAMA3_LOW_FREQ;
            if (!(len >= 1 && len < 1e9)) return -1;
            *L = (int)lround(len);
            return 0;
        }
        if (f <= 1 + 1e-6 && wavelen > longest_kept) longest_kept = wavelen;
    }
    double len = floor(longest_kept * LLAMA3_HIGH_FREQ) + 1;
    if (len >= 1e9) return -1;
    *L = (int)len;
    return 0;
}

static void llama3_hf(const RopeRule *r, int L, StrBuf *b) {
    sb_printf(b, "  \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": %.17g, \"low_freq_factor\": %d.0, "
              "\"high_freq_factor\": %d.0, \"original_max_position_embeddings\": %d},\n", r->s, LLAMA3_LOW_FREQ,
              LLAMA3_HIGH_FREQ, L);
}

/* --- dynatan[:L] and dynatan-a[:L]: the angle, not the frequencies -------------------------------- */

static double dynatan_len(const RopeRule *r, int L) { return r->tan_len > 0 ? r->tan_len : (double)L; }

/* phi = theta * L * tanh(pos / L): project-defined, from an internal note */
static double dynatan_angle(const RopeRule *r, double freq, long pos, int L) {
    double tl = dynatan_len(r, L);
    return freq * tl * tanh((double)pos / tl);
}

/* phi = theta * tanh(pos / L), the note's literal reading */
static double dynatan_a_angle(const RopeRule *r, double freq, long pos, int L) {
    return freq * tanh((double)pos / dynatan_len(r, L));
}

/* --- longrope:PATH: per-pair divisors read from a file, one set up to L, another past it --------- */

static int longrope_parse(const char *arg, RopeRule *r) { return longrope_read(arg, &r->longrope); }

static void longrope_describe(const RopeRule *r, char *buf, size_t n) {
    snprintf(buf, n, "longrope:%s", r->longrope.path);
}

static void longrope_freqs(const RopeRule *r, int d, double b, int L, long n, double *freq, double *attn_factor) {
    base_freqs(b, d, freq);
    const LongRopeFactors *f = &r->longrope;
    const double *ext = n > L ? f->long_factor : f->short_factor;
    for (int j = 0; j < d / 2 && j < f->n_pairs; j++) freq[j] /= ext[j];
    /* applied at every length, as HF does, not only past L */
    *attn_factor = rope_longrope_attn_factor(f->attn_factor, f->factor, L);
}

/* the set switches once, when the length crosses L (HF's seq_len > original_max_position_embeddings) */
static int longrope_changes(const RopeRule *r, int L, long a, long b) {
    (void)r;
    return (a > L) != (b > L);
}

static int longrope_length(const RopeRule *r, int model_len) {
    return r->longrope.orig_len > 0 ? (int)r->longrope.orig_len : model_len;
}

static int longrope_check_pairs(const RopeRule *r, int rot_pairs, const char *scheme) {
    if (r->longrope.n_pairs == rot_pairs) return 0;
    return pelab_fail("--pos %s: scale=longrope:%s: short_factor and long_factor hold %d factors each; expected %d, "
                      "one per rotary pair of the model", scheme, r->longrope.path, r->longrope.n_pairs, rot_pairs);
}

static void longrope_hf(const RopeRule *r, int L, StrBuf *b) {
    const LongRopeFactors *f = &r->longrope;
    double af = rope_longrope_attn_factor(f->attn_factor, f->factor, L);
    sb_printf(b, "  \"original_max_position_embeddings\": %d,\n  \"rope_scaling\": {\"rope_type\": \"longrope\", "
              "\"factor\": %.17g, \"attention_factor\": %.17g, \"original_max_position_embeddings\": %d",
              L, f->factor, af, L);
    for (int s = 0; s < 2; s++) {
        sb_printf(b, ", \"%s_factor\": [", s ? "long" : "short");
        for (int j = 0; j < f->n_pairs; j++)
            sb_printf(b, "%s%.17g", j ? ", " : "", s ? f->long_factor[j] : f->short_factor[j]);
        sb_printf(b, "]");
    }
    sb_printf(b, "},\n");
}

double rope_longrope_attn_factor(double given, double s, long L) {
    if (given > 0) return given;
    return s > 1 && L > 1 ? sqrt(1.0 + log(s) / log((double)L)) : 1.0;
}

/* --- the table ------------------------------------------------------------------------------ */

static const RopeRuleDef RULES[] = {
    {.name = "none", .usage = "none", .title = "no rule", .summary = "the frequencies as trained",
     .arg = ROPE_ARG_NONE},
    {.name = "pi", .usage = "pi:S", .title = "position interpolation",
     .summary = "position interpolation: every frequency / S", .arg = ROPE_ARG_FACTOR, .freqs = pi_freqs,
     .hf_type = "linear", .hf_scaling = hf_factor_only, .gguf_type = "linear"},
    {.name = "ntk", .usage = "ntk:S", .title = "NTK-aware scaling", .summary = "NTK-aware: base x S^(d/(d-2))",
     .arg = ROPE_ARG_FACTOR, .freqs = ntk_freqs, .hf_theta = ntk_hf_theta},
    {.name = "dynamic-ntk", .usage = "dynamic-ntk[:F]", .title = "dynamic NTK",
     .summary = "base x (F n/L - (F - 1))^(d/(d-2)) at the current length n past L", .arg = ROPE_ARG_OPT_FACTOR,
     .freqs = dynamic_ntk_freqs, .changes = changes_with_every_length, .hf_type = "dynamic",
     .hf_scaling = hf_factor_only, .hf_l_is_max_pos = 1},
    {.name = "yarn", .usage = "yarn:S", .title = "YaRN",
     .summary = "YaRN: NTK-by-parts ramp (beta 32, 1), cos and sin times 0.1 ln S + 1", .arg = ROPE_ARG_FACTOR,
     .freqs = yarn_freqs, .hf_type = "yarn", .hf_scaling = hf_factor_only, .hf_l_is_max_pos = 1, .gguf_type = "yarn"},
    {.name = "llama3", .usage = "llama3:S", .title = "Llama 3's rule",
     .summary = "Llama 3: wavelength above L: / S, below L/4: unchanged, smooth between", .arg = ROPE_ARG_FACTOR,
     .freqs = llama3_freqs, .hf_type = "llama3", .hf_scaling = llama3_hf, .gguf_fit = llama3_fit},
    {.name = "dynatan", .usage = "dynatan[:L]", .title = "DynaTan",
     .summary = "angle theta L tanh(pos / L) (project-defined)", .arg = ROPE_ARG_OPT_LENGTH, .angle = dynatan_angle},
    {.name = "dynatan-a", .usage = "dynatan-a[:L]", .title = "DynaTan",
     .summary = "angle theta tanh(pos / L), the literal reading", .arg = ROPE_ARG_OPT_LENGTH,
     .angle = dynatan_a_angle},
    {.name = "longrope", .usage = "longrope:PATH", .note = "JSON: an HF config or short_factor, long_factor",
     .title = "LongRoPE", .summary = "LongRoPE: frequency j / short_factor[j] up to L, / long_factor[j] past it",
     .arg = ROPE_ARG_CUSTOM, .parse_arg = longrope_parse, .describe_arg = longrope_describe,
     .freqs = longrope_freqs, .changes = longrope_changes, .length = longrope_length,
     .check_pairs = longrope_check_pairs, .hf_type = "longrope", .hf_scaling = longrope_hf},
};
enum { N_RULES = sizeof RULES / sizeof RULES[0] };

int rope_rule_count(void) { return N_RULES; }
const RopeRuleDef *rope_rule_at(int i) { return i >= 0 && i < N_RULES ? &RULES[i] : NULL; }

const RopeRuleDef *rope_rule_find(const char *name) {
    for (int i = 0; i < N_RULES; i++)
        if (strcmp(RULES[i].name, name) == 0) return &RULES[i];
    return NULL;
}

const RopeRuleDef *rope_rule_find_hf(const char *type) {
    for (int i = 0; i < N_RULES; i++)
        if (RULES[i].hf_type && strcmp(RULES[i].hf_type, type) == 0) return &RULES[i];
    return NULL;
}

const RopeRuleDef *rope_rule_find_gguf(const char *type) {
    for (int i = 0; i < N_RULES; i++)
        if (type ? RULES[i].gguf_type && strcmp(RULES[i].gguf_type, type) == 0 : RULES[i].gguf_fit != NULL) return &RULES[i];
    return NULL;
}

void rope_rule_list(char *buf, size_t n, const char *sep, int with_notes, int skip_none) {
    size_t used = 0;
    if (n) buf[0] = 0;
    for (int i = skip_none ? 1 : 0; i < N_RULES && used < n; i++) {
        const RopeRuleDef *d = &RULES[i];
        int k = snprintf(buf + used, n - used, "%s%s%s%s%s", used ? sep : "", d->usage,
                         with_notes && d->note ? " (" : "", with_notes && d->note ? d->note : "",
                         with_notes && d->note ? ")" : "");
        if (k > 0) used += (size_t)k;
    }
}

const RopeRuleDef *rope_rule_def(const RopeRule *r) { return r->def ? r->def : &RULES[0]; }
int rope_rule_is_none(const RopeRule *r) { return rope_rule_def(r) == &RULES[0]; }

/* --- what every rule goes through ------------------------------------------------------------ */

static int parse_factor(const char *name, const char *arg, double lo, double *out) {
    char *end;
    double x = strtod(arg, &end);
    if (end == arg || *end || !(x >= lo && x <= 1e6))
        return pelab_fail("--scale %s:%s: expected a number in [%g, 1e6] after '%s:'", name, arg, lo, name);
    *out = x;
    return 0;
}

int rope_rule_parse(const char *text, RopeRule *r) {
    memset(r, 0, sizeof *r);
    char name[32];
    const char *colon = strchr(text, ':'), *arg = colon ? colon + 1 : NULL;
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, text, len);
    name[len] = 0;
    const RopeRuleDef *d = rope_rule_find(name);
    if (!d) {
        char names[512];
        rope_rule_list(names, sizeof names, ", ", 0, 0);
        return pelab_fail("--scale %s: unknown rule (expected %s)", text, names);
    }
    r->def = d;
    switch (d->arg) {
    case ROPE_ARG_NONE:
        if (arg) return pelab_fail("--scale %s takes no factor", name);
        return 0;
    case ROPE_ARG_FACTOR:
        if (!arg) return pelab_fail("--scale %s: needs a factor, e.g. %s:4", name, name);
        /* fall through */
    case ROPE_ARG_OPT_FACTOR:
        r->s = 1.0;
        return arg ? parse_factor(name, arg, 1, &r->s) : 0;
    case ROPE_ARG_OPT_LENGTH: return arg ? parse_factor(name, arg, 1, &r->tan_len) : 0;
    case ROPE_ARG_CUSTOM: return d->parse_arg(arg ? arg : "", r);
    }
    return -1;
}

void rope_rule_describe(const RopeRule *r, char *buf, size_t n) {
    const RopeRuleDef *d = rope_rule_def(r);
    switch (d->arg) {
    case ROPE_ARG_NONE: snprintf(buf, n, "%s", d->name); break;
    case ROPE_ARG_FACTOR:
    case ROPE_ARG_OPT_FACTOR: snprintf(buf, n, "%s:%.17g", d->name, r->s); break;
    case ROPE_ARG_OPT_LENGTH:
        if (r->tan_len > 0) snprintf(buf, n, "%s:%.17g", d->name, r->tan_len);
        else snprintf(buf, n, "%s", d->name);
        break;
    case ROPE_ARG_CUSTOM: d->describe_arg(r, buf, n); break;
    }
}

/* a rule whose frequencies change with the length changes every cached rotation */
int rope_rule_is_dynamic(const RopeRule *r) { return rope_rule_def(r)->changes != NULL; }

int rope_rule_changes(const RopeRule *r, int L, long a, long b) {
    const RopeRuleDef *d = rope_rule_def(r);
    if (!d->changes || (a <= L && b <= L)) return 0;
    return d->changes(r, L, a, b);
}

int rope_rule_length(const RopeRule *r, int model_len) {
    const RopeRuleDef *d = rope_rule_def(r);
    return d->length ? d->length(r, model_len) : model_len;
}

int rope_rule_check_pairs(const RopeRule *r, int rot_pairs, const char *scheme) {
    const RopeRuleDef *d = rope_rule_def(r);
    return d->check_pairs ? d->check_pairs(r, rot_pairs, scheme) : 0;
}

void rope_rule_freqs(const RopeRule *r, int d, double base, int L, long n, double *freq, double *attn_factor) {
    const RopeRuleDef *def = rope_rule_def(r);
    *attn_factor = 1.0;
    if (def->freqs) def->freqs(r, d, base, L, n, freq, attn_factor);
    else base_freqs(base, d, freq);
}

int rope_rotary_pairs(int head_dim, double fraction) { return (int)(head_dim * fraction / 2.0 + 1e-9); }

double rope_rule_angle(const RopeRule *r, double freq, long pos, int L) {
    const RopeRuleDef *d = rope_rule_def(r);
    return d->angle ? d->angle(r, freq, pos, L) : (double)pos * freq;
}
