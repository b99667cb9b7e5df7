/* task_eval.c: greedy answers to task examples through the KV cache, scored by the oracle. */
#include "task_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/stats.h"
#include "../model/pos/pos.h"
#include "decode.h"

static int argmax(const float *row, int V) {
    int best = 0;
    for (int i = 1; i < V; i++)
        if (row[i] > row[best]) best = i;
    return best;
}

/* stop after k answer bytes of budget: at least the answer's, then at the model's '\n' */
static int answer_done(const char *answer, size_t k, size_t answer_len, size_t budget) {
    return k >= budget || (k >= answer_len && memchr(answer, '\n', k));
}

/* one example: the model's greedy bytes after the prompt into answer (*got of them: answer_len, a
 * listed task's up to budget); a dense example's supervised bytes, each the argmax given the true
 * text before it (teacher forcing) */
static int answer_one(Model *m, const TaskExample *ex, int rand_pos, Rng *pos_rng, size_t budget, char *answer,
                      size_t *got, float *logits) {
    int total = (int)(ex->answer_start + ex->answer_len), room = (int)(ex->answer_start + budget);
    if (rand_pos > 0 && total > rand_pos)
        return pelab_fail("an example of %d tokens needs at least %d randomized positions (rand_pos %d)", total, total,
                          rand_pos);
    int *tokens = xmalloc(sizeof(int) * room), *pos = xmalloc(sizeof(int) * room);
    for (int i = 0; i < room; i++) tokens[i] = i < total ? (unsigned char)ex->text[i] : 0, pos[i] = i;
    if (rand_pos > 0) {
        /* as the model was trained: an aligned training row of T tokens draws T sorted ids from
         * [0, rand_pos) and its first example takes the first of them; so here, from max(T, room) */
        int draw = m->cfg.seq_len > room ? m->cfg.seq_len : room;
        if (draw > rand_pos) draw = rand_pos; /* (room <= rand_pos: the caller's budget) */
        int *ids = xmalloc(sizeof(int) * draw);
        rng_sorted_sample(pos_rng, rand_pos, draw, ids);
        memcpy(pos, ids, sizeof(int) * room);
        free(ids);
    }
    *got = ex->mask ? task_answers(ex) : 0;
    KVCache kv;
    kvcache_init(&kv, m, room, 64);
    if (ex->mask) { /* dense: one pass over the true text; each supervised byte from the text before it */
        int V = m->cfg.vocab_size, rc = 0;
        float *all = xmalloc(sizeof(float) * (size_t)(total - 1) * V);
        rc = decode_forward(m, &kv, tokens, pos, total - 1, all, 1);
        for (int i = 1, k = 0; rc == 0 && i < total; i++)
            if (ex->mask[i]) answer[k++] = (char)argmax(all + (size_t)(i - 1) * V, V);
        free(all);
        kvcache_free(&kv);
        free(tokens), free(pos);
        return rc;
    }
    int n_prompt = (int)ex->answer_start, rc = decode_forward(m, &kv, tokens, pos, n_prompt, logits, 0);
    for (size_t k = 0; rc == 0;) {
        int next = argmax(logits, m->cfg.vocab_size);
        answer[k++] = (char)next;
        *got = k;
        /* the last byte needs no successor */
        if (answer_done(answer, k, ex->answer_len, budget)) break;
        rc = decode_forward(m, &kv, &next, pos + n_prompt + k - 1, 1, logits, 0);
    }
    kvcache_free(&kv);
    free(tokens), free(pos);
    return rc;
}

/* one example through a subword tokenizer: the prompt's tokens, then greedy tokens decoded until they
 * cover answer_len bytes, a listed task's until the model's '\n' or budget bytes (at most 4 tokens per
 * byte and 8 more); *got: the bytes decoded */
static int answer_tokens(Model *m, const Tokenizer *tok, const TaskExample *ex, size_t budget, char *answer,
                         size_t *got_out, float *logits) {
    size_t np;
    int *prompt = tokenizer_encode_prompt(tok, (const unsigned char *)ex->text, ex->answer_start, 0, &np);
    if (!prompt) return -1;
    int max_new = 4 * (int)budget + 8, total = (int)np + max_new;
    int *pos = xmalloc(sizeof(int) * total);
    for (int i = 0; i < total; i++) pos[i] = i;
    KVCache kv;
    kvcache_init(&kv, m, total, 64);
    int rc = decode_forward(m, &kv, prompt, pos, (int)np, logits, 0), prev = prompt[np - 1];
    size_t got = 0;
    memset(answer, 0, budget);
    for (int k = 0; rc == 0 && k < max_new && !answer_done(answer, got, ex->answer_len, budget); k++) {
        int next = argmax(logits, m->cfg.vocab_size);
        size_t len;
        const unsigned char *p = tokenizer_decode(tok, prev, next, &len);
        for (size_t i = 0; p && i < len && got < budget; i++) answer[got++] = (char)p[i];
        if (!answer_done(answer, got, ex->answer_len, budget)) rc = decode_forward(m, &kv, &next, pos + np + k, 1, logits, 0);
        prev = next;
    }
    *got_out = got;
    kvcache_free(&kv);
    free(prompt), free(pos);
    return rc;
}

int task_eval_length(Model *m, const Tokenizer *tok, const TaskSpec *t, int len, int n, unsigned long long seed,
                     int rand_pos, TaskScore *score) {
    memset(score, 0, sizeof *score);
    score->len = len;
    int sub = tok && tok->kind != TOK_BYTE;
    if (sub && rand_pos > 0)
        return pelab_fail("task %s: randomized positions (rand_pos) are for byte-level models trained with them; this "
                          "model uses the %s tokenizer", t->def->name, tokenizer_kind_name(tok));
    if (!sub && m->cfg.vocab_size != 256)
        return pelab_fail("task %s: the model's vocabulary has %d tokens; tasks are byte-level (256)", t->def->name,
                          m->cfg.vocab_size);
    Rng rng, pos_rng; /* positions from their own stream: the examples stay those of the seed */
    rng_seed(&rng, seed);
    rng_seed(&pos_rng, seed ^ 0x706f736974696f6eULL);
    float *logits = xmalloc(sizeof(float) * m->cfg.vocab_size);
    /* per example: right (0/1), one, right bytes, answer bytes: the bootstrap's blocks */
    double *ex_exact = xmalloc(sizeof(double) * n), *ex_one = xmalloc(sizeof(double) * n);
    double *ex_correct = xmalloc(sizeof(double) * n), *ex_bytes = xmalloc(sizeof(double) * n);
    double *ex_recall = xmalloc(sizeof(double) * n);
    long limit = pos_max_position(&m->pos); /* the positions a listed task's longer answer may use */
    if (rand_pos > 0 && (limit < 0 || rand_pos < limit)) limit = rand_pos;
    score->listed = t->def->listed;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        TaskExample ex;
        if ((rc = task_example(t, &rng, len, &ex)) != 0) break;
        size_t budget = ex.answer_len;
        if (t->def->listed && !ex.mask) {
            budget = 2 * ex.answer_len;
            if (!sub && limit >= 0 && (long)(ex.answer_start + budget) > limit)
                budget = limit > (long)(ex.answer_start + ex.answer_len) ? (size_t)limit - ex.answer_start : ex.answer_len;
        }
        char *answer = xmalloc((ex.mask ? ex.n : budget) + 1);
        size_t got = 0;
        rc = sub ? answer_tokens(m, tok, &ex, budget, answer, &got, logits)
                 : answer_one(m, &ex, rand_pos, &pos_rng, budget, answer, &got, logits);
        size_t asked = task_answers(&ex);
        int correct = 0, exact = rc == 0 ? task_check(t, &ex, answer, asked, &correct) : -1, found = 0, refs = 0;
        double recall = exact >= 0 && t->def->listed ? task_recall(t, &ex, answer, got, &found, &refs) : 0;
        if (exact < 0 || recall < 0) rc = -1;
        else {
            ex_recall[score->n] = recall;
            score->recall += recall, score->recall_all += found == refs;
            ex_exact[score->n] = exact, ex_one[score->n] = 1;
            ex_correct[score->n] = correct, ex_bytes[score->n] = (double)asked;
            score->n++;
            score->exact += exact;
            score->answer_bytes += (long)asked;
            score->correct_bytes += correct;
            long reach = (long)ex.n;
            if (reach > score->max_positions) score->max_positions = reach;
        }
        free(answer);
        task_example_free(&ex);
    }
    score->exact_ci[0] = score->exact_ci[1] = score->bytes_ci[0] = score->bytes_ci[1] = NAN;
    score->recall_ci[0] = score->recall_ci[1] = NAN;
    if (score->n > 0 && score->listed) score->recall /= score->n;
    else score->recall = NAN;
    if (rc == 0 && score->n > 0 && score->listed)
        stats_bootstrap_ratio(ex_recall, ex_one, score->n, STATS_BOOTSTRAP_REPS, seed, 0.95, &score->recall_ci[0],
                              &score->recall_ci[1]);
    if (rc == 0 && score->n > 0) {
        stats_bootstrap_ratio(ex_exact, ex_one, score->n, STATS_BOOTSTRAP_REPS, seed, 0.95, &score->exact_ci[0],
                              &score->exact_ci[1]);
        stats_bootstrap_ratio(ex_correct, ex_bytes, score->n, STATS_BOOTSTRAP_REPS, seed, 0.95, &score->bytes_ci[0],
                              &score->bytes_ci[1]);
    }
    free(ex_exact), free(ex_one), free(ex_correct), free(ex_bytes), free(ex_recall);
    free(logits);
    return rc;
}
