/* policy.c: what may be set on a loaded model's scheme, and how: a scaling rule (--scale RULE,
 * a fresh state with every other option kept), an extension method (--scale METHOD, checked against
 * the scheme through the method's definition, extend.h), a length-scaled attention modifier
 * (--attn-scale); and the rotary facts other floors ask (pairs, layout, rule). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "options.h"
#include "rope_scaling.h"

/* a copy of pc (a scheme that takes rules) with its own state, every option as pc's but the rule;
 * no extension method. -1 if the scheme refuses the rule. */
static int clone_with_rule(const PosCtx *pc, const RopeRule *r, PosCtx *out) {
    const PosScheme *s = pc->scheme;
    *out = *pc;
    out->extend = (PosExtend){0};
    out->extend_far = NULL;
    out->state = xcalloc(1, s->state_size);
    for (int i = 0; i < s->n_options; i++)
        memcpy(pos_opt_field(out, &s->options[i]), pos_opt_field(pc, &s->options[i]), pos_opt_size(&s->options[i]));
    *(RopeRule *)pos_opt_field(out, pos_opt_rule(s)) = *r;
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
    if (m->cache_policy && s->gate_forward) /* the only method with a policy slides its cache */
        return "sums forget gates along the whole sequence, which a sliding cache would cut; decode it with a full "
               "cache";
    if (extend_two_branch(e) && !s->qk_forward)
        return "has no q/k map whose relative positions the method could remap (rotary schemes: rope, xpos, fope)";
    if (m->refuse_no_rules && !(s->caps & POS_CAP_RULES)) return m->refuse_no_rules;
    return NULL;
}

int pos_set_extend(PosCtx *pc, const PosExtend *method) {
    const PosScheme *s = pc->scheme;
    PosExtend resolved = *method; /* "string", "dca": their arguments from the training length */
    if (extend_resolve(&resolved, pc->seq_len) != 0) return -1;
    const PosExtend *e = &resolved;
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
        if (!rope_rule_is_none(pos_opt_field(pc, pos_opt_rule(s))))
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

/* a fresh state with pc's options, the rule replaced, prepared again: the tables follow the rule */
int pos_set_scale(PosCtx *pc, const char *rule) {
    PosExtend e;
    int is_extend = extend_parse(rule, &e);
    if (is_extend < 0) return -1;
    if (is_extend) return pos_set_extend(pc, &e);
    const PosScheme *s = pc->scheme;
    const PosOption *ro = pos_opt_rule(s);
    if (!(s->caps & POS_CAP_RULES) || !ro) {
        char names[128];
        size_t used = 0;
        names[0] = 0;
        for (int i = 0; i < pos_count(); i++)
            if (pos_at(i)->caps & POS_CAP_RULES)
                pos_put(names, sizeof names, &used, "%s%s", used ? ", " : "", pos_at(i)->name);
        return pelab_fail("--scale %s: scaling rules apply to rotary schemes (%s); this model uses %s", rule, names,
                          s->name);
    }
    RopeRule r;
    if (rope_rule_parse(rule, &r) != 0) return -1;
    return pos_set_rule(pc, &r);
}

int pos_set_rule(PosCtx *pc, const RopeRule *r) {
    const PosScheme *s = pc->scheme;
    const PosOption *ro = pos_opt_rule(s);
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
    const PosOption *fraction = pos_opt_find(pc->scheme, "fraction");
    return rope_rotary_pairs(pc->head_dim, fraction ? *(const double *)pos_opt_field(pc, fraction) : 1.0);
}

int pos_rotary_half(const PosCtx *pc) {
    const PosOption *layout = pos_opt_find(pc->scheme, "layout");
    return layout ? *(const int *)pos_opt_field(pc, layout) : 0;
}

void pos_rule_describe(const PosCtx *pc, char *buf, size_t n) {
    const PosOption *ro = pc->scheme->caps & POS_CAP_RULES ? pos_opt_rule(pc->scheme) : NULL;
    if (ro) rope_rule_describe(pos_opt_field(pc, ro), buf, n);
    else snprintf(buf, n, "none");
}
