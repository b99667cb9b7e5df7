/* gp_grid.c: the depth x length heatmap (gp_grid.h). */
#include "gp_grid.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "gnuplot.h"

int gp_grid_dat(const char *path, const double *v, int n_depth, int n_len) {
    AtomicFile file;
    FILE *f = atomic_open(&file, path);
    if (!f) return -1;
    for (int d = 0; d < n_depth; d++, fputc('\n', f))
        for (int i = 0; i < n_len; i++) {
            double x = v[d * n_len + i];
            if (isnan(x)) fprintf(f, "%sNaN", i ? " " : "");
            else fprintf(f, "%s%.3f", i ? " " : "", 100 * x);
        }
    return atomic_commit(&file);
}

void gp_grid_plot(FILE *f, const char *name, const char *title, const char *what, const char *depth_label,
                  const int *lens, int n_len, const double *depths, int n_depth) {
    fprintf(f, "unset logscale x\nunset arrow\nunset grid\nset xlabel 'task length'\nset ylabel ");
    gp_string(f, depth_label);
    fprintf(f, "\nset cbrange [0:100]\nset cblabel ");
    gp_string(f, what);
    fprintf(f, "\nset palette defined (0 '#ffffff', 1 '#0072b2')\nset xrange [*:*]\nset yrange [*:*] reverse\nset xtics (");
    for (int i = 0; i < n_len; i++) fprintf(f, "%s'%d' %d", i ? ", " : "", lens[i], i);
    fprintf(f, ")\nset ytics (");
    for (int d = 0; d < n_depth; d++) fprintf(f, "%s'%.2f' %d", d ? ", " : "", depths[d], d);
    fprintf(f, ")\nset autoscale xfix\nset autoscale yfix\nset title ");
    gp_string(f, title);
    fputc('\n', f);
    for (int t = 0; t < 2; t++) {
        gp_output(f, name, t ? "svg" : "png", 900, 600);
        fprintf(f, "plot '%s.dat' matrix with image notitle, "
                   "'' matrix using 1:2:($3 == $3 ? sprintf('%%.0f', $3) : '') with labels notitle\nset output\n", name);
    }
    fprintf(f, "set yrange [*:*] noreverse\nset xtics autofreq\nset ytics autofreq\nset grid\n");
}
