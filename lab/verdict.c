/* verdict.c: pairwise tests, Holm and ranks over seeds (verdict.h). */
#include "verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/mem.h"

/* the values of a and b at the seeds both have, into pa, pb; returns the count */
static int common_seeds(const VerdictSeries *a, const VerdictSeries *b, double *pa, double *pb) {
    int n = 0;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if (a->seed[i] == b->seed[j]) pa[n] = a->v[i], pb[n] = b->v[j], n++;
    return n;
}

static void test_pair(const VerdictSeries *a, const VerdictSeries *b, VerdictPair *p) {
    p->paired = a->group == b->group;
    if (p->paired) {
        int cap = a->n < b->n ? a->n : b->n;
        double *pa = xmalloc(sizeof(double) * (cap + 1)), *pb = xmalloc(sizeof(double) * (cap + 1));
        int n = common_seeds(a, b, pa, pb);
        p->na = p->nb = n;
        p->t = stats_paired(pa, pb, n);
        free(pa), free(pb);
        return;
    }
    p->na = a->n, p->nb = b->n;
    p->t = stats_welch(a->v, a->n, b->v, b->n);
}

static const Verdict *sort_ctx;
static int by_mean(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    double ma = sort_ctx->mean[a], mb = sort_ctx->mean[b];
    if (ma == mb) return a - b; /* the given order among equals */
    return sort_ctx->higher_better ? (ma > mb ? -1 : 1) : (ma < mb ? -1 : 1);
}

void verdict_compute(const VerdictSeries *series, int n_series, int higher_better, double alpha, Verdict *out) {
    memset(out, 0, sizeof *out);
    out->higher_better = higher_better, out->alpha = alpha;
    out->order = xmalloc(sizeof(int) * (n_series + 1));
    out->rank = xmalloc(sizeof(int) * (n_series + 1));
    out->mean = xmalloc(sizeof(double) * (n_series + 1));
    out->sd = xmalloc(sizeof(double) * (n_series + 1));
    for (int i = 0; i < n_series; i++) {
        StatSummary s = stats_summary(series[i].v, series[i].n);
        out->mean[i] = s.mean, out->sd[i] = s.sd;
        if (series[i].n > 0) out->order[out->n++] = i;
    }
    int n = out->n;
    out->pairs = xmalloc(sizeof(VerdictPair) * (n * (n - 1) / 2 + 1));
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            VerdictPair *p = &out->pairs[out->n_pairs++];
            memset(p, 0, sizeof *p);
            p->a = out->order[i], p->b = out->order[j];
            test_pair(&series[p->a], &series[p->b], p);
        }
    double *raw = xmalloc(sizeof(double) * (out->n_pairs + 1)), *adj = xmalloc(sizeof(double) * (out->n_pairs + 1));
    for (int k = 0; k < out->n_pairs; k++) raw[k] = out->pairs[k].t.p;
    stats_holm(raw, out->n_pairs, adj);
    for (int k = 0; k < out->n_pairs; k++) out->pairs[k].p_holm = adj[k];
    free(raw), free(adj);
    sort_ctx = out;
    qsort(out->order, n, sizeof(int), by_mean);
    sort_ctx = NULL;
    int leader = 0; /* the best series of the current rank */
    for (int i = 0; i < n; i++) {
        const VerdictPair *p = i ? verdict_pair(out, out->order[leader], out->order[i]) : NULL;
        if (i == 0 || (p && p->p_holm < alpha)) leader = i, out->rank[i] = i + 1;
        else out->rank[i] = out->rank[leader];
    }
}

void verdict_free(Verdict *v) {
    free(v->order), free(v->rank), free(v->mean), free(v->sd), free(v->pairs);
    memset(v, 0, sizeof *v);
}

const VerdictPair *verdict_pair(const Verdict *v, int a, int b) {
    for (int k = 0; k < v->n_pairs; k++)
        if ((v->pairs[k].a == a && v->pairs[k].b == b) || (v->pairs[k].a == b && v->pairs[k].b == a))
            return &v->pairs[k];
    return NULL;
}

/* "about N" seeds, or "more than 1000" where the difference is tiny against the spread */
static void fmt_need(int need, char *buf, size_t n) {
    if (need > 1000) snprintf(buf, n, "more than 1000");
    else snprintf(buf, n, "about %d", need);
}

/* "p = 0.0023" or "p < 0.0001" */
static void fmt_p(double p, char *buf, size_t n) {
    if (p < 1e-4) snprintf(buf, n, "p < 0.0001");
    else snprintf(buf, n, "p = %.2g", p);
}

void verdict_sentence(const Verdict *v, const VerdictSeries *series, const char *where, const char *unit, double scale,
                      StrBuf *out) {
    const char *sep = where[0] ? ": " : ""; /* where is empty in a sentence that continues another */
    if (v->n == 0) {
        sb_printf(out, "%s%sno figures.", where, sep);
        return;
    }
    const VerdictSeries *best = &series[v->order[0]];
    if (v->n == 1) {
        sb_printf(out, "%s%sonly %s has figures.", where, sep, best->label);
        return;
    }
    const VerdictSeries *next = &series[v->order[1]];
    const VerdictPair *p = verdict_pair(v, v->order[0], v->order[1]);
    /* the margin of the best over the runner-up, in the direction "better by" */
    double sign = (p->a == v->order[0]) == (v->higher_better != 0) ? 1 : -1;
    double margin = sign * p->t.diff * scale, lo = sign * (sign > 0 ? p->t.ci_lo : p->t.ci_hi) * scale,
           hi = sign * (sign > 0 ? p->t.ci_hi : p->t.ci_lo) * scale;
    margin += 0.0, lo += 0.0, hi += 0.0; /* no "-0" in a sentence */
    const char *better = v->higher_better ? "above" : "below";
    if (isnan(p->t.p)) {
        int n_most = best->n > next->n ? best->n : next->n;
        sb_printf(out, "%s%s%s has the best mean, %.3g %s %s %s, but with %d and %d seed%s%s no test is possible: "
                       "at least 2 seeds per series are needed", where, sep, best->label, fabs(margin), unit, better,
                  next->label, best->n, next->n, n_most == 1 ? "" : "s", p->paired ? " in common" : "");
        double sd = fmax(v->sd[v->order[0]], v->sd[v->order[1]]);
        int need = n_most >= 2 ? stats_seeds_needed(p->t.diff, sd, v->alpha / v->n_pairs, 0.8) : -1;
        char nb[32];
        fmt_need(need, nb, sizeof nb);
        if (need > 0) sb_printf(out, "; the observed spread (sd %.3g %s) suggests %s per series", sd * scale, unit, nb);
        sb_puts(out, ".");
        /* the best two that can be tested, when there are such */
        int idx[2], k = 0;
        for (int i = 0; i < v->n && k < 2; i++)
            if (series[v->order[i]].n >= 2) idx[k++] = i;
        if (k == 2 && (idx[0] > 0 || idx[1] > 1)) {
            Verdict sub = *v;
            int order[2] = {v->order[idx[0]], v->order[idx[1]]}, rank[2] = {1, 2};
            sub.n = 2, sub.order = order, sub.rank = rank;
            sb_puts(out, " Among the series with at least 2 seeds: ");
            verdict_sentence(&sub, series, "", unit, scale, out);
        }
        return;
    }
    char pb[32], ph[32];
    fmt_p(p->t.p, pb, sizeof pb);
    fmt_p(p->p_holm, ph, sizeof ph);
    const char *test = p->paired ? "paired t" : "Welch";
    if (p->p_holm < v->alpha) {
        sb_printf(out, "%s%s**%s** is best, %.3g %s %s %s (95%% CI %.3g to %.3g; %s %s, Holm-adjusted %s; %d vs %d seeds).",
                  where, sep, best->label, margin, unit, better, next->label, lo, hi, test, pb, ph, p->na, p->nb);
        return;
    }
    sb_printf(out, "%s%sno significant winner: %s and %s differ by %.3g %s (95%% CI %.3g to %.3g; %s %s, Holm-adjusted %s; "
                   "%d vs %d seeds)", where, sep, best->label, next->label, margin, unit, lo, hi, test, pb, ph, p->na, p->nb);
    int tied = 0;
    for (int i = 2; i < v->n; i++) tied += v->rank[i] == 1;
    if (tied) sb_printf(out, "; %d more share%s rank 1", tied, tied == 1 ? "s" : "");
    double sd = p->paired ? NAN : sqrt(0.5 * (v->sd[v->order[0]] * v->sd[v->order[0]] +
                                               v->sd[v->order[1]] * v->sd[v->order[1]]));
    /* the first step of Holm's method tests the smallest p at alpha / m: a pair can count on no more */
    double level = v->alpha / (v->n_pairs > 0 ? v->n_pairs : 1);
    int need = p->paired ? -1 : stats_seeds_needed(p->t.diff, sd, level, 0.8);
    char nb[32];
    fmt_need(need, nb, sizeof nb);
    if (need > 0 && need > p->na)
        sb_printf(out, "; with their spread (sd %.3g %s) %s seeds per scheme would detect a true difference of that "
                       "size (80%% power at alpha %.2g = %g / %d pairs, Holm's strictest step)", sd * scale, unit, nb,
                  level, v->alpha, v->n_pairs);
    else if (margin == 0) sb_puts(out, "; their figures are identical");
    sb_puts(out, ".");
}
