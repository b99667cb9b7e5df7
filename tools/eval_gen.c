/* eval_gen.c: the long-generation, loss-jump and key-token sections of `pelab eval`. */
#include "eval_gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/genmetrics.h"
#include "../infer/keyppl.h"
#include "commands.h"

/* appends one row (rows NULL: nothing); is_loss: its perplexity too */
static void add_row(EvalGenRows *rows, const char *kind, const char *rule, const char *protocol, int length, int bucket,
                    int lo, int hi, size_t n, double value, int is_loss, ResStatus status) {
    if (!rows) return;
    if (rows->n == rows->cap) {
        rows->cap = rows->cap ? 2 * rows->cap : 64;
        rows->row = xrealloc(rows->row, sizeof(ResultRow) * (size_t)rows->cap);
    }
    ResultRow *r = &rows->row[rows->n++];
    *r = result_row();
    r->kind = kind, r->rule = rule, r->protocol = protocol, r->length = length, r->n = (long long)n;
    if (bucket >= 0) r->bucket = bucket, r->pos_lo = lo, r->pos_hi = hi;
    r->value = value, r->status = status;
    if (is_loss && !isnan(value)) r->ppl = exp(value);
}

static void print_generation(Model *models, const char *const *rules, int n_rules, const int *tokens, size_t n, int L,
                             const EvalGenOpts *o, EvalGenRows *rows) {
    int len = o->gen_tokens < 0 ? 8 * L : o->gen_tokens;
    printf("\nlong generation: %d prompts of %d tokens from the data (evenly spaced), each continued to %d tokens "
           "(temperature %g, top-p %g, seed %llu + prompt index); generated tokens only, by position; a learned "
           "table stops at its size\n",
           o->gen_prompts, L / 4 > 0 ? L / 4 : 1, len, GEN_TEMPERATURE, GEN_TOP_P, o->seed);
    printf("  %-10s %-13s %9s %9s %9s %9s\n", "rule", "positions", "n", "rep4", "distinct4", "own loss");
    for (int r = 0; r < n_rules; r++) {
        GenSampling gs = {GEN_TEMPERATURE, GEN_TOP_P, o->seed};
        GenSummary g;
        if (gen_summary(&models[r], tokens, n, L, len, o->gen_prompts, 4, &gs, &g, NULL) != 0)
            pelab_die("eval: rule %s: generation: %s", rules[r], pelab_errmsg);
        for (int b = 0; b < g.n_buckets; b++) {
            const GenRange *q = &g.bucket[b];
            char range[32];
            snprintf(range, sizeof range, "%d-%d%s", b * g.width, (b + 1) * g.width - 1, b * g.width >= L ? "*" : "");
            printf("  %-10s %-13s %9zu %9.4f %9.4f %9.4f\n", rules[r], range, q->n_nll, ngram_repeat_rate(&q->ng),
                   ngram_distinct_rate(&q->ng), gen_range_loss(q));
            int lo = b * g.width, hi = (b + 1) * g.width - 1;
            add_row(rows, "gen", rules[r], "rep4", g.text_len, b, lo, hi, q->ng.ngrams, ngram_repeat_rate(&q->ng), 0, RES_OK);
            add_row(rows, "gen", rules[r], "distinct4", g.text_len, b, lo, hi, q->ng.ngrams,
                    ngram_distinct_rate(&q->ng), 0, RES_OK);
            add_row(rows, "gen", rules[r], "ownloss", g.text_len, b, lo, hi, q->n_nll, gen_range_loss(q), 1, RES_OK);
        }
    }
    printf("(* = past L = %d)\n", L);
}

static void print_jump(Model *models, const char *const *rules, int n_rules, const int *tokens, size_t n, int L,
                       EvalGenRows *rows) {
    printf("\nloss jump at L: windows of 2L = %d, mean loss at target positions (L, 2L] minus (L/2, L] (nats)\n", 2 * L);
    for (int r = 0; r < n_rules; r++) {
        double jump;
        int refused;
        if (loss_jump_on_text(&models[r], tokens, n, L, &jump, &refused) != 0)
            pelab_die("eval: rule %s: loss jump: %s", rules[r], pelab_errmsg);
        if (refused) printf("  %-10s n/a (past the table)\n", rules[r]);
        else printf("  %-10s %+.4f\n", rules[r], jump);
        add_row(rows, "jump", rules[r], "nonoverlap", 2 * L, -1, 0, 0, n, refused ? NAN : jump, 0,
                refused ? RES_PAST_THE_TABLE : RES_OK);
    }
}

static void print_keyppl(Model *models, const char *const *rules, int n_rules, const int *tokens, size_t n, int L,
                         const int *lens, int n_lengths, const EvalGenOpts *o, EvalGenRows *rows) {
    if ((size_t)o->keyppl_tokens < n) n = (size_t)o->keyppl_tokens;
    unsigned char *key = xcalloc(n, 1);
    size_t n_key;
    if (key_identify(&models[0], tokens, n, L, 0, o->key_gain, key, &n_key) != 0)
        pelab_die("eval: key tokens: %s", pelab_errmsg);
    printf("\nkey-token perplexity (LongPPL-style): %zu key tokens of %zu (%.2f%%), picked by rule %s at its training "
           "length: log-prob gain >= %g nats with context L = %d over L/4, log-prob with context L > %g; loss "
           "(nats, non-overlapping windows) on the key tokens / on every token\n",
           n_key, n - 1, 100.0 * n_key / (n - 1), rules[0], o->key_gain, L, KEY_MIN_LOGPROB);
    printf("  %-10s %8s %10s %10s %12s\n", "rule", "length", "key loss", "all loss", "key ppl");
    add_row(rows, "keyppl", rules[0], "share", L, -1, 0, 0, n_key, n > 1 ? (double)n_key / (double)(n - 1) : NAN, 0,
            RES_OK);
    for (int r = 0; r < n_rules; r++)
        for (int l = 0; l < n_lengths; l++) {
            long table = pos_max_position(&models[r].pos), comp = pos_computable_position(&models[r].pos);
            if ((table >= 0 && lens[l] > table) || (comp >= 0 && lens[l] > comp)) {
                printf("  %-10s %8d %10s\n", rules[r], lens[l], "n/a");
                add_row(rows, "keyppl", rules[r], "key", lens[l], -1, 0, 0, 0, NAN, 1, RES_REFUSED_LENGTH);
                add_row(rows, "keyppl", rules[r], "all", lens[l], -1, 0, 0, 0, NAN, 1, RES_REFUSED_LENGTH);
                continue;
            }
            KeyPpl k;
            if (key_ppl_at(&models[r], tokens, n, lens[l], key, &k) != 0)
                pelab_die("eval: rule %s, length %d: %s", rules[r], lens[l], pelab_errmsg);
            add_row(rows, "keyppl", rules[r], "key", lens[l], -1, 0, 0, k.n_key, key_ppl_key_loss(&k), 1,
                    k.n_key ? RES_OK : RES_NO_KEY_TOKENS);
            add_row(rows, "keyppl", rules[r], "all", lens[l], -1, 0, 0, k.n_all, key_ppl_all_loss(&k), 1, RES_OK);
            if (!k.n_key) printf("  %-10s %8d %10s %10.4f %12s\n", rules[r], lens[l], "n/a", key_ppl_all_loss(&k), "n/a");
            else printf("  %-10s %8d %10.4f %10.4f %12.4g\n", rules[r], lens[l], key_ppl_key_loss(&k),
                        key_ppl_all_loss(&k), exp(key_ppl_key_loss(&k)));
        }
    free(key);
}

void eval_gen_print(Model *models, const char *const *rules, int n_rules, const int *tokens, size_t n, int train_len,
                    const int *lens, int n_lengths, const EvalGenOpts *o, EvalGenRows *rows) {
    if (o->gen_tokens != 0) {
        print_generation(models, rules, n_rules, tokens, n, train_len, o, rows);
        print_jump(models, rules, n_rules, tokens, n, train_len, rows);
    }
    if (o->keyppl_tokens > 0) print_keyppl(models, rules, n_rules, tokens, n, train_len, lens, n_lengths, o, rows);
}
