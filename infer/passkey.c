/* passkey.c (infer): passkey trials, ranking and exact match; the KV-cache scorer. */
#include "passkey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/strbuf.h"
#include "../model/layers.h"

double passkey_rank(const double *scores, int n) {
    int higher = 0, tied = 0;
    for (int i = 1; i < n; i++) {
        if (scores[i] > scores[0]) higher++;
        else if (scores[i] == scores[0]) tied++;
    }
    return 1.0 + higher + 0.5 * tied;
}

void passkey_distractors(Rng *rng, int key, int *out, int n) {
    for (int i = 0; i < n; i++) {
        int k, dup;
        do { /* 90000 keys: a repeat is rare, so redrawing is cheap */
            k = passkey_random_key(rng);
            dup = k == key;
            for (int j = 0; j < i; j++) dup |= out[j] == k;
        } while (dup);
        out[i] = k;
    }
}

static void answer_tokens(int key, int *out) {
    char buf[PASSKEY_ANSWER_LEN + 1];
    snprintf(buf, sizeof buf, " %d", key);
    for (int i = 0; i < PASSKEY_ANSWER_LEN; i++) out[i] = (unsigned char)buf[i];
}

int passkey_rank_keys(const PasskeyScorer *s, const int *prompt, int n_prompt, int key, const int *distractors,
                      int n_distractors, double *rank) {
    double scores[64];
    if (n_distractors + 1 > 64) return pelab_fail("passkey: at most 63 distractors");
    int answer[PASSKEY_ANSWER_LEN];
    for (int i = 0; i <= n_distractors; i++) {
        answer_tokens(i == 0 ? key : distractors[i - 1], answer);
        if (s->logprob(s->ctx, prompt, n_prompt, answer, PASSKEY_ANSWER_LEN, &scores[i]) != 0) return -1;
    }
    *rank = passkey_rank(scores, n_distractors + 1);
    return 0;
}

int passkey_match(const char *text, int n, int key) {
    char want[PASSKEY_DIGITS + 1];
    snprintf(want, sizeof want, "%d", key);
    int i = 0;
    while (i < n && text[i] == ' ') i++;
    if (n - i < PASSKEY_DIGITS || memcmp(text + i, want, PASSKEY_DIGITS) != 0) return 0;
    i += PASSKEY_DIGITS;
    return i == n || text[i] < '0' || text[i] > '9'; /* " 123456" is another number */
}

/* a trial through a tokenizer (PasskeyScorer.tok): text is the document, prompt then answer */
static int trial_tokens(const PasskeyScorer *s, const char *text, const PasskeyDoc *doc, int key, const int *distractors,
                        int *exact, double *rank) {
    const Tokenizer *tok = s->tok;
    size_t np;
    int *prompt = tokenizer_encode_prompt(tok, (const unsigned char *)text, (size_t)doc->prompt_len, 0, &np);
    if (!prompt) return -1;
    int gen[PASSKEY_GEN_TOKENS], rc = s->greedy(s->ctx, prompt, (int)np, gen, PASSKEY_GEN_TOKENS);
    StrBuf said = {0};
    for (int i = 0; rc == 0 && i < PASSKEY_GEN_TOKENS; i++) {
        size_t len;
        const unsigned char *p = tokenizer_decode(tok, i ? gen[i - 1] : prompt[np - 1], gen[i], &len);
        if (p) sb_put(&said, (const char *)p, len);
    }
    if (rc == 0) *exact = passkey_match(said.s ? said.s : "", (int)said.len, key);
    sb_free(&said);
    double scores[PASSKEY_CANDIDATES];
    char *with = xmalloc((size_t)doc->prompt_len + 16);
    memcpy(with, text, (size_t)doc->prompt_len);
    for (int c = 0; rc == 0 && c < PASSKEY_CANDIDATES; c++) {
        int n = doc->prompt_len + snprintf(with + doc->prompt_len, 16, " %d", c ? distractors[c - 1] : key);
        size_t nf;
        int *full = tokenizer_encode_prompt(tok, (const unsigned char *)with, (size_t)n, 0, &nf);
        if (!full) rc = -1;
        else if (nf <= np || memcmp(full, prompt, np * sizeof(int)) != 0)
            rc = pelab_fail("passkey: the %s tokenizer encodes the prompt differently once the key follows it (the key "
                            "has no tokens of its own)", tokenizer_kind_name(tok));
        else rc = s->logprob(s->ctx, prompt, (int)np, full + np, (int)(nf - np), &scores[c]);
        free(full);
    }
    if (rc == 0) *rank = passkey_rank(scores, PASSKEY_CANDIDATES);
    free(with), free(prompt);
    return rc;
}

int passkey_document_tokens(const Tokenizer *tok, int length) {
    char *text = xmalloc((size_t)length + 1);
    PasskeyDoc doc;
    size_t n = 0;
    int rc = 0;
    if (passkey_document(text, length, 0.5, 12345, &doc) == 0) {
        int *ids = tokenizer_encode_prompt(tok, (unsigned char *)text, (size_t)length, 0, &n);
        rc = ids ? 0 : -1;
        free(ids);
    }
    free(text);
    return rc ? -1 : (int)n;
}

int passkey_trial(const PasskeyScorer *s, int length, double depth, Rng *rng, int *exact, double *rank) {
    int key = passkey_random_key(rng), distractors[PASSKEY_CANDIDATES - 1];
    passkey_distractors(rng, key, distractors, PASSKEY_CANDIDATES - 1);
    char *text = xmalloc((size_t)length + 1);
    int *tokens = xmalloc(sizeof(int) * (size_t)length);
    PasskeyDoc doc;
    int rc = passkey_document(text, length, depth, key, &doc);
    if (rc == 0 && s->tok && s->tok->kind != TOK_BYTE) {
        rc = trial_tokens(s, text, &doc, key, distractors, exact, rank);
        free(text), free(tokens);
        return rc;
    }
    if (rc == 0) {
        for (int i = 0; i < doc.prompt_len; i++) tokens[i] = (unsigned char)text[i];
        /* the answer's 6 tokens: the document's total length covers the greedy continuation too */
        int gen[PASSKEY_ANSWER_LEN];
        char gen_text[PASSKEY_ANSWER_LEN];
        rc = s->greedy(s->ctx, tokens, doc.prompt_len, gen, PASSKEY_ANSWER_LEN);
        if (rc == 0) {
            for (int i = 0; i < PASSKEY_ANSWER_LEN; i++) gen_text[i] = (char)gen[i];
            *exact = passkey_match(gen_text, PASSKEY_ANSWER_LEN, key);
            rc = passkey_rank_keys(s, tokens, doc.prompt_len, key, distractors, PASSKEY_CANDIDATES - 1, rank);
        }
    }
    free(text), free(tokens);
    return rc;
}

int passkey_cell(const PasskeyScorer *s, int length, int depth_pct, int trials, unsigned long long seed,
                 PasskeyCell *cell) {
    memset(cell, 0, sizeof *cell);
    cell->length = length;
    cell->depth_pct = depth_pct;
    Rng rng; /* per cell, so a cell's keys do not depend on which other cells were asked for */
    rng_seed(&rng, seed * 0x9E3779B97F4A7C15ull + (unsigned long long)length * 1009 + (unsigned long long)depth_pct + 1);
    for (int t = 0; t < trials; t++) {
        int exact = 0;
        double rank = 0;
        if (passkey_trial(s, length, depth_pct / 100.0, &rng, &exact, &rank) != 0) return -1;
        cell->trials++;
        cell->exact += exact;
        cell->rank_sum += rank;
    }
    return 0;
}

/* ---- the model scorer ---- */

void passkey_model_init(PasskeyModel *pm, Model *m, int max_len) {
    memset(pm, 0, sizeof *pm);
    pm->m = m;
    kvcache_init(&pm->kv, m, max_len, 256);
    pm->pos = xmalloc(sizeof(int) * (size_t)max_len);
    for (int i = 0; i < max_len; i++) pm->pos[i] = i;
    pm->logits = xmalloc(sizeof(float) * (size_t)max_len * m->cfg.vocab_size);
    pm->first = xmalloc(sizeof(float) * m->cfg.vocab_size);
}

void passkey_model_free(PasskeyModel *pm) {
    kvcache_free(&pm->kv);
    free(pm->pos), free(pm->logits), free(pm->first);
    memset(pm, 0, sizeof *pm);
}

/* the prompt at the head of the cache, and the log-probs of the token after it */
static int feed_prompt(PasskeyModel *pm, const int *prompt, int n_prompt) {
    KVCache *kv = &pm->kv;
    if (pm->n_prompt == n_prompt && kv->len >= n_prompt && memcmp(kv->tokens, prompt, sizeof(int) * n_prompt) == 0) {
        kv->len = n_prompt; /* drop what a candidate or the greedy answer appended */
        return 0;
    }
    kvcache_reset(kv);
    pm->n_prompt = 0;
    if (decode_forward(pm->m, kv, prompt, pm->pos, n_prompt, pm->logits, 0) != 0) return -1;
    log_softmax(pm->first, pm->logits, pm->m->cfg.vocab_size);
    pm->n_prompt = n_prompt;
    return 0;
}

static int argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static int model_greedy(void *ctx, const int *prompt, int n_prompt, int *out, int n_new) {
    PasskeyModel *pm = ctx;
    int V = pm->m->cfg.vocab_size;
    if (feed_prompt(pm, prompt, n_prompt) != 0) return -1;
    out[0] = argmax(pm->first, V); /* argmax of log-softmax = argmax of logits */
    for (int i = 1; i < n_new; i++) { /* the last token is never fed back, as in generate() */
        if (decode_forward(pm->m, &pm->kv, &out[i - 1], &pm->pos[n_prompt + i - 1], 1, pm->logits, 0) != 0) return -1;
        out[i] = argmax(pm->logits, V);
    }
    return 0;
}

static int model_logprob(void *ctx, const int *prompt, int n_prompt, const int *answer, int n_answer, double *out) {
    PasskeyModel *pm = ctx;
    int V = pm->m->cfg.vocab_size;
    if (feed_prompt(pm, prompt, n_prompt) != 0) return -1;
    double lp = pm->first[answer[0]];
    if (n_answer > 1) { /* teacher-forced: answer[i] predicts answer[i + 1] */
        if (decode_forward(pm->m, &pm->kv, answer, &pm->pos[n_prompt], n_answer - 1, pm->logits, 1) != 0) return -1;
        for (int i = 0; i + 1 < n_answer; i++) {
            float *row = pm->logits + (size_t)i * V;
            log_softmax(row, row, V);
            lp += row[answer[i + 1]];
        }
    }
    *out = lp;
    return 0;
}

void passkey_model_scorer(PasskeyModel *pm, PasskeyScorer *s) {
    s->tok = NULL;
    s->greedy = model_greedy;
    s->logprob = model_logprob;
    s->ctx = pm;
}

int passkey_length_ok(const Model *m, int length) {
    long acc = pos_max_position(&m->pos), comp = pos_computable_position(&m->pos);
    /* positions 0 .. length-2 are fed: the last answer byte is only predicted */
    return length >= PASSKEY_MIN_LEN && (acc < 0 || length - 1 <= acc) && (comp < 0 || length - 1 <= comp);
}

int passkey_tokens_ok(const Model *m, int n_tokens) {
    long acc = pos_max_position(&m->pos), comp = pos_computable_position(&m->pos);
    int last = n_tokens + PASSKEY_GEN_TOKENS; /* a candidate key may take more tokens than the document's own */
    return n_tokens > 0 && (acc < 0 || last <= acc) && (comp < 0 || last <= comp);
}
