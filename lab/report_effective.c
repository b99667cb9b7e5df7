/* report_effective.c: RULER's effective length of each series of a --task report
 * (report_effective.h). */
#include "report_effective.h"

#include <math.h>
#include <string.h>

#include "../core/strbuf.h"

int report_effective_metric(const Agg *a) { return a->has_recall ? TASK_RECALL : TASK_EXACT; }

/* the index of the longest evaluated length whose examples fit in L, or -1 */
static int inside_index(const Compare *c, const Agg *a) {
    int best = -1;
    for (int l = 0; l < c->n_lengths; l++)
        if (a->reach[l] > 0 && a->reach[l] <= c->base.seq_len && (best < 0 || c->lens[l] > c->lens[best])) best = l;
    return best;
}

/* series s's score at length index l: the mean over its counted seeds (k = -1) or seed k's; NAN if none */
static double score_at(const Agg *a, const Series *s, int p, int l, int k) {
    if (k < 0) return report_mean(a, s, p, l);
    return report_counts(a, s, p, l, k) ? s->val[p][l][k] : NAN;
}

/* the threshold of seed k (-1: the seed means) */
static double threshold_of(const Compare *c, const Agg *a, const Series *s, int k) {
    if (c->effective_rel <= 0) return (c->effective_pct > 0 ? c->effective_pct : RULER_THRESHOLD) / 100;
    int l = inside_index(c, a);
    return l < 0 ? NAN : c->effective_rel * score_at(a, s, report_effective_metric(a), l, k);
}

double report_effective_threshold(const Compare *c, const Agg *a, const Series *s) {
    return threshold_of(c, a, s, -1);
}

int report_effective_length(const Compare *c, const Agg *a, const Series *s, int p, double thr, int k) {
    int order[CMP_MAX_LENGTHS] = {0}, n = c->n_lengths;
    if (isnan(thr) || n <= 0 || n > CMP_MAX_LENGTHS) return -1;
    report_length_order(c, order); /* by length (--task-lens may come in any order) */
    if (isnan(score_at(a, s, p, order[0], k))) return -1;
    int best = 0;
    for (int i = 0; i < n; i++) {
        double v = score_at(a, s, p, order[i], k);
        if (isnan(v) || v < thr - 1e-9) break; /* "at or above", with room for a mean's rounding */
        best = c->lens[order[i]];
    }
    return best;
}

/* the shortest evaluated length (what 0 falls below) */
static int shortest(const Compare *c) {
    int m = c->lens[0];
    for (int l = 1; l < c->n_lengths; l++) m = c->lens[l] < m ? c->lens[l] : m;
    return m;
}

static void fmt_len(int v, char *buf, size_t n) {
    if (v < 0) snprintf(buf, n, "n/a");
    else snprintf(buf, n, "%d", v);
}

/* each counted seed's effective length into b ("s1 64, s2 128"); their mean, min and max */
static int per_seed(const Compare *c, const Agg *a, const Series *s, int p, StrBuf *b, double *mean, int *lo, int *hi) {
    int n = 0;
    double sum = 0;
    for (int k = 0; k < c->n_seeds; k++) {
        int counted = 0;
        for (int l = 0; l < c->n_lengths; l++) counted |= report_counts(a, s, p, l, k);
        if (!counted) continue;
        int e = report_effective_length(c, a, s, p, threshold_of(c, a, s, k), k);
        char v[16];
        fmt_len(e, v, sizeof v);
        sb_printf(b, "%ss%llu %s", n ? ", " : "", c->seed[k], v);
        if (e < 0) continue;
        sum += e;
        if (n == 0 || e < *lo) *lo = e;
        if (n == 0 || e > *hi) *hi = e;
        n++;
    }
    *mean = n ? sum / n : NAN;
    return n;
}

void report_effective_write(FILE *f, const Compare *c, const Agg *a) {
    int p = report_effective_metric(a), in = inside_index(c, a);
    const char *what = p == TASK_RECALL ? "RULER score" : "exact match";
    fprintf(f, "\n## Effective length\n\nRULER's effective length (Hsieh et al. 2024): the longest task length evaluated "
               "whose %s, and that of every shorter length evaluated, is at least ", what);
    if (c->effective_rel > 0) {
        if (in >= 0)
            fprintf(f, "%g x the series' own %s at length %d, the longest whose examples fit in L = %d "
                       "(--effective-relative; per seed: of that seed's own)", c->effective_rel, what, c->lens[in],
                    c->base.seq_len);
        else fprintf(f, "%g x the series' own score inside L = %d, which no evaluated length fits in", c->effective_rel,
                     c->base.seq_len);
    } else
        fprintf(f, "%.1f%% (%s; --effective-threshold)", c->effective_pct > 0 ? c->effective_pct : RULER_THRESHOLD,
                c->effective_pct > 0 && c->effective_pct != (float)RULER_THRESHOLD ? "given"
                                                                                   : "RULER's threshold, Llama-2-7B's "
                                                                                     "score at 4K");
    fprintf(f, ". Of the mean over seeds, then of each seed alone (runs that failed the gate left out); 0: below the "
               "threshold already at the shortest length, %d; a length without a figure (past a learned table) ends "
               "the run.\n\n| series | threshold (%%) | effective length | per seed | mean over seeds (min-max) |\n"
               "|---|---:|---:|---|---:|\n", shortest(c));
    for (int i = 0; i < a->n_series; i++) {
        const Series *s = &a->s[i];
        double thr = report_effective_threshold(c, a, s), mean;
        char e[16], t[32], m[64];
        fmt_len(report_effective_length(c, a, s, p, thr, -1), e, sizeof e);
        if (isnan(thr)) snprintf(t, sizeof t, "n/a");
        else snprintf(t, sizeof t, "%.1f", 100 * thr);
        StrBuf seeds = {0};
        int lo = 0, hi = 0, n = per_seed(c, a, s, p, &seeds, &mean, &lo, &hi);
        if (n == 0) snprintf(m, sizeof m, "—");
        else if (n == 1) snprintf(m, sizeof m, "%d", lo);
        else snprintf(m, sizeof m, "%.1f (%d-%d)", mean, lo, hi);
        fprintf(f, "| %s | %s | %s | %s | %s |\n", s->label, t, e, seeds.len ? sb_str(&seeds) : "—", m);
        sb_free(&seeds);
    }
}

void report_effective_print(FILE *out, const Compare *c, const Agg *a) {
    int p = report_effective_metric(a);
    if (c->effective_rel > 0) fprintf(out, "effective length (%s >= %g x its own inside L):", p == TASK_RECALL ? "RULER score" : "exact match", c->effective_rel);
    else fprintf(out, "effective length (%s >= %.1f%%):", p == TASK_RECALL ? "RULER score" : "exact match",
                 c->effective_pct > 0 ? c->effective_pct : RULER_THRESHOLD);
    for (int i = 0; i < a->n_series; i++) {
        const Series *s = &a->s[i];
        char e[16];
        fmt_len(report_effective_length(c, a, s, p, report_effective_threshold(c, a, s), -1), e, sizeof e);
        fprintf(out, "%s %s %s", i ? "," : "", s->label, e);
    }
    fprintf(out, "\n");
}
