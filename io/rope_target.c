/* rope_target.c: a pelab RoPE model as another runtime's Llama sees it (see rope_target.h). */
#include "rope_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"

void rotary_rows_permute(float *w, int n_heads, int head_dim, int cols, int to_half) {
    int half = head_dim / 2;
    size_t row = (size_t)cols * sizeof(float);
    float *tmp = xmalloc(row * (size_t)head_dim);
    for (int h = 0; h < n_heads; h++) {
        float *head = w + (size_t)h * head_dim * cols;
        for (int j = 0; j < half; j++)
            for (int k = 0; k < 2; k++) { /* dim k of pair j: interleaved row 2j + k, half row j + k*half */
                int il = 2 * j + k, hl = j + k * half;
                memcpy(tmp + (size_t)(to_half ? hl : il) * cols, head + (size_t)(to_half ? il : hl) * cols, row);
            }
        memcpy(head, tmp, row * (size_t)head_dim);
    }
    free(tmp);
}

void spec_option(const char *spec, const char *key, char *out, size_t n) {
    size_t kl = strlen(key);
    out[0] = 0;
    for (const char *p = strchr(spec, ':'); p; p = strchr(p + 1, ',')) {
        if (strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '=') continue;
        const char *v = p + 2 + kl;
        snprintf(out, n, "%.*s", (int)strcspn(v, ",+"), v);
        return;
    }
}

int rope_target_of(const Model *m, const char *name, const char *runner, RopeTarget *r) {
    char spec[POS_SPEC_MAX], v[POS_SPEC_MAX];
    pos_spec(&m->pos, spec, sizeof spec);
    if (strncmp(spec, "rope:", 5) != 0)
        return pelab_fail("%s: position scheme %.*s: %s computes RoPE only", name, (int)strcspn(spec, ":+"), spec,
                          runner);
    if (m->pos.extend.method) { /* never in the spec: a loaded model's inference rule */
        char how[POS_SPEC_MAX];
        extend_describe(&m->pos.extend, how, sizeof how);
        return pelab_fail("%s: extension method %s: %s has no such inference rule", name, how, runner);
    }
    const char *plus = strchr(spec, '+');
    if (plus && !strncmp(plus, "+nope@", 6))
        return pelab_fail("%s: NoPE layers (%s): %s rotates q and k in every layer", name, plus, runner);
    if (plus && !strncmp(plus, "+sinks", 6)) return pelab_fail("%s: learned attention sinks (+sinks): %s has none", name, runner);
    if (plus)
        return pelab_fail("%s: %.*s: %s has no length-scaled attention", name, (int)strcspn(plus + 1, "+") + 1, plus,
                          runner);
    spec_option(spec, "fraction", v, sizeof v);
    if (strtod(v, NULL) != 1) return pelab_fail("%s: partial rotary (fraction=%s): %s rotates the whole head", name, v, runner);
    spec_option(spec, "keep", v, sizeof v);
    if (strtod(v, NULL) != 1) return pelab_fail("%s: p-RoPE (keep=%s): %s rotates every pair", name, v, runner);
    spec_option(spec, "max_period", v, sizeof v);
    if (strtod(v, NULL) != 0) return pelab_fail("%s: HoPE (max_period=%s): %s rotates every pair", name, v, runner);
    spec_option(spec, "base", v, sizeof v);
    r->base = strtod(v, NULL);
    spec_option(spec, "layout", v, sizeof v);
    r->half = strcmp(v, "half") == 0;
    spec_option(spec, "orig_len", v, sizeof v);
    r->orig_len = atoi(v);
    spec_option(spec, "scale", v, sizeof v);
    if (rope_rule_parse(v, &r->rule) != 0) return -1;
    /* what is left must be the whole spec: any option this file does not know is refused */
    char want[2 * POS_SPEC_MAX];
    snprintf(want, sizeof want, "rope:base=%.17g,layout=%s,fraction=1,scale=%s,orig_len=%d,keep=1,max_period=0",
             r->base, r->half ? "half" : "interleaved", v, r->orig_len);
    PosCtx ref;
    const ModelConfig *c = &m->cfg;
    if (pos_init(&ref, want, c->dim, c->n_heads, c->n_kv_heads, c->n_layers, c->seq_len) != 0) return -1;
    pos_spec(&ref, want, sizeof want);
    pos_free(&ref);
    if (strcmp(want, spec) != 0) return pelab_fail("%s: position scheme %s: %s computes only %s", name, spec, runner, want);
    return 0;
}
