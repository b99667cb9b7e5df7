/* suite.c: `pelab suite [quick|full]`: the standard suite. Every protocol of the versioned table
 * (suite_plan.h) is one `pelab compare` in DIR/PROTOCOL (resumable; --jobs writes its per-run
 * commands; --collect only reads), then one report, DIR/suite.md: a summary matrix (scheme x
 * protocol, rank with ties, in distribution / past L), each published claim of docs/claims.txt
 * with its verdict (suite_claims.h), and per protocol its verdict section. DIR/claims.csv holds
 * the claims' outcomes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/stats.h"
#include "../core/files.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../data/corpus.h"
#include "../io/claims.h"
#include "../io/results.h"
#include "../train/progress.h"
#include "args.h"
#include "commands.h"
#include "compare.h"
#include "gnuplot.h"
#include "report.h"
#include "report_agg.h"
#include "claim_family.h"
#include "claim_sim.h"
#include "jobs.h"
#include "suite_claims.h"
#include "suite_plan.h"
#include "verdict.h"

/* training tokens per second of one thread at the suite's size (dim 64, 2 layers, seeds side by
 * side), and evaluation's share on top: the expected time printed before a run (EXPERIMENTS.md
 * section 14 has the measured figures) */
#define SUITE_TOKENS_PER_S 60000.0
#define SUITE_EVAL_FACTOR 1.6

typedef struct {
    const SuiteProtocol *p;
    Compare *c; /* NULL: not run */
    Agg *a;
    GenAgg *g;      /* the gen, jump and keyppl figures (keygap claims) */
    double seconds; /* training and evaluation here, every look */
    int models;     /* runs trained here */
    int seeds;      /* the seeds per series of the latest look read back */
} SuiteResult;

enum { LOOK_TRAIN, LOOK_COLLECT, LOOK_JOBS };

/* the corpus of the language-modelling protocols and how the report names it */
typedef struct {
    const char *path;  /* --data's spec, or the shipped corpus found */
    char buf[1200];
    char label[160];   /* short, for the claims' table and claims.csv: "tinyshakespeare (shipped)" */
    char what[400];    /* the report's headline sentence */
} SuiteCorpus;

/* --data, else the shipped tinyshakespeare (data/corpora/ in the working directory, beside the
 * binary, or one folder up: build-san/pelab). Never another corpus in silence: none found is an
 * error, and a file is read and checked (a shipped one against its SHA-256) before anything trains. */
static void find_corpus(const char *given, SuiteCorpus *sc) {
    const ShippedCorpus *def = &shipped_corpora[0];
    sc->path = given;
    if (!given) {
        char *exe = self_exe_path();
        int len = exe && strrchr(exe, '/') ? (int)(strrchr(exe, '/') - exe) : -1;
        snprintf(sc->buf, sizeof sc->buf, "%s/%s", CORPUS_DIR, def->file);
        if (access(sc->buf, R_OK) == 0) sc->path = sc->buf;
        for (int up = 0; up < 2 && len >= 0 && !sc->path; up++) {
            snprintf(sc->buf, sizeof sc->buf, "%.*s%s/%s/%s", len, exe, up ? "/.." : "", CORPUS_DIR, def->file);
            if (access(sc->buf, R_OK) == 0) sc->path = sc->buf;
        }
        free(exe);
        if (!sc->path)
            pelab_die("suite: the shipped corpus %s/%s is not in the working directory or beside the binary; give "
                      "--data FILE (a text file, or synth:stories)", CORPUS_DIR, def->file);
    }
    const ShippedCorpus *shipped = corpus_shipped(sc->path);
    if (strncmp(sc->path, "synth:", 6) != 0 && strncmp(sc->path, "task:", 5) != 0) {
        unsigned char *bytes;
        size_t n;
        if (corpus_read_file(sc->path, &bytes, &n) != 0) pelab_die("suite: --data: %s", pelab_errmsg);
        free(bytes);
    }
    const char *base = strrchr(sc->path, '/') ? strrchr(sc->path, '/') + 1 : sc->path;
    if (shipped) {
        snprintf(sc->label, sizeof sc->label, "%s (shipped)", shipped->name);
        snprintf(sc->what, sizeof sc->what, "`%s`: %s, shipped in %s (%zu bytes, SHA-256 %.16s... checked)%s",
                 sc->path, shipped->name, CORPUS_DIR, shipped->bytes, shipped->sha256, given ? ", by --data" : "");
    } else {
        snprintf(sc->label, sizeof sc->label, "%s (--data)", base);
        snprintf(sc->what, sizeof sc->what, "`%s`, by --data (**not the shipped %s: loss figures are not comparable "
                 "with docs/CLAIMS.md's**)", sc->path, def->name);
    }
}

/* --claims, else docs/claims.txt beside the binary (or one folder up: build-san/pelab) */
static const char *find_claims(const char *given, char *buf, size_t n) {
    if (given) return given;
    char *exe = self_exe_path();
    int len = exe && strrchr(exe, '/') ? (int)(strrchr(exe, '/') - exe) : -1;
    const char *found = NULL;
    for (int up = 0; up < 2 && len >= 0 && !found; up++) {
        snprintf(buf, n, "%.*s%s/docs/claims.txt", len, exe, up ? "/.." : "");
        if (access(buf, R_OK) == 0) found = buf;
    }
    free(exe);
    if (!found) pelab_die("suite: docs/claims.txt not found beside the binary; give --claims FILE");
    return found;
}

/* seconds one protocol is expected to take on `threads` threads */
static double expected_seconds(const SuiteProtocol *p, const SuiteRun *r, int n_schemes) {
    double steps = r->steps > 0 ? r->steps : p->steps[r->setting];
    double seeds = r->seeds > 0 ? r->seeds : suite_seeds[r->setting];
    double tokens = n_schemes * seeds * steps * p->batch * p->train_len;
    return tokens / SUITE_TOKENS_PER_S * SUITE_EVAL_FACTOR / (r->threads > 0 ? r->threads : 1);
}

/* "a,b" from the baselines or --schemes, plus --with */
static void scheme_list(const char *schemes, const char *with, StrBuf *out) {
    sb_puts(out, schemes ? schemes : SUITE_BASELINES);
    if (with) sb_printf(out, ",%s", with);
}

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

/* --jobs: a protocol's per-run commands (a file of lines) appended to the suite's, counted */
static int append_lines(StrBuf *out, const char *path) {
    unsigned char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0) pelab_die("suite: %s", pelab_errmsg);
    sb_put(out, (const char *)buf, len);
    int n = 0;
    for (size_t i = 0; i < len; i++) n += buf[i] == '\n';
    free(buf);
    return n;
}

/* the schemes of protocol r that the claims still undecided read, flagged in want[CMP_MAX_SCHEMES] */
static void needed_mask(const SuiteResult *r, const ClaimList *cl, const ClaimTrack *tracks, int *want) {
    memset(want, 0, sizeof(int) * CMP_MAX_SCHEMES);
    if (!r->c) return;
    for (int i = 0; i < cl->n; i++) {
        if (!tracks[i].in_family || claim_decided(&tracks[i]) || strcmp(cl->c[i].protocol, r->p->name) != 0) continue;
        int s[2], k = suite_claim_schemes(&cl->c[i], r->c, r->a, s);
        for (int j = 0; j < k; j++) want[s[j]] = 1;
    }
}

/* ... as a --schemes list, into out */
static void needed_schemes(const SuiteResult *r, const ClaimList *cl, const ClaimTrack *tracks, StrBuf *out) {
    int want[CMP_MAX_SCHEMES];
    needed_mask(r, cl, tracks, want);
    for (int s = 0; r->c && s < r->c->n_schemes; s++)
        if (want[s]) sb_printf(out, "%s%s", out->len ? "," : "", r->c->scheme[s]);
}

/* runs of (c, a) among the flagged schemes with seed index < seeds that did not finish */
static int missing_runs(const Compare *c, const Agg *a, const int *want, int seeds) {
    int missing = 0;
    for (int s = 0; s < c->n_schemes; s++)
        for (int k = 0; want[s] && k < seeds && k < c->n_seeds; k++) missing += a->gate[s][k] == RUN_MISSING;
    return missing;
}

/* one protocol at one look: train the new seeds of `schemes` (NULL: every scheme), then read every
 * run back into r (the full scheme list at `seeds`); with --jobs, the commands of the look's runs
 * that the claims still undecided need and that have not finished, appended to jobs (their count
 * added to *n_jobs). Those runs' count (0: the look is complete; training always completes it). */
static int run_look(SuiteResult *r, const SuiteRun *run, int seeds, const char *schemes, int mode, StrBuf *jobs,
                    int *n_jobs, const ClaimList *cl, const ClaimTrack *tracks) {
    SuiteRun at = *run;
    at.seeds = seeds;
    StrBuf words = {0};
    char *cargv[96];
    Compare *c = calloc(1, sizeof *c);
    Agg *a = calloc(1, sizeof *a);
    GenAgg *g = calloc(1, sizeof *g);
    if (!c || !a || !g) pelab_die("suite: out of memory");
    double t0 = now_seconds();
    if (mode == LOOK_TRAIN) {
        at.only_schemes = schemes;
        int cargc = suite_compare_argv(r->p, &at, NULL, 0, &words, cargv, 96);
        if (cargc < 0) pelab_die("suite: %s: too many compare flags", r->p->name);
        compare_main(cargc, cargv, c);
        sb_free(&c->cmdline);
    }
    /* every run of the protocol read back at this look's seeds */
    at.only_schemes = NULL;
    const char *collect[1] = {"--collect"};
    int cargc = suite_compare_argv(r->p, &at, collect, 1, &words, cargv, 96);
    if (cargc < 0) pelab_die("suite: %s: too many compare flags", r->p->name);
    compare_main(cargc, cargv, c);
    if (compare_aggregate(c, a, g) != 0) pelab_die("suite: %s: %s", r->p->name, pelab_errmsg);
    if (mode == LOOK_TRAIN) {
        r->seconds += now_seconds() - t0;
        int before = r->c ? r->seeds : 0;
        for (int s = 0; s < c->n_schemes; s++)
            for (int k = before; k < seeds; k++) r->models += a->gate[s][k] != RUN_MISSING;
    }
    if (r->c) sb_free(&r->c->cmdline), free(r->c), free(r->a), free(r->g);
    r->c = c, r->a = a, r->g = g, r->seeds = seeds;
    int missing = 0;
    if (mode != LOOK_TRAIN) { /* the runs the undecided claims read */
        int want[CMP_MAX_SCHEMES];
        needed_mask(r, cl, tracks, want);
        missing = missing_runs(c, a, want, seeds);
    }
    if (mode == LOOK_JOBS && missing) {
        char jobs_path[1200];
        snprintf(jobs_path, sizeof jobs_path, "%s/%s.jobs", run->dir, r->p->name);
        at.only_schemes = schemes;
        const char *extra[2] = {"--jobs", jobs_path};
        cargc = suite_compare_argv(r->p, &at, extra, 2, &words, cargv, 96);
        if (cargc < 0) pelab_die("suite: %s: too many compare flags", r->p->name);
        Compare *jc = calloc(1, sizeof *jc);
        if (!jc) pelab_die("suite: out of memory");
        compare_main(cargc, cargv, jc);
        sb_free(&jc->cmdline), free(jc);
        *n_jobs += append_lines(jobs, jobs_path);
    }
    sb_free(&words);
    return missing;
}

/* the suite's sequential plan and where it stopped, for the report */
typedef struct {
    SeqPlan plan;
    int looks_done;     /* looks whose runs all finished and were judged */
    const char *stop;   /* why no further look ran: "every claim decided", "the seed cap", "the time budget ..." */
    char stop_buf[160];
    char skipped[600];  /* looks the budget ran only in part: "the look at 8 seeds left out mqar (4 min), ..." */
    int n_family;       /* claims in the family (Holm's m) */
    char looks[64];     /* "3, 5, 8" */
} SuiteSeq;

/* the budget at a look: the protocols whose new runs fit `left` seconds, cheapest first (a claim
 * may skip a look: it gives up that look's share of alpha, nothing more); need[i] emptied for the
 * others, which the report names. 0 when none fits: seq->stop says why. */
static int budget_look(const SuiteResult *res, int n, StrBuf *need, const double *expect, double left, int seeds,
                       SuiteSeq *seq) {
    int wants[64], keep[64];
    double total = 0;
    for (int i = 0; i < n; i++) wants[i] = need[i].len > 0, total += wants[i] ? expect[i] : 0;
    int kept = suite_budget_pick(expect, wants, n, left, keep);
    StrBuf out = {0};
    for (int i = 0; i < n; i++) {
        if (!wants[i] || keep[i]) continue;
        sb_printf(&out, "%s%s (%.0f min)", out.len ? ", " : "", res[i].p->name, expect[i] / 60);
        sb_free(&need[i]);
    }
    if (!kept) {
        snprintf(seq->stop_buf, sizeof seq->stop_buf, "the time budget stopped it before the look at %d seeds, "
                 "expected to take %.0f min more", seeds, total / 60);
        seq->stop = seq->stop_buf;
    } else if (out.len) {
        size_t at = strlen(seq->skipped);
        snprintf(seq->skipped + at, sizeof seq->skipped - at, "%sthe look at %d seeds left out %s", at ? "; " : "",
                 seeds, sb_str(&out));
        printf("suite: the budget leaves the look at %d seeds without %s\n", seeds, sb_str(&out));
    }
    sb_free(&out);
    return kept;
}

static const SuiteResult *claim_result(const Claim *c, const SuiteResult *res, int n) {
    for (int j = 0; j < n; j++)
        if (strcmp(res[j].p->name, c->protocol) == 0 && res[j].c) return &res[j];
    return NULL;
}

/* the sentence of claim i's figures, at the look behind its outcome, into why */
static void claim_why(const Claim *c, const ClaimTrack *t, const SuiteSeq *seq, int setting, const SuiteResult *res,
                      int n, StrBuf *why) {
    const SuiteProtocol *sp = c->untestable[0] ? NULL : suite_protocol(c->protocol);
    const SuiteResult *r = claim_result(c, res, n);
    if (!r && sp && sp->not_quick && setting == SUITE_QUICK) {
        sb_printf(why, "protocol %s is not in quick (%s); `suite full`, or `--protocols %s`", sp->name, sp->not_quick,
                  sp->name);
        return;
    }
    const ClaimStat *st = claim_track_stat(t);
    int k = st ? t->look[st - t->st] : -1; /* the plan's look behind st */
    ClaimStat again;
    suite_claim_stat(c, r ? r->c : NULL, r ? r->a : NULL, r ? r->g : NULL, r ? r->p->ref : 0, k >= 0 ? seq->plan.seeds[k] : 0, &again, why);
    if (!t->in_family) return;
    if (t->look_diff < 0) {
        sb_puts(why, "; no test: it counts in the family with p = 1");
        return;
    }
    sb_printf(why, "; sequential p %.2g (look %d of %d, at %d seeds), Holm p %.2g", t->seq_diff,
              t->look[t->look_diff] + 1, seq->plan.n_looks, seq->plan.seeds[t->look[t->look_diff]], t->holm_diff);
    if (st && st->margin > 0) sb_printf(why, "; equivalence within ±%g: Holm p %.2g", st->margin, t->holm_eq);
    if (t->outcome == CLAIM_INCONCLUSIVE && st) {
        /* a last look at the family's strictest Holm level, with its share of alpha */
        const SeqPlan *pl = &seq->plan;
        double level = pl->alpha / (seq->n_family > 0 ? seq->n_family : 1) * pl->spend[pl->n_looks - 1];
        int need = claim_seeds_needed(t, level), have = st->n_a < st->n_b ? st->n_a : st->n_b;
        if (need >= 100000)
            sb_puts(why, "; the observed effect is too small against its spread for any practical number of seeds");
        else if (need > have)
            sb_printf(why, "; with the observed effect and spread, about %d seeds per series would decide it (80%% power "
                           "at level %.2g: the family's strictest Holm step times the last look's share)", need, level);
    }
}

/* the claims' verdicts into the report and DIR/claims.csv; counts[outcome] */
static void write_claims(FILE *f, const char *dir, int setting, const SuiteCorpus *corpus, const ClaimList *cl,
                         const ClaimTrack *tracks, const SuiteSeq *seq, const SuiteResult *res, int n, int *counts) {
    char path[1200];
    snprintf(path, sizeof path, "%s/claims.csv", dir);
    FILE *csv = fopen(path, "w");
    if (!csv) pelab_die("suite: cannot open %s: %s", path, strerror(errno));
    fprintf(csv, "id,paper,protocol,at,series,relation,outcome,seeds,effect,ci_lo,ci_hi,test,p_seq,p_holm,p_eq_holm,figures,data\n");
    fprintf(f, "\n## Published claims\n\nEach claim is one hypothesis registered before any run (docs/claims.txt), "
               "tested in its stated direction: significant that way is **reproduced**, significant the other way "
               "**contradicted**, a difference shown to lie within the claim's margin (two one-sided tests) **no "
               "effect**, both series at the same bound of an accuracy in every seed **floor**. The family is the %d "
               "testable claims of the protocols that ran: Holm's step-down over the claims keeps the chance of any "
               "false reproduced or contradicted at or below %g, and the same for no effect. Seeds come in looks (%s "
               "per series), added only to the claims still undecided; each look spends the share of alpha of the "
               "seeds it adds, and a claim's sequential p value is the smallest p / share over its looks, so "
               "looking again costs no error rate (tools/claim_family.h; its simulation: docs/CLAIMS.md). Losses "
               "are tested by Welch's or the paired t, task accuracies by exact randomization tests.\n\n",
            seq->n_family, seq->plan.alpha, seq->looks);
    fprintf(f, "Looks run: %d of %d; %s%s%s.\n\n", seq->looks_done, seq->plan.n_looks, seq->stop ? seq->stop : "",
            seq->skipped[0] ? "; within the time budget (--budget), " : "", seq->skipped);
    fprintf(f, "| claim | paper | statement | test | data | verdict | figures |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < cl->n; i++) {
        const Claim *c = &cl->c[i];
        const ClaimTrack *t = &tracks[i];
        StrBuf why = {0};
        claim_why(c, t, seq, setting, res, n, &why);
        int o = t->outcome;
        counts[o]++;
        char rel[200] = "-", test[400] = "—";
        if (!c->untestable[0]) {
            claim_relation_str(c, rel, sizeof rel);
            snprintf(test, sizeof test, "%s at %g%s: %s %s", c->protocol, c->at, c->at_is_mult ? "L" : "", c->a, rel);
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
        if (st && st->status == CSTAT_TEST) {
            double q = st->se > 0 ? stats_t_quantile(0.975, st->df) : 0;
            fprintf(csv, "%d,%.6g,%.6g,%.6g,%s,%.4g,%.4g,%.4g,", st->n_a, st->effect, st->effect - q * st->se,
                    st->effect + q * st->se,
                    st->method == CTEST_PERMUTE ? "randomization" : st->method == CTEST_SIGNFLIP ? "sign-flip"
                    : st->paired ? "paired-t" : "welch",
                    t->seq_diff, t->holm_diff, t->holm_eq);
        } else {
            fprintf(csv, "%d,,,,,,,,", st ? st->n_a : 0);
        }
        results_csv_field(csv, sb_str(&why), ',');
        results_csv_field(csv, sp ? data : "", '\n');
        sb_free(&why);
    }
    if (fclose(csv) != 0) pelab_die("suite: cannot write %s: %s", path, strerror(errno));
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

static void write_report(const char *dir, const SuiteRun *run, const char *cmdline, const SuiteCorpus *corpus,
                         const ClaimList *cl, const ClaimTrack *tracks, const SuiteSeq *seq, const SuiteResult *res,
                         int n, int *counts) {
    char path[1200];
    snprintf(path, sizeof path, "%s/suite.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) pelab_die("suite: cannot open %s: %s", path, strerror(errno));
    StrBuf lm = {0}; /* the protocols that read the corpus: those without a task */
    for (int i = 0; i < suite_n_protocols; i++)
        if (!suite_protocols[i].task) sb_printf(&lm, "%s%s", lm.len ? ", " : "", suite_protocols[i].name);
    fprintf(f, "# pelab suite %s (suite version %d)\n\n`%s`\n\nSchemes: %s. Seeds: looks at %s per series, "
               "%d run%s. Corpus of the language-modelling protocols (%s): %s.\n\n",
            suite_setting_names[run->setting], SUITE_VERSION, cmdline, run->schemes, seq->looks, seq->looks_done,
            seq->looks_done == 1 ? "" : "s", sb_str(&lm), corpus->what);
    sb_free(&lm);
    if (!gp_available())
        fprintf(f, "> **No plots drawn**: %s. Each protocol's report (PROTOCOL/report.md) keeps its plot data and "
                   "scripts; to get the pictures, %s, then the same suite command with `--collect`, which trains "
                   "nothing.\n\n", gp_missing(), GP_INSTALL_HINT);
    write_matrix(f, res, n);
    write_claims(f, dir, run->setting, corpus, cl, tracks, seq, res, n, counts);
    fprintf(f, "\n## Protocols\n");
    for (int i = 0; i < suite_n_protocols && run->setting == SUITE_QUICK; i++) {
        int ran = 0;
        for (int j = 0; j < n; j++) ran |= res[j].p == &suite_protocols[i];
        if (!ran && suite_protocols[i].not_quick)
            fprintf(f, "\nNot in quick: %s (%s).\n", suite_protocols[i].name, suite_protocols[i].not_quick);
    }
    for (int i = 0; i < n; i++) {
        if (!res[i].c) continue;
        fprintf(f, "\n### %s\n\n%s; L = %d, %ld steps, batch %d, dim 64, 2 layers, 4 heads; up to %d seeds per "
                   "series. Full report: %s/report.md%s\n\n", res[i].p->name, res[i].p->what, res[i].p->train_len,
                res[i].c->base.steps, res[i].p->batch, res[i].seeds, res[i].p->name,
                res[i].seconds > 0 ? "" : " (read back, nothing trained here)");
        if (res[i].seconds > 0) fprintf(f, "Wall time of this protocol: %.0f s.\n\n", res[i].seconds);
        if (!res[i].p->task) fprintf(f, "Data: %s.\n\n", corpus->what);
        else
            fprintf(f, "Training: a fixed budget of %ld steps, not the convergence rule: a task's loss sits on a plateau "
                       "before the model learns it, which the rule would take for convergence (EXPERIMENTS.md 14.1). "
                       "A run flagged *still improving* below reached the budget with its loss still falling; the "
                       "verdicts stand on the runs that learned the task (the gate), whose loss is near 0 by then.\n\n",
                    res[i].c->base.steps);
        copy_verdict_section(f, dir, res[i].p->name);
    }
    if (fclose(f) != 0) pelab_die("suite: cannot write %s: %s", path, strerror(errno));
}

/* the protocols of --protocols "a,b" (NULL: all, less those quick leaves out), in the table's order,
 * into res; their count */
static int select_protocols(const char *list, int setting, SuiteResult *res) {
    int want[64] = {0};
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
        const SuiteProtocol *sp = suite_protocol(name);
        if (!sp) {
            StrBuf known = {0};
            for (int i = 0; i < suite_n_protocols; i++) sb_printf(&known, "%s%s", i ? ", " : "", suite_protocols[i].name);
            pelab_die("suite: --protocols: unknown protocol '%s' (known: %s)", name, sb_str(&known));
        }
        want[sp - suite_protocols] = 1;
    }
    int n = 0;
    for (int i = 0; i < suite_n_protocols; i++)
        if (list ? want[i] : setting != SUITE_QUICK || !suite_protocols[i].not_quick)
            res[n++] = (SuiteResult){.p = &suite_protocols[i]};
    return n;
}

static void free_results(SuiteResult *res, int n) {
    for (int i = 0; i < n; i++)
        if (res[i].c) sb_free(&res[i].c->cmdline), free(res[i].c), free(res[i].a), free(res[i].g), res[i].c = NULL;
}

/* --simulate N: every scenario of claim_sim.h, a markdown table on stdout */
static int simulate_suites(int suites, const int *looks, int n_looks, double alpha) {
    SeqPlan plan;
    if (seq_plan_make(&plan, looks, n_looks, alpha) != 0) pelab_die("suite: --looks: %s", pelab_errmsg);
    printf("Simulated suites of %d claims (shaped as docs/claims.txt's), looks at", CLAIM_SIM_CLAIMS);
    for (int k = 0; k < n_looks; k++) printf("%s %d", k ? "," : "", looks[k]);
    printf(" seeds per series, family alpha %g; %d suites per scenario.\n\n", alpha, suites);
    printf("| scenario | false verdicts (suites with any) | 95%% Wilson | false no effect | reproduced | contradicted "
           "| no effect | floor | inconclusive | seeds at the last look (mean) |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < claim_sim_n_scenarios; i++) {
        SimResult r;
        double t0 = now_seconds();
        if (claim_sim_run(&claim_sim_scenarios[i], &plan, suites, 1000 + i, &r) != 0) pelab_die("suite: %s", pelab_errmsg);
        double n = r.claims > 0 ? r.claims : 1;
        printf("| %s | %.2f%% (%d of %d) | %.2f%%–%.2f%% | %.2f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f |\n",
               claim_sim_scenarios[i].name, 100.0 * r.false_suites / r.suites, r.false_suites, r.suites,
               100 * r.wilson_lo, 100 * r.wilson_hi, 100.0 * r.false_no_effect_suites / r.suites,
               100 * r.outcome[CLAIM_REPRODUCED] / n, 100 * r.outcome[CLAIM_CONTRADICTED] / n,
               100 * r.outcome[CLAIM_NO_EFFECT] / n, 100 * r.outcome[CLAIM_FLOOR] / n,
               100 * r.outcome[CLAIM_INCONCLUSIVE] / n, r.seeds / n);
        fprintf(stderr, "suite: simulated %s in %.1f s\n", claim_sim_scenarios[i].name, now_seconds() - t0);
        fflush(stdout);
    }
    return 0;
}

int cmd_suite(int argc, char **argv) {
    SuiteRun run = {0};
    const char *schemes = NULL, *with = NULL, *protocols = NULL, *claims_path = NULL, *jobs = NULL, *data = NULL;
    const char *jobs_format = NULL;
    const char *pos[1] = {NULL};
    int n_pos = 0, collect = 0;
    const char *looks_text = NULL;
    int simulate = 0;
    float budget = -1;
    run.dir = NULL;
    const OptSpec opts[] = {
        {"--schemes", OPT_STR, &schemes, 0, 0, "schemes to run (default: the baselines " SUITE_BASELINES ")"},
        {"--with", OPT_STR, &with, 0, 0, "schemes added to the baselines (or to --schemes)"},
        {"--dir", OPT_OUT_DIR, &run.dir, 0, 0, "output directory: DIR/PROTOCOL per protocol, DIR/suite.md "
                                               "(default runs/suite-SETTING)"},
        {"--protocols", OPT_STR, &protocols, 0, 0, "only these protocols (default: all)"},
        {"--data", OPT_STR, &data, 0, 0, "corpus of the lm and sinks protocols (default: the shipped "
                                          CORPUS_DIR "/tinyshakespeare.txt)"},
        {"--claims", OPT_STR, &claims_path, 0, 0, "claims file (default: docs/claims.txt beside the binary)"},
        {"--seeds", OPT_INT, &run.seeds, 0, 16, "one look at this many seeds per series, no sequential looks (0: --looks)"},
        {"--looks", OPT_STR, &looks_text, 0, 0, "seeds per series at each look: every claim is judged at the first, "
                                                "seeds are added to the undecided ones at the next (default quick "
                                                SUITE_LOOKS_QUICK ", full " SUITE_LOOKS_FULL ")"},
        {"--budget", OPT_FLOAT, &budget, 0, 1e6, "minutes: a look after the first trains only the protocols whose new seeds "
                                                 "are expected (from their runs so far) to end within this, cheapest "
                                                 "first (default quick 30, full 0: none)"},
        {"--alpha", OPT_FLOAT, &run.alpha, 1e-6, 0.5, "the family's false-verdict rate (Holm over the claims; default 0.05)"},
        {"--steps", OPT_INT, &run.steps, 0, 1 << 30, "training steps of every protocol (0: each recipe's)"},
        {"--task-n", OPT_INT, &run.task_n, 0, 1 << 20, "examples per task length (0: compare's 100)"},
        {"--eval-tokens", OPT_INT, &run.eval_tokens, 0, 1 << 30, "held-out tokens per length of lm (0: quick 8192, "
                                                                  "full 32768)"},
        {"--jobs", OPT_OUT_FILE, &jobs, 0, 0, "write every protocol's per-run commands to this file instead of "
                                              "running; then run them and `pelab suite ... --collect`"},
        {"--jobs-format", OPT_STR, &jobs_format, 0, 0, "lines: one command per line (GNU parallel, xargs -P, sh); "
                                                       "slurm: an sbatch array script, task i runs line i (sbatch "
                                                       "--wait FILE)"},
        {"--collect", OPT_FLAG, &collect, 0, 0, "the report from the finished runs, no training"},
        {"--simulate", OPT_INT, &simulate, 0, 1 << 24, "no runs: N simulated suites per scenario through the verdict "
                                                       "rule (false-verdict rate and power, tools/claim_sim.h)"},
        OPT_THREADS_ROW(&run.threads),
    };
    args_parse("suite", "[quick|full] [--schemes a,b] [--with mine] [--dir DIR] [--jobs FILE | --collect] [flags]",
               argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos, 1, &n_pos);
    run.setting = SUITE_QUICK;
    if (n_pos && strcmp(pos[0], "full") == 0) run.setting = SUITE_FULL;
    else if (n_pos && strcmp(pos[0], "quick") != 0) pelab_die("suite: '%s': expected quick or full", pos[0]);
    static char dir_default[64];
    snprintf(dir_default, sizeof dir_default, "runs/suite-%s", suite_setting_names[run.setting]);
    if (!run.dir) run.dir = dir_default;
    if (strlen(run.dir) > 900) pelab_die("suite: --dir: at most 900 bytes");
    StrBuf list = {0};
    scheme_list(schemes, with, &list);
    run.schemes = sb_str(&list), run.baselines = schemes == NULL, run.with = with;
    static SuiteCorpus corpus;
    char claims_buf[1200];
    find_corpus(data, &corpus);
    run.data = corpus.path;
    ClaimList cl;
    if (claims_load(find_claims(claims_path, claims_buf, sizeof claims_buf), &cl) != 0) pelab_die("suite: %s", pelab_errmsg);

    /* the protocols to run, checked before anything trains */
    SuiteResult res[64];
    int n = select_protocols(protocols, run.setting, res);
    for (int i = 0; i < cl.n; i++)
        if (!cl.c[i].untestable[0] && !suite_protocol(cl.c[i].protocol))
            pelab_die("suite: claims line %d: protocol '%s' is not in suite version %d", cl.c[i].line, cl.c[i].protocol,
                      SUITE_VERSION);

    int looks[SEQ_MAX_LOOKS], n_looks = 1;
    if (run.seeds > 0) looks[0] = run.seeds;
    else if ((n_looks = seq_plan_parse(looks_text ? looks_text : run.setting == SUITE_QUICK ? SUITE_LOOKS_QUICK
                                                                                             : SUITE_LOOKS_FULL,
                                       looks, SEQ_MAX_LOOKS)) < 0)
        pelab_die("suite: --looks: %s", pelab_errmsg);
    if (budget < 0) budget = run.setting == SUITE_QUICK ? 30 : 0;
    int fmt = JOBS_LINES;
    if (jobs_format && !jobs) pelab_die("suite: --jobs-format %s: needs --jobs FILE", jobs_format);
    if (jobs_format && jobs_format_parse(jobs_format, &fmt) != 0) pelab_die("suite: %s", pelab_errmsg);
    if (simulate) {
        claims_free(&cl), sb_free(&list);
        return simulate_suites(simulate, looks, n_looks, run.alpha > 0 ? run.alpha : 0.05);
    }
    double total = 0;
    int models = 0, seeds = looks[0];
    run.seeds = seeds; /* the first look's, for the estimate */
    for (int i = 0; i < n; i++) {
        StrBuf ps = {0};
        suite_protocol_schemes(res[i].p, &run, &ps);
        total += expected_seconds(res[i].p, &run, suite_count_schemes(sb_str(&ps)));
        models += suite_count_schemes(sb_str(&ps)) * seeds;
        sb_free(&ps);
    }
    if (!jobs && !collect)
        printf("suite %s (version %d): %d protocols, %d models (%d seeds each) at the first look of %d; expected about "
               "%.0f min on %d thread%s (a quiet machine), then seeds for the claims still undecided%s\n",
               suite_setting_names[run.setting], SUITE_VERSION, n, models, seeds, n_looks, total / 60,
               run.threads > 0 ? run.threads : 1, run.threads > 1 ? "s" : "", budget > 0 ? " within --budget" : "");
    fflush(stdout);
    if (make_dirs(run.dir) != 0) pelab_die("suite: %s", pelab_errmsg);
    StrBuf job_lines = {0};
    int n_jobs = 0;

    SuiteSeq seq;
    memset(&seq, 0, sizeof seq);
    if (seq_plan_make(&seq.plan, looks, n_looks, run.alpha > 0 ? run.alpha : 0.05) != 0) pelab_die("suite: --looks: %s", pelab_errmsg);
    for (int k = 0; k < n_looks; k++)
        snprintf(seq.looks + strlen(seq.looks), sizeof seq.looks - strlen(seq.looks), "%s%d", k ? ", " : "", looks[k]);
    ClaimTrack *tracks = calloc(cl.n + 1, sizeof *tracks);
    if (!tracks) pelab_die("suite: out of memory");
    for (int i = 0; i < cl.n; i++) {
        int ran = 0;
        for (int j = 0; j < n; j++) ran |= strcmp(res[j].p->name, cl.c[i].protocol) == 0;
        claim_track_init(&tracks[i], !cl.c[i].untestable[0] && ran);
        if (cl.c[i].untestable[0]) tracks[i].outcome = CLAIM_UNTESTABLE;
        else if (!ran) tracks[i].outcome = CLAIM_NOT_RUN;
        seq.n_family += tracks[i].in_family;
    }
    int mode = jobs ? LOOK_JOBS : collect ? LOOK_COLLECT : LOOK_TRAIN;
    double t_start = now_seconds();
    seq.stop = "the last look ran";
    for (int k = 0; k < seq.plan.n_looks; k++) {
        int seeds_k = seq.plan.seeds[k], pending = 0;
        StrBuf need[64];
        memset(need, 0, sizeof need);
        int any_need = 0;
        double expect[64] = {0}; /* seconds protocol i's new runs should take, from its own runs so far */
        for (int i = 0; i < n; i++) {
            if (k == 0) continue;
            needed_schemes(&res[i], &cl, tracks, &need[i]);
            any_need |= need[i].len > 0;
            if (need[i].len && res[i].models > 0)
                expect[i] = res[i].seconds / res[i].models * suite_count_schemes(sb_str(&need[i])) *
                            (seeds_k - res[i].seeds);
        }
        if (k > 0 && !any_need) {
            seq.stop = "every claim was decided";
            for (int i = 0; i < n; i++) sb_free(&need[i]);
            break;
        }
        if (k > 0 && mode == LOOK_TRAIN && budget > 0 &&
            budget_look(res, n, need, expect, budget * 60 - (now_seconds() - t_start), seeds_k, &seq) == 0) {
            for (int i = 0; i < n; i++) sb_free(&need[i]);
            break;
        }
        /* this look's models and expected seconds per protocol, for its progress line */
        int look_models[64] = {0};
        double look_expect[64] = {0}, all_expect = 0, done_expect = 0;
        int all_models = 0, done_models = 0;
        for (int i = 0; i < n; i++) {
            if (k > 0 && !need[i].len) continue;
            SuiteRun at = run;
            at.seeds = seeds_k - (k ? res[i].seeds : 0); /* the seeds it adds (a budget may have skipped a look) */
            StrBuf ps = {0};
            if (k == 0) suite_protocol_schemes(res[i].p, &run, &ps);
            int schemes_i = suite_count_schemes(k ? sb_str(&need[i]) : sb_str(&ps));
            sb_free(&ps);
            look_models[i] = schemes_i * at.seeds;
            look_expect[i] = k && expect[i] > 0 ? expect[i] : expected_seconds(res[i].p, &at, schemes_i);
            all_models += look_models[i], all_expect += look_expect[i];
        }
        Progress look_progress;
        progress_count_init(&look_progress, stderr, isatty(fileno(stderr)), "suite", "models", 1, all_models, 0, 0);
        for (int i = 0; i < n; i++) {
            if (k > 0 && !need[i].len) continue;
            printf("suite: [look %d/%d, %d seeds; %d/%d] %s%s%s\n", k + 1, seq.plan.n_looks, seeds_k, i + 1, n,
                   res[i].p->name, k ? ": more seeds for " : "", k ? sb_str(&need[i]) : "");
            fflush(stdout);
            pending += run_look(&res[i], &run, seeds_k, k ? sb_str(&need[i]) : NULL, mode, &job_lines, &n_jobs, &cl, tracks);
            if (mode != LOOK_TRAIN) continue;
            done_models += look_models[i], done_expect += look_expect[i];
            char what[160];
            snprintf(what, sizeof what, "look %d/%d: %s done", k + 1, seq.plan.n_looks, res[i].p->name);
            progress_count(&look_progress, done_models, all_expect > 0 ? done_expect / all_expect : -1, 1, what);
        }
        int extended[64];
        for (int i = 0; i < n; i++) extended[i] = k == 0 || need[i].len > 0, sb_free(&need[i]);
        if (pending) { /* --jobs or --collect: this look's runs are not all there */
            snprintf(seq.stop_buf, sizeof seq.stop_buf, "the look at %d seeds waits for %d run%s (%s)", seeds_k, pending,
                     pending == 1 ? "" : "s", jobs ? "their commands are in the --jobs file" : "not finished");
            seq.stop = seq.stop_buf;
            break;
        }
        for (int i = 0; i < cl.n; i++) {
            if (!tracks[i].in_family || claim_decided(&tracks[i])) continue;
            const SuiteResult *r = claim_result(&cl.c[i], res, n);
            if (r && !extended[r - res]) continue; /* its protocol skipped this look (the budget) */
            ClaimStat st;
            StrBuf why = {0};
            suite_claim_stat(&cl.c[i], r ? r->c : NULL, r ? r->a : NULL, r ? r->g : NULL, r ? r->p->ref : 0, seeds_k, &st, &why);
            sb_free(&why);
            claim_track_look(&tracks[i], &seq.plan, k, &st);
        }
        claim_family_decide(tracks, cl.n, seq.plan.alpha);
        seq.looks_done = k + 1;
    }
    if (jobs) {
        if (jobs_write(jobs, fmt, "suite", sb_str(&job_lines), n_jobs, run.threads) != 0)
            pelab_die("suite: --jobs: %s", pelab_errmsg);
        StrBuf how = {0};
        jobs_how(&how, fmt, jobs);
        if (!n_jobs)
            printf("suite: every look's runs are finished (%s is empty); the report: the same suite command with "
                   "--collect\n", jobs);
        else
            printf("suite: wrote %d command%s of the next look's runs to %s; run them (%s), then the same suite command "
                   "with --jobs again (the look after, while a claim is undecided) until the file is empty, then with "
                   "--collect\n", n_jobs, n_jobs == 1 ? "" : "s", jobs, sb_str(&how));
        sb_free(&how), sb_free(&job_lines);
        free_results(res, n);
        claims_free(&cl), sb_free(&list), free(tracks);
        return 0;
    }
    sb_free(&job_lines);
    int counts[CLAIM_OUTCOMES] = {0};
    StrBuf cmdline = {0};
    sb_puts(&cmdline, "pelab");
    for (int i = 0; i < argc; i++) sb_printf(&cmdline, " %s", argv[i]);
    int any = 0;
    for (int i = 0; i < n; i++) any |= res[i].c != NULL;
    if (any) write_report(run.dir, &run, sb_str(&cmdline), &corpus, &cl, tracks, &seq, res, n, counts);
    printf("suite: claims: %d reproduced, %d contradicted, %d no effect, %d floor, %d inconclusive, %d untestable at "
           "this scale, %d not run (their protocols are outside this run) (looks: %d of %d; %s)\n",
           counts[CLAIM_REPRODUCED], counts[CLAIM_CONTRADICTED], counts[CLAIM_NO_EFFECT], counts[CLAIM_FLOOR],
           counts[CLAIM_INCONCLUSIVE], counts[CLAIM_UNTESTABLE], counts[CLAIM_NOT_RUN], seq.looks_done,
           seq.plan.n_looks, seq.stop);
    printf("suite: report in %s/suite.md, claims in %s/claims.csv\n", run.dir, run.dir);
    free_results(res, n);
    claims_free(&cl), sb_free(&list), sb_free(&cmdline), free(tracks);
    return 0;
}
