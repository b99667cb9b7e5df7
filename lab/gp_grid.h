/* gp_grid.h: the depth x length heatmap of a retrieval task (task eval's, and compare's per
 * scheme): a matrix file NAME.dat, depth down and length across, drawn as an image with each
 * cell's value written in it. */
#ifndef PELAB_GP_GRID_H
#define PELAB_GP_GRID_H

#include <stdio.h>

/* v[d * n_len + i] (a fraction; NaN: no figure) as percentages into path, one depth per line; -1
 * with one line naming the file */
int gp_grid_dat(const char *path, const double *v, int n_depth, int n_len);
/* the script lines for NAME.png and NAME.svg of NAME.dat: lengths lens[] across, depths down
 * (0 at the top), the colour scale 0..100 labelled what; leaves the x axis linear, no arrows, no
 * grid (unset for it) */
void gp_grid_plot(FILE *f, const char *name, const char *title, const char *what, const char *depth_label,
                  const int *lens, int n_len, const double *depths, int n_depth);

#endif
