/* gnuplot.h: writing gnuplot scripts and running gnuplot on them, for the reports of compare,
 * demo and task eval. The data and script are always written; gnuplot draws them when installed. */
#ifndef PELAB_GNUPLOT_H
#define PELAB_GNUPLOT_H

#include <stdio.h>

#include "../core/strbuf.h"

/* s as a gnuplot single-quoted string: a quote doubled, a newline (which would end the command)
 * a space; inside single quotes gnuplot runs no `backquoted` command */
void gp_string(FILE *f, const char *s);
/* the same, appended to b (a script built in memory) */
void gp_sb_string(StrBuf *b, const char *s);
/* Every series its own colour and marker: a fixed palette of GP_COLOURS crossed with GP_MARKERS
 * point types (coprime counts), so series i and j < GP_COLOURS * GP_MARKERS differ in colour or
 * marker, and the first GP_COLOURS in both. */
enum { GP_COLOURS = 21, GP_MARKERS = 13 };
/* series i's colour ("#rrggbb") and gnuplot point type */
void gp_series_style(int i, const char **colour, int *point);
/* "lc rgb '#rrggbb' pt P" of series i, appended to b / written to f */
void gp_sb_series_style(StrBuf *b, int i);
void gp_series(FILE *f, int i);
/* the common preamble: missing values, key, grid, and linetypes 1..GP_COLOURS in the series' styles */
void gp_preamble(FILE *f);
/* "set terminal ... / set output 'NAME.EXT'" for ext "png" (pngcairo when gnuplot has it) or "svg" */
void gp_output(FILE *f, const char *name, const char *ext, int width, int height);

/* 1 if gnuplot would run: on $PATH, and PELAB_NO_GNUPLOT unset or empty */
int gp_available(void);
/* why it would not: "gnuplot is not installed (not on PATH)" or that PELAB_NO_GNUPLOT is set */
const char *gp_missing(void);
/* how a user without gnuplot gets the plots, for reports and terminals */
#define GP_INSTALL_HINT "install gnuplot (Debian/Ubuntu: `sudo apt-get install gnuplot-nox`; macOS: `brew install gnuplot`)"

/* Runs gnuplot on DIR/SCRIPT unless gnuplot is not on $PATH (or PELAB_NO_GNUPLOT is set, as in the
 * tests: the path CI takes); *have_gp says whether it was found. Returns 1 if the plots were drawn.
 * No shell: the child changes to DIR and execs gnuplot with a fixed argv (output in gnuplot.log). */
int gp_run(const char *dir, const char *script, int *have_gp);
/* a matrix as CSV, one row per line (gnuplot's `matrix with image`, NaN for a missing cell); -1
 * with one line naming the file */
int gp_matrix_csv(const char *path, const float *m, int rows, int cols);
/* the script lines `body` twice, after gp_output for NAME.png and for NAME.svg */
void gp_png_svg(FILE *f, const char *name, int width, int height, const char *body);

#endif
