#include "lookup.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "decode.h"
#include "generate.h"

int lookup_draft(const int *t, int len, int k_max, int *draft) {
    int best = -1, k = 0; /* t[best ..] the followers drafted, k of them */
    /* t[e - g .. e) an earlier occurrence of the last g tokens, t[e ..] what followed it: the
     * longest g's latest occurrence with k_max followers, else (a repeating text's latest has
     * one) the most followers any g's occurrence has, the longest g's first */
    for (int g = len - 1 < LOOKUP_NGRAM_MAX ? len - 1 : LOOKUP_NGRAM_MAX; g >= LOOKUP_NGRAM_MIN && k < k_max; g--) {
        const int *tail = t + len - g;
        for (int e = len - 1; e >= g && k < k_max; e--)
            if (len - e > k && t[e - 1] == tail[g - 1] && memcmp(t + e - g, tail, sizeof(int) * g) == 0)
                best = e, k = len - e < k_max ? len - e : k_max;
    }
    if (k > 0) memcpy(draft, t + best, sizeof(int) * k);
    return k;
}

int generate_lookup(Model *m, Sampler *s, int *tokens, int n_prompt, int n_new, int draft_max, int stop_id,
                    void (*on_token)(int id, void *ctx), void *ctx, LookupStats *stats) {
    enum { CHUNK = 64 }; /* the cache's block: a draft and its first token go in one */
    if (draft_max < 1 || draft_max > CHUNK - 1) return pelab_fail("lookup: %d drafted tokens: expected 1..%d", draft_max, CHUNK - 1);
    if (generate_check_positions(m, n_prompt, n_new) != 0) return -1;
    int total = n_prompt + n_new, V = m->cfg.vocab_size, rc = 0;
    long dyn = m->pos.scheme->qk_dynamic_from ? m->pos.scheme->qk_dynamic_from(&m->pos) : -1;
    if (pos_cache_policy(&m->pos).capacity)
        return pelab_fail("lookup: the %s scheme's sliding cache cannot drop rejected drafts (its evicted keys are gone)",
                          m->pos.scheme->name);
    if (dyn >= 0 && total - 1 > dyn)
        return pelab_fail("lookup: the text would pass position %ld, where the %s scheme's dynamic rule recomputes "
                          "every key for the length fed, so rejected drafts cannot be dropped", dyn, m->pos.scheme->name);
    LookupStats st = {0, 0, 0};
    int *positions = xmalloc(sizeof(int) * total), *feed = xmalloc(sizeof(int) * CHUNK);
    for (int i = 0; i < total; i++) positions[i] = i;
    float *logits = xmalloc(sizeof(float) * (draft_max + 1) * V);
    KVCache kv;
    kvcache_init(&kv, m, total, CHUNK);
    rc = decode_forward(m, &kv, tokens, positions, n_prompt, logits, 0);
    int len = n_prompt, next = rc == 0 ? sampler_sample(s, logits) : -1;
    /* here: tokens[0 .. len) known and cached, next drawn for position len */
    while (rc == 0 && next != stop_id) {
        tokens[len++] = next;
        if (on_token) on_token(next, ctx);
        if (len == total) break;
        /* feed the new token and a draft: rows 0..k give the distributions at len .. len + k */
        int k = lookup_draft(tokens, len, total - 1 - len < draft_max ? total - 1 - len : draft_max, feed + 1);
        feed[0] = tokens[len - 1];
        if ((rc = decode_forward(m, &kv, feed, positions + len - 1, k + 1, logits, k > 0)) != 0) break;
        st.forwards++, st.drafted += k;
        int j = 0; /* k <= total - 1 - len: every draft kept still leaves room for one more */
        for (; j < k; j++) {
            next = sampler_check(s, logits + (size_t)j * V, feed[1 + j]);
            if (next != feed[1 + j] || next == stop_id) break;
            st.accepted++;
            tokens[len++] = next;
            if (on_token) on_token(next, ctx);
        }
        if (j == k) next = sampler_sample(s, logits + (size_t)k * V); /* every draft kept: one more */
        /* the rejected drafts' keys go: the cache holds tokens[0 .. len) again */
        if (j < k && (rc = kvcache_truncate(&kv, len)) != 0) break;
    }
    kvcache_free(&kv);
    free(positions), free(feed), free(logits);
    if (stats) *stats = st;
    return rc != 0 ? -1 : len - n_prompt;
}
