/* pos.c: parsing "NAME[:k=v,...]" and the generic parts of the position-scheme interface. */
#include "pos.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "rope_scaling.h"

extern const PosScheme *const pos_registry[];

const PosScheme *pos_find(const char *name) {
    for (int i = 0; pos_registry[i]; i++)
        if (strcmp(pos_registry[i]->name, name) == 0) return pos_registry[i];
    return NULL;
}

void pos_list(char *buf, size_t n) {
    buf[0] = 0;
    for (int i = 0; pos_registry[i]; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", i ? ", " : "", pos_registry[i]->name);
    }
}

int pos_parse_double(const char *scheme, const char *key, const char *val, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double x = strtod(val, &end);
    if (errno || end == val || *end || !(x >= lo && x <= hi))
        return pelab_fail("--pos %s: option %s=%s: expected a number in [%g, %g]", scheme, key, val, lo, hi);
    *out = x;
    return 0;
}

int pos_parse_int(const char *scheme, const char *key, const char *val, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long x = strtol(val, &end, 10);
    if (errno || end == val || *end || x < lo || x > hi)
        return pelab_fail("--pos %s: option %s=%s: expected an integer in [%ld, %ld]", scheme, key, val, lo, hi);
    *out = (int)x;
    return 0;
}

int pos_init(PosCtx *pc, const char *spec, int dim, int n_heads, int n_kv_heads, int n_layers, int seq_len) {
    memset(pc, 0, sizeof *pc);
    char buf[512];
    if (!spec || !*spec) spec = "rope";
    if (strlen(spec) >= sizeof buf) return pelab_fail("--pos: spec too long (%zu characters)", strlen(spec));
    strcpy(buf, spec);
    char *opts = strchr(buf, ':');
    if (opts) *opts++ = 0;
    const PosScheme *s = pos_find(buf);
    if (!s) {
        char names[256];
        pos_list(names, sizeof names);
        return pelab_fail("--pos %s: unknown position scheme (expected one of: %s)", buf, names);
    }
    pc->scheme = s;
    pc->dim = dim;
    pc->n_heads = n_heads;
    pc->n_kv_heads = n_kv_heads;
    pc->head_dim = dim / n_heads;
    pc->n_layers = n_layers;
    pc->seq_len = seq_len;
    if (s->create && s->create(pc) != 0) return -1;
    char *saveptr = NULL;
    for (char *tok = opts ? strtok_r(opts, ",", &saveptr) : NULL; tok; tok = strtok_r(NULL, ",", &saveptr)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            pos_free(pc);
            return pelab_fail("--pos %s: option '%s': expected key=value (%s)", s->name, tok,
                              s->options_help ? s->options_help : "this scheme has no options");
        }
        *eq = 0;
        if (!s->set_option) {
            pos_free(pc);
            return pelab_fail("--pos %s: option '%s': this scheme has no options", s->name, tok);
        }
        if (s->set_option(pc, tok, eq + 1) != 0) {
            pos_free(pc);
            return -1;
        }
    }
    if (s->prepare && s->prepare(pc) != 0) {
        pos_free(pc);
        return -1;
    }
    return 0;
}

void pos_free(PosCtx *pc) {
    if (pc->scheme && pc->scheme->destroy) pc->scheme->destroy(pc);
    else free(pc->state);
    pc->state = NULL;
}

void pos_spec(const PosCtx *pc, char *buf, size_t n) {
    char opts[400] = "";
    if (pc->scheme->describe) pc->scheme->describe(pc, opts, sizeof opts);
    snprintf(buf, n, "%s%s%s", pc->scheme->name, opts[0] ? ":" : "", opts);
}

size_t pos_n_params(const PosCtx *pc) {
    int nd = 0, shape[4] = {0};
    if (!pc->scheme->param_shape) return 0;
    pc->scheme->param_shape(pc, &nd, shape);
    if (nd == 0) return 0;
    size_t n = 1;
    for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
    return n;
}

int pos_add_options(PosCtx *pc, const char *extra) {
    char spec[1024];
    pos_spec(pc, spec, sizeof spec);
    size_t used = strlen(spec);
    snprintf(spec + used, sizeof spec - used, "%s%s", strchr(spec, ':') ? "," : ":", extra);
    PosCtx fresh;
    if (pos_init(&fresh, spec, pc->dim, pc->n_heads, pc->n_kv_heads, pc->n_layers, pc->seq_len) != 0) return -1;
    fresh.params = pc->params;
    pos_free(pc);
    *pc = fresh;
    return 0;
}

int pos_set_scale(PosCtx *pc, const char *rule) {
    char spec[1024], extra[128], current[128];
    RopeRule r;
    pos_spec(pc, spec, sizeof spec);
    /* only the rotary family has scaling rules: its spec holds scale=RULE (sinusoidal's scale= is
     * an amplitude, which --scale 2 must not set) */
    const char *at = strstr(spec, ",scale=");
    if (at) snprintf(current, sizeof current, "%.*s", (int)strcspn(at + 7, ","), at + 7);
    if (!at || rope_rule_parse(current, &r) != 0)
        return pelab_fail("--scale %s: scaling rules apply to rotary schemes (rope, xpos, ...); this model uses %s",
                          rule, pc->scheme->name);
    /* one whole rule: a comma would slip other options in ("pi:2,base=5") */
    if (strlen(rule) >= sizeof extra - 6) return pelab_fail("--scale %.32s...: too long for a scaling rule", rule);
    if (rope_rule_parse(rule, &r) != 0) return -1;
    snprintf(extra, sizeof extra, "scale=%s", rule);
    return pos_add_options(pc, extra);
}

long pos_computable_position(const PosCtx *pc) {
    return pc->scheme->computable_position ? pc->scheme->computable_position(pc) : -1;
}

void pos_lengths(const PosCtx *pc, char *buf, size_t n) {
    long acc = pos_max_position(pc), comp = pos_computable_position(pc);
    char a[32], c[32];
    if (acc < 0) snprintf(a, sizeof a, "unbounded");
    else snprintf(a, sizeof a, "%ld", acc);
    if (comp < 0) snprintf(c, sizeof c, "unbounded");
    else snprintf(c, sizeof c, "%ld", comp);
    snprintf(buf, n, "training %d; accepted %s; computable %s", pc->seq_len, a, c);
}

long pos_max_position(const PosCtx *pc) { return pc->scheme->max_position ? pc->scheme->max_position(pc) : -1; }

int pos_check_positions(PosCtx *pc, const int *pos, size_t n) {
    long limit = pos_max_position(pc), hi = -1;
    for (size_t i = 0; i < n; i++) {
        if (pos[i] < 0) return pelab_fail("position id %d at index %zu: expected >= 0", pos[i], i);
        if (limit >= 0 && pos[i] >= limit)
            return pelab_fail("position %d is past the end of the %s position table (%ld positions, 0..%ld): "
                              "this scheme cannot go beyond its table; use a length <= %ld",
                              pos[i], pc->scheme->name, limit, limit - 1, limit);
        if (pos[i] > hi) hi = pos[i];
    }
    long computable = pos_computable_position(pc);
    if (computable >= 0 && hi >= computable)
        return pelab_fail("position %ld is past the %ld positions the %s scheme can compute in float32",
                          hi, computable, pc->scheme->name);
    if (pc->scheme->reserve && hi >= 0) return pc->scheme->reserve(pc, hi + 1);
    return 0;
}
