#include "config.h"

#include "../core/error.h"

int config_validate(const ModelConfig *c) {
    if (c->vocab_size < 2 || c->vocab_size > (1 << 24)) return pelab_fail("vocab_size %d: expected 2..16777216", c->vocab_size);
    if (c->dim < 2 || c->dim > 65536) return pelab_fail("dim %d: expected 2..65536", c->dim);
    if (c->n_layers < 1 || c->n_layers > 1024) return pelab_fail("layers %d: expected 1..1024", c->n_layers);
    if (c->n_heads < 1 || c->dim % c->n_heads != 0)
        return pelab_fail("heads %d: expected a positive divisor of dim %d", c->n_heads, c->dim);
    if ((c->dim / c->n_heads) % 2 != 0)
        return pelab_fail("heads %d: head_dim = dim/heads = %d must be even (rotary pairs)", c->n_heads,
                          c->dim / c->n_heads);
    if (c->n_kv_heads < 1 || c->n_heads % c->n_kv_heads != 0)
        return pelab_fail("kv-heads %d: expected a positive divisor of heads %d", c->n_kv_heads, c->n_heads);
    if (c->hidden_dim < 1 || c->hidden_dim > (1 << 20)) return pelab_fail("hidden %d: expected 1..1048576", c->hidden_dim);
    if (c->seq_len < 1 || c->seq_len > (1 << 24)) return pelab_fail("seq-len %d: expected 1..16777216", c->seq_len);
    if (!(c->norm_eps > 0.0f && c->norm_eps < 1.0f)) return pelab_fail("norm_eps %g: expected 0 < eps < 1", c->norm_eps);
    if (c->tied != 0 && c->tied != 1) return pelab_fail("tied %d: expected 0 or 1", c->tied);
    if (c->qkv_bias != 0 && c->qkv_bias != 1) return pelab_fail("qkv_bias %d: expected 0 or 1", c->qkv_bias);
    if (c->sliding_window < 0) return pelab_fail("sliding_window %d: expected >= 0 (0: none)", c->sliding_window);
    if (c->pattern.n < 0 || c->pattern.n > PATTERN_MAX)
        return pelab_fail("attn_pattern: %d kinds (expected 0..%d)", c->pattern.n, PATTERN_MAX);
    if (c->pattern.n && c->sliding_window)
        return pelab_fail("sliding_window %d and attn_pattern: give the windows in the pattern alone", c->sliding_window);
    return 0;
}

int config_head_dim(const ModelConfig *c) { return c->dim / c->n_heads; }
