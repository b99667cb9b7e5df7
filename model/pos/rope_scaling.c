#include "rope_scaling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/files.h"
#include "../../core/json.h"

static int parse_factor(const char *name, const char *arg, double lo, double *out) {
    char *end;
    double x = strtod(arg, &end);
    if (end == arg || *end || !(x >= lo && x <= 1e6))
        return pelab_fail("--scale %s:%s: expected a number in [%g, 1e6] after '%s:'", name, arg, lo, name);
    *out = x;
    return 0;
}

/* --- LongRoPE's factor file ----------------------------------------------------------------- */

/* the member key of obj, else of root (HF keeps original_max_position_embeddings at the top level,
 * newer configs inside rope_parameters); *where names it in messages */
static const JsonNode *member(const JsonNode *obj, const JsonNode *root, const char *key, const char *prefix,
                              char *where, size_t n) {
    const JsonNode *v = json_get(obj, key);
    if (v) snprintf(where, n, "%s%s", prefix, key);
    else if (obj != root && (v = json_get(root, key))) snprintf(where, n, "%s", key);
    return v;
}

static int read_factor_set(const char *path, const JsonNode *obj, const char *prefix, const char *key, double *out,
                           int *count) {
    char where[64];
    const JsonNode *a = member(obj, obj, key, prefix, where, sizeof where);
    if (!a) return pelab_fail("--scale longrope:%s: %s%s: missing (expected an array of factors, one per rotary pair)",
                              path, prefix, key);
    if (a->type != JSON_ARRAY)
        return pelab_fail("--scale longrope:%s: %s: expected an array of numbers, got %s", path, where,
                          json_type_name(a->type));
    if (a->n_children < 1 || a->n_children > ROPE_MAX_PAIRS)
        return pelab_fail("--scale longrope:%s: %s: %zu factors; expected 1 to %d", path, where, a->n_children,
                          ROPE_MAX_PAIRS);
    int i = 0;
    for (const JsonNode *e = a->child; e; e = e->next, i++) {
        if (e->type != JSON_NUMBER || !isfinite(e->number) || !(e->number > 0))
            return pelab_fail("--scale longrope:%s: %s[%d]: expected a finite number > 0, got %s", path, where, i,
                              e->type == JSON_NUMBER ? e->str : json_type_name(e->type));
        out[i] = e->number;
    }
    *count = i;
    return 0;
}

/* a positive integer member, 0 if absent */
static int read_length(const char *path, const JsonNode *obj, const JsonNode *root, const char *prefix,
                       const char *key, long *out) {
    char where[64];
    const JsonNode *v = member(obj, root, key, prefix, where, sizeof where);
    *out = 0;
    if (!v) return 0;
    if (v->type != JSON_NUMBER || !v->is_int || v->int_value < 1 || v->int_value > (1 << 30))
        return pelab_fail("--scale longrope:%s: %s: expected an integer in [1, %d]", path, where, 1 << 30);
    *out = (long)v->int_value;
    return 0;
}

/* a finite number >= lo member, 0 if absent */
static int read_number(const char *path, const JsonNode *obj, const char *prefix, const char *key, double lo,
                       double *out) {
    char where[64];
    const JsonNode *v = member(obj, obj, key, prefix, where, sizeof where);
    *out = 0;
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type != JSON_NUMBER || !isfinite(v->number) || !(v->number >= lo) || v->number == 0)
        return pelab_fail("--scale longrope:%s: %s: expected a finite number %s %g", path, where, lo > 0 ? ">=" : ">",
                          lo);
    *out = v->number;
    return 0;
}

static int longrope_fields(const char *path, const JsonNode *root, LongRopeFactors *f) {
    if (root->type != JSON_OBJECT)
        return pelab_fail("--scale longrope:%s: expected a JSON object (an HF config.json or {\"short_factor\": "
                          "[...], \"long_factor\": [...]}), got %s", path, json_type_name(root->type));
    const char *prefix = "rope_scaling.";
    const JsonNode *obj = json_get(root, "rope_scaling");
    if (!obj || obj->type == JSON_NULL) prefix = "rope_parameters.", obj = json_get(root, "rope_parameters");
    if (!obj || obj->type == JSON_NULL) { /* a bare object of the fields */
        if (!json_get(root, "short_factor") && json_get(root, "architectures"))
            return pelab_fail("--scale longrope:%s: rope_scaling: missing (this config has no LongRoPE factors)", path);
        prefix = "", obj = root;
    }
    if (obj->type != JSON_OBJECT)
        return pelab_fail("--scale longrope:%s: %.*s: expected an object, got %s", path, (int)strlen(prefix) - 1,
                          prefix, json_type_name(obj->type));
    const JsonNode *type = json_get(obj, "rope_type");
    if (!type) type = json_get(obj, "type");
    if (type && (type->type != JSON_STRING || strcmp(type->str, "longrope") != 0))
        return pelab_fail("--scale longrope:%s: %s%s: expected \"longrope\"", path, prefix, type->key);
    int n_short = 0, n_long = 0;
    if (read_factor_set(path, obj, prefix, "short_factor", f->short_factor, &n_short) != 0 ||
        read_factor_set(path, obj, prefix, "long_factor", f->long_factor, &n_long) != 0)
        return -1;
    if (n_short != n_long)
        return pelab_fail("--scale longrope:%s: %sshort_factor has %d factors, %slong_factor %d: expected as many",
                          path, prefix, n_short, prefix, n_long);
    f->n_pairs = n_short;
    long max_len;
    double given_factor;
    if (read_length(path, obj, root, prefix, "original_max_position_embeddings", &f->orig_len) != 0 ||
        read_length(path, obj, root, prefix, "max_position_embeddings", &max_len) != 0 ||
        read_number(path, obj, prefix, "factor", 1, &given_factor) != 0 ||
        read_number(path, obj, prefix, "attention_factor", 0, &f->attn_factor) != 0)
        return -1;
    /* HF: with original_max_position_embeddings, the factor is max / original (Phi-3); without it,
     * max_position_embeddings is the original length and "factor" the extension */
    f->factor = given_factor > 0 ? given_factor : 1.0;
    if (f->orig_len > 0 && max_len > 0) f->factor = (double)max_len / f->orig_len;
    else if (max_len > 0) f->orig_len = max_len;
    return 0;
}

static int longrope_read(const char *path, LongRopeFactors *f) {
    memset(f, 0, sizeof *f);
    if (!*path) return pelab_fail("--scale longrope: needs the path of a JSON file, e.g. longrope:config.json");
    if (strlen(path) >= ROPE_PATH_MAX)
        return pelab_fail("--scale longrope:%.40s...: the path is longer than %d characters", path, ROPE_PATH_MAX - 1);
    if (strpbrk(path, ",+"))
        return pelab_fail("--scale longrope:%s: the path holds ',' or '+', which separate a spec's parts: rename or "
                          "link the file", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    unsigned char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0) {
        char why[sizeof pelab_errmsg];
        memcpy(why, pelab_errmsg, sizeof why);
        return pelab_fail("--scale longrope: %s", why);
    }
    JsonDoc doc;
    int rc = json_parse(&doc, (const char *)buf, len);
    free(buf);
    if (rc != 0) {
        char why[sizeof pelab_errmsg];
        memcpy(why, pelab_errmsg, sizeof why);
        return pelab_fail("--scale longrope:%s: not valid JSON: %s", path, why);
    }
    rc = longrope_fields(path, doc.root, f);
    json_free(&doc);
    return rc;
}

int rope_rule_parse(const char *text, RopeRule *r) {
    memset(r, 0, sizeof *r);
    char name[32];
    const char *colon = strchr(text, ':'), *arg = colon ? colon + 1 : NULL;
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, text, len);
    name[len] = 0;
    if (strcmp(name, "longrope") == 0) {
        r->kind = RULE_LONGROPE;
        return longrope_read(arg ? arg : "", &r->longrope);
    }
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
                      "dynatan[:L], dynatan-a[:L], longrope:PATH)",
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
    case RULE_LONGROPE: snprintf(buf, n, "longrope:%s", r->longrope.path); break;
    }
}

/* LongRoPE switches sets with the length, so like dynamic NTK it changes every cached rotation */
int rope_rule_is_dynamic(const RopeRule *r) { return r->kind == RULE_DYNAMIC_NTK || r->kind == RULE_LONGROPE; }

int rope_rule_changes(const RopeRule *r, int L, long a, long b) {
    if (!rope_rule_is_dynamic(r) || (a <= L && b <= L)) return 0;
    if (r->kind == RULE_LONGROPE) return (a > L) != (b > L);
    return a != b;
}

int rope_rule_length(const RopeRule *r, int model_len) {
    if (r->kind == RULE_LONGROPE && r->longrope.orig_len > 0) return (int)r->longrope.orig_len;
    return model_len;
}

int rope_rule_check_pairs(const RopeRule *r, int rot_pairs, const char *scheme) {
    if (r->kind != RULE_LONGROPE || r->longrope.n_pairs == rot_pairs) return 0;
    return pelab_fail("--pos %s: scale=longrope:%s: short_factor and long_factor hold %d factors each; expected %d, "
                      "one per rotary pair of the model", scheme, r->longrope.path, r->longrope.n_pairs, rot_pairs);
}

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
    if (r->kind == RULE_LONGROPE) {
        const LongRopeFactors *f = &r->longrope;
        const double *ext = n > L ? f->long_factor : f->short_factor;
        for (int j = 0; j < np && j < f->n_pairs; j++) freq[j] /= ext[j];
        /* applied at every length, as HF does, not only past L */
        *attn_factor = rope_longrope_attn_factor(f->attn_factor, f->factor, L);
    }
}

double rope_longrope_attn_factor(double given, double s, long L) {
    if (given > 0) return given;
    return s > 1 && L > 1 ? sqrt(1.0 + log(s) / log((double)L)) : 1.0;
}

int rope_rotary_pairs(int head_dim, double fraction) { return (int)(head_dim * fraction / 2.0 + 1e-9); }

double rope_rule_angle(const RopeRule *r, double freq, long pos, int L) {
    double tl = r->tan_len > 0 ? r->tan_len : (double)L;
    if (r->kind == RULE_DYNATAN) return freq * tl * tanh((double)pos / tl);
    if (r->kind == RULE_DYNATAN_A) return freq * tanh((double)pos / tl);
    return (double)pos * freq;
}
