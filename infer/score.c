#include "score.h"

#include <stdlib.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../model/layers.h"
#include "decode.h"

int score_tokens(Model *m, const int *tokens, size_t n, int len, FILE *per_token, ScoreResult *r) {
    r->nll_sum = 0.0;
    r->n_scored = 0;
    r->n_windows = 0;
    if (n < 2) return pelab_fail("score: need at least 2 tokens, got %zu", n);
    if (len < 1) return pelab_fail("score: --len %d: expected >= 1", len);
    int V = m->cfg.vocab_size;
    KVCache kv;
    kvcache_init(&kv, m, len, 256);
    float *logits = xmalloc(sizeof(float) * (size_t)len * V);
    int *pos = xmalloc(sizeof(int) * len);
    for (int i = 0; i < len; i++) pos[i] = i;
    int rc = 0;
    for (size_t start = 0; start + 1 < n; start += (size_t)len) {
        int nw = (int)(n - 1 - start < (size_t)len ? n - 1 - start : (size_t)len);
        kvcache_reset(&kv);
        if (decode_forward(m, &kv, tokens + start, pos, nw, logits, 1) != 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < nw; i++) {
            float *row = logits + (size_t)i * V;
            log_softmax(row, row, V);
            int target = tokens[start + i + 1];
            r->nll_sum -= row[target];
            if (per_token) fprintf(per_token, "%zu,%d,%d,%.6f\n", r->n_windows, i + 1, target, row[target]);
        }
        r->n_scored += nw;
        r->n_windows++;
    }
    kvcache_free(&kv);
    free(logits);
    free(pos);
    return rc;
}
