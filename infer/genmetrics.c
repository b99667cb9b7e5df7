#include "genmetrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/hash.h"
#include "../core/mem.h"
#include "decode.h"
#include "eval.h"
#include "generate.h"
#include "sampler.h"

static size_t ngram_slot(const int *g, int ngram, size_t mask) {
    return (size_t)fnv1a64(g, sizeof(int) * (size_t)ngram, 14695981039346656037ULL) & mask;
}

void ngram_stats(const int *tokens, int n, int ngram, int lo, int hi, NgramStats *s) {
    if (hi > n) hi = n;
    if (lo < ngram - 1) lo = ngram - 1;
    if (ngram < 1 || lo >= hi) return;
    int first = ngram - 1; /* the first position an n-gram can end at */
    size_t cap = 2;
    while (cap < 2 * (size_t)(hi - first)) cap <<= 1;
    /* open addressing: each slot holds the latest end position of one n-gram (-1: empty) */
    int *slot = xmalloc(sizeof(int) * cap);
    memset(slot, 0xff, sizeof(int) * cap);
    for (int i = first; i < hi; i++) {
        const int *g = tokens + i - first;
        size_t h = ngram_slot(g, ngram, cap - 1);
        while (slot[h] >= 0 && memcmp(tokens + slot[h] - first, g, sizeof(int) * (size_t)ngram) != 0)
            h = (h + 1) & (cap - 1);
        int prev = slot[h]; /* the same n-gram's latest earlier end, or -1 */
        slot[h] = i;
        if (i < lo) continue; /* before the range: only remembered */
        s->ngrams++;
        s->repeated += prev >= 0;
        s->distinct += prev < lo; /* its first occurrence inside the range */
    }
    free(slot);
}

double ngram_repeat_rate(const NgramStats *s) { return s->ngrams ? (double)s->repeated / s->ngrams : NAN; }
double ngram_distinct_rate(const NgramStats *s) { return s->ngrams ? (double)s->distinct / s->ngrams : NAN; }

/* 1 if windows of len tokens (positions 0..len-1) are within the scheme's table and computable range */
static int accepts_len(const Model *m, long len) {
    long table = pos_max_position(&m->pos), comp = pos_computable_position(&m->pos);
    return (table < 0 || len <= table) && (comp < 0 || len <= comp);
}

int gen_text_limit(const Model *m, int max_len) {
    /* a text of n tokens feeds positions 0..n-2, as a window of n - 1 */
    while (max_len > 1 && !accepts_len(m, max_len - 1)) max_len--;
    return max_len;
}

void gen_text_free(GenText *g) {
    free(g->tokens);
    free(g->logprob);
    memset(g, 0, sizeof *g);
}

int gen_text(Model *m, const int *prompt, int n_prompt, int n_total, const GenSampling *s, GenText *g) {
    memset(g, 0, sizeof *g);
    n_total = gen_text_limit(m, n_total);
    if (n_prompt < 1 || n_prompt >= n_total)
        return pelab_fail("gen: a prompt of %d tokens leaves no room in a text of %d", n_prompt, n_total);
    g->tokens = xmalloc(sizeof(int) * n_total);
    memcpy(g->tokens, prompt, sizeof(int) * n_prompt);
    Sampler sp;
    sampler_init(&sp, m->cfg.vocab_size, s->temperature, s->top_p, 0, s->seed);
    int got = generate(m, &sp, g->tokens, n_prompt, n_total - n_prompt, 1, -1, NULL, NULL);
    sampler_free(&sp);
    if (got < 0) {
        gen_text_free(g);
        return -1;
    }
    g->n_prompt = n_prompt, g->n = n_prompt + got;
    /* the whole text in one window: every token scored with all of its context */
    g->logprob = xcalloc(g->n, sizeof(float));
    EvalTrace tr = {g->logprob, NULL};
    ScoreResult r;
    if (eval_windows(m, g->tokens, g->n, g->n, g->n, DYNAMIC_WINDOW, 0, NULL, NULL, &tr, &r) != 0) {
        gen_text_free(g);
        return -1;
    }
    return 0;
}

void gen_range(const GenText *g, int ngram, int lo, int hi, GenRange *r) {
    if (lo < g->n_prompt) lo = g->n_prompt; /* the model's tokens only; the prompt is context */
    if (hi > g->n) hi = g->n;
    if (lo >= hi) return;
    ngram_stats(g->tokens, g->n, ngram, lo, hi, &r->ng);
    for (int t = lo; t < hi; t++) r->nll_sum -= g->logprob[t];
    r->n_nll += (size_t)(hi - lo);
}

double gen_range_loss(const GenRange *r) { return r->n_nll ? r->nll_sum / r->n_nll : NAN; }

/* the data's own continuation of a prompt (n tokens, the first n_prompt the prompt), bucket by
 * bucket as a generated text */
static void data_range(const int *tokens, int n, int n_prompt, int ngram, int lo, int hi, NgramStats *s) {
    if (lo < n_prompt) lo = n_prompt; /* the continuation only, as for a generated text */
    if (hi > n) hi = n;
    if (lo < hi) ngram_stats(tokens, n, ngram, lo, hi, s);
}

static void summarize_data(const int *tokens, int n, int n_prompt, int L, GenSummary *out) {
    for (int b = 0; b < out->n_buckets; b++)
        data_range(tokens, n, n_prompt, out->ngram, b * out->width, (b + 1) * out->width, &out->data_bucket[b]);
    data_range(tokens, n, n_prompt, out->ngram, 0, L, &out->data_before);
    data_range(tokens, n, n_prompt, out->ngram, L, n, &out->data_after);
}

/* buckets of a multiple of L, so that L is always a bucket edge */
static int bucket_width(int L, int text_len) {
    int per = (text_len + GEN_MAX_BUCKETS * L - 1) / (GEN_MAX_BUCKETS * L);
    return L * (per > 0 ? per : 1);
}

static void summarize_text(const GenText *g, int L, GenSummary *out) {
    for (int b = 0; b < out->n_buckets; b++)
        gen_range(g, out->ngram, b * out->width, (b + 1) * out->width, &out->bucket[b]);
    gen_range(g, out->ngram, 0, L, &out->before);
    gen_range(g, out->ngram, L, g->n, &out->after);
    if (g->n > out->text_len) out->text_len = g->n;
}

int gen_summary(Model *m, const int *held, size_t n_held, int L, int text_len, int n_prompts, int ngram,
                const GenSampling *s, GenSummary *out, GenText *keep) {
    memset(out, 0, sizeof *out);
    int plen = L / 4 > 0 ? L / 4 : 1;
    if (n_prompts < 1 || n_held < (size_t)plen * n_prompts)
        return pelab_fail("gen: %zu held-out tokens cannot give %d prompts of %d", n_held, n_prompts, plen);
    out->n_prompt = plen, out->ngram = ngram;
    out->width = bucket_width(L, text_len);
    out->n_buckets = (gen_text_limit(m, text_len) + out->width - 1) / out->width;
    for (int i = 0; i < n_prompts; i++) {
        GenSampling si = *s;
        si.seed = s->seed + (unsigned long long)i;
        GenText g;
        /* prompt i starts at i/n of the held-out tokens: different stories, always the same ones */
        size_t start = (n_held - plen) * i / n_prompts;
        if (gen_text(m, held + start, plen, text_len, &si, &g) != 0) return -1;
        summarize_text(&g, L, out);
        summarize_data(held + start, n_held - start < (size_t)g.n ? (int)(n_held - start) : g.n, plen, L, out);
        out->n_texts++;
        if (i == 0 && keep) *keep = g;
        else gen_text_free(&g);
    }
    return 0;
}

double loss_jump(const double *sum, const size_t *count, int L) {
    double before = 0, after = 0;
    size_t n_before = 0, n_after = 0;
    for (int p = L / 2; p < L; p++) before += sum[p], n_before += count[p];
    for (int p = L; p < 2 * L; p++) after += sum[p], n_after += count[p];
    return n_before && n_after ? after / n_after - before / n_before : NAN;
}

int loss_jump_on_text(Model *m, const int *tokens, size_t n, int L, double *jump, int *refused) {
    *jump = NAN;
    *refused = !accepts_len(m, 2L * L);
    if (*refused) return 0;
    int len = 2 * L;
    double *sum = xcalloc(len, sizeof(double));
    size_t *count = xcalloc(len, sizeof(size_t));
    ScoreResult r;
    /* one bucket per query position */
    int rc = eval_windows(m, tokens, n, len, len, DYNAMIC_WINDOW, len, sum, count, NULL, &r);
    if (rc == 0) *jump = loss_jump(sum, count, L);
    free(sum);
    free(count);
    return rc;
}
