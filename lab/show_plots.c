/* show_plots.c: CSV, gnuplot script and PNG/SVG of each `pelab show` picture (show_plots.h). */
#include "show_plots.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../infer/show.h"
#include "gnuplot.h"

static int add_series(ShowRotary *r, const char *spec, const char *rule, long at, const char *label) {
    if (r->n == SHOW_MAX_SERIES) return pelab_fail("more than %d variants in one picture", SHOW_MAX_SERIES);
    PosCtx *pc = &r->pc[r->n];
    if (show_scheme_init(pc, spec, r->dim, r->heads, r->layers > 0 ? r->layers : 1, r->train_len, &r->params[r->n]) != 0) return -1;
    if (!(pc->scheme->caps & POS_CAP_RULES)) {
        pos_free(pc), free(r->params[r->n]);
        return pelab_fail("%s: no rotation to draw (decay and wavelength take rope or xpos)", spec);
    }
    if (rule && strcmp(rule, "none") != 0 && pos_set_scale(pc, rule) != 0) {
        pos_free(pc), free(r->params[r->n]);
        return -1;
    }
    r->at[r->n] = at;
    snprintf(r->label[r->n], sizeof r->label[0], "%s", label);
    r->n++;
    return 0;
}

/* the next item of a list up to sep, into buf; NULL at the end */
static const char *next_item(const char *s, char sep, char *buf, size_t n) {
    if (!s || !*s) return NULL;
    size_t k = strcspn(s, (char[]){sep, 0});
    snprintf(buf, n, "%.*s", (int)k, s);
    return s[k] ? s + k + 1 : s + k;
}

int show_rotary_series(ShowRotary *r, const char *scales, const long *at, int n_at, const char *also) {
    r->n = 0;
    long lens[SHOW_MAX_SERIES] = {2L * r->train_len, 4L * r->train_len};
    int n_lens = 2;
    char item[POS_SPEC_MAX], label[POS_SPEC_MAX + 48];
    if (n_at > 0) {
        if (n_at > SHOW_MAX_SERIES) return pelab_fail("--at: more than %d lengths", SHOW_MAX_SERIES);
        for (n_lens = 0; n_lens < n_at; n_lens++) {
            if (at[n_lens] < 1 || at[n_lens] > SHOW_MAX_AT)
                return pelab_fail("--at %ld: expected a length in 1..%d", at[n_lens], SHOW_MAX_AT);
            lens[n_lens] = at[n_lens];
        }
    }
    for (const char *s = scales; (s = next_item(s, ',', item, sizeof item));) {
        RopeRule rule;
        PosExtend method;
        if (extend_parse(item, &method) == 1)
            return pelab_fail("--scales %s: an extension method remaps positions inside attention, not the "
                              "frequencies these pictures draw", item);
        if (rope_rule_parse(item, &rule) != 0) return -1;
        if (!rope_rule_is_dynamic(&rule)) {
            if (add_series(r, r->pos, item, r->train_len, item) != 0) return -1;
            continue;
        }
        for (int k = 0; k < n_lens; k++) {
            snprintf(label, sizeof label, "%s at length %ld", item, lens[k]);
            if (add_series(r, r->pos, item, lens[k], label) != 0) return -1;
        }
    }
    for (const char *s = also; (s = next_item(s, ';', item, sizeof item));)
        if (add_series(r, item, NULL, r->train_len, item) != 0) return -1;
    if (r->n == 0) return pelab_fail("no variant to draw (--scales and --also are empty)");
    return 0;
}

void show_rotary_free(ShowRotary *r) {
    for (int i = 0; i < r->n; i++) pos_free(&r->pc[i]), free(r->params[i]);
    r->n = 0;
}

/* write script body (with a preamble) to DIR/NAME.gp for NAME.png and NAME.svg, and run gnuplot */
static int draw(const char *dir, const char *name, const char *data, int width, int height, const char *body,
                FILE *log) {
    char path[1024], script[160];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(path, sizeof path, "%s/%s", dir, script);
    AtomicFile file;
    FILE *f = atomic_open(&file, path);
    if (!f) return -1;
    fprintf(f, "# gnuplot %s (in this directory): %s.png, %s.svg\n", script, name, name);
    gp_preamble(f);
    fprintf(f, "set datafile separator ','\n");
    gp_png_svg(f, name, width, height, body);
    if (atomic_commit(&file) != 0) return -1;
    int have_gp, drawn = gp_run(dir, script, &have_gp);
    if (log)
        fprintf(log, "%s/: %s, %s: %s\n", dir, data, script,
                drawn ? "drawn as .png and .svg" : have_gp ? "gnuplot failed (see gnuplot.log)" : "gnuplot not found, not drawn");
    return drawn;
}

/* header "x,label,..." then rows of x and the variants' columns (non-finite: NaN) */
static int write_columns(const char *path, const char *x, const ShowRotary *r, const double *v, int rows) {
    AtomicFile file;
    FILE *f = atomic_open(&file, path);
    if (!f) return -1;
    fprintf(f, "%s", x);
    for (int s = 0; s < r->n; s++) fprintf(f, ",\"%s\"", r->label[s]); /* labels hold commas */
    fputc('\n', f);
    for (int i = 0; i < rows; i++) {
        fprintf(f, "%d", i);
        for (int s = 0; s < r->n; s++) {
            double y = v[(size_t)s * rows + i];
            if (isfinite(y)) fprintf(f, ",%.6g", y);
            else fprintf(f, ",NaN");
        }
        fputc('\n', f);
    }
    return atomic_commit(&file);
}

/* DIR/NAME.csv (x, then one column per variant: v is [variants, rows]) and its line plot:
 * the script's settings, one line per variant, then extra (", more plot items" or "") */
static int line_plot(const char *dir, const char *name, const char *x, const ShowRotary *r, const double *v, int rows,
                     const char *settings, const char *extra, FILE *log) {
    char path[1024], csv[64];
    snprintf(csv, sizeof csv, "%s.csv", name);
    snprintf(path, sizeof path, "%s/%s", dir, csv);
    if (write_columns(path, x, r, v, rows) != 0) return -1;
    StrBuf b = {0};
    sb_printf(&b, "%splot ", settings);
    int every = rows / 12 > 1 ? rows / 12 : 1; /* a marker every few points: the lines stay readable */
    for (int s = 0; s < r->n; s++) {
        sb_printf(&b, "%s'%s' skip 1 using 1:%d with linespoints ", s ? ", " : "", csv, s + 2);
        gp_sb_series_style(&b, s);
        sb_printf(&b, " pi %d title ", every);
        gp_sb_string(&b, r->label[s]);
    }
    sb_printf(&b, "%s\n", extra);
    int rc = draw(dir, name, csv, 1000, 600, sb_str(&b), log);
    sb_free(&b);
    return rc;
}

int show_plot_decay(const char *dir, ShowRotary *r, int dist, FILE *log) {
    int rows = dist + 1;
    double *v = xmalloc(sizeof(double) * (size_t)r->n * rows);
    int rc = 0;
    for (int s = 0; s < r->n && rc == 0; s++) rc = show_decay(&r->pc[s], r->at[s], rows, v + (size_t)s * rows);
    if (rc == 0 && log) {
        fprintf(log, "RoFormer relative upper bound (1/(d/2)) sum_j |S_j| at distance 0, L = %d, %d:\n", r->train_len,
                dist);
        for (int s = 0; s < r->n; s++)
            fprintf(log, "  %-32s %8.3f %8.3f %8.3f\n", r->label[s], v[(size_t)s * rows],
                    v[(size_t)s * rows + (r->train_len < rows ? r->train_len : dist)], v[(size_t)s * rows + dist]);
    }
    char settings[1024];
    snprintf(settings, sizeof settings,
             "set title \"RoPE's long-range decay: RoFormer's relative upper bound\\n(1/(d/2)) sum_j |S_j|, "
             "S_j = sum_{k<j} e^{i m theta_k} (Su et al. 2021, 3.4.3); dashed: L\"\nset key top right inside\n"
             "set xlabel 'relative distance m'\nset ylabel 'upper bound'\nset xrange [0:%d]\n"
             "set arrow from %d, graph 0 to %d, graph 1 nohead dt 2 lc rgb 'black'\n",
             dist, r->train_len, r->train_len);
    if (rc == 0) rc = line_plot(dir, "decay", "distance", r, v, rows, settings, "", log);
    free(v);
    return rc;
}

int show_plot_wavelength(const char *dir, ShowRotary *r, FILE *log) {
    int pairs = 0;
    for (int s = 0; s < r->n; s++) pairs = pos_rotary_pairs(&r->pc[s]) > pairs ? pos_rotary_pairs(&r->pc[s]) : pairs;
    double *v = xmalloc(sizeof(double) * (size_t)r->n * (pairs ? pairs : 1));
    int rc = 0;
    for (int s = 0; s < r->n && rc == 0; s++) {
        double *col = v + (size_t)s * pairs;
        for (int j = 0; j < pairs; j++) col[j] = NAN; /* a partial-rotary variant has fewer pairs */
        rc = show_wavelengths(&r->pc[s], r->at[s], col);
    }
    if (rc == 0 && log) {
        fprintf(log, "pairs completing a turn inside L = %d (wavelength <= L) of %d; slowest wavelength:\n",
                r->train_len, pairs);
        for (int s = 0; s < r->n; s++) {
            int inside = 0;
            double slowest = 0;
            for (int j = 0; j < pairs; j++) {
                double w = v[(size_t)s * pairs + j];
                inside += w <= r->train_len;
                if (isfinite(w) && w > slowest) slowest = w;
            }
            fprintf(log, "  %-32s %3d  %10.1f\n", r->label[s], inside, slowest);
        }
    }
    char settings[512], extra[128];
    snprintf(settings, sizeof settings,
             "set title \"wavelength 2 pi / theta_j per rotary pair\\nbelow L a pair turns fully inside the "
             "training window; above it, positions past L are new angles\"\nset key top left inside\n"
             "set xlabel 'pair j (fastest first)'\nset ylabel 'wavelength (positions)'\nset logscale y\n"
             "set xrange [0:%d]\n", pairs - 1);
    snprintf(extra, sizeof extra, ", %d with lines dt 2 lc rgb 'black' title 'training length L = %d'", r->train_len,
             r->train_len);
    if (rc == 0) rc = line_plot(dir, "wavelength", "pair", r, v, pairs, settings, extra, log);
    free(v);
    return rc;
}

/* the image of one n x n CSV matrix, row 0 on top */
static void image(StrBuf *b, const char *csv, int n, const char *title, const char *z) {
    sb_printf(b, "set title ");
    gp_sb_string(b, title); /* single quotes: a `backquote` in a spec is not run */
    sb_printf(b, "\nset size ratio -1\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n"
                 "set xlabel 'key position j'\nset ylabel 'query position i'\n"
                 "plot '%s' matrix using 1:2:%s with image notitle\n",
              n - 1, n - 1, csv, z);
}

int show_plot_heatmap(const char *dir, const char *name, const char *title, const float *m, int n, const char *z) {
    char path[1024], csv[160];
    snprintf(csv, sizeof csv, "%s.csv", name);
    snprintf(path, sizeof path, "%s/%s", dir, csv);
    if (gp_matrix_csv(path, m, n, n) != 0) return -1;
    StrBuf b = {0};
    sb_printf(&b, "unset grid\nset palette grey negative\n");
    image(&b, csv, n, title, z);
    int rc = draw(dir, name, csv, 800, 700, sb_str(&b), stdout);
    sb_free(&b);
    return rc;
}

int show_plot_bias(const char *dir, const char *spec, int layer, const float *maps, int heads, int T, FILE *log) {
    StrBuf b = {0};
    int cols = heads < 4 ? heads : 4, rows = (heads + cols - 1) / cols;
    char title[POS_SPEC_MAX + 64];
    snprintf(title, sizeof title, "score bias b(i, j), %s, layer %d", spec, layer);
    sb_printf(&b, "unset grid\nunset key\nset palette defined (0 '#08306b', 1 '#f7fbff')\n"
                  "set multiplot layout %d,%d title ", rows, cols);
    gp_sb_string(&b, title);
    sb_printf(&b, "\n");
    int rc = 0;
    for (int h = 0; h < heads && rc == 0; h++) {
        char path[1024], csv[64], title[32];
        snprintf(csv, sizeof csv, "bias_h%d.csv", h);
        snprintf(path, sizeof path, "%s/%s", dir, csv);
        snprintf(title, sizeof title, "head %d", h);
        rc = gp_matrix_csv(path, maps + (size_t)h * T * T, T, T);
        image(&b, csv, T, title, "3");
    }
    sb_printf(&b, "unset multiplot\n");
    if (rc == 0) rc = draw(dir, "bias", "bias_h*.csv", 300 * cols + 100, 300 * rows + 80, sb_str(&b), log);
    sb_free(&b);
    return rc;
}
