/* compare_gen.c: the rows gen, jump and keyppl of a compare run (compare_plan.h). */
#include "compare_gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/eval.h"
#include "../io/checkpoint.h"
#include "../infer/genmetrics.h"
#include "../infer/keyppl.h"
#include "../model/pos/pos.h"

enum { GEN_NGRAM = 4 };

void compare_gen_defaults(Compare *c) {
    c->gen_tokens = -1, c->gen_prompts = 3, c->keyppl_tokens = 16384, c->key_gain = KEY_MIN_GAIN;
    c->key_evaluator = NULL;
}

int compare_gen_len(const Compare *c) { return c->gen_tokens < 0 ? 8 * c->base.seq_len : c->gen_tokens; }

int compare_key_tokens(const Compare *c, const char *base_ckpt, const int *held, size_t n, size_t *n_used,
                       unsigned char **out) {
    *out = NULL;
    *n_used = n < (size_t)c->keyppl_tokens ? n : (size_t)c->keyppl_tokens;
    if (c->keyppl_tokens <= 0 || *n_used < 2) return 0;
    const char *path = c->key_evaluator ? c->key_evaluator : base_ckpt;
    Model ev;
    CkptMeta meta;
    if (eval_load_rule(path, "none", PRECISION_FP32, &ev, &meta) != 0)
        return pelab_fail("%s: key evaluator %s: %s", c->name, path, pelab_errmsg);
    /* the held-out ids are bytes (compare trains byte-level models): an evaluator with another
     * tokenizer reads the text in its own tokens, and its key tokens mark the bytes they cover */
    const char *kind = meta_get(&meta, "tokenizer");
    Tokenizer tok;
    if (tokenizer_from_image(&tok, kind, meta.tokenizer_image, meta.tokenizer_len, path, ev.cfg.vocab_size) != 0) {
        meta_free(&meta), model_free(&ev);
        return pelab_fail("%s: key evaluator %s: %s", c->name, path, pelab_errmsg);
    }
    meta_free(&meta);
    unsigned char *key = xcalloc(*n_used, 1), *text = xmalloc(*n_used);
    for (size_t i = 0; i < *n_used; i++) text[i] = (unsigned char)held[i];
    size_t n_key;
    int rc = tok.kind == TOK_BYTE ? key_identify(&ev, held, *n_used, ev.cfg.seq_len, 0, c->key_gain, key, &n_key)
                                  : key_identify_text(&ev, &tok, text, *n_used, c->key_gain, key, &n_key);
    free(text);
    tokenizer_free(&tok);
    model_free(&ev);
    if (rc != 0) {
        free(key);
        return pelab_fail("%s: key tokens with %s: %s", c->name, path, pelab_errmsg);
    }
    *out = key;
    return 0;
}

static int gen_rows(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                     FILE *f) {
    int L = c->base.seq_len;
    GenSampling gs = {GEN_TEMPERATURE, GEN_TOP_P, c->seed[k]};
    GenSummary g;
    if (gen_summary(m, held, n_held, L, compare_gen_len(c), c->gen_prompts, GEN_NGRAM, &gs, &g, NULL) != 0)
        return pelab_fail("%s: rule %s: generation: %s", c->name, rule, pelab_errmsg);
    /* the model's texts, then (_data) the held-out text after the same prompts, for reference */
    const char *metric[5] = {"rep4", "distinct4", "ownloss", "rep4_data", "distinct4_data"};
    for (int q = 0; q < 5; q++)
        for (int b = 0; b < g.n_buckets; b++) {
            const GenRange *r = &g.bucket[b];
            const NgramStats *ng = q < 3 ? &r->ng : &g.data_bucket[b];
            double v = q == 2 ? gen_range_loss(r) : q % 3 == 0 ? ngram_repeat_rate(ng) : ngram_distinct_rate(ng);
            size_t n = q == 2 ? r->n_nll : ng->ngrams;
            if (!n) continue;
            CmpRow w;
            compare_row(&w, c, m, "gen", s, k, rule, g.text_len, metric[q]);
            w.r.value = v, w.r.bucket = b, w.r.pos_lo = b * g.width, w.r.pos_hi = (b + 1) * g.width - 1, w.r.n = (long long)n;
            compare_row_write(f, &w);
        }
    return 0;
}

static int jump_row(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                     FILE *f) {
    int L = c->base.seq_len, refused;
    double jump;
    if (loss_jump_on_text(m, held, n_held, L, &jump, &refused) != 0)
        return pelab_fail("%s: rule %s: loss jump: %s", c->name, rule, pelab_errmsg);
    CmpRow w;
    compare_row(&w, c, m, "jump", s, k, rule, 2 * L, eval_protocol_names[EVAL_NONOVERLAP]);
    w.r.value = jump, w.r.status = refused ? RES_NA : RES_OK, w.r.n = (long long)n_held;
    compare_row_write(f, &w);
    return 0;
}

/* 1 if the model takes windows of len (positions 0..len-1); the length rows already say why not */
static int takes_len(const Model *m, int len) {
    long table = pos_max_position(&m->pos), comp = pos_computable_position(&m->pos);
    return (table < 0 || len <= table) && (comp < 0 || len <= comp);
}

static int keyppl_rows(const Compare *c, int s, int k, Model *m, const char *rule, const int *held,
                        const unsigned char *key, size_t n, FILE *f) {
    CmpRow w;
    KeyPpl r = {0}; /* the same key tokens at every length: the share is the last length's */
    for (int l = 0; l < c->n_lengths; l++) {
        int len = c->lens[l];
        /* a length past the key-token text (--keyppl-tokens) has no row, as one past the scheme's positions */
        if (!takes_len(m, len) || (size_t)len + 1 > n) continue;
        if (key_ppl_at(m, held, n, len, key, &r) != 0)
            return pelab_fail("%s: rule %s, key tokens at %d: %s", c->name, rule, len, pelab_errmsg);
        compare_row(&w, c, m, "keyppl", s, k, rule, len, "key");
        w.r.value = key_ppl_key_loss(&r), w.r.status = r.n_key ? RES_OK : RES_NO_KEY_TOKENS, w.r.n = (long long)r.n_key;
        compare_row_write(f, &w);
        compare_row(&w, c, m, "keyppl", s, k, rule, len, "all");
        w.r.value = key_ppl_all_loss(&r), w.r.n = (long long)r.n_all;
        compare_row_write(f, &w);
    }
    if (!r.n_all) return 0;
    compare_row(&w, c, m, "keyppl", s, k, rule, c->base.seq_len, "share");
    w.r.value = key_ppl_share(&r), w.r.n = (long long)r.n_key;
    compare_row_write(f, &w);
    return 0;
}

int compare_gen_rows(const Compare *c, int s, int k, Model *m, const char *rule, const int *held, size_t n_held,
                     const unsigned char *key, size_t n_key_tokens, FILE *f) {
    if (compare_gen_len(c) > 0 && gen_rows(c, s, k, m, rule, held, n_held, f) != 0) return -1;
    if (jump_row(c, s, k, m, rule, held, n_held, f) != 0) return -1;
    return key ? keyppl_rows(c, s, k, m, rule, held, key, n_key_tokens, f) : 0;
}
