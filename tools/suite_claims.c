/* suite_claims.c: a claim's verdict from a protocol's runs (suite_claims.h). */
#include "suite_claims.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/stats.h"
#include "../io/results.h"
#include "report_verdict.h"
#include "verdict.h"

const char *const claim_outcome_names[CLAIM_OUTCOMES] = {"reproduced", "contradicted", "inconclusive", "untestable"};

/* a claim's length in the protocol's units: a task length, or a multiple of L in tokens */
static int claim_length(const Compare *c, double at, int is_mult) {
    return is_mult ? (int)lround(at * c->base.seq_len) : (int)at;
}

static int series_index(const Agg *a, const char *label) {
    for (int i = 0; i < a->n_series; i++)
        if (strcmp(a->s[i].label, label) == 0) return i;
    return -1;
}

/* "mean ± sd (n seeds)" of series i at l, or "no value (why)" */
static void figure(const Compare *c, const Agg *a, const Metric *m, int i, int l, StrBuf *out) {
    const Series *s = &a->s[i];
    int n = report_values(a, s, m->p, l, NULL, NULL);
    if (n == 0) {
        char why[96] = "no run passed the gate";
        if (s->status[l] != RES_OK) result_status_str(s->status[l], s->limit[l], why, sizeof why);
        sb_printf(out, "%s at %d: no value (%s)", s->label, c->lens[l], why);
        return;
    }
    sb_printf(out, "%s at %d: %.4g ± %.2g %s (%d seed%s)", s->label, c->lens[l], report_mean(a, s, m->p, l) * m->scale,
              report_std(a, s, m->p, l) * m->scale, m->unit, n, n == 1 ? "" : "s");
}

static int judge_better(const Claim *cl, const Compare *c, const Agg *a, const Metric *m, int l, int ia, StrBuf *why) {
    int ib = series_index(a, cl->b);
    if (ib < 0) {
        sb_printf(why, "series %s was not run here (add its scheme to --schemes)", cl->b);
        return CLAIM_INCONCLUSIVE;
    }
    static LengthVerdict lv; /* large: not on the stack */
    report_verdict_at(a, m, l, c->alpha, &lv);
    const VerdictPair *p = verdict_pair(&lv.v, ia, ib);
    figure(c, a, m, ia, l, why);
    sb_puts(why, "; ");
    figure(c, a, m, ib, l, why);
    int outcome = CLAIM_INCONCLUSIVE;
    if (!p || isnan(p->p_holm)) {
        sb_puts(why, "; too few seeds for a test (2 each needed)");
    } else {
        double sign = (p->a == ia ? 1 : -1) * (m->higher_better ? 1 : -1); /* > 0: A better */
        double d = sign * p->t.diff * m->scale, lo = sign * (sign > 0 ? p->t.ci_lo : p->t.ci_hi) * m->scale,
               hi = sign * (sign > 0 ? p->t.ci_hi : p->t.ci_lo) * m->scale;
        sb_printf(why, "; %s better by %+.3g %s [95%% %.3g, %.3g], %s t, Holm p %.2g", cl->a, d, m->unit, lo, hi,
                  p->paired ? "paired" : "Welch", p->p_holm);
        if (p->p_holm < c->alpha) outcome = d > 0 ? CLAIM_REPRODUCED : CLAIM_CONTRADICTED;
        else sb_printf(why, " (>= %g: no difference shown)", c->alpha);
    }
    verdict_free(&lv.v);
    return outcome;
}

static int judge_trend(const Claim *cl, const Compare *c, const Agg *a, const Metric *m, int l, int ia, double ref,
                       StrBuf *why) {
    int lref = report_length_index(c, claim_length(c, ref, !c->task));
    if (lref < 0) {
        sb_printf(why, "the reference length is not evaluated");
        return CLAIM_INCONCLUSIVE;
    }
    double at[CMP_MAX_SEEDS], base[CMP_MAX_SEEDS], v1[CMP_MAX_SEEDS], v0[CMP_MAX_SEEDS];
    int s1[CMP_MAX_SEEDS], s0[CMP_MAX_SEEDS], n = 0;
    int n1 = report_values(a, &a->s[ia], m->p, l, v1, s1), n0 = report_values(a, &a->s[ia], m->p, lref, v0, s0);
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n0; j++)
            if (s1[i] == s0[j]) at[n] = v1[i], base[n] = v0[j], n++;
    figure(c, a, m, ia, lref, why);
    sb_puts(why, "; ");
    figure(c, a, m, ia, l, why);
    if (n < 2) {
        sb_printf(why, "; %d seed%s with both lengths: too few for an interval", n, n == 1 ? "" : "s");
        return CLAIM_INCONCLUSIVE;
    }
    StatTest t = stats_paired(at, base, n);
    double sign = m->higher_better ? -1 : 1; /* how much worse at l than at the reference */
    double d = sign * t.diff * m->scale, lo = sign * (sign > 0 ? t.ci_lo : t.ci_hi) * m->scale,
           hi = sign * (sign > 0 ? t.ci_hi : t.ci_lo) * m->scale;
    sb_printf(why, "; worse by %+.3g %s [95%% %.3g, %.3g] over %d paired seeds, tolerance %g", d, m->unit, lo, hi, n,
              cl->tol);
    if (lo > cl->tol) return cl->relation == CLAIM_DEGRADES ? CLAIM_REPRODUCED : CLAIM_CONTRADICTED;
    if (hi < cl->tol) return cl->relation == CLAIM_FLAT ? CLAIM_REPRODUCED : CLAIM_CONTRADICTED;
    sb_puts(why, " (the interval spans it)");
    return CLAIM_INCONCLUSIVE;
}

/* the gate figures of scheme (as trained) label, every seed that ran, pass or fail; its index or -1 */
static int gate_figures(const Compare *c, const Agg *a, const char *label, double *v, int *n) {
    *n = 0;
    for (int s = 0; s < c->n_schemes; s++) {
        if (strcmp(c->scheme[s], label) != 0) continue;
        for (int k = 0; k < c->n_seeds; k++)
            if (a->gate[s][k] != RUN_MISSING && !isnan(a->gate_val[s][k])) v[(*n)++] = a->gate_val[s][k];
        return s;
    }
    return -1;
}

/* learns:B: A's gate figure (in-distribution exact match) against B's over all their seeds, Welch */
static int judge_learns(const Claim *cl, const Compare *c, const Agg *a, StrBuf *why) {
    if (!c->task) {
        sb_printf(why, "learns: needs a task protocol (the gate figure is exact match)");
        return CLAIM_INCONCLUSIVE;
    }
    double va[CMP_MAX_SEEDS], vb[CMP_MAX_SEEDS];
    int na = 0, nb = 0;
    const char *missing = gate_figures(c, a, cl->a, va, &na) < 0 ? cl->a : gate_figures(c, a, cl->b, vb, &nb) < 0 ? cl->b : NULL;
    if (missing) {
        sb_printf(why, "scheme %s was not trained here (learns: compares schemes as trained; add it to --schemes)", missing);
        return CLAIM_INCONCLUSIVE;
    }
    for (int i = 0; i < 2; i++) {
        const double *v = i ? vb : va;
        int n = i ? nb : na;
        sb_printf(why, "%s%s in distribution:", i ? "; " : "", i ? cl->b : cl->a);
        for (int k = 0; k < n; k++) sb_printf(why, "%s%.1f", k ? ", " : " ", 100 * v[k]);
        if (!n) sb_puts(why, " no run");
        sb_printf(why, " %% exact match (%d seed%s)", n, n == 1 ? "" : "s");
    }
    if (na < 2 || nb < 2) {
        sb_puts(why, "; too few seeds for a test (2 each needed)");
        return CLAIM_INCONCLUSIVE;
    }
    StatTest t = stats_welch(va, na, vb, nb);
    sb_printf(why, "; %s higher by %+.3g points [95%% %.3g, %.3g], Welch t, p %.2g", cl->a, 100 * t.diff, 100 * t.ci_lo,
              100 * t.ci_hi, t.p);
    if (t.p < c->alpha) return t.diff > 0 ? CLAIM_REPRODUCED : CLAIM_CONTRADICTED;
    sb_printf(why, " (>= %g: no difference shown)", c->alpha);
    return CLAIM_INCONCLUSIVE;
}

int suite_claim_judge(const Claim *cl, const Compare *c, const Agg *a, double ref, StrBuf *why) {
    if (cl->untestable[0]) {
        sb_puts(why, cl->untestable);
        return CLAIM_UNTESTABLE;
    }
    if (!c || !a) {
        sb_printf(why, "protocol %s did not run (suite --protocols)", cl->protocol);
        return CLAIM_INCONCLUSIVE;
    }
    if (cl->at_is_mult == (c->task != NULL)) {
        sb_printf(why, "length %g%s: protocol %s takes %s", cl->at, cl->at_is_mult ? "L" : "", cl->protocol,
                  c->task ? "task lengths (\"12\")" : "multiples of L (\"4L\")");
        return CLAIM_INCONCLUSIVE;
    }
    int l = report_length_index(c, claim_length(c, cl->at, cl->at_is_mult));
    if (l < 0) {
        sb_printf(why, "length %g%s is not among the protocol's lengths", cl->at, cl->at_is_mult ? "L" : "");
        return CLAIM_INCONCLUSIVE;
    }
    if (cl->relation == CLAIM_LEARNS) return judge_learns(cl, c, a, why);
    int ia = series_index(a, cl->a);
    if (ia < 0) {
        sb_printf(why, "series %s was not run here (add its scheme to --schemes)", cl->a);
        return CLAIM_INCONCLUSIVE;
    }
    Metric m[4];
    report_metrics(c, a, m);
    if (cl->relation == CLAIM_BETTER) return judge_better(cl, c, a, &m[0], l, ia, why);
    return judge_trend(cl, c, a, &m[0], l, ia, ref, why);
}
