/* report_show.c: the pictures of the compared schemes in compare's report (report_show.h). */
#include "report_show.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../infer/show.h"
#include "../io/checkpoint.h"
#include "show_plots.h"

/* the picture's line in the report: an image link when drawn, else where its data are */
static void link_line(FILE *f, const char *what, const char *tag, const char *name, const char *data, int drawn) {
    if (drawn) fprintf(f, "- %s: ![%s](plots/show_%s/%s.png) (SVG: plots/show_%s/%s.svg)\n", what, name, tag, name, tag, name);
    else fprintf(f, "- %s: not drawn (gnuplot not found or failed); data plots/show_%s/%s, script plots/show_%s/%s.gp\n",
                 what, tag, data, tag, name);
}

static int wavelength_picture(FILE *f, const Compare *c, int i, const char *dir) {
    char scales[CMP_MAX_RULES * 66 + 8] = "none";
    for (int r = 0; r < c->n_rules; r++) {
        RopeRule rule;
        if (compare_takes_rule(c, i, r) && rope_rule_parse(c->rule[r], &rule) == 0) /* not an extension method */
            strcat(strcat(scales, ","), c->rule[r]);
    }
    ShowRotary r = {.pos = c->pos[i], .train_len = c->base.seq_len, .dim = c->base.dim, .heads = c->base.heads,
                    .layers = c->base.layers};
    int drawn = show_rotary_series(&r, scales, NULL, 0, NULL) == 0 ? show_plot_wavelength(dir, &r, NULL) : -1;
    show_rotary_free(&r);
    if (drawn < 0) return -1;
    char what[256];
    snprintf(what, sizeof what, "%s: wavelength 2 pi / theta_j of each rotary pair under %s, L = %d marked",
             c->scheme[i], scales, c->base.seq_len);
    link_line(f, what, c->tag[i], "wavelength", "wavelength.csv", drawn);
    return 0;
}

static int bias_picture(FILE *f, const Compare *c, int i, const char *dir) {
    char ckpt[1300];
    compare_run_path(c, i, 0, ".safetensors", ckpt, sizeof ckpt);
    Model m;
    PosCtx own, *pc = &own;
    float *params = NULL;
    /* no checkpoint (not trained yet): the initial parameters; one that does not load is an error,
     * not a picture of the initialisation */
    struct stat st;
    int trained = !(stat(ckpt, &st) != 0 && errno == ENOENT);
    if (trained && checkpoint_load(ckpt, &m, NULL, NULL, NULL) != 0) return pelab_fail("bias picture: %s", pelab_errmsg);
    if (trained) pc = &m.pos;
    else if (show_scheme_init(&own, c->pos[i], c->base.dim, c->base.heads, c->base.layers, c->base.seq_len,
                                   &params) != 0) return -1;
    int T = c->base.seq_len < 64 ? c->base.seq_len : 64, H = pc->n_heads, drawn = 0;
    float *maps = xmalloc(sizeof(float) * (size_t)H * T * T);
    for (int h = 0; h < H && drawn == 0; h++) drawn = show_bias_map(pc, T, h, 0, maps + (size_t)h * T * T);
    if (drawn == 0) drawn = show_plot_bias(dir, c->pos[i], 0, maps, H, T, NULL);
    free(maps), free(params);
    if (trained) model_free(&m);
    else pos_free(&own);
    if (drawn < 0) return -1;
    char what[256];
    if (trained) snprintf(what, sizeof what, "%s: score bias b(i, j) per head, layer 0, trained (seed %llu's checkpoint)",
                          c->scheme[i], c->seed[0]);
    else snprintf(what, sizeof what, "%s: score bias b(i, j) per head, layer 0, at initialisation (no checkpoint)",
                  c->scheme[i]);
    link_line(f, what, c->tag[i], "bias", "bias_h*.csv", drawn);
    return 0;
}

int report_show_write(FILE *f, const Compare *c) {
    int any = 0;
    for (int i = 0; i < c->n_schemes; i++) {
        const PosScheme *s = pos_find_spec(c->scheme[i]);
        int rotary = compare_takes_rules(c, i), bias = s && s->bias_row;
        if (!rotary && !bias) continue;
        char dir[1300];
        snprintf(dir, sizeof dir, "%s/plots/show_%s", c->out, c->tag[i]);
        if (make_dirs(dir) != 0) return -1;
        if (!any) fprintf(f, "\n## Pictures of the schemes\n\nDrawn as `pelab show` draws them (docs/SCHEMES.md, Pictures).\n\n");
        any = 1;
        if ((rotary && wavelength_picture(f, c, i, dir) != 0) || (bias && bias_picture(f, c, i, dir) != 0)) return -1;
    }
    return 0;
}
