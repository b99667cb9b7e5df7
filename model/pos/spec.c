/* spec.c: a spec "NAME[:k=v,...][+MODIFIER][+nope@L1,L2]" parsed into a context (the scheme found by
 * name, its options through the option engine, the '+' parts: the attention modifier and the NoPE
 * layers), written back as the canonical spec, and freed. */
#include "pos.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "options.h"

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
    if (!s->qk_forward && !s->bias_row && !s->gate_forward)
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

/* the '+' parts after the scheme: at most one attention modifier, sinks, at most one nope@ list */
static int parse_parts(PosCtx *pc, char *parts) {
    char *save = NULL, modifier[64] = "", *tok;
    int has_nope = 0;
    size_t len = strlen(parts);
    if (len == 0 || parts[len - 1] == '+' || strstr(parts, "++"))
        return pelab_fail("an empty '+' part (expected +logn, +temp, +ssmax, +sinks or +nope@L1,L2)");
    for (tok = strtok_r(parts, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        if (!strncmp(tok, "nope@", 5)) {
            if (has_nope++) return pelab_fail("+nope@ given twice: list every NoPE layer in one +nope@L1,L2");
            if (parse_nope_layers(pc, tok + 5) != 0) return -1;
        } else if (!strncmp(tok, "sinks", 5) && (!tok[5] || tok[5] == ':')) {
            if (pc->sinks.on) return pelab_fail("+sinks given twice");
            if (sinks_parse(&pc->sinks, tok) != 0) return -1;
        } else if (!strcmp(tok, "nope")) {
            return pelab_fail("+nope: expected +nope@L1,L2 (the 0-based layers without position encoding)");
        } else {
            if (pc->attn_scale.kind != ATTN_SCALE_NONE)
                return pelab_fail("one attention modifier at most (+%s and +%s)", modifier, tok);
            if (attn_scale_parse(&pc->attn_scale, tok, pc->seq_len) != 0) return -1;
            snprintf(modifier, sizeof modifier, "%.*s", (int)strcspn(tok, ":"), tok);
        }
    }
    if (pc->attn_scale.kind != ATTN_SCALE_NONE && pc->scheme->qk_backward_mapped)
        return pelab_fail("+%s on %s: its backward reads the mapped queries, which the length scale changes", modifier,
                          pc->scheme->name);
    if (pc->attn_scale.nope_only && !has_nope)
        return pelab_fail("+%s:layers=nope: the model has no NoPE layers (add +nope@L1,L2)", modifier);
    /* SSMax multiplies the whole logit vector; pelab scales the queries, which is that only when
     * the logits are q.k alone */
    if (pc->attn_scale.kind == ATTN_SCALE_SSMAX &&
        (pc->scheme->bias_row || pc->scheme->content_row || pc->scheme->gate_forward))
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
    for (int i = 0; i < s->n_options; i++) pos_opt_set_default(pc, &s->options[i]);
    char *saveptr = NULL;
    for (char *tok = opts ? strtok_r(opts, ",", &saveptr) : NULL; tok; tok = strtok_r(NULL, ",", &saveptr)) {
        char *eq = strchr(tok, '=');
        int has_key = eq && eq != tok;
        if (has_key) *eq = 0;
        const PosOption *o = has_key ? pos_opt_find(s, tok) : NULL;
        if (!o || pos_opt_parse(pc, o, eq + 1) != 0) {
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

/* the canonical spec into buf; returns its full length (>= n: cut) */
static size_t write_spec(const PosCtx *pc, char *buf, size_t n) {
    const PosScheme *s = pc->scheme;
    size_t used = 0;
    buf[0] = 0;
    pos_put(buf, n, &used, "%s", s->name);
    for (int i = 0; i < s->n_options; i++) {
        char val[POS_SPEC_MAX]; /* a rule may hold a path (longrope:PATH) */
        pos_opt_value_text(pc, &s->options[i], val, sizeof val);
        pos_put(buf, n, &used, "%c%s=%s", i ? ',' : ':', s->options[i].name, val);
    }
    char mod[96];
    attn_scale_spec(&pc->attn_scale, mod, sizeof mod);
    pos_put(buf, n, &used, "%s", mod);
    sinks_spec(&pc->sinks, mod, sizeof mod);
    pos_put(buf, n, &used, "%s", mod);
    int first = 1;
    for (int l = 0; l < pc->n_layers && l < POS_MAX_LAYERS; l++)
        if (!pos_layer_active(pc, l)) {
            pos_put(buf, n, &used, "%s%d", first ? "+nope@" : ",", l);
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

