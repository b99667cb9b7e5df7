/* suite_claims.c: a claim's statistic from a protocol's runs (suite_claims.h). */
#include "suite_claims.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/stats.h"
#include "../io/results.h"
#include "report_verdict.h"
#include "suite_keyppl.h"

/* a statistic keeps every seed a protocol's series can hold */
_Static_assert((int)CMP_MAX_SEEDS <= (int)CLAIM_MAX_SEEDS, "ClaimStat's x[], y[] shorter than a series");

/* a claim's length in the protocol's units: a task length, or a multiple of L in tokens */
static int claim_length(const Compare *c, double at, int is_mult) {
    return is_mult ? (int)lround(at * c->base.seq_len) : (int)at;
}

static int series_index(const Agg *a, const char *label) {
    for (int i = 0; i < a->n_series; i++)
        if (strcmp(a->s[i].label, label) == 0) return i;
    return -1;
}

/* the counted values of series i, metric m, length l among the first `seeds` seeds (0: all) */
static int values(const Agg *a, int i, const Metric *m, int l, int seeds, double *v, int *seed) {
    double all[CMP_MAX_SEEDS];
    int idx[CMP_MAX_SEEDS], n = 0, got = report_values(a, &a->s[i], m->p, l, all, idx);
    for (int j = 0; j < got; j++)
        if (seeds <= 0 || idx[j] < seeds) v[n] = all[j], seed[n] = idx[j], n++;
    return n;
}

/* "mean ± sd (n seeds)" of v[n] at len, or "no value (why)" */
static void figure(const Compare *c, const Agg *a, const Metric *m, int i, int l, const double *v, int n, StrBuf *out) {
    const Series *s = &a->s[i];
    if (n == 0) {
        char why[96] = "no run passed the gate";
        if (s->status[l] != RES_OK) result_status_str(s->status[l], s->limit[l], why, sizeof why);
        sb_printf(out, "%s at %d: no value (%s)", s->label, c->lens[l], why);
        return;
    }
    StatSummary sm = stats_summary(v, n);
    sb_printf(out, "%s at %d: %.4g ± %.2g %s (%d seed%s)", s->label, c->lens[l], sm.mean * m->scale, sm.sd * m->scale,
              m->unit, n, n == 1 ? "" : "s");
}

/* 1 if every value of both groups sits at the same bound of an accuracy (0 or 1) */
/* every figure of both series within the claim's equivalence margin (in the metric's fraction) of the
 * same bound of an accuracy (0 or 100%): no number of seeds can move the comparison past the margin,
 * whatever the test says. Losses have no bound. */
static int at_floor(const Metric *m, const double *x, int nx, const double *y, int ny) {
    if (m->scale == 1 || nx < 1 || ny < 1) return 0;
    double tol = CLAIM_MARGIN_POINTS / m->scale, b = x[0] < 0.5 ? 0 : 1;
    for (int i = 0; i < nx; i++)
        if (!(fabs(x[i] - b) < tol)) return 0;
    for (int i = 0; i < ny; i++)
        if (!(fabs(y[i] - b) < tol)) return 0;
    return 1;
}

/* st from two samples x[nx], y[ny] in metric units, already signed (x - y > 0: as claimed);
 * paired: x[i], y[i] belong together */
static void two_samples(ClaimStat *st, const Metric *m, const double *x, int nx, const double *y, int ny, int paired) {
    st->paired = paired, st->n_a = nx, st->n_b = ny;
    if (nx < 2 || ny < 2) return;
    StatTest t = paired ? stats_paired(x, y, nx) : stats_welch(x, nx, y, ny);
    st->status = CSTAT_TEST;
    /* two samples: Welch's statistic on min(nx, ny) - 1 degrees of freedom, which is conservative whatever
     * the ratio of the spreads (Hsu 1938; Welch-Satterthwaite's df runs above its level at 3 seeds and
     * spreads 4x apart: lab/claim_sim.h) */
    st->effect = t.diff, st->df = paired ? t.df : (nx < ny ? nx : ny) - 1;
    st->se = isfinite(t.t) && t.t != 0 ? fabs(t.diff / t.t) : t.ci_hi > t.ci_lo ? (t.ci_hi - t.ci_lo) / 2 / 1.96 : 0;
    if (m->scale == 1) return; /* losses: Student's t */
    if (paired) {
        st->method = CTEST_SIGNFLIP;
        for (int i = 0; i < nx; i++) st->x[i] = x[i] - y[i];
    } else {
        st->method = CTEST_PERMUTE;
        memcpy(st->x, x, sizeof(double) * nx), memcpy(st->y, y, sizeof(double) * ny);
    }
}

static void report_stat(const ClaimStat *st, const char *what, const char *unit, StrBuf *why) {
    if (st->status != CSTAT_TEST) return;
    double q = st->se > 0 ? stats_t_quantile(0.975, st->df) : 0;
    sb_printf(why, "; %s %+.3g %s [95%% %.3g, %.3g], %s", what, st->effect, unit, st->effect - q * st->se,
              st->effect + q * st->se,
              st->method == CTEST_PERMUTE ? "randomization test" : st->method == CTEST_SIGNFLIP ? "sign-flip test"
              : st->paired                ? "paired t"
                                          : "Welch t");
}

static void stat_better(const Claim *cl, const Compare *c, const Agg *a, const Metric *m, int l, int ia, int seeds,
                        ClaimStat *st, StrBuf *why) {
    int ib = series_index(a, cl->b);
    if (ib < 0) {
        sb_printf(why, "series %s was not run here (add its scheme to --schemes)", cl->b);
        return;
    }
    double va[CMP_MAX_SEEDS], vb[CMP_MAX_SEEDS], x[CMP_MAX_SEEDS], y[CMP_MAX_SEEDS];
    int sa[CMP_MAX_SEEDS], sb[CMP_MAX_SEEDS];
    int na = values(a, ia, m, l, seeds, va, sa), nb = values(a, ib, m, l, seeds, vb, sb);
    figure(c, a, m, ia, l, va, na, why);
    sb_puts(why, "; ");
    figure(c, a, m, ib, l, vb, nb, why);
    double sign = (m->higher_better ? 1 : -1) * m->scale; /* into "better by", in the unit */
    int paired = a->s[ia].scheme == a->s[ib].scheme, nx = 0, ny = 0;
    if (paired) { /* the same checkpoints: the seeds both have */
        for (int i = 0; i < na; i++)
            for (int j = 0; j < nb; j++)
                if (sa[i] == sb[j]) x[nx] = sign * va[i], y[ny] = sign * vb[j], nx++, ny++;
    } else {
        for (int i = 0; i < na; i++) x[nx++] = sign * va[i];
        for (int j = 0; j < nb; j++) y[ny++] = sign * vb[j];
    }
    st->margin = m->scale == 1 ? CLAIM_MARGIN_NATS : CLAIM_MARGIN_POINTS;
    if (at_floor(m, va, na, vb, nb) && !(na < 2 || nb < 2)) {
        st->status = CSTAT_FLOOR, st->n_a = na, st->n_b = nb;
        sb_printf(why, "; every seed of both within %g %s of %g %s: a floor, no number of seeds can move the difference "
                       "past the claim's margin", CLAIM_MARGIN_POINTS, m->unit, va[0] < 0.5 ? 0 : m->scale, m->unit);
        return;
    }
    two_samples(st, m, x, nx, y, ny, paired);
    if (st->status != CSTAT_TEST) sb_puts(why, "; too few seeds for a test (2 each needed)");
    char what[160];
    snprintf(what, sizeof what, "%s better by", cl->a);
    report_stat(st, what, m->unit, why);
}

static void stat_trend(const Claim *cl, const Compare *c, const Agg *a, const Metric *m, int l, int ia, double ref,
                       int seeds, ClaimStat *st, StrBuf *why) {
    int lref = report_length_index(c, claim_length(c, ref, !c->task));
    if (lref < 0) {
        sb_printf(why, "the reference length is not evaluated");
        return;
    }
    double v1[CMP_MAX_SEEDS], v0[CMP_MAX_SEEDS], x[CMP_MAX_SEEDS], y[CMP_MAX_SEEDS];
    int s1[CMP_MAX_SEEDS], s0[CMP_MAX_SEEDS], n = 0;
    int n1 = values(a, ia, m, l, seeds, v1, s1), n0 = values(a, ia, m, lref, seeds, v0, s0);
    /* worse at l than at the reference, in the unit; the effect clears the tolerance by */
    double sign = (m->higher_better ? -1 : 1) * m->scale, dir = cl->relation == CLAIM_DEGRADES ? 1 : -1;
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n0; j++)
            if (s1[i] == s0[j]) x[n] = dir * (sign * (v1[i] - v0[j]) - cl->tol), y[n] = 0, n++;
    figure(c, a, m, ia, lref, v0, n0, why);
    sb_puts(why, "; ");
    figure(c, a, m, ia, l, v1, n1, why);
    if (n < 2) {
        sb_printf(why, "; %d seed%s with both lengths: too few for a test", n, n == 1 ? "" : "s");
        return;
    }
    two_samples(st, m, x, n, y, n, 1);
    double worse = dir * st->effect + cl->tol;
    double q = st->se > 0 ? stats_t_quantile(0.975, st->df) : 0;
    sb_printf(why, "; worse by %+.3g %s [95%% %.3g, %.3g] over %d paired seeds, tolerance %g, %s", worse, m->unit,
              worse - q * st->se, worse + q * st->se, n, cl->tol,
              st->method == CTEST_SIGNFLIP ? "sign-flip test" : "paired t");
}

/* the gate figures of scheme (as trained) label among the first `seeds` seeds, pass or fail; its index or -1 */
static int gate_figures(const Compare *c, const Agg *a, const char *label, int seeds, double *v, int *n) {
    *n = 0;
    for (int s = 0; s < c->n_schemes; s++) {
        if (strcmp(c->scheme[s], label) != 0) continue;
        for (int k = 0; k < c->n_seeds && (seeds <= 0 || k < seeds); k++)
            if (a->gate[s][k] != RUN_MISSING && !isnan(a->gate_val[s][k])) v[(*n)++] = a->gate_val[s][k];
        return s;
    }
    return -1;
}

/* learns:B: A's gate figure (in-distribution exact match) against B's over all their seeds */
static void stat_learns(const Claim *cl, const Compare *c, const Agg *a, int seeds, ClaimStat *st, StrBuf *why) {
    if (!c->task) {
        sb_printf(why, "learns: needs a task protocol (the gate figure is exact match)");
        return;
    }
    double va[CMP_MAX_SEEDS], vb[CMP_MAX_SEEDS];
    int na = 0, nb = 0;
    const char *missing = gate_figures(c, a, cl->a, seeds, va, &na) < 0   ? cl->a
                        : gate_figures(c, a, cl->b, seeds, vb, &nb) < 0 ? cl->b
                                                                        : NULL;
    if (missing) {
        sb_printf(why, "scheme %s was not trained here (learns: compares schemes as trained; add it to --schemes)", missing);
        return;
    }
    for (int i = 0; i < 2; i++) {
        const double *v = i ? vb : va;
        int n = i ? nb : na;
        sb_printf(why, "%s%s in distribution:", i ? "; " : "", i ? cl->b : cl->a);
        for (int k = 0; k < n; k++) sb_printf(why, "%s%.1f", k ? ", " : " ", 100 * v[k]);
        if (!n) sb_puts(why, " no run");
        sb_printf(why, " %% exact match (%d seed%s)", n, n == 1 ? "" : "s");
    }
    Metric m = {TASK_EXACT, "exact match (%)", "points", 100, 1};
    st->margin = CLAIM_MARGIN_POINTS;
    if (at_floor(&m, va, na, vb, nb) && na >= 2 && nb >= 2) {
        st->status = CSTAT_FLOOR, st->n_a = na, st->n_b = nb;
        sb_printf(why, "; every seed of both within %g points of %g points: a floor", CLAIM_MARGIN_POINTS,
                  va[0] < 0.5 ? 0 : 100.0);
        return;
    }
    double x[CMP_MAX_SEEDS], y[CMP_MAX_SEEDS];
    for (int i = 0; i < na; i++) x[i] = 100 * va[i];
    for (int i = 0; i < nb; i++) y[i] = 100 * vb[i];
    two_samples(st, &m, x, na, y, nb, 0);
    if (st->status != CSTAT_TEST) sb_puts(why, "; too few seeds for a test (2 each needed)");
    char what[160];
    snprintf(what, sizeof what, "%s higher by", cl->a);
    report_stat(st, what, "points", why);
}

/* the claim's length index in c, or -1 with why */
static int claim_length_index(const Claim *cl, const Compare *c, StrBuf *why) {
    if (cl->at_is_mult == (c->task != NULL)) {
        sb_printf(why, "length %g%s: protocol %s takes %s", cl->at, cl->at_is_mult ? "L" : "", cl->protocol,
                  c->task ? "task lengths (\"12\")" : "multiples of L (\"4L\")");
        return -1;
    }
    int l = report_length_index(c, claim_length(c, cl->at, cl->at_is_mult));
    if (l < 0) sb_printf(why, "length %g%s is not among the protocol's lengths", cl->at, cl->at_is_mult ? "L" : "");
    return l;
}

void suite_claim_stat(const Claim *cl, const Compare *c, const Agg *a, const GenAgg *g, double ref, int seeds,
                      ClaimStat *st, StrBuf *why) {
    memset(st, 0, sizeof *st);
    st->status = CSTAT_NONE;
    if (cl->untestable[0]) {
        sb_puts(why, cl->untestable);
        return;
    }
    if (!c || !a) {
        sb_printf(why, "protocol %s did not run (suite --protocols)", cl->protocol);
        return;
    }
    int l = claim_length_index(cl, c, why);
    if (l < 0) return;
    if (cl->relation == CLAIM_LEARNS) {
        stat_learns(cl, c, a, seeds, st, why);
        return;
    }
    if (cl->relation == CLAIM_KEYGAP) {
        suite_keyppl_stat(cl, c, a, g, seeds, st, why);
        return;
    }
    int ia = series_index(a, cl->a);
    if (ia < 0) {
        sb_printf(why, "series %s was not run here (add its scheme to --schemes)", cl->a);
        return;
    }
    Metric m[4];
    report_metrics(c, a, m);
    if (cl->relation == CLAIM_BETTER) stat_better(cl, c, a, &m[0], l, ia, seeds, st, why);
    else stat_trend(cl, c, a, &m[0], l, ia, ref, seeds, st, why);
}

int suite_claim_schemes(const Claim *cl, const Compare *c, const Agg *a, int *s) {
    if (cl->untestable[0] || !c || !a) return 0;
    int n = 0;
    for (int i = 0; i < 2; i++) {
        const char *label = i ? cl->b : cl->a;
        if (i && (cl->relation == CLAIM_FLAT || cl->relation == CLAIM_DEGRADES)) break;
        if (cl->relation == CLAIM_LEARNS) {
            for (int k = 0; k < c->n_schemes; k++)
                if (strcmp(c->scheme[k], label) == 0) s[n++] = k;
            continue;
        }
        int j = series_index(a, label);
        if (j >= 0 && (n == 0 || s[0] != a->s[j].scheme)) s[n++] = a->s[j].scheme;
    }
    return n;
}
