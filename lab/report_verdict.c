/* report_verdict.c: gates, convergence, rankings and verdicts of a compare report (report_verdict.h). */
#include "report_verdict.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/stats.h"
#include "../core/strbuf.h"
#include "../data/task.h"
#include "../io/results.h"
#include "../train/curve.h"
#include "gnuplot.h"
#include "verdict.h"

/* --- gates and curves --- */

void report_read_curve(const Compare *c, const char *csv, int converge, RunCurve *rc) {
    memset(rc, 0, sizeof *rc);
    rc->status = CONV_UNKNOWN;
    char path[1300];
    curve_path(csv, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f) return;
    enum { MAX_POINTS = 4096 };
    static long step[MAX_POINTS];
    static double val[MAX_POINTS], lr[MAX_POINTS];
    int n = 0;
    ResultReader rd;
    ResultRow row;
    if (results_reader_open(&rd, f, path) == 0) {
        /* a damaged curve ends the reading: the rows before it still judge convergence */
        while (n < MAX_POINTS && results_reader_next(&rd, &row) == 1)
            if (row.step != RES_NONE && !isnan(row.value2))
                step[n] = (long)row.step, val[n] = row.value2, lr[n] = row.lr, n++;
        results_reader_close(&rd);
    }
    pelab_errmsg[0] = 0;
    fclose(f);
    if (n < 1) return;
    rc->step_final = step[n - 1], rc->v_final = val[n - 1];
    if (converge) { /* the cooldown began after the last validation at the peak rate (lr_wsd) */
        double peak = 0;
        for (int i = 0; i < n; i++) peak = fmax(peak, lr[i]);
        int stable = n - 1;
        while (stable > 0 && !(lr[stable] >= peak * (1 - 1e-5))) stable--;
        n = stable + 1;
    }
    rc->step_end = step[n - 1], rc->v_end = val[n - 1];
    int early, rule = curve_judge(step, val, n, c->converge_frac, c->converge_abs, &early);
    if (rule == CURVE_UNKNOWN) return;
    rc->step_early = step[early], rc->v_early = val[early];
    rc->status = rule == CURVE_IMPROVING ? CONV_IMPROVING : CONV_DONE;
}

/* language modelling: the run's unigram bound (its gate row), NAN for a CSV written before it */
static double unigram_bound(const Agg *a, int s, int k) {
    return a->gate_rows[s][k] ? a->gate_sum[s][k] / a->gate_rows[s][k] : NAN;
}

void report_gates(const Compare *c, Agg *a) {
    int L = report_length_index(c, c->base.seq_len);
    for (int s = 0; s < c->n_schemes; s++) {
        const Series *none = report_series(a, s, "none");
        for (int k = 0; k < c->n_seeds; k++) {
            if (a->gate[s][k] == RUN_MISSING) continue;
            a->gate[s][k] = RUN_UNGATED, a->gate_val[s][k] = NAN;
            if (c->task) {
                if (!a->gate_rows[s][k]) continue; /* a CSV from before the gate */
                a->gate_val[s][k] = a->gate_sum[s][k] / a->gate_rows[s][k];
                a->gate[s][k] = a->gate_val[s][k] >= c->gate ? RUN_PASS : RUN_FAIL;
                continue;
            }
            if (!none || L < 0 || !none->has[EVAL_NONOVERLAP][L][k]) continue;
            /* diverged or learned nothing from context: a model that reads no context reaches the unigram
             * loss; a run a few percent worse than its siblings is data, not a failure */
            double v = none->val[EVAL_NONOVERLAP][L][k], unigram = unigram_bound(a, s, k);
            a->gate_val[s][k] = v;
            int fail = !isfinite(v) || (!isnan(unigram) && !(v < unigram)) || (c->gate_loss > 0 && v > c->gate_loss);
            a->gate[s][k] = fail ? RUN_FAIL : RUN_PASS;
        }
    }
}

/* --- the verdict tables --- */

/* what the verdict sentences are: every pair of series at one length is tested and adjusted
 * together, not a pre-registered claim (pelab suite's claims are those) */
#define VERDICT_LABEL "Verdicts, exploratory (all pairs at this length, Holm)"

int report_metrics(const Compare *c, const Agg *a, Metric *m) {
    int n = 0;
    if (c->task) {
        m[n++] = (Metric){TASK_EXACT, "exact match (%)", "points", 100, 1};
        m[n++] = (Metric){TASK_BYTES, "byte accuracy (%)", "points", 100, 1};
        if (a->has_recall) m[n++] = (Metric){TASK_RECALL, "RULER score (%)", "points", 100, 1};
        return n;
    }
    m[n++] = (Metric){EVAL_NONOVERLAP, "loss, non-overlapping windows (nats/token)", "nats", 1, 0};
    if (!c->nonoverlap_only) m[n++] = (Metric){EVAL_SLIDING, "loss, sliding windows (nats/token)", "nats", 1, 0};
    if (a->has_passkey) m[n++] = (Metric){EVAL_N_PROTOCOLS, "passkey accuracy (%)", "points", 100, 1};
    return n;
}

void report_verdict_at(const Agg *a, const Metric *m, int l, double alpha, LengthVerdict *lv) {
    for (int i = 0; i < a->n_series; i++) {
        const Series *s = &a->s[i];
        int n = report_values(a, s, m->p, l, lv->vals[i], lv->seeds[i]);
        lv->vs[i] = (VerdictSeries){s->label, s->scheme, n, lv->vals[i], lv->seeds[i]};
    }
    verdict_compute(lv->vs, a->n_series, m->higher_better, alpha, &lv->v);
}

void report_ranks_at(const Compare *c, const Agg *a, int l, int *rank) {
    static LengthVerdict lv; /* large: not on the stack */
    Metric m[4];
    report_metrics(c, a, m);
    report_verdict_at(a, &m[0], l, c->alpha, &lv);
    for (int i = 0; i < a->n_series; i++) rank[i] = 0;
    for (int j = 0; j < lv.v.n; j++) rank[lv.v.order[j]] = lv.v.rank[j];
    verdict_free(&lv.v);
}

static void length_name(const Compare *c, int l, char *buf, size_t n) {
    if (c->task) snprintf(buf, n, "task length %d", c->lens[l]);
    else snprintf(buf, n, "%gL (%d)", (double)c->lens[l] / c->base.seq_len, c->lens[l]);
}

static void fmt_value(const Metric *m, double v, char *buf, size_t n) {
    if (m->scale == 1) snprintf(buf, n, "%.4f", v);
    else snprintf(buf, n, "%.1f", v * m->scale);
}

static void pairs_csv(FILE *f, const Compare *c, const Metric *m, int l, const Verdict *v, const VerdictSeries *vs) {
    for (int k = 0; k < v->n_pairs; k++) {
        const VerdictPair *p = &v->pairs[k];
        int ra = 0, rb = 0;
        for (int i = 0; i < v->n; i++) {
            if (v->order[i] == p->a) ra = v->rank[i];
            if (v->order[i] == p->b) rb = v->rank[i];
        }
        ResultRow w = result_row();
        w.protocol = c->task ? (m->p == TASK_EXACT ? "exact" : m->p == TASK_RECALL ? "recall" : "bytes")
                   : m->p == EVAL_N_PROTOCOLS ? "passkey" : eval_protocol_names[m->p];
        w.length = c->lens[l], w.scheme = vs[p->a].label, w.scheme_b = vs[p->b].label;
        w.test = p->paired ? "paired-t" : "welch", w.n = p->na, w.n_b = p->nb;
        w.value = v->mean[p->a], w.value2 = v->mean[p->b], w.diff = p->t.diff;
        w.ci_lo = p->t.ci_lo, w.ci_hi = p->t.ci_hi, w.p = p->t.p, w.p_holm = p->p_holm, w.rank = ra, w.rank_b = rb;
        results_csv_row(f, &RES_VERDICT_CSV, &w);
    }
}

/* one metric: the ranking table (series x lengths, "rank: mean"), the sentences, the paired rules */
static void metric_section(FILE *f, FILE *csv, const Compare *c, const Agg *a, const Metric *m, int primary) {
    static LengthVerdict lv[CMP_MAX_LENGTHS]; /* large: not on the stack */
    for (int l = 0; l < c->n_lengths; l++) {
        report_verdict_at(a, m, l, c->alpha, &lv[l]);
        pairs_csv(csv, c, m, l, &lv[l].v, lv[l].vs);
    }
    fprintf(f, "\n### %s%s\n\n%s:\n\n", primary ? "" : "Also: ", m->name, VERDICT_LABEL);
    for (int l = 0; l < c->n_lengths; l++) {
        char name[64];
        length_name(c, l, name, sizeof name);
        char where[80];
        snprintf(where, sizeof where, "At %s", name);
        StrBuf sb = {0};
        verdict_sentence(&lv[l].v, lv[l].vs, where, m->unit, m->scale, &sb);
        fprintf(f, "- %s\n", sb_str(&sb));
        sb_free(&sb);
    }
    fprintf(f, "\n| series |");
    for (int l = 0; l < c->n_lengths; l++) {
        char name[48];
        length_name(c, l, name, sizeof name);
        fprintf(f, " %s |", name);
    }
    fprintf(f, "\n|---|");
    for (int l = 0; l < c->n_lengths; l++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int i = 0; i < a->n_series; i++) {
        fprintf(f, "| %s |", a->s[i].label);
        for (int l = 0; l < c->n_lengths; l++) {
            int r = 0;
            for (int j = 0; j < lv[l].v.n; j++)
                if (lv[l].v.order[j] == i) r = lv[l].v.rank[j];
            char val[32];
            fmt_value(m, lv[l].v.mean[i], val, sizeof val);
            if (!r) fprintf(f, " — |");
            else if (r == 1) fprintf(f, " **1**: %s |", val);
            else fprintf(f, " %d: %s |", r, val);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\nRank: mean over the seeds that passed the gate; series that do not differ significantly "
               "(Holm-adjusted p >= %g) from the best of a rank share it.\n", c->alpha);
    /* rule and fine-tune vs the same checkpoints as trained: paired over seeds */
    int any = 0;
    for (int i = 0; i < a->n_series; i++) any |= strcmp(a->s[i].rule, "none") != 0;
    if (any && primary) {
        fprintf(f, "\nRules and fine-tunes against the same checkpoints as trained (paired t over seeds, difference "
                   "in %s, rule minus none; * significant after Holm):\n\n| series |", m->unit);
        for (int l = 0; l < c->n_lengths; l++) fprintf(f, " %d |", c->lens[l]);
        fprintf(f, "\n|---|");
        for (int l = 0; l < c->n_lengths; l++) fprintf(f, "---:|");
        fprintf(f, "\n");
        for (int i = 0; i < a->n_series; i++) {
            if (strcmp(a->s[i].rule, "none") == 0) continue;
            int base = -1;
            for (int j = 0; j < a->n_series; j++)
                if (a->s[j].scheme == a->s[i].scheme && strcmp(a->s[j].rule, "none") == 0) base = j;
            fprintf(f, "| %s |", a->s[i].label);
            for (int l = 0; l < c->n_lengths; l++) {
                const VerdictPair *p = base >= 0 ? verdict_pair(&lv[l].v, i, base) : NULL;
                if (!p || isnan(p->t.p)) {
                    fprintf(f, " — |");
                    continue;
                }
                double d = (p->a == i ? 1 : -1) * p->t.diff * m->scale + 0.0; /* + 0.0: no "-0" */
                fprintf(f, " %+.3g (p %.2g)%s |", d, p->p_holm, p->p_holm < c->alpha ? " *" : "");
            }
            fprintf(f, "\n");
        }
    }
    for (int l = 0; l < c->n_lengths; l++) verdict_free(&lv[l].v);
}

/* "k of n seeds learned the task" per scheme, the failed seeds named */
static void gate_lines(FILE *f, const Compare *c, const Agg *a) {
    if (c->task)
        fprintf(f, "\nGate: a run learned the task when its exact match inside the trained lengths (the range's ends "
                   "and middle) is at least %g%%; runs below are left out of every mean, table and verdict (their rows "
                   "stay in the CSVs).\n\n", 100 * c->gate);
    else {
        double lo = INFINITY, hi = -INFINITY;
        for (int s = 0; s < c->n_schemes; s++)
            for (int k = 0; k < c->n_seeds; k++)
                if (a->gate[s][k] != RUN_MISSING && !isnan(unigram_bound(a, s, k)))
                    lo = fmin(lo, unigram_bound(a, s, k)), hi = fmax(hi, unigram_bound(a, s, k));
        fprintf(f, "\nGate: a run fails when it diverged or learned nothing from context: its loss at L is not finite or "
                   "not below the unigram loss of its evaluation text (the held-out tokens' cross-entropy under the "
                   "training split's token frequencies, what a model that reads no context reaches");
        if (lo <= hi) fprintf(f, lo < hi ? ": %.4f to %.4f nats here" : ": %.4f nats here", lo, hi);
        else fprintf(f, "; these CSVs have no unigram row: only a non-finite loss fails");
        fprintf(f, ")");
        if (c->gate_loss > 0) fprintf(f, ", or above %g nats (--gate-loss)", c->gate_loss);
        fprintf(f, ". A run worse than its siblings is not failed for it. Failed runs are left out of every mean, table "
                   "and verdict (their rows stay in the CSVs).\n\n");
    }
    for (int s = 0; s < c->n_schemes; s++) {
        int found = 0, passed = 0, ungated = 0;
        char failed[256] = "";
        for (int k = 0; k < c->n_seeds; k++) {
            if (a->gate[s][k] == RUN_MISSING) continue;
            found++;
            if (a->gate[s][k] == RUN_PASS) passed++;
            if (a->gate[s][k] == RUN_UNGATED) ungated++;
            if (a->gate[s][k] == RUN_FAIL) {
                size_t n = strlen(failed);
                snprintf(failed + n, sizeof failed - n, "%s%llu", n ? ", " : "", c->seed[k]);
            }
        }
        fprintf(f, "- %s: %d of %d seeds %s", c->scheme[s], passed + ungated, found,
                c->task ? "learned the task" : "passed the gate");
        if (ungated) fprintf(f, " (%d not gated: %s)", ungated, c->task ? "no gate rows" : "no loss at L");
        if (failed[0]) fprintf(f, "; left out: seed%s %s", strchr(failed, ',') ? "s" : "", failed);
        fprintf(f, "\n");
    }
}

/* runs still improving at their end, named */
static void convergence_lines(FILE *f, const Compare *c, const Agg *a) {
    int improving = 0, unknown = 0, total = 0;
    StrBuf names = {0};
    for (int s = 0; s < c->n_schemes; s++)
        for (int k = 0; k < c->n_seeds; k++)
            for (int slot = 0; slot <= FT_KINDS; slot++) {
                const RunCurve *rc = &a->curve[s][k][slot];
                if (slot == 0 && a->gate[s][k] == RUN_MISSING) continue;
                if (slot > 0 && rc->status == CONV_UNKNOWN) continue; /* no fine-tune of this kind */
                total++;
                if (rc->status == CONV_UNKNOWN) unknown++;
                if (rc->status != CONV_IMPROVING) continue;
                improving++;
                sb_printf(&names, "%s%s_s%llu%s (%.4f -> %.4f)", names.len ? ", " : "", c->tag[s], c->seed[k],
                          slot == 0 ? "" : slot == 1 + FT_PI ? " PI fine-tune" : " PoSE fine-tune", rc->v_early, rc->v_end);
            }
    if (c->base.converge)
        fprintf(f, "\nConvergence: each run trained until its validation loss fell by at most %g%% or at most %g nats "
                   "over the last 20%% of its steps (checked at each validation), at most %ld steps, then cooled down "
                   "(lr linear to %g x its peak over a quarter of the steps so far, or to the cap). A run is flagged "
                   "*still improving* when the rule had not held where its cooldown began (the cap came first); its "
                   "fine-tunes, a fixed budget, when their loss fell by more over their last 20%%. ",
                100 * c->converge_frac, c->converge_abs, c->base.steps, c->base.min_lr_frac);
    else
        fprintf(f, "\nConvergence: a run is flagged *still improving* when its validation loss fell by more than %g%% "
                   "and by more than %g nats over the last 20%% of its steps. ", 100 * c->converge_frac, c->converge_abs);
    if (improving) fprintf(f, "**%d of %d runs still improving**: %s. Their figures may change with more steps.\n",
                           improving, total, sb_str(&names));
    else fprintf(f, "None of %d runs is still improving.\n", total);
    if (unknown) fprintf(f, "(%d runs have no loss curve with two validations to judge.)\n", unknown);
    sb_free(&names);
}

int report_verdict_write(FILE *f, const Compare *c, const Agg *a) {
    char path[1300];
    snprintf(path, sizeof path, "%s/verdicts.csv", c->out);
    MemFile mf; /* verdicts.csv is written whole: a kill or a full disk leaves the old one */
    FILE *csv = memfile_open(&mf);
    if (!csv) return -1;
    results_csv_header(csv, &RES_VERDICT_CSV);
    int most = 0;
    for (int s = 0; s < c->n_schemes; s++) {
        int n = 0;
        for (int k = 0; k < c->n_seeds; k++) n += a->gate[s][k] == RUN_PASS || a->gate[s][k] == RUN_UNGATED;
        if (n > most) most = n;
    }
    fprintf(f, "## Verdict\n\n");
    if (most < 2 && c->n_seeds < 2)
        fprintf(f, "**One seed per scheme: no verdict is possible.** The ranks below order the means only; a "
                   "difference between one run of each scheme cannot be told from seed-to-seed variation. Rerun with "
                   "`--seeds 5` (runs already done are kept).\n");
    else if (most < 2)
        fprintf(f, "**No scheme has 2 seeds that passed the gate: no verdict is possible.** The ranks below order "
                   "the means only (Gate, below).\n");
    else
        fprintf(f, "Up to %d seeds per scheme, %s; seeds are the unit of every test (how: below the tables).\n", most,
                c->base.converge ? "each run trained until its validation loss converged (Convergence, below)"
                                 : "each run trained for the same steps");
    Metric m[4];
    int n_metrics = report_metrics(c, a, m);
    for (int i = 0; i < n_metrics; i++) {
        int any = 0; /* a metric no run has (constructed or older CSVs) gets no section */
        for (int j = 0; j < a->n_series && !any; j++)
            for (int l = 0; l < c->n_lengths && !any; l++) any = report_values(a, &a->s[j], m[i].p, l, NULL, NULL) > 0;
        if (any || i == 0) metric_section(f, csv, c, a, &m[i], i == 0);
    }
    fprintf(f, "\nHow: seeds are the unit. Two schemes are compared by Welch's t-test over their seeds (runs trained "
               "independently; unequal spreads allowed); a rule or fine-tune against the same checkpoints by the "
               "paired t-test over the seeds both have. The p values of all pairs at one length and metric are "
               "adjusted together (Holm): the verdicts are exploratory, every pair tested, no pair chosen in advance. "
               "Every pair is in verdicts.csv; each run's figure with its bootstrap interval over evaluation windows "
               "or examples is under Runs.\n");
    gate_lines(f, c, a);
    convergence_lines(f, c, a);
    return memfile_commit(&mf, path);
}

void report_verdict_print(FILE *out, const Compare *c, const Agg *a) {
    Metric m[4];
    report_metrics(c, a, m);
    static LengthVerdict lv; /* large: not on the stack */
    fprintf(out, "\n%s; %s:\n", VERDICT_LABEL, m[0].name);
    for (int l = 0; l < c->n_lengths; l++) {
        report_verdict_at(a, &m[0], l, c->alpha, &lv);
        char name[64], where[80];
        length_name(c, l, name, sizeof name);
        snprintf(where, sizeof where, "at %s", name);
        StrBuf sb = {0};
        verdict_sentence(&lv.v, lv.vs, where, m[0].unit, m[0].scale, &sb);
        fprintf(out, "  %s\n", sb_str(&sb));
        sb_free(&sb);
        verdict_free(&lv.v);
    }
}

/* --- runs and curves --- */

/* plots/curves_TAG.dat (per seed: a block of training loss, then one of validation loss) and its
 * lines in curves.gp */
static int curve_plot(FILE *gp, const Compare *c, int s, const char *dir) {
    char path[1400];
    snprintf(path, sizeof path, "%s/curves_%s.dat", dir, c->tag[s]);
    AtomicFile f_file;
    FILE *f = atomic_open(&f_file, path);
    if (!f) return -1;
    fprintf(f, "# per seed two blocks (gnuplot index 2k, 2k + 1): step and training loss, step and validation loss\n");
    int blocks = 0;
    unsigned long long shown[CMP_MAX_SEEDS];
    for (int k = 0; k < c->n_seeds; k++) {
        char csv[1200], cpath[1300];
        compare_run_path(c, s, k, ".csv", csv, sizeof csv);
        curve_path(csv, cpath, sizeof cpath);
        FILE *in = fopen(cpath, "r");
        if (!in) continue;
        char line[512];
        for (int pass = 0; pass < 2; pass++) {
            rewind(in);
            if (!fgets(line, sizeof line, in)) break;
            while (fgets(line, sizeof line, in)) {
                long step;
                char tokens[32], lr[32], train[32], val[32];
                train[0] = val[0] = 0;
                if (sscanf(line, "%ld,%31[^,],%31[^,],%31[^,\n],%31[^,\n]", &step, tokens, lr, train, val) < 4) {
                    /* an empty training or validation field: parse by hand */
                    char *p = line;
                    for (int i = 0; i < 3 && p; i++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
                    if (!p) continue;
                    step = atol(line);
                    snprintf(train, sizeof train, "%.*s", (int)strcspn(p, ","), p);
                    p = strchr(p, ',');
                    snprintf(val, sizeof val, "%.*s", p ? (int)strcspn(p + 1, "\n") : 0, p ? p + 1 : "");
                }
                const char *v = pass == 0 ? train : val;
                if (v[0] && v[0] != '\n') fprintf(f, "%ld %s\n", step, v);
            }
            fprintf(f, "\n\n");
        }
        fclose(in);
        shown[blocks++] = c->seed[k];
    }
    if (atomic_commit(&f_file) != 0) return -1;
    if (!blocks) return 0;
    char name[200];
    snprintf(name, sizeof name, "curves_%s", c->tag[s]);
    for (int t = 0; t < 2; t++) {
        gp_output(gp, name, t ? "svg" : "png", 900, 500);
        fprintf(gp, "set title ");
        gp_string(gp, c->scheme[s]);
        fprintf(gp, "\nplot ");
        for (int b = 0; b < blocks; b++)
            fprintf(gp, "%s'curves_%s.dat' index %d with lines dashtype 2 lc %d title 'seed %llu train', "
                        "'curves_%s.dat' index %d with linespoints lc %d title 'seed %llu validation'",
                    b ? ", \\\n     " : "", c->tag[s], 2 * b, b + 1, shown[b], c->tag[s], 2 * b + 1, b + 1, shown[b]);
        fprintf(gp, "\nset output\n");
    }
    return 1;
}

static const char *gate_word(int g) {
    return g == RUN_PASS ? "pass" : g == RUN_FAIL ? "**fail**" : g == RUN_UNGATED ? "not gated" : "missing";
}

int report_runs_write(FILE *f, const Compare *c, const Agg *a, int have_gp) {
    Metric m[4];
    report_metrics(c, a, m);
    int lo_l = report_length_index(c, c->base.seq_len), hi_l = c->n_lengths - 1;
    if (c->task) lo_l = 0;
    if (lo_l < 0) lo_l = 0;
    fprintf(f, "\n## Runs\n\nEach run as trained (rule none): its gate figure (%s), whether it passed, its validation "
               "loss %s, and its %s at the first and last length reported here "
               "with the 95%% bootstrap interval over %s.\n\n| run | gate figure | gate | validation loss (%s) "
               "| %d | %d |\n|---|---:|---|---|---:|---:|\n",
            c->task ? "exact match inside the trained lengths, %" : "loss at L",
            c->base.converge ? "at 80% of its steps before the cooldown and where the cooldown began, then at the end"
                             : "at 80% of its steps and at the end",
            m[0].name,
            c->task ? "its examples" : "its evaluation windows",
            c->base.converge ? "80% -> cooldown; end" : "80% -> end", c->lens[lo_l], c->lens[hi_l]);
    for (int s = 0; s < c->n_schemes; s++) {
        const Series *none = report_series(a, s, "none");
        for (int k = 0; k < c->n_seeds; k++) {
            if (a->gate[s][k] == RUN_MISSING) continue;
            const RunCurve *rc = &a->curve[s][k][0];
            char gv[32] = "—", conv[160] = "—";
            if (!isnan(a->gate_val[s][k])) snprintf(gv, sizeof gv, c->task ? "%.1f" : "%.4f", (c->task ? 100 : 1) * a->gate_val[s][k]);
            if (rc->status != CONV_UNKNOWN && c->base.converge)
                snprintf(conv, sizeof conv, "%.4f -> %.4f at step %ld%s; %.4f at %ld", rc->v_early, rc->v_end,
                         rc->step_end, rc->status == CONV_IMPROVING ? " **still improving**" : "", rc->v_final,
                         rc->step_final);
            else if (rc->status != CONV_UNKNOWN)
                snprintf(conv, sizeof conv, "%.4f -> %.4f%s", rc->v_early, rc->v_end,
                         rc->status == CONV_IMPROVING ? " **still improving**" : "");
            fprintf(f, "| %s_s%llu | %s | %s | %s |", c->tag[s], c->seed[k], gv, gate_word(a->gate[s][k]), conv);
            int ls[2] = {lo_l, hi_l};
            for (int j = 0; j < 2; j++) {
                int l = ls[j];
                if (!none || !none->has[m[0].p][l][k]) {
                    fprintf(f, " — |");
                    continue;
                }
                char v[32], lo[32], hi[32];
                fmt_value(&m[0], none->val[m[0].p][l][k], v, sizeof v);
                if (isnan(none->ci_lo[m[0].p][l][k])) fprintf(f, " %s |", v);
                else {
                    fmt_value(&m[0], none->ci_lo[m[0].p][l][k], lo, sizeof lo);
                    fmt_value(&m[0], none->ci_hi[m[0].p][l][k], hi, sizeof hi);
                    fprintf(f, " %s [%s, %s] |", v, lo, hi);
                }
            }
            fprintf(f, "\n");
        }
    }
    /* the curves, one plot per scheme */
    char dir[1200], path[1300];
    snprintf(dir, sizeof dir, "%s/plots", c->out);
    snprintf(path, sizeof path, "%s/curves.gp", dir);
    AtomicFile gp_file;
    FILE *gp = atomic_open(&gp_file, path);
    if (!gp) return -1;
    fprintf(gp, "# gnuplot curves.gp (in this directory): curves_TAG.{png,svg}, the loss curves of each scheme's runs\n");
    gp_preamble(gp);
    fprintf(gp, "set xlabel 'step'\nset ylabel 'loss (nats/token)'\n");
    int drawn[CMP_MAX_SCHEMES];
    for (int s = 0; s < c->n_schemes; s++)
        if ((drawn[s] = curve_plot(gp, c, s, dir)) < 0) {
            atomic_discard(&gp_file);
            return -1;
        }
    if (atomic_commit(&gp_file) != 0) return -1;
    int any = 0;
    for (int s = 0; s < c->n_schemes; s++) any |= drawn[s];
    int have = 0, plotted = have_gp && any ? gp_run(dir, "curves.gp", &have) : 0;
    fprintf(f, "\n### Loss curves\n\nTraining loss (dashed, mean over each logging interval) and validation loss by step, "
               "every seed of a scheme in one plot; data in plots/curves_TAG.dat, script plots/curves.gp.\n\n");
    for (int s = 0; s < c->n_schemes; s++) {
        if (!drawn[s]) continue;
        if (plotted) fprintf(f, "![%s](plots/curves_%s.png)\n", c->scheme[s], c->tag[s]);
        else fprintf(f, "- %s: plots/curves_%s.dat (not drawn: gnuplot %s)\n", c->scheme[s], c->tag[s],
                     have_gp ? "failed" : "not found");
    }
    return 0;
}
