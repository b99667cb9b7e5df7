#include "generate.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "decode.h"

int generate_check_positions(const Model *m, int n_prompt, int n_new) {
    long max_pos = pos_max_position(&m->pos);
    /* the last drawn token is never fed back: positions 0 .. total-2 are used */
    if (max_pos >= 0 && n_prompt + n_new - 1 > max_pos)
        return pelab_fail("prompt (%d tokens) + %d new needs positions up to %d; the %s scheme accepts %ld positions",
                          n_prompt, n_new, n_prompt + n_new - 2, m->pos.scheme->name, max_pos);
    return 0;
}

int generate(Model *m, Sampler *s, int *tokens, int n_prompt, int n_new, int use_cache, int stop_id,
             void (*on_token)(int id, void *ctx), void *ctx) {
    int total = n_prompt + n_new, V = m->cfg.vocab_size, rc = 0;
    if (generate_check_positions(m, n_prompt, n_new) != 0) return -1;
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

int generate_batch(Model *m, Sampler *samplers, int **texts, const int *n_prompt, int n_seq, int n_new, int stop_id,
                   int *n_made) {
    int longest = 0, V = m->cfg.vocab_size;
    for (int b = 0; b < n_seq; b++) {
        if (n_prompt[b] < 1) return pelab_fail("text %d: an empty prompt (at least one token, e.g. BOS)", b + 1);
        longest = n_prompt[b] > longest ? n_prompt[b] : longest;
    }
    long max_pos = pos_max_position(&m->pos), dyn = m->pos.scheme->qk_dynamic_from
                                                        ? m->pos.scheme->qk_dynamic_from(&m->pos) : -1;
    for (int b = 0; b < n_seq; b++) /* the last drawn token is never fed back */
        if (max_pos >= 0 && n_prompt[b] + n_new - 1 > max_pos)
            return pelab_fail("text %d: prompt (%d tokens) + %d new needs positions up to %d; the %s scheme accepts %ld "
                              "positions", b + 1, n_prompt[b], n_new, n_prompt[b] + n_new - 2, m->pos.scheme->name,
                              max_pos);
    /* one at a time: a dynamic rule follows each text's own length; a one-sequence cache policy too */
    if (n_seq == 1 || (dyn >= 0 && longest + n_new - 1 > dyn) || pos_cache_policy(&m->pos).one_sequence) {
        for (int b = 0; b < n_seq; b++) {
            n_made[b] = generate(m, &samplers[b], texts[b], n_prompt[b], n_new, 1, stop_id, NULL, NULL);
            if (n_made[b] < 0) return -1;
        }
        return 0;
    }
    int cap = longest + n_new;
    KVCache kv;
    kvcache_init_batch(&kv, m, n_seq, cap, 64);
    int *in = xmalloc(sizeof(int) * n_seq * longest), *pos = xmalloc(sizeof(int) * n_seq * longest);
    int *done = xcalloc(n_seq, sizeof(int));
    float *logits = xmalloc(sizeof(float) * n_seq * V);
    /* the prompts, right-aligned: padding (token 0 at position 0, masked) then positions 0.. */
    for (int b = 0; b < n_seq; b++) {
        int pad = longest - n_prompt[b];
        kv.key_start[b] = pad;
        for (int i = 0; i < longest; i++) {
            in[b * longest + i] = i < pad ? 0 : texts[b][i - pad];
            pos[b * longest + i] = i < pad ? 0 : i - pad;
        }
        n_made[b] = 0;
    }
    int rc = decode_forward_batch(m, &kv, in, pos, longest, logits, 0);
    for (int t = 0; rc == 0 && t < n_new; t++) {
        int active = 0;
        for (int b = 0; b < n_seq; b++) {
            int len = n_prompt[b] + n_made[b];
            if (!done[b]) {
                int id = sampler_sample(&samplers[b], logits + (size_t)b * V);
                if (id == stop_id) done[b] = 1;
                else texts[b][len] = id, n_made[b]++, len++;
            }
            done[b] |= n_made[b] == n_new;
            active += !done[b];
            /* a finished text is fed its last token again at its last position: never read */
            in[b] = texts[b][len - 1];
            pos[b] = len - 1;
        }
        if (!active) break;
        rc = decode_forward_batch(m, &kv, in, pos, 1, logits, 0);
    }
    kvcache_free(&kv);
    free(in), free(pos), free(done), free(logits);
    return rc;
}
