/* suite_report.c: the standard suite's report, DIR/suite.md and DIR/claims.csv (suite_report.h). */
#include "suite_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/stats.h"
#include "../core/strbuf.h"
#include "../io/results.h"
#include "gnuplot.h"
#include "report_agg.h"
#include "suite_claims.h"
#include "verdict.h"

/* the rank of scheme s (as trained) among the schemes at length len of the protocol's primary
 * metric, ties shared; 0 when it has no value there */
static void matrix_ranks(const SuiteResult *r, int len, int *rank) {
    const Compare *c = r->c;
    const Agg *a = r->a;
    static double vals[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];
    int seeds[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];
    VerdictSeries vs[CMP_MAX_SCHEMES];
    for (int s = 0; s < c->n_schemes; s++) rank[s] = 0;
    int l = report_length_index(c, len);
    if (l < 0) return;
    int higher_better = c->task != NULL, p = c->task ? TASK_EXACT : EVAL_NONOVERLAP;
    for (int s = 0; s < c->n_schemes; s++) {
        const Series *se = report_series(a, s, "none");
        int n = se ? report_values(a, se, p, l, vals[s], seeds[s]) : 0;
        vs[s] = (VerdictSeries){c->scheme[s], s, n, vals[s], seeds[s]};
    }
    Verdict v;
    verdict_compute(vs, c->n_schemes, higher_better, c->alpha, &v);
    for (int i = 0; i < v.n; i++) rank[v.order[i]] = v.rank[i];
    verdict_free(&v);
}

/* a protocol's length of the summary: a task length, or a multiple of L in tokens */
static int summary_len(const SuiteResult *r, double x) {
    return r->p->task ? (int)x : (int)lround(x * r->p->train_len);
}

/* 1: the protocol ranks the run's schemes (a column of the summary matrix) */
static int in_matrix(const SuiteResult *r) { return r->c && !r->p->schemes; }

static void write_matrix(FILE *f, const SuiteResult *res, int n) {
    fprintf(f, "## Summary: rank by protocol\n\nEach cell: the scheme's rank in distribution / past the trained "
               "length (lengths in the header), on the protocol's primary figure (loss, non-overlapping windows; "
               "exact match for tasks), among the schemes as trained; schemes whose difference is not significant "
               "(Welch over seeds, Holm-adjusted over the pairs of that length) share a rank; — : no run passed "
               "the gate or the length is not computable; blank: not trained in that protocol.\n\n| scheme |");
    for (int i = 0; i < n; i++)
        if (in_matrix(&res[i])) fprintf(f, " %s (%g / %g%s) |", res[i].p->name, res[i].p->ref, res[i].p->past, res[i].p->task ? "" : "L");
    fprintf(f, "\n|---|");
    for (int i = 0; i < n; i++)
        if (in_matrix(&res[i])) fprintf(f, "---|");
    fprintf(f, "\n");
    static int rin[64][CMP_MAX_SCHEMES], rout[64][CMP_MAX_SCHEMES];
    const char *rows[64 * CMP_MAX_SCHEMES]; /* every ranked scheme once, in the order first met */
    int n_rows = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (!in_matrix(&res[i])) continue;
        matrix_ranks(&res[i], summary_len(&res[i], res[i].p->ref), rin[i]);
        matrix_ranks(&res[i], summary_len(&res[i], res[i].p->past), rout[i]);
        for (int s = 0; s < res[i].c->n_schemes; s++) {
            int seen = 0;
            for (int r = 0; r < n_rows && !seen; r++) seen = strcmp(rows[r], res[i].c->scheme[s]) == 0;
            if (!seen) rows[n_rows++] = res[i].c->scheme[s];
        }
    }
    for (int r = 0; r < n_rows; r++) {
        fprintf(f, "| %s |", rows[r]);
        for (int i = 0; i < n && i < 64; i++) {
            if (!in_matrix(&res[i])) continue;
            int s = 0;
            while (s < res[i].c->n_schemes && strcmp(res[i].c->scheme[s], rows[r]) != 0) s++;
            char a[16] = "—", b[16] = "—";
            if (s == res[i].c->n_schemes) a[0] = b[0] = 0; /* not trained here */
            else if (rin[i][s]) snprintf(a, sizeof a, "%d", rin[i][s]);
            if (s < res[i].c->n_schemes && rout[i][s]) snprintf(b, sizeof b, "%d", rout[i][s]);
            fprintf(f, s == res[i].c->n_schemes ? "  |" : " %s / %s |", a, b);
        }
        fprintf(f, "\n");
    }
    if (!n_rows) fprintf(f, "| (no ranking protocol ran) |\n");
}

const SuiteResult *suite_claim_result(const Claim *c, const SuiteResult *res, int n) {
    for (int j = 0; j < n; j++)
        if (strcmp(res[j].p->name, c->protocol) == 0 && res[j].c) return &res[j];
    return NULL;
}

/* the sentence of claim c's figures, at the look behind its outcome under its plan pl, into why */
static void claim_why(const Claim *c, const ClaimTrack *t, const SeqPlan *pl, const SuiteSeq *seq, int setting,
                      const SuiteResult *res, int n, StrBuf *why) {
    const SuiteProtocol *sp = c->untestable[0] ? NULL : suite_protocol(c->protocol);
    const SuiteResult *r = suite_claim_result(c, res, n);
    if (!r && sp && sp->not_quick && setting == SUITE_QUICK) {
        sb_printf(why, "protocol %s is not in quick (%s); `suite full`, or `--protocols %s`", sp->name, sp->not_quick,
                  sp->name);
        return;
    }
    const ClaimStat *st = claim_track_stat(t);
    int k = st ? t->look[st - t->st] : -1; /* the plan's look behind st */
    ClaimStat again;
    suite_claim_stat(c, r ? r->c : NULL, r ? r->a : NULL, r ? r->g : NULL, r ? r->p->ref : 0, k >= 0 ? pl->seeds[k] : 0, &again, why);
    if (!t->in_family) return;
    if (t->look_diff < 0) {
        sb_puts(why, "; no test: it counts in the family with p = 1");
        return;
    }
    sb_printf(why, "; sequential p %.2g (look %d of %d, at %d seeds), Holm p %.2g", t->seq_diff,
              t->look[t->look_diff] + 1, pl->n_looks, pl->seeds[t->look[t->look_diff]], t->holm_diff);
    if (st && st->margin > 0) sb_printf(why, "; equivalence within ±%g: Holm p %.2g", st->margin, t->holm_eq);
    if (t->outcome == CLAIM_INCONCLUSIVE && st) {
        /* a last look at the family's strictest Holm level, with its share of alpha */
        double level = pl->alpha / (seq->n_family > 0 ? seq->n_family : 1) * pl->spend[pl->n_looks - 1];
        int need = claim_seeds_needed(t, level), have = st->n_a < st->n_b ? st->n_a : st->n_b;
        if (need >= 100000)
            sb_puts(why, "; the observed effect is too small against its spread for any practical number of seeds");
        else if (need > have)
            sb_printf(why, "; with the observed effect and spread, about %d seeds per series would decide it (80%% power "
                           "at level %.2g: the family's strictest Holm step times the last look's share)", need, level);
    }
}

/* the claims' verdicts into the report and DIR/claims.csv; counts[outcome]. -1 with pelab_errmsg */
static int write_claims(FILE *f, const char *dir, int setting, const SuiteCorpus *corpus, const ClaimList *cl,
                         const ClaimTrack *tracks, const SuiteSeq *seq, const SuiteResult *res, int n, int *counts) {
    char path[1200];
    snprintf(path, sizeof path, "%s/claims.csv", dir);
    MemFile mf; /* claims.csv is written whole: a kill or a full disk leaves the old one */
    FILE *csv = memfile_open(&mf);
    if (!csv) return pelab_fail("suite: %s", pelab_errmsg);
    fprintf(csv, "id,paper,protocol,at,series,relation,outcome,seeds,looks,effect,ci_lo,ci_hi,test,p_seq,p_holm,p_eq_holm,figures,"
                 "data\n");
    fprintf(f, "\n## Published claims\n\nEach claim is one hypothesis registered before any run (docs/claims.txt), "
               "tested in its stated direction: significant that way is **reproduced**, significant the other way "
               "**contradicted**, a difference shown to lie within the claim's margin (two one-sided tests) **no "
               "effect**, both series at the same bound of an accuracy in every seed **floor**. The family is the %d "
               "testable claims of the protocols that ran: Holm's step-down over the claims keeps the chance of any "
               "false reproduced or contradicted at or below %g, and the same for no effect. Seeds come in looks (%s "
               "per series; a claim's own looks, fixed in claims.txt before any run, where its test says), added only "
               "to the claims still undecided, up to each one's last look; each of a claim's looks spends the share "
               "of alpha of the seeds it adds, and a claim's sequential p value is the smallest p / share over its looks, so "
               "looking again costs no error rate (lab/claim_family.h; its simulation: docs/CLAIMS.md). Losses "
               "are tested by Welch's or the paired t, task accuracies by exact randomization tests.\n\n",
            seq->n_family, seq->plan.alpha, seq->looks);
    fprintf(f, "Looks run: %d of %d; %s%s%s.\n\n", seq->looks_done, seq->n_levels, seq->stop ? seq->stop : "",
            seq->skipped[0] ? "; within the time budget (--budget), " : "", seq->skipped);
    fprintf(f, "| claim | paper | statement | test | data | verdict | figures |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < cl->n; i++) {
        const Claim *c = &cl->c[i];
        const ClaimTrack *t = &tracks[i];
        const SeqPlan *pl = &seq->plans[i];
        StrBuf why = {0};
        claim_why(c, t, pl, seq, setting, res, n, &why);
        int o = t->outcome;
        counts[o]++;
        char rel[200] = "-", test[400] = "—", looks[64] = "";
        if (!c->untestable[0]) {
            claim_relation_str(c, rel, sizeof rel);
            claim_looks_str(pl->seeds, pl->n_looks, looks, sizeof looks);
            int own = !seq_plan_same_looks(pl, &seq->plan); /* its LOOKS, where they are not the setting's */
            snprintf(test, sizeof test, "%s at %g%s: %s %s%s%s", c->protocol, c->at, c->at_is_mult ? "L" : "", c->a, rel,
                     own ? "; its own looks " : "", own ? looks : "");
        }
        const SuiteProtocol *sp = c->untestable[0] ? NULL : suite_protocol(c->protocol);
        const char *data = !sp ? "—" : sp->task ? "synthetic task examples" : corpus->label;
        fprintf(f, "| %s | %s | %s | %s | %s | **%s** | %s |\n", c->id, c->paper, c->statement, test, data,
                claim_outcome_names[o], sb_str(&why));
        results_csv_field(csv, c->id, ','), results_csv_field(csv, c->paper, ','), results_csv_field(csv, c->protocol, ',');
        if (c->untestable[0]) fprintf(csv, "-,");
        else fprintf(csv, "%g%s,", c->at, c->at_is_mult ? "L" : "");
        results_csv_field(csv, c->a, ','), results_csv_field(csv, rel, ','), results_csv_field(csv, claim_outcome_names[o], ',');
        const ClaimStat *st = claim_track_stat(t);
        fprintf(csv, "%d,", st ? st->n_a : 0);
        results_csv_field(csv, looks, ',');
        if (st && st->status == CSTAT_TEST) {
            double q = st->se > 0 ? stats_t_quantile(0.975, st->df) : 0;
            fprintf(csv, "%.6g,%.6g,%.6g,%s,%.4g,%.4g,%.4g,", st->effect, st->effect - q * st->se,
                    st->effect + q * st->se,
                    st->method == CTEST_PERMUTE ? "randomization" : st->method == CTEST_SIGNFLIP ? "sign-flip"
                    : st->paired ? "paired-t" : "welch",
                    t->seq_diff, t->holm_diff, t->holm_eq);
        } else {
            fprintf(csv, ",,,,,,,");
        }
        results_csv_field(csv, sb_str(&why), ',');
        results_csv_field(csv, sp ? data : "", '\n');
        sb_free(&why);
    }
    return memfile_commit(&mf, path) != 0 ? pelab_fail("suite: %s", pelab_errmsg) : 0;
}

/* the "## Verdict" section of a protocol's report.md, copied under a smaller heading */
static void copy_verdict_section(FILE *f, const char *dir, const char *proto) {
    char path[1200], line[4096];
    snprintf(path, sizeof path, "%s/%s/report.md", dir, proto);
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(f, "(no report: %s)\n", path);
        return;
    }
    int on = 0;
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "## ", 3) == 0) {
            if (on) break;
            on = strncmp(line, "## Verdict", 10) == 0;
            continue;
        }
        if (!on) continue;
        if (strncmp(line, "### ", 4) == 0) fputc('#', f); /* one level down */
        fputs(line, f);
    }
    fclose(in);
}

int suite_write_report(const char *dir, const SuiteRun *run, const char *cmdline, const SuiteCorpus *corpus,
                       const ClaimList *cl, const ClaimTrack *tracks, const SuiteSeq *seq, const SuiteResult *res, int n,
                       int *counts) {
    char path[1200];
    snprintf(path, sizeof path, "%s/suite.md", dir);
    MemFile mf; /* suite.md is written whole, after claims.csv */
    FILE *f = memfile_open(&mf);
    if (!f) return pelab_fail("suite: %s", pelab_errmsg);
    StrBuf lm = {0}; /* the protocols that read the corpus: those without a task */
    for (int i = 0; i < suite_n_protocols; i++)
        if (!suite_protocols[i].task) sb_printf(&lm, "%s%s", lm.len ? ", " : "", suite_protocols[i].name);
    char levels[160];
    claim_looks_str(seq->levels, seq->n_levels, levels, sizeof levels);
    fprintf(f, "# pelab suite %s (suite version %d)\n\n`%s`\n\nSchemes: %s. Seeds: looks at %s per series, "
               "%d run%s. Corpus of the language-modelling protocols (%s): %s.\n\n",
            suite_setting_names[run->setting], SUITE_VERSION, cmdline, run->schemes, levels, seq->looks_done,
            seq->looks_done == 1 ? "" : "s", sb_str(&lm), corpus->what);
    sb_free(&lm);
    if (!gp_available())
        fprintf(f, "> **No plots drawn**: %s. Each protocol's report (PROTOCOL/report.md) keeps its plot data and "
                   "scripts; to get the pictures, %s, then the same suite command with `--collect`, which trains "
                   "nothing.\n\n", gp_missing(), GP_INSTALL_HINT);
    write_matrix(f, res, n);
    if (write_claims(f, dir, run->setting, corpus, cl, tracks, seq, res, n, counts) != 0) {
        memfile_discard(&mf);
        return -1;
    }
    fprintf(f, "\n## Protocols\n");
    for (int i = 0; i < suite_n_protocols && run->setting == SUITE_QUICK; i++) {
        int ran = 0;
        for (int j = 0; j < n; j++) ran |= res[j].p == &suite_protocols[i];
        if (!ran && suite_protocols[i].not_quick)
            fprintf(f, "\nNot in quick: %s (%s).\n", suite_protocols[i].name, suite_protocols[i].not_quick);
    }
    for (int i = 0; i < n; i++) {
        if (!res[i].c) continue;
        fprintf(f, "\n### %s\n\n%s; L = %d, %ld steps, batch %d, dim 64, %d layers, 4 heads; up to %d seeds per "
                   "series. Full report: %s/report.md%s\n\n", res[i].p->name, res[i].p->what, res[i].p->train_len,
                res[i].c->base.steps, res[i].p->batch, suite_layers(res[i].p), res[i].seeds, res[i].p->name,
                res[i].seconds > 0 ? "" : " (read back, nothing trained here)");
        if (res[i].seconds > 0) fprintf(f, "Wall time of this protocol: %.0f s.\n\n", res[i].seconds);
        if (!res[i].p->task) fprintf(f, "Data: %s.\n\n", corpus->what);
        if (!res[i].p->task && res[i].p->budget_why)
            fprintf(f, "Training: a fixed budget of %ld steps, not the convergence rule: %s.\n\n", res[i].c->base.steps,
                    res[i].p->budget_why);
        else if (res[i].p->task)
            fprintf(f, "Training: a fixed budget of %ld steps, not the convergence rule: a task's loss sits on a plateau "
                       "before the model learns it, which the rule would take for convergence (EXPERIMENTS.md 14.1). "
                       "A run flagged *still improving* below reached the budget with its loss still falling; the "
                       "verdicts stand on the runs that learned the task (the gate), whose loss is near 0 by then.\n\n",
                    res[i].c->base.steps);
        copy_verdict_section(f, dir, res[i].p->name);
    }
    return memfile_commit(&mf, path) != 0 ? pelab_fail("suite: %s", pelab_errmsg) : 0;
}
