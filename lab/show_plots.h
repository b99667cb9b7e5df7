/* show_plots.h: the files of `pelab show`'s pictures (CSV + gnuplot script + PNG/SVG), for the
 * show command and for compare's report. Each plot function returns 1 when gnuplot drew the
 * PNG and SVG, 0 when it did not (not installed, PELAB_NO_GNUPLOT, or it failed: the CSV and
 * script are kept), -1 with one line on an error. log (NULL: quiet) gets one line per file set. */
#ifndef PELAB_SHOW_PLOTS_H
#define PELAB_SHOW_PLOTS_H

#include <stdio.h>

#include "../model/pos/pos.h"

enum { SHOW_MAX_SERIES = 24 }; /* every series its own colour and marker (gnuplot.h): 21 colours, 13 markers */

/* the rotary variants of one decay or wavelength picture */
typedef struct {
    const char *pos; /* the base spec (rope, xpos, ...) */
    int train_len, dim, heads;
    int layers;      /* the model's (a +nope@ list names layers); 0: one */
    int n;
    char label[SHOW_MAX_SERIES][POS_SPEC_MAX + 48];
    long at[SHOW_MAX_SERIES]; /* the current length each is drawn at (a dynamic rule's) */
    PosCtx pc[SHOW_MAX_SERIES];
    float *params[SHOW_MAX_SERIES];
} ShowRotary;

enum { SHOW_MAX_AT = 1 << 22 }; /* the longest current length drawn (--at): the rotary tables grow to it, as --dist */
/* pos under each rule of the comma-separated scales ("none,pi:4,dynamic-ntk"; a rule that follows
 * the length once for each of the n_at lengths at, each in 1..SHOW_MAX_AT; n_at 0: 2L and 4L),
 * then each spec of the ';'-separated also (NULL: none) */
int show_rotary_series(ShowRotary *r, const char *scales, const long *at, int n_at, const char *also);
void show_rotary_free(ShowRotary *r);

/* decay.csv (distance, one bound per variant; show_decay) and its plot, distances 0..dist */
int show_plot_decay(const char *dir, ShowRotary *r, int dist, FILE *log);
/* wavelength.csv (pair, one wavelength per variant; NaN: the pair does not rotate), log scale,
 * the training length marked */
int show_plot_wavelength(const char *dir, ShowRotary *r, FILE *log);
/* NAME.csv: an n x n matrix, drawn as an image (z: the gnuplot using-column of the value, "3" or "(sqrt($3))") */
int show_plot_heatmap(const char *dir, const char *name, const char *title, const float *m, int n, const char *z);
/* bias_hH.csv for each head (maps: [heads, T, T]) and bias.{png,svg}, one panel per head */
int show_plot_bias(const char *dir, const char *spec, int layer, const float *maps, int heads, int T, FILE *log);

#endif
