/* report_grid.c: the depth x length grid of a compare --task report (report_grid.h). */
#include "report_grid.h"

#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "gnuplot.h"
#include "gp_grid.h"
#include "report_effective.h"

static int depth_index(const Compare *c, double depth) {
    for (int d = 0; d < c->n_depths; d++)
        if (fabs(c->depths[d] - depth) < 5e-3) return d; /* the CSV holds 2 decimals */
    return -1;
}

void report_grid_take(const Compare *c, Agg *a, int si, int k, const ResultRow *r) {
    int d = isnan(r->depth) ? -1 : depth_index(c, r->depth);
    int l = r->length == RES_NONE ? -1 : report_length_index(c, (int)r->length);
    if (d < 0 || l < 0 || strcmp(r->rule ? r->rule : "none", "none") != 0 || isnan(r->value)) return;
    if (!a->grid_open[si]) {
        memset(a->has_grid[si], 0, sizeof a->has_grid[si]);
        a->grid_open[si] = 1;
    }
    a->grid[si][d][l][k] = r->value, a->has_grid[si][d][l][k] = 1;
}

double report_grid_mean(const Agg *a, int s, int d, int l) {
    double sum = 0;
    int n = 0;
    for (int k = 0; a->grid_open[s] && k < CMP_MAX_SEEDS; k++)
        if (a->has_grid[s][d][l][k] && a->gate[s][k] != RUN_FAIL) sum += a->grid[s][d][l][k], n++;
    return n ? sum / n : NAN;
}

int report_grid_write(FILE *f, const Compare *c, const Agg *a) {
    int any = 0;
    for (int s = 0; s < c->n_schemes; s++) any |= a->grid_open[s];
    if (!any) return 0;
    int order[CMP_MAX_LENGTHS], lens[CMP_MAX_LENGTHS], n = c->n_lengths;
    report_length_order(c, order);
    for (int i = 0; i < n; i++) lens[i] = c->lens[order[i]];
    const char *what = report_effective_metric(a) == TASK_RECALL ? "RULER score" : "exact match";
    char path[1400];
    snprintf(path, sizeof path, "%s/plots/grid.gp", c->out);
    AtomicFile gp_file;
    FILE *gp = atomic_open(&gp_file, path);
    if (!gp) return -1;
    fprintf(gp, "# gnuplot grid.gp (in this directory): grid_TAG.{png,svg}, the depth x length grid per scheme\n");
    gp_preamble(gp);
    fprintf(f, "\n## Depth x length\n\n%s (%%) with the needle at each depth (0: first in the haystack, 1: last) "
               "and each task length, per scheme as trained: the mean over the seeds that passed the gate "
               "(--task-depths; —: none). Data: plots/grid_TAG.dat (depth down, length across), script plots/grid.gp.\n",
            what);
    int rc = 0;
    for (int s = 0; s < c->n_schemes && rc == 0; s++) {
        if (!a->grid_open[s]) continue;
        double v[CMP_MAX_DEPTHS * CMP_MAX_LENGTHS];
        fprintf(f, "\n### %s\n\n| depth |", c->scheme[s]);
        for (int i = 0; i < n; i++) fprintf(f, " %d |", lens[i]);
        fprintf(f, "\n|---|");
        for (int i = 0; i < n; i++) fprintf(f, "---:|");
        for (int d = 0; d < c->n_depths; d++) {
            fprintf(f, "\n| %.2f |", c->depths[d]);
            for (int i = 0; i < n; i++) {
                double m = v[d * n + i] = report_grid_mean(a, s, d, order[i]);
                if (isnan(m)) fprintf(f, " — |");
                else fprintf(f, " %.1f |", 100 * m);
            }
        }
        fprintf(f, "\n");
        char name[200], title[300], dat[1600];
        snprintf(name, sizeof name, "grid_%s", c->tag[s]);
        snprintf(dat, sizeof dat, "%s/plots/%s.dat", c->out, name);
        rc = gp_grid_dat(dat, v, c->n_depths, n);
        snprintf(title, sizeof title, "%s: %s, depth x length", c->scheme[s], what);
        char cb[64];
        snprintf(cb, sizeof cb, "%s (%%)", what);
        gp_grid_plot(gp, name, title, cb, "needle depth", lens, n, c->depths, c->n_depths);
        fprintf(f, "\n![%s depth x length](plots/%s.png)\n", c->scheme[s], name);
    }
    if (rc != 0) atomic_discard(&gp_file);
    else rc = atomic_commit(&gp_file);
    if (rc != 0) return -1;
    snprintf(path, sizeof path, "%s/plots", c->out);
    int have_gp, drawn = gp_run(path, "grid.gp", &have_gp);
    if (!drawn) fprintf(f, "\n(%s: the data and grid.gp are in plots/.)\n", have_gp ? "gnuplot failed" : "gnuplot not found");
    return 0;
}
