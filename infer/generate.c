#include "generate.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "decode.h"

int generate(Model *m, Sampler *s, int *tokens, int n_prompt, int n_new, int use_cache, int stop_id,
             void (*on_token)(int id, void *ctx), void *ctx) {
    int total = n_prompt + n_new, V = m->cfg.vocab_size, rc = 0;
    long max_pos = pos_max_position(&m->pos);
    /* the last drawn token is never fed back: positions 0 .. total-2 are used */
    if (max_pos >= 0 && total - 1 > max_pos)
        return pelab_fail("prompt (%d tokens) + %d new needs positions up to %d; the %s scheme accepts %ld positions",
                          n_prompt, n_new, total - 2, m->pos.scheme->name, max_pos);
    int *positions = xmalloc(sizeof(int) * total);
    for (int i = 0; i < total; i++) positions[i] = i;
    float *logits = xmalloc(sizeof(float) * V);
    KVCache kv;
    if (use_cache) kvcache_init(&kv, m, total, 64);
    else model_alloc_train(m, 1, total);
    int len = n_prompt;
    for (int i = 0; i < n_new; i++) {
        if (use_cache) {
            int from = i == 0 ? 0 : len - 1; /* the first call feeds the whole prompt */
            rc = decode_forward(m, &kv, tokens + from, positions + from, len - from, logits, 0);
        } else {
            rc = model_forward(m, tokens, NULL, positions, 1, len);
            if (rc == 0) memcpy(logits, m->acts.logits + (size_t)(len - 1) * V, sizeof(float) * V);
        }
        if (rc != 0) break;
        tokens[len] = sampler_sample(s, logits);
        if (tokens[len] == stop_id) break;
        if (on_token) on_token(tokens[len], ctx);
        len++;
    }
    if (use_cache) kvcache_free(&kv);
    free(positions);
    free(logits);
    return rc != 0 ? -1 : len - n_prompt;
}
