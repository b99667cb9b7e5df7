/* report_gen.h: the report sections of the rows gen, jump and keyppl (compare_plan.h): long
 * generation by position, the loss jump at L and the key-token perplexity, mean ± std over seeds.
 * report.c hands every CSV row here first and calls the writer once. */
#ifndef PELAB_REPORT_GEN_H
#define PELAB_REPORT_GEN_H

#include <stdio.h>

#include "../infer/genmetrics.h"
#include "../io/results.h"
#include "compare_plan.h"

enum { GEN_KEY, GEN_ALL }; /* GenSeries.key's two figures */
enum { GEN_MAX_SERIES = CMP_MAX_SCHEMES * (2 + CMP_MAX_RULES), GEN_METRICS_N = 3 };
/* the held-out text's rows come once per run and rule of the first scheme */
enum { GEN_DATA_MAX = CMP_MAX_SEEDS * (2 + CMP_MAX_RULES + FT_KINDS) };

/* one figure over the seeds: its values, summarised by stats_summary when written, and the index
 * (into Compare.seed) of the seed behind each, so that figures pair by seed */
typedef struct {
    double v[CMP_MAX_SEEDS];
    int seed[CMP_MAX_SEEDS];
    int n;
} GenStat;

typedef struct {
    int scheme;
    char rule[64];
    GenStat gen[GEN_METRICS_N][GEN_MAX_BUCKETS];
    GenStat jump, share;
    GenStat key[2][CMP_MAX_LENGTHS]; /* [GEN_KEY]: the key tokens' loss, [GEN_ALL]: the same tokens, every one */
} GenSeries;

/* the figures of every run's gen, jump and keyppl rows */
typedef struct {
    struct {
        double v[GEN_DATA_MAX];
        int n;
    } data[2][GEN_MAX_BUCKETS]; /* the held-out text's rep4, distinct4 (the first scheme's runs) */
    int n;
    int has_gen, has_jump, has_key;
    int lo[GEN_MAX_BUCKETS], hi[GEN_MAX_BUCKETS], n_buckets;
    GenSeries s[GEN_MAX_SERIES];
} GenAgg;

/* 1 if the row is a gen, jump or keyppl row (then taken into g, for scheme index s, seed index k), else 0 */
int report_gen_row(GenAgg *g, const Compare *c, int s, int k, const ResultRow *r);
/* the figure of seed index k in st, or NAN */
double report_gen_seed(const GenStat *st, int k);
/* the sections, or nothing when no run had such rows */
void report_gen_write(FILE *f, const Compare *c, const GenAgg *g);

#endif
