#include "rope_scaling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"

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
    static const struct {
        const char *name;
        RopeRuleKind kind;
        int needs_arg; /* 1: required S, 0: optional */
    } rules[] = {{"none", RULE_NONE, -1},        {"pi", RULE_PI, 1},         {"ntk", RULE_NTK, 1},
                 {"dynamic-ntk", RULE_DYNAMIC_NTK, 0}, {"yarn", RULE_YARN, 1}, {"llama3", RULE_LLAMA3, 1},
                 {"dynatan", RULE_DYNATAN, 0},   {"dynatan-a", RULE_DYNATAN_A, 0}};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (strcmp(name, rules[i].name) != 0) continue;
        r->kind = rules[i].kind;
        if (rules[i].needs_arg == -1) {
            if (arg) return pelab_fail("--scale none takes no factor");
            return 0;
        }
        if (rules[i].needs_arg == 1 && !arg)
            return pelab_fail("--scale %s: needs a factor, e.g. %s:4", name, name);
        if (r->kind == RULE_DYNATAN || r->kind == RULE_DYNATAN_A) {
            if (arg) return parse_factor(name, arg, 1, &r->tan_len);
            return 0;
        }
        r->s = 1.0;
        if (arg) return parse_factor(name, arg, 1, &r->s);
        return 0;
    }
    return pelab_fail("--scale %s: unknown rule (expected none, pi:S, ntk:S, dynamic-ntk[:F], yarn:S, llama3:S, "
                      "dynatan[:L], dynatan-a[:L])",
                      text);
}

void rope_rule_describe(const RopeRule *r, char *buf, size_t n) {
    switch (r->kind) {
    case RULE_NONE: snprintf(buf, n, "none"); break;
    case RULE_PI: snprintf(buf, n, "pi:%.17g", r->s); break;
    case RULE_NTK: snprintf(buf, n, "ntk:%.17g", r->s); break;
    case RULE_DYNAMIC_NTK: snprintf(buf, n, "dynamic-ntk:%.17g", r->s); break;
    case RULE_YARN: snprintf(buf, n, "yarn:%.17g", r->s); break;
    case RULE_LLAMA3: snprintf(buf, n, "llama3:%.17g", r->s); break;
    case RULE_DYNATAN:
        if (r->tan_len > 0) snprintf(buf, n, "dynatan:%.17g", r->tan_len);
        else snprintf(buf, n, "dynatan");
        break;
    case RULE_DYNATAN_A:
        if (r->tan_len > 0) snprintf(buf, n, "dynatan-a:%.17g", r->tan_len);
        else snprintf(buf, n, "dynatan-a");
        break;
    }
}

int rope_rule_is_dynamic(const RopeRule *r) { return r->kind == RULE_DYNAMIC_NTK; }

/* pair index at which a pair makes n_rot full turns within L positions (YaRN's find_correction_dim) */
static double yarn_corr_dim(double n_rot, int d, double base, int L) {
    return d * log(L / (n_rot * 2.0 * M_PI)) / (2.0 * log(base));
}

void rope_rule_freqs(const RopeRule *r, int d, double base, int L, long n, double *freq, double *attn_factor) {
    int np = d / 2;
    double b = base;
    *attn_factor = 1.0;
    if (r->kind == RULE_NTK) b = base * pow(r->s, (double)d / (d - 2));
    if (r->kind == RULE_DYNAMIC_NTK) {
        double len = n > L ? (double)n : (double)L;
        b = base * pow(r->s * len / L - (r->s - 1.0), (double)d / (d - 2));
    }
    for (int j = 0; j < np; j++) freq[j] = pow(b, -2.0 * j / d);
    if (r->kind == RULE_PI)
        for (int j = 0; j < np; j++) freq[j] /= r->s;
    if (r->kind == RULE_YARN) {
        /* code variant (yarn repo, HF truncate=True, llama.cpp): a linear ramp in the pair index
         * between floor/ceil-rounded correction dims for beta_fast 32 and beta_slow 1 */
        double low = floor(yarn_corr_dim(32.0, d, base, L)), high = ceil(yarn_corr_dim(1.0, d, base, L));
        if (low < 0) low = 0;
        if (high > d - 1) high = d - 1;
        if (low == high) high += 0.001;
        for (int j = 0; j < np; j++) {
            double ramp = (j - low) / (high - low);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            double keep = 1.0 - ramp; /* weight of the original frequency */
            freq[j] = freq[j] / r->s * (1.0 - keep) + freq[j] * keep;
        }
        *attn_factor = 0.1 * log(r->s) + 1.0;
    }
    if (r->kind == RULE_LLAMA3) {
        double low_freq_factor = 1.0, high_freq_factor = 4.0;
        double low_wavelen = L / low_freq_factor, high_wavelen = L / high_freq_factor;
        for (int j = 0; j < np; j++) {
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
}

double rope_rule_angle(const RopeRule *r, double freq, long pos, int L) {
    double tl = r->tan_len > 0 ? r->tan_len : (double)L;
    if (r->kind == RULE_DYNATAN) return freq * tl * tanh((double)pos / tl);
    if (r->kind == RULE_DYNATAN_A) return freq * tanh((double)pos / tl);
    return (double)pos * freq;
}
