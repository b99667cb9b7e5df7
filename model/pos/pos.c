/* pos.c: the generic parts of the position-scheme interface: the registry's look-ups, and every
 * scheme's options from its declared table: parsed from "NAME[:k=v,...]", checked, listed for
 * --help and written back as the canonical spec. */
#include "pos.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "rope_scaling.h"

const PosScheme *pos_find(const char *name) {
    for (int i = 0; i < pos_count(); i++)
        if (strcmp(pos_at(i)->name, name) == 0) return pos_at(i);
    return NULL;
}

const PosScheme *pos_find_spec(const char *spec) {
    char name[64];
    size_t len = strcspn(spec, ":+");
    if (len >= sizeof name) return NULL;
    memcpy(name, spec, len);
    name[len] = 0;
    return pos_find(name);
}

/* printf at buf + *used, never past n; *used counts what was asked for, so it may pass n */
static void put(char *buf, size_t n, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t n, size_t *used, const char *fmt, ...) {
    if (*used >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k > 0) *used += (size_t)k;
}

void pos_list(char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pos_count(); i++) put(buf, n, &used, "%s%s", i ? ", " : "", pos_at(i)->name);
}

/* --- one option ------------------------------------------------------------------------------ */

static void *field(const PosCtx *pc, const PosOption *o) { return (char *)pc->state + o->offset; }

static size_t field_size(const PosOption *o) {
    switch (o->type) {
    case POS_OPT_DOUBLE: return sizeof(double);
    case POS_OPT_RULE: return sizeof(RopeRule);
    default: return sizeof(int);
    }
}

static int n_words(const PosOption *o) {
    int n = 0;
    while (n < (int)(sizeof o->words / sizeof o->words[0]) && o->words[n]) n++;
    return n;
}

/* "F", "N", "interleaved|half", "RULE" */
static void value_kind(const PosOption *o, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    switch (o->type) {
    case POS_OPT_DOUBLE: put(buf, n, &used, "F"); break;
    case POS_OPT_INT: put(buf, n, &used, "N"); break;
    case POS_OPT_RULE: put(buf, n, &used, "RULE"); break;
    case POS_OPT_WORD:
        for (int w = 0; w < n_words(o); w++) put(buf, n, &used, "%s%s", w ? "|" : "", o->words[w]);
        break;
    }
}

/* the default as --help shows it */
static void default_text(const PosOption *o, char *buf, size_t n) {
    switch (o->type) {
    case POS_OPT_DOUBLE: snprintf(buf, n, "%g", o->def); break;
    case POS_OPT_INT:
        if (o->flags & POS_OPT_TRAIN_LEN) snprintf(buf, n, "the training length");
        else snprintf(buf, n, "%.0f", o->def);
        break;
    case POS_OPT_WORD: snprintf(buf, n, "%s", o->words[(int)o->def]); break;
    case POS_OPT_RULE: snprintf(buf, n, "none"); break;
    }
}

static void set_default(const PosCtx *pc, const PosOption *o) {
    switch (o->type) {
    case POS_OPT_DOUBLE: *(double *)field(pc, o) = o->def; break;
    case POS_OPT_INT: *(int *)field(pc, o) = o->flags & POS_OPT_TRAIN_LEN ? pc->seq_len : (int)o->def; break;
    case POS_OPT_WORD: *(int *)field(pc, o) = (int)o->def; break;
    case POS_OPT_RULE: rope_rule_parse("none", field(pc, o)); break;
    }
}

static int parse_value(const PosCtx *pc, const PosOption *o, const char *val) {
    const char *scheme = pc->scheme->name;
    char *end;
    errno = 0;
    switch (o->type) {
    case POS_OPT_DOUBLE: {
        double x = strtod(val, &end);
        if (errno || end == val || *end || !(x >= o->lo && x <= o->hi))
            return pelab_fail("--pos %s: option %s=%s: expected a number in [%g, %g]", scheme, o->name, val, o->lo,
                              o->hi);
        *(double *)field(pc, o) = x;
        return 0;
    }
    case POS_OPT_INT: {
        long x = strtol(val, &end, 10);
        if (errno || end == val || *end || x < (long)o->lo || x > (long)o->hi)
            return pelab_fail("--pos %s: option %s=%s: expected an integer in [%ld, %ld]", scheme, o->name, val,
                              (long)o->lo, (long)o->hi);
        *(int *)field(pc, o) = (int)x;
        return 0;
    }
    case POS_OPT_WORD: {
        char expected[128];
        size_t used = 0;
        expected[0] = 0;
        for (int w = 0; w < n_words(o); w++) {
            if (strcmp(val, o->words[w]) == 0) {
                *(int *)field(pc, o) = w;
                return 0;
            }
            put(expected, sizeof expected, &used, "%s%s", w == 0 ? "" : w == n_words(o) - 1 ? " or " : ", ",
                o->words[w]);
        }
        return pelab_fail("--pos %s: option %s=%s: expected %s", scheme, o->name, val, expected);
    }
    case POS_OPT_RULE: return rope_rule_parse(val, field(pc, o));
    }
    return -1;
}

/* the shortest decimal that reads back as x: sigma=0.3, not 0.29999999999999999 */
static void shortest_double(char *buf, size_t n, double x) {
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, x);
        if (strtod(buf, NULL) == x) return;
    }
}

/* the value as the canonical spec spells it */
static void value_text(const PosCtx *pc, const PosOption *o, char *buf, size_t n) {
    const void *v = field(pc, o);
    switch (o->type) {
    case POS_OPT_DOUBLE:
        if (o->flags & POS_OPT_SHORTEST) shortest_double(buf, n, *(const double *)v);
        else snprintf(buf, n, "%.17g", *(const double *)v);
        break;
    case POS_OPT_INT: snprintf(buf, n, "%d", *(const int *)v); break;
    case POS_OPT_WORD: snprintf(buf, n, "%s", o->words[*(const int *)v]); break;
    case POS_OPT_RULE: rope_rule_describe(v, buf, n); break;
    }
}

static const PosOption *find_option(const PosScheme *s, const char *name) {
    for (int i = 0; i < s->n_options; i++)
        if (strcmp(s->options[i].name, name) == 0) return &s->options[i];
    return NULL;
}

static const PosOption *rule_option(const PosScheme *s) {
    for (int i = 0; i < s->n_options; i++)
        if (s->options[i].type == POS_OPT_RULE) return &s->options[i];
    return NULL;
}

/* --- a scheme's options ------------------------------------------------------------------- */

void pos_options_summary(const PosScheme *s, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    if (s->n_options == 0) put(buf, n, &used, "no options");
    for (int i = 0; i < s->n_options; i++) {
        char kind[128], def[64];
        value_kind(&s->options[i], kind, sizeof kind);
        default_text(&s->options[i], def, sizeof def);
        put(buf, n, &used, "%s%s=%s (%s)", i ? ", " : "", s->options[i].name, kind, def);
    }
}

void pos_help(char *buf, size_t n, const char *indent) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pos_count(); i++) {
        const PosScheme *s = pos_at(i);
        put(buf, n, &used, "%s%s%-11s %s", i ? "\n" : "", indent, s->name, s->n_options ? "" : "no options");
        for (int k = 0; k < s->n_options; k++) {
            const PosOption *o = &s->options[k];
            char kind[128], opt[160], def[64], rules[512] = "";
            value_kind(o, kind, sizeof kind);
            snprintf(opt, sizeof opt, "%s=%s", o->name, kind);
            default_text(o, def, sizeof def);
            if (o->type == POS_OPT_RULE) rope_rule_list(rules, sizeof rules, ", ", 0, 0); /* the help names them all */
            /* the first option beside the name, the others under it */
            put(buf, n, &used, "%s%-*s%-24s %s%s%s (default %s)", k ? "\n" : "", k ? (int)strlen(indent) + 12 : 0, "",
                opt, o->help, rules[0] ? ": " : "", rules, def);
        }
    }
    /* the modifier any scheme takes after a '+' (attn_scale.h) */
    put(buf, n, &used, "\n%s%-11s %-24s %s\n%s%-11s %-24s %s\n%s%-11s %-24s %s\n%s%-11s %-24s %s", indent,
        "SPEC+logn", "len=N,layers=W",
        "queries times log(pos+1)/log(N) past N tokens (Qwen's logn; default N = L)", indent, "SPEC+temp",
        "scale=F,floor=N,layers=W", "queries times F log(floor((pos+1)/N) + 1) + 1 (Llama 4; default F 0.1, N = L)",
        indent, "SPEC+ssmax", "init=F",
        "queries times s log(pos+1), s learned per layer and head (SSMax; default s = 1/log L)", indent,
        "SPEC+nope@L", "L1,L2,...", "these 0-based layers skip the scheme (rotary, bias schemes); W = nope: logn, temp only there");
}

/* one line for an option that is not "key=value" with a key of this scheme */
static int option_error(const PosScheme *s, const char *key, int has_key) {
    char summary[400];
    pos_options_summary(s, summary, sizeof summary);
    if (!has_key) return pelab_fail("--pos %s: option '%s': expected key=value (%s)", s->name, key, summary);
    if (!s->n_options) return pelab_fail("--pos %s: option '%s': this scheme has no options", s->name, key);
    return pelab_fail("--pos %s: unknown option '%s' (expected %s)", s->name, key, summary);
}

static size_t write_spec(const PosCtx *pc, char *buf, size_t n);

/* "nope@L1,L2,...": the 0-based layers without the scheme's per-layer hooks */
static int parse_nope_layers(PosCtx *pc, const char *list) {
    const PosScheme *s = pc->scheme;
    if (!s->qk_forward && !s->bias_row)
        return pelab_fail("+nope@%s: %s has no per-layer hook to switch off (%s); NoPE layers need a rotary or "
                          "score-bias scheme",
                          list, s->name, s->input_forward ? "its positions are added once, at the input" : "no positions");
    for (const char *p = list;; p++) {
        char *end;
        errno = 0;
        long l = strtol(p, &end, 10);
        if (end == p || errno || (*end && *end != ',') || *p == '-' || *p == '+' || *p == ' ')
            return pelab_fail("+nope@%s: expected 0-based layer numbers separated by commas", list);
        if (l >= pc->n_layers)
            return pelab_fail("+nope@%s: layer %ld: expected 0..%d (the model has %d layers)", list, l,
                              pc->n_layers - 1, pc->n_layers);
        if (!pos_layer_active(pc, (int)l)) return pelab_fail("+nope@%s: layer %ld given twice", list, l);
        pc->nope_layers[l / 8] |= (unsigned char)(1u << (l % 8));
        p = end;
        if (!*p) return 0;
    }
}

/* the '+' parts after the scheme: at most one attention modifier, at most one nope@ list */
static int parse_parts(PosCtx *pc, char *parts) {
    char *save = NULL, modifier[64] = "", *tok;
    int has_nope = 0;
    size_t len = strlen(parts);
    if (len == 0 || parts[len - 1] == '+' || strstr(parts, "++"))
        return pelab_fail("an empty '+' part (expected +logn, +temp, +ssmax or +nope@L1,L2)");
    for (tok = strtok_r(parts, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        if (!strncmp(tok, "nope@", 5)) {
            if (has_nope++) return pelab_fail("+nope@ given twice: list every NoPE layer in one +nope@L1,L2");
            if (parse_nope_layers(pc, tok + 5) != 0) return -1;
        } else if (!strcmp(tok, "nope")) {
            return pelab_fail("+nope: expected +nope@L1,L2 (the 0-based layers without position encoding)");
        } else {
            if (pc->attn_scale.kind != ATTN_SCALE_NONE)
                return pelab_fail("one attention modifier at most (+%s and +%s)", modifier, tok);
            if (attn_scale_parse(&pc->attn_scale, tok, pc->seq_len) != 0) return -1;
            snprintf(modifier, sizeof modifier, "%.*s", (int)strcspn(tok, ":"), tok);
        }
    }
    if (pc->attn_scale.nope_only && !has_nope)
        return pelab_fail("+%s:layers=nope: the model has no NoPE layers (add +nope@L1,L2)", modifier);
    /* SSMax multiplies the whole logit vector; pelab scales the queries, which is that only when
     * the logits are q.k alone */
    if (pc->attn_scale.kind == ATTN_SCALE_SSMAX && (pc->scheme->bias_row || pc->scheme->content_row))
        return pelab_fail("+ssmax on %s: SSMax scales the whole logit vector, the score bias included, and pelab "
                          "scales only the queries (q.k): use a scheme without a score bias (rope, nope, ...)",
                          pc->scheme->name);
    return 0;
}

int pos_init(PosCtx *pc, const char *spec, int dim, int n_heads, int n_kv_heads, int n_layers, int seq_len) {
    memset(pc, 0, sizeof *pc);
    char buf[512];
    if (!spec || !*spec) spec = "rope";
    if (strlen(spec) >= sizeof buf) return pelab_fail("--pos: spec too long (%zu characters)", strlen(spec));
    strcpy(buf, spec);
    char *parts = strchr(buf, '+'); /* "+MODIFIER" and "+nope@..." parts, in either order */
    if (parts) *parts++ = 0;
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
    if (parts && parse_parts(pc, parts) != 0) {
        char why[sizeof pelab_errmsg];
        memcpy(why, pelab_errmsg, sizeof why);
        return pelab_fail("--pos %s: %s", spec, why);
    }
    if (s->state_size) pc->state = xcalloc(1, s->state_size);
    for (int i = 0; i < s->n_options; i++) set_default(pc, &s->options[i]);
    char *saveptr = NULL;
    for (char *tok = opts ? strtok_r(opts, ",", &saveptr) : NULL; tok; tok = strtok_r(NULL, ",", &saveptr)) {
        char *eq = strchr(tok, '=');
        int has_key = eq && eq != tok;
        if (has_key) *eq = 0;
        const PosOption *o = has_key ? find_option(s, tok) : NULL;
        if (!o || parse_value(pc, o, eq + 1) != 0) {
            pos_free(pc);
            return o ? -1 : option_error(s, tok, has_key);
        }
    }
    if (s->prepare && s->prepare(pc) != 0) {
        pos_free(pc);
        return -1;
    }
    char canon[POS_SPEC_MAX];
    if (write_spec(pc, canon, sizeof canon) >= sizeof canon) {
        pos_free(pc);
        return pelab_fail("--pos %.60s...: the canonical spec is longer than %d characters", spec, POS_SPEC_MAX - 1);
    }
    return 0;
}

int pos_layer_active(const PosCtx *pc, int layer) {
    return layer < 0 || layer >= POS_MAX_LAYERS || !(pc->nope_layers[layer / 8] & (1u << (layer % 8)));
}

void pos_free(PosCtx *pc) {
    if (pc->scheme && pc->scheme->release && pc->state) pc->scheme->release(pc);
    free(pc->state);
    pc->state = NULL;
    if (pc->extend_far) {
        pos_free(pc->extend_far);
        free(pc->extend_far);
        pc->extend_far = NULL;
    }
}

/* a copy of pc (a scheme that takes rules) with its own state, every option as pc's but the rule;
 * no extension method. -1 if the scheme refuses the rule. */
static int clone_with_rule(const PosCtx *pc, const RopeRule *r, PosCtx *out) {
    const PosScheme *s = pc->scheme;
    *out = *pc;
    out->extend = (PosExtend){0};
    out->extend_far = NULL;
    out->state = xcalloc(1, s->state_size);
    for (int i = 0; i < s->n_options; i++)
        memcpy(field(out, &s->options[i]), field(pc, &s->options[i]), field_size(&s->options[i]));
    *(RopeRule *)field(out, rule_option(s)) = *r;
    if (s->prepare && s->prepare(out) != 0) {
        pos_free(out);
        return -1;
    }
    return 0;
}

const char *pos_extend_refusal(const PosScheme *s, const PosExtend *e) {
    const ExtendMethod *m = e->method;
    if (!m) return NULL;
    if (m->refuse_input && s->input_forward) return m->refuse_input;
    if (extend_two_branch(e) && !s->qk_forward)
        return "has no q/k map whose relative positions the method could remap (rotary schemes: rope, xpos, fope)";
    if (m->refuse_no_rules && !(s->caps & POS_CAP_RULES)) return m->refuse_no_rules;
    return NULL;
}

int pos_set_extend(PosCtx *pc, const PosExtend *e) {
    const PosScheme *s = pc->scheme;
    char name[64];
    extend_describe(e, name, sizeof name);
    const char *why = pos_extend_refusal(s, e);
    if (why) return pelab_fail("--scale %s: the %s scheme %s", name, s->name, why);
    if (extend_two_branch(e)) {
        if (s->qk_dynamic_from && s->qk_dynamic_from(pc) >= 0)
            return pelab_fail("--scale %s: this model's rule follows the sequence length, which the far branch's "
                              "fixed positions cannot; load it without the dynamic rule", name);
        if (e->window < 1) return pelab_fail("--scale %s: the window must be >= 1", name);
    }
    PosCtx *far = NULL;
    if (e->method && e->method->far_rule) { /* the same scheme and options under the method's own rule */
        if (!rope_rule_is_none(field(pc, rule_option(s))))
            return pelab_fail("--scale %s: brings its own %s in the far branch; this model already has a scaling "
                              "rule", name, e->method->far_usage);
        RopeRule far_rule;
        e->method->far_rule(e, &far_rule);
        far = xmalloc(sizeof *far);
        if (clone_with_rule(pc, &far_rule, far) != 0) {
            free(far);
            return -1;
        }
    }
    if (pc->extend_far) {
        pos_free(pc->extend_far);
        free(pc->extend_far);
    }
    pc->extend = *e;
    pc->extend_far = far;
    return 0;
}

const PosCtx *pos_far_ctx(const PosCtx *pc) { return pc->extend_far ? pc->extend_far : pc; }

/* the canonical spec into buf; returns its full length (>= n: cut) */
static size_t write_spec(const PosCtx *pc, char *buf, size_t n) {
    const PosScheme *s = pc->scheme;
    size_t used = 0;
    buf[0] = 0;
    put(buf, n, &used, "%s", s->name);
    for (int i = 0; i < s->n_options; i++) {
        char val[POS_SPEC_MAX]; /* a rule may hold a path (longrope:PATH) */
        value_text(pc, &s->options[i], val, sizeof val);
        put(buf, n, &used, "%c%s=%s", i ? ',' : ':', s->options[i].name, val);
    }
    char mod[96];
    attn_scale_spec(&pc->attn_scale, mod, sizeof mod);
    put(buf, n, &used, "%s", mod);
    int first = 1;
    for (int l = 0; l < pc->n_layers && l < POS_MAX_LAYERS; l++)
        if (!pos_layer_active(pc, l)) {
            put(buf, n, &used, "%s%d", first ? "+nope@" : ",", l);
            first = 0;
        }
    return used;
}

void pos_spec(const PosCtx *pc, char *buf, size_t n) { write_spec(pc, buf, n); }

size_t pos_n_params(const PosCtx *pc) {
    int nd = 0, shape[4] = {0};
    if (!pc->scheme->param_shape) return 0;
    pc->scheme->param_shape(pc, &nd, shape);
    if (nd == 0) return 0;
    size_t n = 1;
    for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
    return n;
}

/* a fresh state with pc's options, the rule replaced, prepared again: the tables follow the rule */
int pos_set_scale(PosCtx *pc, const char *rule) {
    PosExtend e;
    int is_extend = extend_parse(rule, &e);
    if (is_extend < 0) return -1;
    if (is_extend) return pos_set_extend(pc, &e);
    const PosScheme *s = pc->scheme;
    const PosOption *ro = rule_option(s);
    if (!(s->caps & POS_CAP_RULES) || !ro) {
        char names[128];
        size_t used = 0;
        names[0] = 0;
        for (int i = 0; i < pos_count(); i++)
            if (pos_at(i)->caps & POS_CAP_RULES)
                put(names, sizeof names, &used, "%s%s", used ? ", " : "", pos_at(i)->name);
        return pelab_fail("--scale %s: scaling rules apply to rotary schemes (%s); this model uses %s", rule, names,
                          s->name);
    }
    RopeRule r;
    if (rope_rule_parse(rule, &r) != 0) return -1;
    return pos_set_rule(pc, &r);
}

int pos_set_rule(PosCtx *pc, const RopeRule *r) {
    const PosScheme *s = pc->scheme;
    const PosOption *ro = rule_option(s);
    if (!(s->caps & POS_CAP_RULES) || !ro) return pelab_fail("scaling rules apply to rotary schemes; this model uses %s",
                                                             s->name);
    if (pc->extend.method) /* leaky's far context was built under the old rule */
        return pelab_fail("a scaling rule cannot be set on a model with an extension method: set the rule first");
    PosCtx fresh;
    if (clone_with_rule(pc, r, &fresh) != 0) return -1;
    pos_free(pc);
    *pc = fresh;
    return 0;
}

int pos_set_attn_scale(PosCtx *pc, const char *text) {
    AttnScale a = {0};
    if (strcmp(text, "none") != 0 && attn_scale_parse(&a, text, pc->seq_len) != 0) return -1;
    if (attn_scale_learned(&a))
        return pelab_fail("ssmax is learned (s per layer and head): train with --pos SPEC+ssmax; it cannot be added "
                          "to a loaded model");
    if (attn_scale_learned(&pc->attn_scale))
        return pelab_fail("this model was trained with +ssmax (learned): its modifier cannot be replaced");
    int has_nope = 0;
    for (int l = 0; l < pc->n_layers; l++) has_nope |= !pos_layer_active(pc, l);
    if (a.nope_only && !has_nope) return pelab_fail("layers=nope: this model has no NoPE layers");
    pc->attn_scale = a;
    return 0;
}

int pos_rotary_pairs(const PosCtx *pc) {
    if (!(pc->scheme->caps & POS_CAP_RULES)) return 0;
    const PosOption *fraction = find_option(pc->scheme, "fraction");
    return rope_rotary_pairs(pc->head_dim, fraction ? *(const double *)field(pc, fraction) : 1.0);
}

int pos_rotary_half(const PosCtx *pc) {
    const PosOption *layout = find_option(pc->scheme, "layout");
    return layout ? *(const int *)field(pc, layout) : 0;
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
    int used = snprintf(buf, n, "training %d; accepted %s; computable %s", pc->seq_len, a, c);
    if (pc->extend.method && used >= 0 && (size_t)used < n) { /* what --scale set at inference */
        char method[64];
        extend_describe(&pc->extend, method, sizeof method);
        snprintf(buf + used, n - used, "; extension method %s", method);
    }
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
    if (pc->scheme->reserve && hi >= 0 && pc->scheme->reserve(pc, hi + 1) != 0) return -1;
    if (extend_two_branch(&pc->extend) && pc->scheme->reserve && hi >= 0) {
        /* the far branch's positions: the largest query's (keys' are at most their own) */
        long far_hi = extend_far_qpos(&pc->extend, (int)hi);
        PosCtx *far = pc->extend_far ? pc->extend_far : pc;
        if (pc->scheme->reserve(far, far_hi + 1) != 0) return -1;
    }
    return 0;
}
