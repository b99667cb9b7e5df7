/* gguf_rope.c: a pelab RoPE rotation as llama.cpp's rope metadata, and back (see gguf_rope.h). */
#include "gguf_rope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "gguf_quant.h"
#include "rope_target.h"

#define RUNNER "llama.cpp's llama architecture"

/* a static rule with attention factor 1 as per-pair divisors of the base frequencies */
static int rule_divisors(const RopeTarget *t, const RopeRuleDef *d, int head_dim, int L, GgufRope *r, const char *name) {
    int pairs = head_dim / 2;
    double *base = xmalloc(sizeof(double) * (size_t)pairs), *freq = xmalloc(sizeof(double) * (size_t)pairs), af, af0;
    RopeRule none = {0};
    rope_rule_freqs(&none, head_dim, t->base, L, L, base, &af0);
    rope_rule_freqs(&t->rule, head_dim, t->base, L, L, freq, &af);
    int rc = 0;
    if (af != 1) rc = pelab_fail("%s: scale %s: cos and sin times %g, which only YaRN's type carries in %s", name, d->name, af, RUNNER);
    r->divisor = xmalloc(sizeof(float) * (size_t)pairs);
    r->n_divisors = pairs;
    for (int j = 0; j < pairs && rc == 0; j++) r->divisor[j] = (float)(base[j] / freq[j]);
    free(base), free(freq);
    return rc;
}

int gguf_rope_of_model(const Model *m, const char *name, GgufRope *r, char *note, size_t note_len) {
    RopeTarget t;
    memset(r, 0, sizeof *r);
    note[0] = 0;
    if (rope_target_of(m, name, RUNNER, &t) != 0) return -1;
    const RopeRuleDef *d = rope_rule_def(&t.rule);
    char rule[POS_SPEC_MAX];
    rope_rule_describe(&t.rule, rule, sizeof rule);
    int L = rope_rule_length(&t.rule, t.orig_len);
    double base = t.base;
    r->dim_count = (uint32_t)m->head_dim;
    snprintf(r->type, sizeof r->type, "none");
    if (rope_rule_is_none(&t.rule)) {
    } else if (d->gguf_type) {
        snprintf(r->type, sizeof r->type, "%s", d->gguf_type);
        r->factor = (float)t.rule.s;
        r->orig_ctx = (uint32_t)L;
    } else if (d->hf_theta) { /* the same frequencies under another base */
        char why[300];
        base = d->hf_theta(&t.rule, t.base, m->head_dim, why, sizeof why);
        snprintf(note, note_len, "scale=%s has no llama.cpp type: written as rope.freq_base %.9g", rule, base);
    } else if (rope_rule_is_dynamic(&t.rule)) {
        return pelab_fail("%s: scale=%s: %s follows the current length; %s fixes the frequencies (or picks them once "
                          "from the context size)", name, rule, d->title, RUNNER);
    } else if (d->angle) {
        return pelab_fail("%s: scale=%s: %s's angle is not position x frequency, which is all %s computes", name, rule,
                          d->title, RUNNER);
    } else {
        if (rule_divisors(&t, d, m->head_dim, L, r, name) != 0) return gguf_rope_free(r), -1;
        r->orig_ctx = (uint32_t)L;
    }
    r->freq_base = (float)base;
    if (!isfinite(r->freq_base)) return pelab_fail("%s: base %g does not fit a float32", name, base);
    return 0;
}

void gguf_rope_put(GgufWriter *w, const GgufRope *r) {
    gguf_w_u32(w, "llama.rope.dimension_count", r->dim_count);
    gguf_w_f32(w, "llama.rope.freq_base", r->freq_base);
    gguf_w_str(w, "llama.rope.scaling.type", r->type);
    if (strcmp(r->type, "none")) gguf_w_f32(w, "llama.rope.scaling.factor", r->factor);
    if (r->orig_ctx) gguf_w_u32(w, "llama.rope.scaling.original_context_length", r->orig_ctx);
}

/* rope_freqs.weight: n float32-readable divisors, each finite and > 0 */
static int read_divisors(const GgufFile *g, GgufRope *r) {
    const GgufTensor *t = gguf_find_tensor(g, "rope_freqs.weight");
    if (!t) return 0;
    if (t->n_dims != 1 || t->numel > 65536)
        return pelab_fail("%s: tensor rope_freqs.weight: %u dimensions of %llu: expected one of head_dim/2 divisors", g->name,
                          t->n_dims, (unsigned long long)t->ne[0]);
    r->n_divisors = (int)t->numel;
    r->divisor = xmalloc(sizeof(float) * (size_t)t->numel);
    ggml_decode(t->type, t->data, (size_t)t->numel, r->divisor);
    for (int j = 0; j < r->n_divisors; j++)
        if (!(r->divisor[j] > 0 && r->divisor[j] < 1e30f))
            return pelab_fail("%s: tensor rope_freqs.weight: element %d is %g, expected a positive divisor", g->name, j,
                              r->divisor[j]);
    return 0;
}

int gguf_rope_read(const GgufFile *g, uint32_t ctx_len, GgufRope *r) {
    memset(r, 0, sizeof *r);
    r->freq_base = 10000; /* llama.cpp's defaults */
    snprintf(r->type, sizeof r->type, "linear");
    float attn = 1;
    const unsigned char *s;
    size_t n;
    int got;
    int has_dims, has_orig;
    if (gguf_get_f32(g, "llama.rope.freq_base", &r->freq_base) < 0 ||
        (has_dims = gguf_get_u32(g, "llama.rope.dimension_count", &r->dim_count)) < 0 ||
        (has_orig = gguf_get_u32(g, "llama.rope.scaling.original_context_length", &r->orig_ctx)) < 0 ||
        gguf_get_f32(g, "llama.rope.scaling.attn_factor", &attn) < 0 || (got = gguf_get_str(g, "llama.rope.scaling.type", &s, &n)) < 0)
        return -1;
    /* 0 below means "absent" (llama.cpp's default): a 0 in the file is not that */
    if (has_dims && r->dim_count == 0)
        return pelab_fail("%s: llama.rope.dimension_count 0: expected the head size (llama.cpp's llama refuses 0)", g->name);
    if (has_orig && r->orig_ctx == 0)
        return pelab_fail("%s: llama.rope.scaling.original_context_length 0: expected a length of 1 or more", g->name);
    if (got) { /* printable ASCII of at most 11 bytes, else "?" */
        size_t k = 0;
        while (k < n && k + 1 < sizeof r->type && s[k] >= 0x20 && s[k] < 0x7f) r->type[k] = (char)s[k], k++;
        r->type[k] = 0;
        if (k != n) snprintf(r->type, sizeof r->type, "?");
    }
    if (strcmp(r->type, "none") && strcmp(r->type, "linear") && strcmp(r->type, "yarn"))
        return pelab_fail("%s: llama.rope.scaling.type \"%s\": pelab reads none, linear and yarn (a longrope's factors "
                          "switch by context size in llama.cpp, by the current length in pelab)", g->name, r->type);
    if (attn != 1) return pelab_fail("%s: llama.rope.scaling.attn_factor %g: pelab's rules have no extra factor on cos and sin", g->name, attn);
    if ((got = gguf_get_f32(g, "llama.rope.scaling.factor", &r->factor)) == 0) got = gguf_get_f32(g, "llama.rope.scale_linear", &r->factor);
    if (got < 0) return -1;
    if (!(r->freq_base > 1) || !isfinite(r->freq_base)) return pelab_fail("%s: llama.rope.freq_base %g: expected a number > 1", g->name, r->freq_base);
    if (!strcmp(r->type, "none") || (!strcmp(r->type, "linear") && (r->factor == 0 || r->factor == 1))) { /* no scaling */
        snprintf(r->type, sizeof r->type, "none");
        r->factor = 0;
    } else if (!(r->factor >= 1 && r->factor <= 1e6)) {
        return pelab_fail("%s: llama.rope.scaling.factor %g: expected 1 to 1e6 (type %s)", g->name, r->factor, r->type);
    }
    if (!strcmp(r->type, "yarn") && !r->orig_ctx) r->orig_ctx = ctx_len; /* llama.cpp's n_ctx_orig_yarn */
    return read_divisors(g, r);
}

int gguf_rope_spec(const GgufRope *r, const char *name, char *spec, size_t n) {
    int L = (int)(r->orig_ctx ? r->orig_ctx : 0);
    char rule[POS_SPEC_MAX] = "none";
    if (r->orig_ctx > (1u << 30)) return pelab_fail("%s: llama.rope.scaling.original_context_length %u: expected at most 2^30", name, r->orig_ctx);
    if (r->n_divisors) {
        const RopeRuleDef *d = rope_rule_find_gguf(NULL);
        RopeRule u = {.def = d};
        int fit_len = 0;
        if (strcmp(r->type, "none"))
            return pelab_fail("%s: rope_freqs.weight with scaling type %s: pelab has no rule for both", name, r->type);
        if (!d || d->gguf_fit(r->divisor, r->n_divisors, r->freq_base, &u, &fit_len) != 0)
            return pelab_fail("%s: rope_freqs.weight: per-pair divisors of no form pelab has a rule for (%s)", name,
                              d ? d->title : "none");
        rope_rule_describe(&u, rule, sizeof rule);
        if (!L) L = fit_len;
    } else if (strcmp(r->type, "none")) {
        const RopeRuleDef *d = rope_rule_find_gguf(r->type);
        if (!d) return pelab_fail("%s: llama.rope.scaling.type %s: pelab has no rule for it", name, r->type);
        snprintf(rule, sizeof rule, "%s:%.9g", d->name, r->factor);
    }
    int k = snprintf(spec, n, "rope:base=%.9g,layout=interleaved,scale=%s", r->freq_base, rule);
    if (L && strcmp(rule, "none")) k += snprintf(spec + k, n > (size_t)k ? n - (size_t)k : 0, ",orig_len=%d", L);
    return 0;
}

int gguf_rope_same(const GgufRope *want, const GgufRope *have, const char *name) {
    if (want->freq_base != have->freq_base)
        return pelab_fail("%s: llama.rope.freq_base %.9g, but the model computes %.9g", name, have->freq_base, want->freq_base);
    if (have->dim_count && want->dim_count != have->dim_count)
        return pelab_fail("%s: llama.rope.dimension_count %u: llama.cpp's llama rotates whole heads of %u", name,
                          have->dim_count, want->dim_count);
    if (strcmp(want->type, have->type) || want->factor != have->factor)
        return pelab_fail("%s: llama.rope.scaling type %s factor %g, but the model computes type %s factor %g", name,
                          have->type, have->factor, want->type, want->factor);
    if (!strcmp(want->type, "yarn") && want->orig_ctx != have->orig_ctx)
        return pelab_fail("%s: llama.rope.scaling.original_context_length %u, but the model's yarn has %u", name,
                          have->orig_ctx, want->orig_ctx);
    if (want->n_divisors != have->n_divisors)
        return pelab_fail("%s: rope_freqs.weight: %d divisors, but the model has %d", name, have->n_divisors, want->n_divisors);
    for (int j = 0; j < want->n_divisors; j++)
        if (fabsf(want->divisor[j] - have->divisor[j]) > 1e-6f * want->divisor[j])
            return pelab_fail("%s: rope_freqs.weight[%d] %.9g, but the model's rule has %.9g", name, j, have->divisor[j],
                              want->divisor[j]);
    return 0;
}

void gguf_rope_free(GgufRope *r) {
    free(r->divisor);
    r->divisor = NULL, r->n_divisors = 0;
}
