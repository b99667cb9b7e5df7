/* hf_pattern.c: a Hugging Face config's per-layer attention (layer_types, sliding_window_pattern,
 * Gemma 2's alternation, attention_chunk_size, rope_local_base_freq, NoPE layers) as a pelab
 * --attn-pattern (model/pattern.h): every layer's kind, then the shortest cycle that repeats. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "hf_config.h"

/* layer l's kind: its window or chunk, its base (rope_local_base_freq in the sliding layers,
 * rope_theta in the others, written only when the two differ), NoPE */
static LayerAttn layer_of(const HfConfig *c, int l) {
    LayerAttn k = {0};
    int kind = c->layer_kind[l];
    if (kind == HF_LAYER_SLIDING && c->sliding_window) k.window = (int)c->sliding_window;
    if (kind == HF_LAYER_CHUNKED && c->chunk_size) k.chunk = (int)c->chunk_size;
    if (c->nope[l]) k.nope = 1;
    else if (c->local_theta) k.base = kind == HF_LAYER_SLIDING ? c->local_theta : c->theta;
    return k;
}

static int same(const LayerAttn *a, const LayerAttn *b) {
    return a->window == b->window && a->chunk == b->chunk && a->base == b->base && a->nope == b->nope;
}

int hf_config_pattern(const HfConfig *c, char *buf, size_t n, LayerAttn *layers) {
    if (n) buf[0] = 0;
    if (!c->layer_pattern || c->n_layers < 1) return 0;
    int L = c->n_layers < HF_MAX_LAYERS ? (int)c->n_layers : HF_MAX_LAYERS;
    LayerAttn kinds[HF_MAX_LAYERS];
    for (int l = 0; l < L; l++) kinds[l] = layer_of(c, l);
    if (layers) memcpy(layers, kinds, (size_t)L * sizeof *kinds);
    if (c->sliding_window > (1 << 24) || c->chunk_size > (1 << 24))
        return pelab_fail("sliding_window %ld, attention_chunk_size %ld: pelab's windows and chunks go up to %d",
                          c->sliding_window, c->chunk_size, 1 << 24);
    if (c->local_theta && c->local_theta > 1e12) return pelab_fail("rope_local_base_freq %g: expected at most 1e12", c->local_theta);
    if (c->local_theta && (c->theta < 1.0001 || c->theta > 1e12))
        return pelab_fail("rope_theta %g beside rope_local_base_freq: expected 1.0001..1e12 for a per-layer base", c->theta);
    int period = 1;
    for (; period <= L; period++) {
        int l = period;
        while (l < L && same(&kinds[l], &kinds[l % period])) l++;
        if (l == L) break;
    }
    if (period > PATTERN_MAX)
        return pelab_fail("layer_types: the layers repeat no cycle of %d or fewer (their shortest is %d): pelab's "
                          "--attn-pattern holds at most %d kinds", PATTERN_MAX, period, PATTERN_MAX);
    AttnPattern p = {.n = period};
    memcpy(p.kind, kinds, (size_t)period * sizeof *kinds);
    if (pattern_spec(&p, buf, n) >= n) return pelab_fail("layer_types: the --attn-pattern is longer than %zu characters", n - 1);
    return 1;
}
