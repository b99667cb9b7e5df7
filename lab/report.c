/* report.c: the `pelab compare` (and `pelab demo`) report: reads DIR/runs/SCHEME_sSEED.csv and the
 * fine-tunes' CSVs back (so --collect and parallel jobs end in the same report), aggregates over
 * seeds, writes DIR/report.md, the plot data and gnuplot scripts in DIR/plots/, and runs gnuplot
 * when it is installed. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/stats.h"
#include "../core/strbuf.h"
#include "../data/task.h"
#include "../infer/eval.h"
#include "../train/curve.h"
#include "compare_plan.h"
#include "gnuplot.h"
#include "report.h"
#include "report_agg.h"
#include "report_effective.h"
#include "report_grid.h"
#include "report_verdict.h"
#include "report_show.h"
#include "report_gen.h"

static Series *series_get(Agg *a, int scheme, const char *rule, const Compare *c) {
    const Series *old = report_series(a, scheme, rule);
    if (old) return &a->s[old - a->s];
    if (a->n_series == MAX_SERIES) return NULL;
    Series *s = &a->s[a->n_series++];
    memset(s, 0, sizeof *s);
    s->scheme = scheme;
    snprintf(s->rule, sizeof s->rule, "%s", rule);
    if (strcmp(rule, "none") == 0) snprintf(s->label, sizeof s->label, "%s", c->scheme[scheme]);
    else snprintf(s->label, sizeof s->label, "%s+%s", c->scheme[scheme], rule);
    return s;
}

/* one figure of seed k into series s, metric p, length l */
static void put_value(Series *s, int p, int l, int k, const ResultRow *r) {
    s->val[p][l][k] = r->value, s->has[p][l][k] = 1;
    s->ci_lo[p][l][k] = r->ci_lo, s->ci_hi[p][l][k] = r->ci_hi;
}

/* why length l of series s was not computed */
static void put_status(Series *s, int l, const ResultRow *r) { s->status[l] = r->status, s->limit[l] = r->limit; }

/* an integer cell, 0 when empty (as files before the typed reader were read) */
static long cell_or_0(long long v) { return v == RES_NONE ? 0 : (long)v; }

/* one row of run (scheme si, seed k) into the aggregate */
void report_take_row(const Compare *c, Agg *a, GenAgg *g, int si, int k, const ResultRow *r) {
    if (strcmp(r->kind, "grid") == 0) { /* --task-depths: report_grid.c */
        report_grid_take(c, a, si, k, r);
        return;
    }
    if (strcmp(r->kind, "gate") == 0) { /* --task: exact match inside the trained lengths */
        if (!isnan(r->value)) a->gate_sum[si][k] += r->value;
        a->gate_rows[si][k]++; /* a refused gate length counts as not learned */
        return;
    }
    if (report_gen_row(g, c, si, k, r)) return; /* gen, jump, keyppl: report_gen.c */
    int l = r->length == RES_NONE ? -1 : report_length_index(c, (int)r->length);
    if (l < 0) return; /* a length this report does not show */
    Series *s = series_get(a, si, r->rule, c);
    if (!s) return;
    s->accepted = cell_or_0(r->accepted), s->computable = cell_or_0(r->computable);
    int ok = !isnan(r->value);
    if (strcmp(r->kind, "bucket") == 0) {
        long long b = r->bucket;
        if (c->lens[l] != a->lmax || b < 0 || b >= CMP_BUCKETS || !ok) return;
        s->bval[b][k] = r->value, s->bhas[b][k] = 1;
        s->blo[b] = (int)cell_or_0(r->pos_lo), s->bhi[b] = (int)cell_or_0(r->pos_hi);
        return;
    }
    if (strcmp(r->kind, "task") == 0) { /* exact match in slot 0, byte accuracy in 1 */
        long reach = cell_or_0(r->pos_hi);
        if (reach > a->reach[l]) a->reach[l] = reach;
        int t = strcmp(r->protocol, "exact") == 0 ? TASK_EXACT : strcmp(r->protocol, "recall") == 0 ? TASK_RECALL : TASK_BYTES;
        a->has_recall |= t == TASK_RECALL;
        if (ok) put_value(s, t, l, k, r);
        else put_status(s, l, r);
        return;
    }
    int p = strcmp(r->kind, "passkey") == 0 ? EVAL_N_PROTOCOLS
            : strcmp(r->protocol, eval_protocol_names[EVAL_SLIDING]) == 0 ? EVAL_SLIDING
                                                                          : EVAL_NONOVERLAP;
    if (p == EVAL_N_PROTOCOLS) a->has_passkey = 1;
    if (ok) put_value(s, p, l, k, r);
    else if (p != EVAL_N_PROTOCOLS) put_status(s, l, r);
}

/* every row of one run's CSV; -1 with "FILE:LINE: ..." on a row that does not read */
static int read_run(const Compare *c, Agg *a, GenAgg *g, int si, int k, FILE *f, const char *csv) {
    ResultReader rd;
    if (results_reader_open(&rd, f, csv) != 0) {
        results_reader_close(&rd);
        return -1;
    }
    ResultRow r;
    int got;
    while ((got = results_reader_next(&rd, &r)) == 1) report_take_row(c, a, g, si, k, &r);
    results_reader_close(&rd);
    return got;
}

static int n_of(const Agg *a, const Series *s, int p, int l) { return report_values(a, s, p, l, NULL, NULL); }

/* "1.2345 ± 0.0123" (sample std over seeds), "1.2345" for one seed, the status, or "—";
 * a task report's accuracies as percentages, "97.0 ± 1.2" */
static void cell(const Compare *c, const Agg *a, const Series *s, int p, int l, char *buf, size_t n) {
    if (c->task && n_of(a, s, p, l)) {
        if (n_of(a, s, p, l) < 2) snprintf(buf, n, "%.1f", 100 * report_mean(a, s, p, l));
        else snprintf(buf, n, "%.1f ± %.1f", 100 * report_mean(a, s, p, l), 100 * report_std(a, s, p, l));
        return;
    }
    if (!n_of(a, s, p, l)) {
        if (s->status[l] != RES_OK && p != EVAL_N_PROTOCOLS) result_status_str(s->status[l], s->limit[l], buf, n);
        else snprintf(buf, n, "—");
        return;
    }
    double m = report_mean(a, s, p, l);
    if (n_of(a, s, p, l) < 2) snprintf(buf, n, "%.4f", m);
    else snprintf(buf, n, "%.4f ± %.4f", m, report_std(a, s, p, l));
}

static void table(FILE *f, const Compare *c, const Agg *a, int p) {
    fprintf(f, "| scheme | rule |");
    for (int l = 0; l < c->n_lengths; l++)
        if (c->task) fprintf(f, " %d%s |", c->lens[l], a->reach[l] > c->base.seq_len ? " (past L)" : "");
        else fprintf(f, " %d%s |", c->lens[l], c->lens[l] == c->base.seq_len ? " (=L)" : "");
    fprintf(f, "\n|---|---|");
    for (int l = 0; l < c->n_lengths; l++) fprintf(f, "---:|");
    fprintf(f, "\n");
    if (c->task) { /* how far each task length reaches, against L */
        fprintf(f, "| *positions reached* | |");
        for (int l = 0; l < c->n_lengths; l++) fprintf(f, " %ld |", a->reach[l]);
        fprintf(f, "\n");
    }
    for (int i = 0; i < a->n_series; i++) {
        const Series *s = &a->s[i];
        fprintf(f, "| %s | %s |", c->scheme[s->scheme], s->rule);
        for (int l = 0; l < c->n_lengths; l++) {
            char buf[96];
            cell(c, a, s, p, l, buf, sizeof buf);
            fprintf(f, " %s |", buf);
        }
        fprintf(f, "\n");
    }
}

/* docs/position-encodings.md section 10.4: the largest tested length >= L such that every tested length from L up to it
 * keeps the mean non-overlapping loss within 5% of the loss at L (and passkey >= 80% of L's) */
static int reliable_length(const Compare *c, const Agg *a, const Series *s, int has_passkey) {
    int li = report_length_index(c, c->base.seq_len);
    if (li < 0 || !n_of(a, s, EVAL_NONOVERLAP, li)) return -1;
    double base = report_mean(a, s, EVAL_NONOVERLAP, li), pk = report_mean(a, s, EVAL_N_PROTOCOLS, li);
    int best = c->base.seq_len;
    for (;;) { /* the next larger tested length */
        int next = -1;
        for (int l = 0; l < c->n_lengths; l++)
            if (c->lens[l] > best && (next < 0 || c->lens[l] < c->lens[next])) next = l;
        if (next < 0) break;
        double v = report_mean(a, s, EVAL_NONOVERLAP, next);
        if (isnan(v) || v > 1.05 * base) break;
        if (has_passkey && !isnan(pk) && !(report_mean(a, s, EVAL_N_PROTOCOLS, next) >= 0.8 * pk)) break;
        best = c->lens[next];
    }
    return best;
}

static void fmt_limit(long v, const char *none, char *buf, size_t n) {
    if (v < 0) snprintf(buf, n, "%s", none);
    else snprintf(buf, n, "%ld", v);
}

/* --- plots --- */

/* the legends' verdict ranks: at L (the first length where L is not one) and at the largest length */
typedef struct {
    int n, l[2];
    int rank[2][MAX_SERIES];
} Legend;

static void legend_make(const Compare *c, const Agg *a, int only_lmax, Legend *lg) {
    int ref = only_lmax ? -1 : c->task ? 0 : report_length_index(c, c->base.seq_len), last = 0;
    for (int l = 0; l < c->n_lengths; l++)
        if (c->lens[l] > c->lens[last]) last = l;
    if (ref < 0 && !only_lmax) ref = 0;
    lg->n = 0;
    if (ref >= 0 && ref != last) lg->l[lg->n++] = ref;
    lg->l[lg->n++] = last;
    for (int k = 0; k < lg->n; k++) report_ranks_at(c, a, lg->l[k], lg->rank[k]);
}

/* series i's key entry, its label and its ranks: "rope (rank 2 at L, 1 at 8L)" */
static void legend_title(FILE *f, const Compare *c, const Agg *a, const Legend *lg, int i) {
    StrBuf b = {0};
    sb_puts(&b, a->s[i].label);
    int ranked = 0;
    for (int k = 0; k < lg->n; k++) {
        if (!lg->rank[k][i]) continue;
        int len = c->lens[lg->l[k]];
        sb_printf(&b, "%s%d at ", ranked++ ? ", " : " (rank ", lg->rank[k][i]);
        if (c->task) sb_printf(&b, "length %d", len);
        else if (len == c->base.seq_len) sb_puts(&b, "L");
        else sb_printf(&b, "%gL", (double)len / c->base.seq_len);
    }
    if (ranked) sb_puts(&b, ")");
    gp_string(f, sb_str(&b));
    sb_free(&b);
}

/* one series of a line plot: with more than one seed somewhere, its band of mean ± sample std
 * (columns y, y + 1 of data), then its mean with its colour, marker and legend */
static void plot_series(FILE *f, const char *data, int y, int band, int i, int *first, const Compare *c, const Agg *a,
                        const Legend *lg) {
    const char *colour;
    int point;
    gp_series_style(i, &colour, &point);
    fprintf(f, "%s", *first ? "" : ", \\\n     ");
    if (band)
        fprintf(f, "'%s' using 1:($%d-$%d):($%d+$%d) with filledcurves fc rgb '%s' fs transparent solid 0.15 noborder "
                   "notitle, \\\n     ", data, y, y + 1, y, y + 1, colour);
    fprintf(f, "'%s' using 1:%d with linespoints ", data, y);
    gp_series(f, i);
    fprintf(f, " title ");
    legend_title(f, c, a, lg, i);
    *first = 0;
}

/* the plot command of a plot without a series ("plot" alone stops gnuplot): the axes and why they
 * are empty */
static void empty_plot(FILE *f, double x_lo, double x_hi) {
    fprintf(f, "set label 1 'no series has a value: no run passed the gate, or none was computed' at graph 0.5, 0.5 "
               "center\nplot [%g:%g] [0:1] NaN notitle\nunset label 1", x_lo, x_hi > x_lo ? x_hi : x_lo + 1);
}

/* bucket b of series s (loss by position at the largest length) over the seeds that passed the
 * gate, as every mean of the report, into v; their count */
static int bucket_values(const Agg *a, const Series *s, int b, double *v) {
    int n = 0;
    for (int k = 0; k < CMP_MAX_SEEDS; k++)
        if (s->bhas[b][k] && a->gate[s->scheme][k] != RUN_FAIL) v[n++] = s->bval[b][k];
    return n;
}

/* the series' columns of one row of a .dat: mean, sample std and seed count (NaN: none) */
static void dat_columns(FILE *f, double mean, double sd, int n) {
    if (n) fprintf(f, " %.6f %.6f %d", mean, n > 1 ? sd : 0.0, n);
    else fprintf(f, " NaN NaN 0");
}

/* the header of a .dat: what it holds and each series' columns */
static void dat_header(FILE *f, const Agg *a, const char *what, int first_col) {
    fprintf(f, "# %s; per series three columns: mean, sample std over seeds (0 for one), seeds (NaN 0: none)\n", what);
    for (int i = 0; i < a->n_series; i++)
        fprintf(f, "# columns %d-%d: %s\n", first_col + 3 * i, first_col + 3 * i + 2, a->s[i].label);
}

/* plot data and one gnuplot script writing PNG and SVG of both plots: per series its mean over the
 * seeds that passed the gate, with a band of ± one sample std where it has more than one seed, in its
 * own colour and marker, its verdict ranks in the key */
static int write_plots(const Compare *c, const Agg *a, const char *dir) {
    char path[1300];
    snprintf(path, sizeof path, "%s/loss_vs_length.dat", dir);
    AtomicFile f_file;
    FILE *f = atomic_open(&f_file, path);
    if (!f) return -1;
    dat_header(f, a, "loss vs length: column 1 the evaluation length, then the non-overlapping loss (nats/token)", 2);
    int band[2][MAX_SERIES] = {{0}}, any[2][MAX_SERIES] = {{0}};
    for (int l = 0; l < c->n_lengths; l++) {
        fprintf(f, "%d", c->lens[l]);
        for (int i = 0; i < a->n_series; i++) {
            int n = n_of(a, &a->s[i], EVAL_NONOVERLAP, l);
            dat_columns(f, report_mean(a, &a->s[i], EVAL_NONOVERLAP, l), report_std(a, &a->s[i], EVAL_NONOVERLAP, l), n);
            band[0][i] |= n > 1, any[0][i] |= n > 0;
        }
        fprintf(f, "\n");
    }
    if (atomic_commit(&f_file) != 0) return -1;
    snprintf(path, sizeof path, "%s/loss_by_position.dat", dir);
    if (!(f = atomic_open(&f_file, path))) return -1;
    char what[160];
    snprintf(what, sizeof what, "loss by position at length %d: column 1 the bucket's centre position, then the loss", a->lmax);
    dat_header(f, a, what, 2);
    for (int b = 0; b < CMP_BUCKETS; b++) {
        double v[MAX_SERIES][CMP_MAX_SEEDS];
        int n[MAX_SERIES], i0 = -1;
        for (int i = 0; i < a->n_series; i++)
            if ((n[i] = bucket_values(a, &a->s[i], b, v[i])) > 0 && i0 < 0) i0 = i;
        if (i0 < 0) continue;
        fprintf(f, "%g", 0.5 * (a->s[i0].blo[b] + a->s[i0].bhi[b]));
        for (int i = 0; i < a->n_series; i++) {
            StatSummary st = stats_summary(v[i], n[i]);
            dat_columns(f, st.mean, st.sd, n[i]);
            band[1][i] |= n[i] > 1, any[1][i] |= n[i] > 0;
        }
        fprintf(f, "\n");
    }
    if (atomic_commit(&f_file) != 0) return -1;
    snprintf(path, sizeof path, "%s/plots.gp", dir);
    if (!(f = atomic_open(&f_file, path))) return -1;
    const char *names[2] = {"loss_vs_length", "loss_by_position"};
    fprintf(f, "# gnuplot plots.gp (in this directory): %s.{png,svg}, %s.{png,svg}\n", names[0], names[1]);
    gp_preamble(f);
    fprintf(f, "set ylabel 'held-out loss (nats/token)'\n");
    static Legend lg[2];
    legend_make(c, a, 0, &lg[0]);
    legend_make(c, a, 1, &lg[1]);
    for (int g = 0; g < 2; g++) {
        int L = c->base.seq_len, bands = 0;
        for (int i = 0; i < a->n_series; i++) bands |= band[g][i];
        const char *spread = bands ? "; bands: mean ± sample std over seeds" : "";
        /* double quotes: the \\n is a line break (no user text in these titles) */
        if (g == 0) fprintf(f, "set logscale x 2\nset xlabel 'evaluation length (tokens, log scale)'\n"
                               "set title \"loss vs length, non-overlapping windows\\ndashed: training length L = %d%s\"\n",
                            L, spread);
        else fprintf(f, "unset logscale x\nunset arrow\nset xlabel 'position in the window'\n"
                        "set title \"loss by position at length %d\\ndashed: L = %d%s\"\n", a->lmax, L, spread);
        fprintf(f, "set arrow from %d, graph 0 to %d, graph 1 nohead dashtype 2 lc rgb 'gray40'\n", L, L);
        for (int t = 0; t < 2; t++) {
            gp_output(f, names[g], t ? "svg" : "png", 1200, 600);
            char data[64];
            snprintf(data, sizeof data, "%s.dat", names[g]);
            int first = 1;
            for (int i = 0; i < a->n_series; i++)
                if (any[g][i]) { /* a series without a point would only draw a gnuplot warning */
                    if (first) fprintf(f, "plot ");
                    plot_series(f, data, 2 + 3 * i, band[g][i], i, &first, c, a, &lg[g]);
                }
            if (first) empty_plot(f, g ? 0 : c->lens[0], a->lmax);
            fprintf(f, "\nset output\n");
        }
    }
    if (atomic_commit(&f_file) != 0) return -1;
    return 0;
}

/* --task: exact match (RULER's tasks: their score; mean and std over seeds, %) vs task length per
 * series, with error bars; the dashed line at the last length whose examples fit in L; for RULER's
 * score, the effective length's absolute threshold dash-dotted */
static int write_task_plots(const Compare *c, const Agg *a, const char *dir) {
    char path[1300];
    int p = report_effective_metric(a);
    const char *what = p == TASK_RECALL ? "RULER score" : "exact match";
    snprintf(path, sizeof path, "%s/accuracy_vs_length.dat", dir);
    AtomicFile f_file;
    FILE *f = atomic_open(&f_file, path);
    if (!f) return -1;
    fprintf(f, "# task length, positions reached, then %s %% mean and std per series (NaN: not computed)\n", what);
    int last_in = -1, order[CMP_MAX_LENGTHS];
    report_length_order(c, order); /* the lines run by length, whatever order --task-lens gave */
    for (int i = 0; i < c->n_lengths; i++) {
        int l = order[i];
        if (a->reach[l] && a->reach[l] <= c->base.seq_len) last_in = l;
        fprintf(f, "%d %ld", c->lens[l], a->reach[l]);
        for (int i = 0; i < a->n_series; i++)
            fprintf(f, " %.3f %.3f", 100 * report_mean(a, &a->s[i], p, l), 100 * report_std(a, &a->s[i], p, l));
        fprintf(f, "\n");
    }
    if (atomic_commit(&f_file) != 0) return -1;
    snprintf(path, sizeof path, "%s/plots.gp", dir);
    if (!(f = atomic_open(&f_file, path))) return -1;
    fprintf(f, "# gnuplot plots.gp (in this directory): accuracy_vs_length.{png,svg}\n");
    gp_preamble(f);
    fprintf(f, "set logscale x 2\nset yrange [-2:102]\nset ylabel '%s (%%), mean and std over seeds'\n"
               "set xlabel 'task length (dashed: the last whose examples fit in L = %d positions)'\nset title ",
            what, c->base.seq_len);
    gp_string(f, c->task);
    fputc('\n', f);
    if (last_in >= 0)
        fprintf(f, "set arrow from %d, graph 0 to %d, graph 1 nohead dashtype 2 lc rgb 'gray40'\n", c->lens[last_in],
                c->lens[last_in]);
    if (c->effective_rel <= 0) /* the effective length's bar */
        fprintf(f, "set arrow from graph 0, first %g to graph 1, first %g nohead dashtype 4 lc rgb 'gray40'\n",
                c->effective_pct > 0 ? c->effective_pct : RULER_THRESHOLD, c->effective_pct > 0 ? c->effective_pct : RULER_THRESHOLD);
    TaskSpec t; /* and the longest task length trained on, dotted */
    if (task_parse(&t, c->task) == 0)
        fprintf(f, "set arrow from %g, graph 0 to %g, graph 1 nohead dashtype 3 lc rgb 'gray40'\n"
                   "set xlabel 'task length (dotted: the longest trained, %g; dashed: the last whose examples fit in "
                   "L = %d positions)'\n",
                t.hi[t.def->len_opt], t.hi[t.def->len_opt], t.hi[t.def->len_opt], c->base.seq_len);
    static Legend lg;
    legend_make(c, a, 0, &lg);
    for (int t = 0; t < 2; t++) {
        gp_output(f, "accuracy_vs_length", t ? "svg" : "png", 1000, 600);
        int first = 1;
        for (int i = 0; i < a->n_series; i++) {
            int any = 0;
            for (int l = 0; l < c->n_lengths; l++) any |= n_of(a, &a->s[i], p, l) > 0;
            if (!any) continue;
            fprintf(f, "%s'accuracy_vs_length.dat' using 1:%d:%d with yerrorlines ", first ? "plot " : ", \\\n     ",
                    3 + 2 * i, 4 + 2 * i);
            gp_series(f, i);
            fprintf(f, " title ");
            legend_title(f, c, a, &lg, i);
            first = 0;
        }
        if (first) empty_plot(f, c->lens[0], c->lens[c->n_lengths - 1]);
        fprintf(f, "\nset output\n");
    }
    if (atomic_commit(&f_file) != 0) return -1;
    return 0;
}

/* one CSV into the aggregate, or its run name into the missing list; slot: 0 a run, 1 + kind a fine-tune */
static int read_csv(const Compare *c, Agg *a, GenAgg *g, int s, int k, const char *csv, int slot) {
    a->n_expected[slot]++;
    FILE *f = fopen(csv, "r");
    if (!f) {
        const char *name = strrchr(csv, '/') ? strrchr(csv, '/') + 1 : csv;
        size_t n = strlen(a->missing);
        snprintf(a->missing + n, sizeof a->missing - n, "%s%.*s", n ? ", " : "", (int)strlen(name) - 4, name);
        return 0;
    }
    int rc = read_run(c, a, g, s, k, f, csv);
    fclose(f);
    if (rc != 0) return -1;
    a->n_found[slot]++;
    if (slot == 0) a->gate[s][k] = RUN_UNGATED; /* found; report_gates judges it */
    report_read_curve(c, csv, slot == 0 && c->base.converge, &a->curve[s][k][slot]); /* fine-tunes: fixed budgets */
    return 0;
}

/* every run's CSV (and fine-tunes') into series (the gen, jump and keyppl rows into g), in a fixed
 * row order: scheme, its rules, its fine-tunes; -1 with the message of a CSV that does not read */
void report_agg_begin(const Compare *c, Agg *a) {
    /* everything but the series, which series_get clears as it opens them: an Agg is megabytes */
    memset(a, 0, offsetof(Agg, s));
    memset((char *)a + offsetof(Agg, missing), 0, sizeof *a - offsetof(Agg, missing));
    for (int l = 0; l < c->n_lengths; l++) a->lmax = c->lens[l] > a->lmax ? c->lens[l] : a->lmax;
}

int compare_aggregate(const Compare *c, Agg *a, GenAgg *g) {
    report_agg_begin(c, a);
    memset(g, 0, sizeof *g);
    for (int s = 0; s < c->n_schemes; s++) {
        for (int r = 0; r <= c->n_rules; r++)
            if (r == 0 || compare_takes_rule(c, s, r - 1)) series_get(a, s, r ? c->rule[r - 1] : "none", c);
        for (int kind = 0; kind < FT_KINDS; kind++)
            if (compare_finetunes_with(c, s, kind)) series_get(a, s, c->finetune_label[kind], c);
        for (int k = 0; k < c->n_seeds; k++) {
            char csv[1200];
            compare_run_path(c, s, k, ".csv", csv, sizeof csv);
            if (read_csv(c, a, g, s, k, csv, 0) != 0) return -1;
            for (int kind = 0; kind < FT_KINDS; kind++) {
                if (!compare_finetunes_with(c, s, kind)) continue;
                compare_finetune_path(c, kind, s, k, ".csv", csv, sizeof csv);
                if (read_csv(c, a, g, s, k, csv, 1 + kind) != 0) return -1;
            }
        }
    }
    report_gates(c, a);
    return 0;
}

static void write_config(FILE *f, const Compare *c, const Agg *a) {
    const TrainConfig *b = &c->base;
    if (c->task) {
        fprintf(f, "- task: `%s`, trained on `%s` (%ld bytes of examples back to back from the run's seed; loss on "
                   "answers only; %s); task lengths scored:", c->task, c->data, (long)b->synth_bytes,
                b->align_examples ? "every training window starts at an example, as evaluation prompts do"
                                  : "training windows cut anywhere in the stream (--unaligned)");
        for (int l = 0; l < c->n_lengths; l++) fprintf(f, " %d", c->lens[l]);
        if (c->n_depths) fprintf(f, "; needle depths of the grid (as trained):");
        for (int d = 0; d < c->n_depths; d++) fprintf(f, " %g", c->depths[d]);
        fprintf(f, "\n");
        for (int s = 0; s < c->n_schemes; s++)
            if (c->rand_pos[s] > 0)
                fprintf(f, "- randomized positions (Ruoss et al. 2023), %s: every training row and every evaluated "
                           "example at sorted distinct position ids drawn from [0, %d)\n", c->scheme[s], c->rand_pos[s]);
    } else {
        fprintf(f, "- data: `%s`", c->data);
        if (strncmp(c->data, "synth:", 6) == 0)
            fprintf(f, " (synthetic corpus: %ld bytes, drawn from the run's seed)", (long)b->synth_bytes);
        fprintf(f, "; evaluation text: the held-out tail (last %g) of each run's data, ", b->val_frac);
        if (c->eval_tokens > 0) fprintf(f, "first %d tokens\n", c->eval_tokens);
        else fprintf(f, "all of it\n");
    }
    fprintf(f, "- training length L = %d, %ld steps, batch %d, lr %g, warmup %d (-1: 5%% of steps), %s weight products\n",
            b->seq_len, b->steps, b->batch, b->lr, b->warmup, precision_name(b->precision));
    fprintf(f, "- model: dim %d, layers %d, heads %d, kv-heads %d (0: heads), hidden %d (0: 3 x dim)\n", b->dim,
            b->layers, b->heads, b->kv_heads, b->hidden);
    fprintf(f, "- seeds:");
    for (int k = 0; k < c->n_seeds; k++) fprintf(f, " %llu", c->seed[k]);
    if (!c->task) {
        fprintf(f, "; lengths (--mult %s):", c->mult);
        for (int l = 0; l < c->n_lengths; l++) fprintf(f, " %d", c->lens[l]);
    }
    fprintf(f, "\n- post-hoc scaling rules on the models that take them:");
    for (int r = 0; r < c->n_rules; r++) fprintf(f, " %s", c->rule[r]);
    fprintf(f, "%s\n", c->n_rules ? "" : " none");
    if (a->n_expected[1 + FT_PI])
        fprintf(f, "- PI fine-tune of each run that takes rules (rule `%s`): from its checkpoint, trained with `--scale %s` at "
                   "length %d for %ld steps, batch %d, lr %g, warmup 5%%; evaluated as it is\n", c->finetune_label[FT_PI],
                c->finetune_rule, compare_finetune_len(c), compare_finetune_steps(c, FT_PI), b->batch, c->finetune_lr);
    if (a->n_expected[1 + FT_POSE])
        fprintf(f, "- PoSE fine-tune (Zhu et al. 2023) of each run that takes rules (rule `%s`): from its checkpoint, "
                   "trained with `--scale %s --pose %d` at length %d (each row's positions in %d chunks skipping into "
                   "[0, %d)) for %ld steps, batch %d (the PI fine-tune's %d steps x %d tokens), lr %g, warmup 5%%; "
                   "evaluated as it is\n",
                c->finetune_label[FT_POSE], c->finetune_rule, compare_finetune_len(c), b->seq_len, b->pose_chunks,
                compare_finetune_len(c), compare_finetune_steps(c, FT_POSE), b->batch, c->finetune_steps,
                compare_finetune_len(c), c->finetune_lr);
    if (!a->n_expected[1 + FT_PI] && !a->n_expected[1 + FT_POSE]) fprintf(f, "- no fine-tuning\n");
    if (c->passkey_frac > 0) fprintf(f, "- passkey documents: %g of training rows\n", c->passkey_frac);
    fprintf(f, "- runs: %d of %d finished", a->n_found[0], a->n_expected[0]);
    if (a->n_expected[1 + FT_PI])
        fprintf(f, "; PI fine-tunes: %d of %d finished", a->n_found[1 + FT_PI], a->n_expected[1 + FT_PI]);
    if (a->n_expected[1 + FT_POSE])
        fprintf(f, "; PoSE fine-tunes: %d of %d finished", a->n_found[1 + FT_POSE], a->n_expected[1 + FT_POSE]);
    fprintf(f, "%s%s\n", a->missing[0] ? "; missing: " : "", a->missing);
}

static void write_reliable_lengths(FILE *f, const Compare *c, const Agg *a) {
    fprintf(f, "\n## Reliable length\n\nThe largest tested length whose mean non-overlapping loss (and every "
               "tested length between it and L) stays within 5%% (relative) of the loss at L = %d%s.\n\n",
            c->base.seq_len, a->has_passkey ? ", with passkey accuracy >= 80% of that at L" : "");
    for (int i = 0; i < a->n_series; i++) {
        const Series *s = &a->s[i];
        char acc[32], comp[32], rel[64];
        fmt_limit(s->accepted, "unbounded", acc, sizeof acc);
        fmt_limit(s->computable, "unlimited", comp, sizeof comp);
        int r = reliable_length(c, a, s, a->has_passkey);
        if (r < 0) snprintf(rel, sizeof rel, "n/a (no loss at L)");
        else snprintf(rel, sizeof rel, "%d (%gL)", r, (double)r / c->base.seq_len);
        fprintf(f, "- %s: reliable length %s; accepted length %s; computable length %s\n", s->label, rel, acc, comp);
    }
}

/* --task: the accuracy tables, the plot and the files */
static int write_task_results(FILE *f, const Compare *c, const Agg *a, int plotted, int have_gp) {
    fprintf(f, "\nGreedy answers to %d fresh examples per task length (seed 1000003 + the run's seed: the same examples "
               "for every scheme, none from training), in %%, mean ± sample std over seeds; (past L): the longest "
               "example reaches past the training length L = %d; n/a: a learned table refuses it; —: no data.\n\n"
               "## Exact match\n\nThe whole answer, end marker included.\n\n", c->task_n, c->base.seq_len);
    table(f, c, a, TASK_EXACT);
    fprintf(f, "\n## Byte accuracy\n\nAnswer bytes right at their position.\n\n");
    table(f, c, a, TASK_BYTES);
    if (a->has_recall) {
        fprintf(f, "\n## RULER score\n\nRULER's string_match_all: of the references (the answer's values, names or "
                   "words) the fraction the model wrote, as whole words in any order, before its end marker (up to 2 "
                   "answer lengths; extra words cost nothing); the mean over examples.\n\n");
        table(f, c, a, TASK_RECALL);
    }
    report_effective_write(f, c, a);
    if (report_grid_write(f, c, a) != 0) return -1;
    fprintf(f, "\n## Plots\n\n");
    if (plotted)
        fprintf(f, "![%s vs task length](plots/accuracy_vs_length.png)\n\nSVG: plots/accuracy_vs_length.svg.\n",
                a->has_recall ? "RULER score" : "exact match");
    else if (have_gp) fprintf(f, "gnuplot failed (see plots/gnuplot.log); the data and script are in plots/.\n");
    else fprintf(f, "gnuplot not found: no plots drawn. The data and script are kept: `cd plots && gnuplot plots.gp`.\n");
    fprintf(f, "\n## Files\n\n- runs/SCHEME_sSEED.safetensors, runs/SCHEME_sSEED.csv (columns: %s; rows of kind task)\n"
               "- plots/accuracy_vs_length.dat, plots/plots.gp\n"
               "- runs/SCHEME_sSEED.curve.csv: each run's loss curve (%s); plots/curves_TAG.dat, plots/curves.gp\n"
               "- verdicts.csv: every pair of series at every length and metric\n", CMP_CSV_COLUMNS, CURVE_CSV_COLUMNS);
    return 0;
}

/* the report's first lines when its plots were not drawn: why, and how to get them */
static void plots_note(FILE *f, const Compare *c, int plotted, int have_gp) {
    if (plotted) return;
    if (have_gp)
        fprintf(f, "> **Plots failed**: gnuplot ran but stopped with an error (%s/plots/gnuplot.log); the plot data "
                   "(plots/*.dat) and scripts (plots/*.gp) are kept.\n\n", c->out);
    else
        fprintf(f, "> **No plots drawn**: %s. To get them, %s, then draw the data and scripts this run wrote: `cd "
                   "%s/plots && gnuplot plots.gp curves.gp` (and `gnuplot NAME.gp` in each plots/show_* folder)%s.\n\n",
                gp_missing(), GP_INSTALL_HINT, c->out,
                strcmp(c->name, "compare") == 0 ? ", or rerun the command with `--collect`, which trains nothing" : "");
}

/* report.md's text: -1 with pelab_errmsg */
static int report_body(FILE *f, const Compare *c, const Agg *a, const GenAgg *g, int plotted, int have_gp) {
    fprintf(f, "# pelab %s report\n\n", c->name);
    plots_note(f, c, plotted, have_gp);
    if (report_verdict_write(f, c, a) != 0) return -1;
    fprintf(f, "\n## Command\n\n```\n%s\n```\n\n## Configuration\n\n", sb_str(&c->cmdline));
    write_config(f, c, a);
    if (c->task) return write_task_results(f, c, a, plotted, have_gp) != 0 || report_runs_write(f, c, a, have_gp) != 0 ? -1 : 0;
    fprintf(f, "\nLoss in nats/token, mean ± sample std over seeds; n/a: the scheme refuses or cannot compute the "
               "length; —: no data.\n\n## Results: non-overlapping windows\n\n");
    if (c->nonoverlap_only) fprintf(f, "Position ids restart at 0 in every window (sliding windows: `pelab compare`).\n\n");
    table(f, c, a, EVAL_NONOVERLAP);
    if (!c->nonoverlap_only) {
        fprintf(f, "\n## Results: sliding windows\n\nStride L_eval/2: every scored token has at least L_eval/2 tokens "
                   "of context.\n\n");
        table(f, c, a, EVAL_SLIDING);
    }
    if (a->has_passkey) {
        fprintf(f, "\n## Passkey accuracy\n\nExact match, 10 trials at depths 10, 50, 90%%.\n\n");
        table(f, c, a, EVAL_N_PROTOCOLS);
    }
    write_reliable_lengths(f, c, a);
    report_gen_write(f, c, g);
    fprintf(f, "\n## Plots\n\n");
    if (plotted)
        fprintf(f, "![loss vs length](plots/loss_vs_length.png)\n\n![loss by position](plots/loss_by_position.png)\n\n"
                   "SVG: plots/loss_vs_length.svg, plots/loss_by_position.svg.\n");
    else if (have_gp) fprintf(f, "gnuplot failed (see plots/gnuplot.log); the data and script are in plots/.\n");
    else fprintf(f, "gnuplot not found: no plots drawn. The data and script are kept: `cd plots && gnuplot plots.gp`.\n");
    if (report_show_write(f, c) != 0 || report_runs_write(f, c, a, have_gp) != 0) return -1;
    fprintf(f, "\n## Files\n\n- runs/SCHEME_sSEED.safetensors, runs/SCHEME_sSEED.csv (columns: %s)\n", CMP_CSV_COLUMNS);
    if (a->n_expected[1 + FT_PI])
        fprintf(f, "- runs/SCHEME_sSEED_ft-pi%g.safetensors, .csv: the PI fine-tunes\n", c->finetune_scale);
    if (a->n_expected[1 + FT_POSE])
        fprintf(f, "- runs/SCHEME_sSEED_ft-pose%g.safetensors, .csv: the PoSE fine-tunes\n", c->finetune_scale);
    fprintf(f, "- plots/loss_vs_length.dat, plots/loss_by_position.dat (length %d), plots/plots.gp\n", a->lmax);
    fprintf(f, "- runs/SCHEME_sSEED.curve.csv: each run's loss curve (%s); plots/curves_TAG.dat, plots/curves.gp\n"
               "- verdicts.csv: every pair of series at every length and metric (test, seeds, means, difference "
               "and its 95%% interval, p, Holm-adjusted p, ranks)\n", CURVE_CSV_COLUMNS);
    return 0;
}

int compare_report(const Compare *c) {
    static Agg a; /* large: not on the stack */
    static GenAgg g;
    if (compare_aggregate(c, &a, &g) != 0) return -1;
    char dir[1200], path[1300];
    snprintf(dir, sizeof dir, "%s/plots", c->out);
    mkdir(dir, 0755);
    if ((c->task ? write_task_plots(c, &a, dir) : write_plots(c, &a, dir)) != 0) return -1;
    int have_gp, plotted = gp_run(dir, "plots.gp", &have_gp);
    snprintf(path, sizeof path, "%s/report.md", c->out);
    MemFile mf; /* written whole (a kill or a full disk leaves the old report), after verdicts.csv */
    FILE *f = memfile_open(&mf);
    if (!f) return -1;
    if (report_body(f, c, &a, &g, plotted, have_gp) != 0) {
        memfile_discard(&mf);
        return -1;
    }
    return memfile_commit(&mf, path);
}

/* a table cell's text: the mean, why a length was not computed, or "—" */
static void text_cell(const Compare *c, const Agg *a, const Series *s, int l, char *buf, size_t n) {
    int p = report_effective_metric(a); /* a task's headline: exact match, or RULER's score */
    if (c->task && n_of(a, s, p, l)) snprintf(buf, n, "%.1f%%", 100 * report_mean(a, s, p, l));
    else if (n_of(a, s, EVAL_NONOVERLAP, l)) snprintf(buf, n, "%.3f", report_mean(a, s, EVAL_NONOVERLAP, l));
    else if (s->status[l] == RES_PAST_TABLE || s->status[l] == RES_PAST_THE_TABLE) snprintf(buf, n, "past table");
    else if (s->status[l] != RES_OK) snprintf(buf, n, "past limit");
    else snprintf(buf, n, "-");
}

int compare_print_table(const Compare *c, FILE *out) {
    static Agg a;
    static GenAgg g;
    if (compare_aggregate(c, &a, &g) != 0) return -1;
    int width = 6;
    for (int i = 0; i < a.n_series; i++) width = (int)strlen(a.s[i].label) > width ? (int)strlen(a.s[i].label) : width;
    fprintf(out, "\n%-*s", width, "scheme");
    for (int l = 0; l < c->n_lengths; l++) {
        char head[32];
        if (c->task) snprintf(head, sizeof head, "len %d%s", c->lens[l], a.reach[l] > c->base.seq_len ? "*" : "");
        else snprintf(head, sizeof head, "%gL=%d", (double)c->lens[l] / c->base.seq_len, c->lens[l]);
        fprintf(out, "  %11s", head);
    }
    fprintf(out, "\n");
    for (int i = 0; i < a.n_series; i++) {
        fprintf(out, "%-*s", width, a.s[i].label);
        for (int l = 0; l < c->n_lengths; l++) {
            char buf[32];
            text_cell(c, &a, &a.s[i], l, buf, sizeof buf);
            fprintf(out, "  %11s", buf);
        }
        fprintf(out, "\n");
    }
    if (c->task) {
        fprintf(out, "(%s: %s of greedy answers, %d examples per length", c->task,
                a.has_recall ? "RULER score" : "exact match", c->task_n);
        if (c->n_seeds > 1) fprintf(out, ", mean over %d seeds", c->n_seeds);
        fprintf(out, "; *: examples reach past L = %d positions)\n", c->base.seq_len);
        report_effective_print(out, c, &a);
        report_verdict_print(out, c, &a);
        return 0;
    }
    fprintf(out, "(held-out loss in nats/token, non-overlapping windows, position ids from 0 in each window");
    if (c->n_seeds > 1) fprintf(out, ", mean over %d seeds", c->n_seeds);
    fprintf(out, "; lower is better; 5.55 = uniform)\n");
    report_verdict_print(out, c, &a);
    return 0;
}
