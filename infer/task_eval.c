/* task_eval.c: greedy answers to task examples through the KV cache, scored by the oracle. */
#include "task_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/stats.h"
#include "decode.h"

static int argmax(const float *row, int V) {
    int best = 0;
    for (int i = 1; i < V; i++)
        if (row[i] > row[best]) best = i;
    return best;
}

/* one example: the model's answer_len greedy bytes after the prompt into answer */
static int answer_one(Model *m, const TaskExample *ex, int rand_pos, Rng *pos_rng, char *answer, float *logits) {
    int total = (int)(ex->answer_start + ex->answer_len);
    if (rand_pos > 0 && total > rand_pos)
        return pelab_fail("an example of %d tokens needs at least %d randomized positions (rand_pos %d)", total, total,
                          rand_pos);
    int *tokens = xmalloc(sizeof(int) * total), *pos = xmalloc(sizeof(int) * total);
    for (int i = 0; i < total; i++) tokens[i] = (unsigned char)ex->text[i], pos[i] = i;
    if (rand_pos > 0) {
        /* as the model was trained: an aligned training row of T tokens draws T sorted ids from
         * [0, rand_pos) and its first example takes the first of them; so here, from max(T, total) */
        int draw = m->cfg.seq_len > total ? m->cfg.seq_len : total;
        if (draw > rand_pos) draw = rand_pos; /* (total <= rand_pos: checked above) */
        int *ids = xmalloc(sizeof(int) * draw);
        rng_sorted_sample(pos_rng, rand_pos, draw, ids);
        memcpy(pos, ids, sizeof(int) * total);
        free(ids);
    }
    KVCache kv;
    kvcache_init(&kv, m, total, 64);
    int n_prompt = (int)ex->answer_start, rc = decode_forward(m, &kv, tokens, pos, n_prompt, logits, 0);
    for (size_t k = 0; rc == 0 && k < ex->answer_len; k++) {
        int next = argmax(logits, m->cfg.vocab_size);
        answer[k] = (char)next;
        /* the answer's last byte needs no successor */
        if (k + 1 < ex->answer_len) rc = decode_forward(m, &kv, &next, pos + n_prompt + k, 1, logits, 0);
    }
    kvcache_free(&kv);
    free(tokens), free(pos);
    return rc;
}

int task_eval_length(Model *m, const TaskSpec *t, int len, int n, unsigned long long seed, int rand_pos,
                     TaskScore *score) {
    memset(score, 0, sizeof *score);
    score->len = len;
    if (m->cfg.vocab_size != 256)
        return pelab_fail("task %s: the model's vocabulary has %d tokens; tasks are byte-level (256)", t->def->name,
                          m->cfg.vocab_size);
    Rng rng, pos_rng; /* positions from their own stream: the examples stay those of the seed */
    rng_seed(&rng, seed);
    rng_seed(&pos_rng, seed ^ 0x706f736974696f6eULL);
    float *logits = xmalloc(sizeof(float) * m->cfg.vocab_size);
    /* per example: right (0/1), one, right bytes, answer bytes: the bootstrap's blocks */
    double *ex_exact = xmalloc(sizeof(double) * n), *ex_one = xmalloc(sizeof(double) * n);
    double *ex_correct = xmalloc(sizeof(double) * n), *ex_bytes = xmalloc(sizeof(double) * n);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        TaskExample ex;
        if ((rc = task_example(t, &rng, len, &ex)) != 0) break;
        char *answer = xmalloc(ex.answer_len + 1);
        rc = answer_one(m, &ex, rand_pos, &pos_rng, answer, logits);
        int correct = 0, exact = rc == 0 ? task_check(t, &ex, answer, ex.answer_len, &correct) : -1;
        if (exact < 0) rc = -1;
        else {
            ex_exact[score->n] = exact, ex_one[score->n] = 1;
            ex_correct[score->n] = correct, ex_bytes[score->n] = (double)ex.answer_len;
            score->n++;
            score->exact += exact;
            score->answer_bytes += (long)ex.answer_len;
            score->correct_bytes += correct;
            long reach = (long)ex.n;
            if (reach > score->max_positions) score->max_positions = reach;
        }
        free(answer);
        task_example_free(&ex);
    }
    score->exact_ci[0] = score->exact_ci[1] = score->bytes_ci[0] = score->bytes_ci[1] = NAN;
    if (rc == 0 && score->n > 0) {
        stats_bootstrap_ratio(ex_exact, ex_one, score->n, STATS_BOOTSTRAP_REPS, seed, 0.95, &score->exact_ci[0],
                              &score->exact_ci[1]);
        stats_bootstrap_ratio(ex_correct, ex_bytes, score->n, STATS_BOOTSTRAP_REPS, seed, 0.95, &score->bytes_ci[0],
                              &score->bytes_ci[1]);
    }
    free(ex_exact), free(ex_one), free(ex_correct), free(ex_bytes);
    free(logits);
    return rc;
}
