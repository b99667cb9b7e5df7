/* report_agg.c: lookups and seed statistics over a compare report's aggregate (report_agg.h), read
 * by the report (report.c) and its verdict, generation and claim sections alike. */
#include "report_agg.h"

#include <string.h>

#include "../core/stats.h"

const Series *report_series(const Agg *a, int scheme, const char *rule) {
    for (int i = 0; i < a->n_series; i++)
        if (a->s[i].scheme == scheme && strcmp(a->s[i].rule, rule) == 0) return &a->s[i];
    return NULL;
}

void report_length_order(const Compare *c, int *order) {
    for (int l = 0; l < c->n_lengths; l++) order[l] = l;
    for (int i = 1; i < c->n_lengths; i++)
        for (int j = i; j > 0 && c->lens[order[j - 1]] > c->lens[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
}

int report_length_index(const Compare *c, int len) {
    for (int l = 0; l < c->n_lengths; l++)
        if (c->lens[l] == len) return l;
    return -1;
}

int report_counts(const Agg *a, const Series *s, int p, int l, int k) {
    return s->has[p][l][k] && a->gate[s->scheme][k] != RUN_FAIL;
}

int report_values(const Agg *a, const Series *s, int p, int l, double *v, int *seed) {
    int n = 0;
    for (int k = 0; k < CMP_MAX_SEEDS; k++)
        if (report_counts(a, s, p, l, k)) {
            if (v) v[n] = s->val[p][l][k];
            if (seed) seed[n] = k;
            n++;
        }
    return n;
}

double report_mean(const Agg *a, const Series *s, int p, int l) {
    double v[CMP_MAX_SEEDS];
    return stats_summary(v, report_values(a, s, p, l, v, NULL)).mean;
}

double report_std(const Agg *a, const Series *s, int p, int l) {
    double v[CMP_MAX_SEEDS];
    return stats_summary(v, report_values(a, s, p, l, v, NULL)).sd;
}
