/* layer_pos.c: a model's per-layer attention pattern (pattern.h): each layer's kind, and the
 * position contexts of the layers whose RoPE base is not the scheme's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "model.h"
#include "pos/options.h"

LayerAttn model_layer_attn(const Model *m, int l) { return pattern_layer(&m->cfg.pattern, m->cfg.sliding_window, l); }

const PosCtx *model_layer_pos(const Model *m, int l) {
    if (!m->n_base_pos) return &m->pos;
    int i = m->kind_pos[l % m->cfg.pattern.n];
    return i < 0 ? &m->pos : &m->base_pos[i];
}

static void free_base_pos(Model *m) {
    for (int i = 0; i < m->n_base_pos; i++) pos_free(&m->base_pos[i]);
    free(m->base_pos);
    m->base_pos = NULL, m->n_base_pos = 0;
}

/* what the base contexts follow of pos: its canonical spec and extension method */
static void pos_source(const Model *m, char *buf, size_t n) {
    char spec[POS_SPEC_MAX], method[64];
    pos_spec(&m->pos, spec, sizeof spec);
    extend_describe(&m->pos.extend, method, sizeof method);
    snprintf(buf, n, "%s|%s", spec, method);
}

/* pos under base b: its canonical spec with base=b after the options (a later key overrides) */
static int build_base_pos(const Model *m, double b, PosCtx *out) {
    char spec[POS_SPEC_MAX], with[POS_SPEC_MAX + 64];
    pos_spec(&m->pos, spec, sizeof spec);
    size_t opts = strcspn(spec, "+");
    snprintf(with, sizeof with, "%.*s,base=%.17g%s", (int)opts, spec, b, spec + opts);
    const ModelConfig *c = &m->cfg;
    if (pos_init(out, with, c->dim, c->n_heads, c->n_kv_heads, c->n_layers, c->seq_len) != 0) return -1;
    if (m->pos.extend.method && pos_set_extend(out, &m->pos.extend) != 0) {
        pos_free(out);
        return -1;
    }
    out->params = m->pos.params;
    out->attn_scale.s = m->pos.attn_scale.s;
    return 0;
}

static int build_all(Model *m) {
    const AttnPattern *p = &m->cfg.pattern;
    free_base_pos(m);
    double bases[PATTERN_MAX];
    for (int k = 0; k < p->n; k++) {
        m->kind_pos[k] = -1;
        if (p->kind[k].base <= 0) continue;
        int i = 0;
        while (i < m->n_base_pos && bases[i] != p->kind[k].base) i++;
        if (i == m->n_base_pos) bases[m->n_base_pos++] = p->kind[k].base;
        m->kind_pos[k] = (signed char)i;
    }
    if (!m->n_base_pos) return 0;
    int n = m->n_base_pos;
    m->base_pos = xcalloc((size_t)n, sizeof *m->base_pos);
    m->n_base_pos = 0;
    for (int i = 0; i < n; i++) {
        if (build_base_pos(m, bases[i], &m->base_pos[i]) != 0) {
            char why[sizeof pelab_errmsg];
            memcpy(why, pelab_errmsg, sizeof why);
            free_base_pos(m);
            return pelab_fail("--attn-pattern base=%g: %s", bases[i], why);
        }
        m->n_base_pos++;
    }
    pos_source(m, m->layer_pos_from, sizeof m->layer_pos_from);
    return 0;
}

int model_set_pattern(Model *m, const AttnPattern *p) {
    AttnPattern none = {0};
    if (!p) p = &none;
    const PosScheme *s = m->pos.scheme;
    ModelConfig c = m->cfg;
    c.pattern = *p;
    if (config_validate(&c) != 0) return -1;
    for (int k = 0; k < p->n; k++) {
        if (p->kind[k].base > 0 && !pos_opt_find(s, "base"))
            return pelab_fail("--attn-pattern base=%g: the %s scheme has no base= option (a rotary scheme has)",
                              p->kind[k].base, s->name);
        if (p->kind[k].nope && !s->qk_forward && !s->bias_row)
            return pelab_fail("--attn-pattern nope: %s has no per-layer hook to switch off; NoPE layers need a rotary "
                              "or score-bias scheme", s->name);
    }
    /* NoPE kinds: their layers join +nope@ (the canonical spec then lists them) */
    for (int l = 0; p->n && l < c.n_layers && l < POS_MAX_LAYERS; l++)
        if (p->kind[l % p->n].nope) m->pos.nope_layers[l / 8] |= (unsigned char)(1u << (l % 8));
    m->cfg.pattern = *p;
    return build_all(m);
}

int model_pattern_sync(Model *m) {
    if (!m->n_base_pos) return 0;
    char now[sizeof m->layer_pos_from];
    pos_source(m, now, sizeof now);
    for (int i = 0; i < m->n_base_pos; i++) /* the parameter block may have moved */
        m->base_pos[i].params = m->pos.params, m->base_pos[i].attn_scale.s = m->pos.attn_scale.s;
    return strcmp(now, m->layer_pos_from) ? build_all(m) : 0;
}

int model_check_positions(Model *m, const int *pos, size_t n) {
    if (model_pattern_sync(m) != 0 || pos_check_positions(&m->pos, pos, n) != 0) return -1;
    for (int i = 0; i < m->n_base_pos; i++)
        if (pos_check_positions(&m->base_pos[i], pos, n) != 0) return -1;
    return 0;
}
