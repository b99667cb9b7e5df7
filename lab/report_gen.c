/* report_gen.c: report sections for long generation, the loss jump at L and key-token perplexity. */
#include "report_gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../infer/genmetrics.h"
#include "../core/stats.h"
#include "compare_gen.h"
#include "report_agg.h"

static const char *const GEN_METRICS[GEN_METRICS_N] = {"rep4", "distinct4", "ownloss"};

static GenSeries *series(GenAgg *agg, int scheme, const char *rule) {
    for (int i = 0; i < agg->n; i++)
        if (agg->s[i].scheme == scheme && strcmp(agg->s[i].rule, rule) == 0) return &agg->s[i];
    if (agg->n == GEN_MAX_SERIES) return NULL;
    GenSeries *g = &agg->s[agg->n++];
    g->scheme = scheme;
    snprintf(g->rule, sizeof g->rule, "%s", rule);
    return g;
}

/* a value into v[*n] (at most cap: one per seed) */
static void add(double *v, int *n, int cap, double x) {
    if (*n < cap) v[(*n)++] = x;
}
static void add_stat(GenStat *st, double x, int k) {
    if (st->n < CMP_MAX_SEEDS) st->seed[st->n] = k;
    add(st->v, &st->n, CMP_MAX_SEEDS, x);
}

double report_gen_seed(const GenStat *st, int k) {
    for (int i = 0; i < st->n; i++)
        if (st->seed[i] == k) return st->v[i];
    return NAN;
}

int report_gen_row(GenAgg *agg, const Compare *c, int s, int k, const ResultRow *r) {
    int gen = strcmp(r->kind, "gen") == 0, jump = strcmp(r->kind, "jump") == 0, key = strcmp(r->kind, "keyppl") == 0;
    if (!gen && !jump && !key) return 0;
    GenSeries *g = series(agg, s, r->rule);
    if (!g || isnan(r->value)) return 1; /* not computed: the cell stays empty */
    double v = r->value;
    int bucket = r->bucket == RES_NONE ? -1 : (int)r->bucket;
    if (gen && (strcmp(r->protocol, "rep4_data") == 0 || strcmp(r->protocol, "distinct4_data") == 0)) {
        /* the same text for every scheme, rule and fine-tune of a seed: one value per seed, from the
         * first scheme's model as trained (rule "none"); more would shrink the ± std */
        if (s == 0 && strcmp(r->rule, "none") == 0 && bucket >= 0 && bucket < GEN_MAX_BUCKETS) {
            int q = r->protocol[0] == 'r' ? 0 : 1;
            add(agg->data[q][bucket].v, &agg->data[q][bucket].n, GEN_DATA_MAX, v);
        }
        return 1;
    }
    if (gen) {
        int q = 0;
        while (q < GEN_METRICS_N && strcmp(r->protocol, GEN_METRICS[q]) != 0) q++;
        if (q == GEN_METRICS_N || bucket < 0 || bucket >= GEN_MAX_BUCKETS) return 1;
        add_stat(&g->gen[q][bucket], v, k);
        agg->lo[bucket] = (int)r->pos_lo, agg->hi[bucket] = (int)r->pos_hi, agg->has_gen = 1;
        if (bucket >= agg->n_buckets) agg->n_buckets = bucket + 1;
    } else if (jump) {
        add_stat(&g->jump, v, k), agg->has_jump = 1;
    } else if (strcmp(r->protocol, "share") == 0) {
        add_stat(&g->share, v, k);
    } else {
        int l = r->length == RES_NONE ? -1 : report_length_index(c, (int)r->length);
        if (l >= 0) add_stat(&g->key[strcmp(r->protocol, "key") == 0 ? GEN_KEY : GEN_ALL][l], v, k), agg->has_key = 1;
    }
    return 1;
}

/* "1.2345 ± 0.0123" (sample std over seeds), "1.2345" for one seed, "—" for none */
static void values_cell(const double *v, int n, char *buf, size_t size) {
    StatSummary m = stats_summary(v, n);
    if (n < 1) snprintf(buf, size, "—");
    else if (n < 2) snprintf(buf, size, "%.4f", m.mean);
    else snprintf(buf, size, "%.4f ± %.4f", m.mean, m.sd);
}
static void stat_cell(const GenStat *st, char *buf, size_t size) { values_cell(st->v, st->n, buf, size); }

static void series_label(const Compare *c, const GenSeries *g, FILE *f) {
    fprintf(f, "| %s | %s |", c->scheme[g->scheme], g->rule);
}

static void gen_table(FILE *f, const Compare *c, const GenAgg *agg, int q) {
    int L = c->base.seq_len;
    fprintf(f, "| scheme | rule |");
    for (int b = 0; b < agg->n_buckets; b++) fprintf(f, " %d–%d%s |", agg->lo[b], agg->hi[b], agg->lo[b] >= L ? " (≥L)" : "");
    fprintf(f, "\n|---|---|");
    for (int b = 0; b < agg->n_buckets; b++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i < agg->n; i++) {
        series_label(c, &agg->s[i], f);
        for (int b = 0; b < agg->n_buckets; b++) {
            char buf[64];
            stat_cell(&agg->s[i].gen[q][b], buf, sizeof buf);
            fprintf(f, " %s |", buf);
        }
        fprintf(f, "\n");
    }
    if (q == 2) return; /* the data has no own loss */
    fprintf(f, "| *held-out text* | (reference) |");
    for (int b = 0; b < agg->n_buckets; b++) {
        char buf[64];
        values_cell(agg->data[q][b].v, agg->data[q][b].n, buf, sizeof buf);
        fprintf(f, " %s |", buf);
    }
    fprintf(f, "\n");
}

static void write_gen(FILE *f, const Compare *c, const GenAgg *agg) {
    static const char *const titles[GEN_METRICS_N] = {
        "Repeated 4-grams: share of the bucket's 4-grams already seen earlier in the same text",
        "Distinct 4-grams: unique 4-grams / 4-grams in the bucket",
        "Own loss: the model's mean NLL (nats) of the tokens it generated, full context"};
    fprintf(f, "\n## Long generation past L\n\nEach model continues %d prompts of %d tokens taken from the held-out "
               "text to %d tokens (temperature %g, top-p %g, seed = the run's seed + prompt index, KV cache); a "
               "learned table stops at its size. By position bucket of the generated tokens (the prompt is context "
               "only), pooled over the texts; L = %d. The row *held-out text* is the data's own continuation of the same "
               "prompts (the first scheme's runs), the repetition a faithful model would show there.\n",
            c->gen_prompts, c->base.seq_len / 4 > 0 ? c->base.seq_len / 4 : 1, compare_gen_len(c), GEN_TEMPERATURE,
            GEN_TOP_P, c->base.seq_len);
    for (int q = 0; q < GEN_METRICS_N; q++) {
        fprintf(f, "\n### %s\n\n", titles[q]);
        gen_table(f, c, agg, q);
    }
}

static void write_jump(FILE *f, const Compare *c, const GenAgg *agg) {
    int L = c->base.seq_len;
    fprintf(f, "\n## Loss jump at L\n\nHeld-out text in non-overlapping windows of 2L = %d (positions from 0): mean "
               "loss at target positions (L, 2L] minus (L/2, L], nats. Near 0: the model does not notice L.\n\n"
               "| scheme | rule | jump |\n|---|---|---:|\n", 2 * L);
    for (int i = 0; i < agg->n; i++) {
        char buf[64];
        stat_cell(&agg->s[i].jump, buf, sizeof buf);
        series_label(c, &agg->s[i], f);
        fprintf(f, " %s |\n", agg->s[i].jump.n ? buf : "n/a");
    }
}

static void key_table(FILE *f, const Compare *c, const GenAgg *agg, int which) {
    fprintf(f, "| scheme | rule |");
    for (int l = 0; l < c->n_lengths; l++) fprintf(f, " %d%s |", c->lens[l], c->lens[l] == c->base.seq_len ? " (=L)" : "");
    if (which == GEN_KEY) fprintf(f, " key share |");
    fprintf(f, "\n|---|---|");
    for (int l = 0; l < c->n_lengths + (which == GEN_KEY); l++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i < agg->n; i++) {
        char buf[64];
        series_label(c, &agg->s[i], f);
        for (int l = 0; l < c->n_lengths; l++) {
            stat_cell(&agg->s[i].key[which][l], buf, sizeof buf);
            fprintf(f, " %s |", buf);
        }
        if (which == GEN_KEY) stat_cell(&agg->s[i].share, buf, sizeof buf), fprintf(f, " %s |", buf);
        fprintf(f, "\n");
    }
}

static void write_key(FILE *f, const Compare *c, const GenAgg *agg) {
    fprintf(f, "\n## Key-token perplexity (LongPPL-style)\n\nKey tokens (Fang et al. 2024): held-out tokens whose "
               "log-prob gains at least %g nats with context L (sliding windows, stride L/2) over context L/4 "
               "(stride L/8), and whose log-prob with context L is above -2, as judged by %s, within its training "
               "length (in distribution for every scheme). The first %d held-out tokens; the same key tokens for all "
               "rules and lengths of a run (a fine-tune: those of its base run). Loss in nats over non-overlapping "
               "windows (perplexity = exp(loss)); \"—\": no key token or the length is refused.\n\n",
            c->key_gain, c->key_evaluator ? c->key_evaluator : "each run's own trained model", c->keyppl_tokens);
    key_table(f, c, agg, GEN_KEY);
    fprintf(f, "\nThe same tokens, every one (ordinary loss, for comparison):\n\n");
    key_table(f, c, agg, GEN_ALL);
}

void report_gen_write(FILE *f, const Compare *c, const GenAgg *agg) {
    if (agg->has_gen) write_gen(f, c, agg);
    if (agg->has_jump) write_jump(f, c, agg);
    if (agg->has_key) write_key(f, c, agg);
}
