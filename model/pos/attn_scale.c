#include "attn_scale.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/sys.h"

/* one "key=value" of a modifier: a number in [lo, hi] */
static int parse_number(const char *mod, const char *key, const char *value, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !(v >= lo && v <= hi))
        return pelab_fail("attention modifier +%s: %s=%s: expected a number in [%g, %g]", mod, key, value, lo, hi);
    *out = v;
    return 0;
}

/* the fewest digits that read back exactly */
static void shortest(char *buf, size_t n, double x) {
    snprintf(buf, n, "%.15g", x);
    if (strtod(buf, NULL) != x) snprintf(buf, n, "%.17g", x);
}

/* the modifiers: what the spec spells, their options (as --help shows them, and as an unknown
 * option's message lists them) and their one help line */
static const struct {
    const char *name;
    AttnScaleKind kind;
    const char *usage, *keys, *help;
} MODIFIERS[] = {
    {"logn", ATTN_SCALE_LOGN, "len=N,layers=W", "len, layers",
     "queries times log(pos+1)/log(N) past N tokens (Qwen's logn; default N = L)"},
    {"temp", ATTN_SCALE_TEMP, "scale=F,floor=N,layers=W", "scale, floor, layers",
     "queries times F log(floor((pos+1)/N) + 1) + 1 (Llama 4; default F 0.1, N = L)"},
    {"ssmax", ATTN_SCALE_SSMAX, "init=F", "init",
     "queries times s log(pos+1), s learned per layer and head (SSMax; default s = 1/log L)"},
};
enum { N_MODIFIERS = sizeof MODIFIERS / sizeof MODIFIERS[0] };

void attn_scale_help(char *buf, size_t n, const char *indent) {
    size_t used = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < N_MODIFIERS && used < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "SPEC+%s", MODIFIERS[i].name);
        int k = snprintf(buf + used, n - used, "\n%s%-11s %-24s %s", indent, name, MODIFIERS[i].usage,
                         MODIFIERS[i].help);
        if (k > 0) used += (size_t)k;
    }
}

int attn_scale_parse(AttnScale *a, const char *text, int train_len) {
    char buf[128];
    if (strlen(text) >= sizeof buf) return pelab_fail("attention modifier +%s: too long", text);
    strcpy(buf, text);
    char *opts = strchr(buf, ':');
    if (opts) *opts++ = 0;
    memset(a, 0, sizeof *a);
    int m = 0;
    while (m < N_MODIFIERS && strcmp(buf, MODIFIERS[m].name) != 0) m++;
    if (m == N_MODIFIERS) {
        char names[128];
        size_t used = 0;
        for (int i = 0; i < N_MODIFIERS && used < sizeof names; i++) {
            const char *sep = i == 0 ? "" : i == N_MODIFIERS - 1 ? " or " : ", ";
            int k = snprintf(names + used, sizeof names - used, "%s%s", sep, MODIFIERS[i].name);
            if (k > 0) used += (size_t)k;
        }
        return pelab_fail("attention modifier +%s: unknown (expected %s)", buf, names);
    }
    a->kind = MODIFIERS[m].kind;
    if (a->kind == ATTN_SCALE_LOGN) a->len = train_len;
    if (a->kind == ATTN_SCALE_TEMP) a->floor_len = train_len, a->scale = 0.1;
    /* no initial s given in the paper: 1 / log L makes the factor 1 at the training length */
    if (a->kind == ATTN_SCALE_SSMAX) a->init = train_len >= 2 ? 1.0 / log(train_len) : 1.0;
    char *save = NULL;
    for (char *tok = opts ? strtok_r(opts, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return pelab_fail("attention modifier +%s: '%s': expected key=value", buf, tok);
        *eq = 0;
        double v = 0;
        if (a->kind == ATTN_SCALE_LOGN && !strcmp(tok, "len")) {
            if (parse_number(buf, tok, eq + 1, 2, 1 << 30, &v) != 0) return -1;
            a->len = (int)v;
        } else if (a->kind == ATTN_SCALE_TEMP && !strcmp(tok, "scale")) {
            if (parse_number(buf, tok, eq + 1, 0, 100, &a->scale) != 0) return -1;
        } else if (a->kind == ATTN_SCALE_TEMP && !strcmp(tok, "floor")) {
            if (parse_number(buf, tok, eq + 1, 1, 1 << 30, &v) != 0) return -1;
            a->floor_len = (int)v;
        } else if (a->kind == ATTN_SCALE_SSMAX && !strcmp(tok, "init")) {
            if (parse_number(buf, tok, eq + 1, -100, 100, &a->init) != 0) return -1;
        } else if (a->kind != ATTN_SCALE_SSMAX && !strcmp(tok, "layers")) {
            if (strcmp(eq + 1, "all") && strcmp(eq + 1, "nope"))
                return pelab_fail("attention modifier +%s: layers=%s: expected all or nope", buf, eq + 1);
            a->nope_only = !strcmp(eq + 1, "nope");
        } else {
            return pelab_fail("attention modifier +%s: unknown option '%s' (expected %s)", buf, tok, MODIFIERS[m].keys);
        }
    }
    if (a->kind == ATTN_SCALE_LOGN && a->len < 2) return pelab_fail("attention modifier +logn: len %d: expected >= 2", a->len);
    return 0;
}

void attn_scale_spec(const AttnScale *a, char *buf, size_t n) {
    char v[32];
    const char *layers = a->nope_only ? ",layers=nope" : "";
    if (a->kind == ATTN_SCALE_LOGN) snprintf(buf, n, "+logn:len=%d%s", a->len, layers);
    else if (a->kind == ATTN_SCALE_TEMP) {
        shortest(v, sizeof v, a->scale);
        snprintf(buf, n, "+temp:scale=%s,floor=%d%s", v, a->floor_len, layers);
    } else if (a->kind == ATTN_SCALE_SSMAX) {
        shortest(v, sizeof v, a->init);
        snprintf(buf, n, "+ssmax:init=%s", v);
    } else if (n) buf[0] = 0;
}

int attn_scale_learned(const AttnScale *a) { return a->kind == ATTN_SCALE_SSMAX; }

double attn_scale_factor(const AttnScale *a, long pos) {
    if (a->kind == ATTN_SCALE_LOGN) return pos + 1 > a->len ? log((double)pos + 1) / log((double)a->len) : 1.0;
    if (a->kind == ATTN_SCALE_TEMP) return a->scale * log(floor((double)(pos + 1) / a->floor_len) + 1.0) + 1.0;
    if (a->kind == ATTN_SCALE_SSMAX) return log((double)pos + 1);
    return 1.0;
}

double attn_scale_head_factor(const AttnScale *a, long pos, int layer, int head, int n_heads) {
    if (a->kind != ATTN_SCALE_SSMAX) return attn_scale_factor(a, pos);
    double s = a->s ? a->s[(size_t)layer * n_heads + head] : a->init;
    return s * log((double)pos + 1);
}

void attn_scale_apply(const AttnScale *a, float *rows, const int *pos, int n, int n_heads, int head_dim, int layer) {
    if (a->kind == ATTN_SCALE_NONE) return;
    int width = n_heads * head_dim;
    if (a->kind == ATTN_SCALE_SSMAX) {
        PAR_FOR((size_t)n * width >= PAR_MIN_WORK, int, r, n,
            for (int h = 0; h < n_heads; h++) {
                float f = (float)attn_scale_head_factor(a, pos[r], layer, h, n_heads);
                float *x = rows + (size_t)r * width + (size_t)h * head_dim;
                for (int i = 0; i < head_dim; i++) x[i] *= f;
            }
        );
        return;
    }
    PAR_FOR((size_t)n * width >= PAR_MIN_WORK, int, r, n,
        float f = (float)attn_scale_factor(a, pos[r]);
        if (f != 1.0f)
            for (int i = 0; i < width; i++) rows[(size_t)r * width + i] *= f;
    );
}

void attn_scale_backward_s(const float *dq_scaled, const float *q, const int *pos, int n, int n_heads, int head_dim,
                           float *ds) {
    int width = n_heads * head_dim;
    for (int h = 0; h < n_heads; h++) {
        double sum = 0; /* rows x head_dim products: double keeps the sum's order harmless */
        for (int r = 0; r < n; r++) {
            const float *g = dq_scaled + (size_t)r * width + (size_t)h * head_dim, *x = q + (size_t)r * width + (size_t)h * head_dim;
            double dot = 0;
            for (int i = 0; i < head_dim; i++) dot += (double)g[i] * x[i];
            sum += log((double)pos[r] + 1) * dot;
        }
        ds[h] += (float)sum;
    }
}
