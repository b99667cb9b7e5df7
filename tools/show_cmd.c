/* show_cmd.c: `pelab show similarity|decay|wavelength|bias|attention`: pictures of the position
 * schemes. Each writes DIR/NAME.csv (the data; the bias map one CSV per head), DIR/NAME.gp (its
 * gnuplot script) and, when gnuplot is installed, DIR/NAME.png and DIR/NAME.svg. The numbers come
 * from infer/show.h (the schemes' own hooks) and infer/probe.h (attention). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../infer/probe.h"
#include "../infer/show.h"
#include "args.h"
#include "commands.h"
#include "../lab/gnuplot.h"
#include "load.h"
#include "../lab/show_plots.h"

typedef struct {
    const char *pos, *ckpt, *scales, *also, *at, *text, *out;
    int len, dist, n, dim, heads, layer, head;
    LoadFlags load; /* applied to the --ckpt model */
} ShowOpts;

/* the scheme to draw: a checkpoint's (--ckpt, its learned parameters), or --pos on the --dim,
 * --heads shape with the scheme's own initial parameters; *m holds the model to free */
static PosCtx *show_scheme(const ShowOpts *o, const char *def_pos, Model *m, PosCtx *pc, float **params) {
    *params = NULL;
    if (o->ckpt) {
        Tokenizer tok;
        load_model_or_die("show", o->ckpt, &o->load, m, &tok);
        tokenizer_free(&tok);
        return &m->pos;
    }
    const char *spec = o->pos ? o->pos : def_pos;
    if (show_scheme_init(pc, spec, o->dim, o->heads, 1, o->len, params) != 0) pelab_die("show: %s", pelab_errmsg);
    return pc;
}

static void show_similarity_cmd(const ShowOpts *o) {
    Model m = {0};
    PosCtx own;
    float *params;
    PosCtx *pc = show_scheme(o, "sinusoidal", &m, &own, &params);
    int n = o->n ? o->n : pc->seq_len;
    if (n < 2) pelab_die("show similarity: --n %d: expected at least 2 positions (it prints cos(p0, p1))", n);
    float *sim = xmalloc(sizeof(float) * (size_t)n * n);
    char spec[POS_SPEC_MAX], title[POS_SPEC_MAX + 96];
    pos_spec(pc, spec, sizeof spec);
    snprintf(title, sizeof title, "cosine similarity of position vectors, %s, positions 0..%d", spec, n - 1);
    if (show_similarity(pc, n, sim) != 0 || show_plot_heatmap(o->out, "similarity", title, sim, n, "3") < 0)
        pelab_die("show similarity: %s", pelab_errmsg);
    printf("similarity of %s: cos(p0, p1) %.4f, cos(p0, p%d) %.4f\n", spec, sim[1], n - 1, sim[n - 1]);
    free(sim);
    if (o->ckpt) model_free(&m);
    else pos_free(pc), free(params);
}

static void show_bias_cmd(const ShowOpts *o) {
    Model m = {0};
    PosCtx own;
    float *params;
    PosCtx *pc = show_scheme(o, "alibi", &m, &own, &params);
    int T = o->n ? o->n : 32;
    float *map = xmalloc(sizeof(float) * (size_t)pc->n_heads * T * T);
    for (int h = 0; h < pc->n_heads; h++)
        if (show_bias_map(pc, T, h, o->layer, map + (size_t)h * T * T) != 0) pelab_die("show bias: %s", pelab_errmsg);
    char spec[POS_SPEC_MAX];
    pos_spec(pc, spec, sizeof spec);
    if (show_plot_bias(o->out, spec, o->layer, map, pc->n_heads, T, stdout) < 0) pelab_die("show bias: %s", pelab_errmsg);
    printf("bias of %s, layer %d: b(%d, 0) per head:", spec, o->layer, T - 1);
    for (int h = 0; h < pc->n_heads; h++) printf(" %.4g", map[(size_t)h * T * T + (size_t)(T - 1) * T]);
    printf("\n");
    free(map);
    if (o->ckpt) model_free(&m);
    else pos_free(pc), free(params);
}

static void show_attention_cmd(const ShowOpts *o) {
    if (!o->ckpt) pelab_die("show attention: needs a trained model (--ckpt)");
    Model m;
    Tokenizer tok;
    load_model_or_die("show attention", o->ckpt, &o->load, &m, &tok);
    size_t avail;
    int *ids = load_text_or_die("show attention", o->text, &tok, &avail);
    int n = o->n ? o->n : m.cfg.seq_len;
    if ((size_t)n > avail) n = (int)avail;
    float *w = xmalloc(sizeof(float) * (size_t)n * n);
    double mean_dist;
    char title[160];
    snprintf(title, sizeof title, "attention, layer %d head %d, %d tokens (gray: sqrt of the weight)", o->layer,
             o->head, n);
    if (probe_attention(&m, ids, n, o->layer, o->head, w, &mean_dist) != 0 ||
        show_plot_heatmap(o->out, "attention", title, w, n, "(sqrt($3))") < 0)
        pelab_die("show attention: %s", pelab_errmsg);
    printf("attention layer %d head %d over %d tokens: mean attended distance %.1f tokens\n", o->layer, o->head, n,
           mean_dist);
    free(w), free(ids);
    model_free(&m);
    tokenizer_free(&tok);
}

/* decay and wavelength: the --pos scheme under each rule of --scales (a dynamic one at each
 * length of --at), then each spec of --also */
static void show_rotary_cmd(const ShowOpts *o, int decay) {
    ShowRotary r = {.train_len = o->len, .dim = o->dim, .heads = o->heads, .pos = o->pos ? o->pos : "rope"};
    double v[SHOW_MAX_SERIES];
    long at[SHOW_MAX_SERIES];
    int n_at = o->at ? args_numbers("show", "--at", o->at, 1, SHOW_MAX_AT, v, SHOW_MAX_SERIES) : 0;
    for (int k = 0; k < n_at; k++) {
        if (v[k] != floor(v[k])) pelab_die("show: --at %s: %g is not a whole length", o->at, v[k]);
        at[k] = (long)v[k];
    }
    if (show_rotary_series(&r, o->scales, at, n_at, o->also) != 0) pelab_die("show: %s", pelab_errmsg);
    int rc = decay ? show_plot_decay(o->out, &r, o->dist ? o->dist : 4 * o->len, stdout)
                   : show_plot_wavelength(o->out, &r, stdout);
    if (rc < 0) pelab_die("show %s: %s", decay ? "decay" : "wavelength", pelab_errmsg);
    show_rotary_free(&r);
}

int cmd_show(int argc, char **argv) {
    ShowOpts o = {.scales = "none", .out = "show", .len = 128, .dim = 256, .heads = 4, .load = LOAD_FLAGS_DEFAULT};
    const OptSpec opts[] = {
        {"--pos", OPT_STR, &o.pos, 0, 0,
         "scheme spec (default: similarity sinusoidal, bias alibi, decay and wavelength rope)"},
        {"--ckpt", OPT_STR, &o.ckpt, 0, 0, "similarity, bias, attention: the scheme and parameters of a checkpoint"},
        {"--scales", OPT_STR, &o.scales, 0, 0, "decay, wavelength: comma-separated scaling rules (none, pi:4, ...)"},
        {"--at", OPT_STR, &o.at, 0, 0, "decay, wavelength: comma-separated current lengths (1..4194304) for dynamic rules (default 2L,4L; decay: at least --dist + 1)"},
        {"--also", OPT_STR, &o.also, 0, 0,
         "decay, wavelength: more specs, ';'-separated (rope:keep=0.75;rope:max_period=128)"},
        {"--len", OPT_INT, &o.len, 2, 1 << 20, "training length L of a scheme without a checkpoint"},
        {"--dist", OPT_INT, &o.dist, 0, 1 << 22, "decay: largest distance (0: 4L)"},
        {"--n", OPT_INT, &o.n, 0, 8192, "similarity, bias, attention: positions (0: L; bias 32)"},
        {"--dim", OPT_INT, &o.dim, 2, 1 << 14, "model dim without a checkpoint"},
        {"--heads", OPT_INT, &o.heads, 1, 256, "heads without a checkpoint"},
        {"--layer", OPT_INT, &o.layer, 0, 1 << 20, "bias, attention: layer"},
        {"--head", OPT_INT, &o.head, 0, 1 << 20, "attention: head"},
        {"--text", OPT_STR, &o.text, 0, 0, "attention: text file (default: the built-in corpus)"},
        {"--out", OPT_OUT_DIR, &o.out, 0, 0, "directory for NAME.csv, NAME.gp, NAME.png, NAME.svg"},
        LOAD_FLAG_ROWS(&o.load),
    };
    const char *pos_args[1];
    int n_pos;
    args_parse("show", "similarity|decay|wavelength|bias|attention [flags]", argc, argv, 1, opts,
               sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (n_pos != 1) pelab_die("show: expected one of similarity, decay, wavelength, bias, attention");
    if (o.dim % o.heads != 0) pelab_die("show: --dim %d is not a multiple of --heads %d", o.dim, o.heads);
    if (make_dirs(o.out) != 0) pelab_die("show: %s", pelab_errmsg);
    const char *what = pos_args[0];
    int draws_ckpt = o.ckpt && strcmp(what, "decay") != 0 && strcmp(what, "wavelength") != 0;
    if (load_flags_given(&o.load) && !draws_ckpt)
        pelab_die("show %s: --scale, --precision, --kv-cache and --attn-scale apply to the --ckpt model of similarity, "
                  "bias and attention (decay and wavelength take --scales)", what);
    if (strcmp(what, "similarity") == 0) show_similarity_cmd(&o);
    else if (strcmp(what, "bias") == 0) show_bias_cmd(&o);
    else if (strcmp(what, "attention") == 0) show_attention_cmd(&o);
    else if (strcmp(what, "decay") == 0 || strcmp(what, "wavelength") == 0) show_rotary_cmd(&o, what[0] == 'd');
    else pelab_die("show: '%s': expected similarity, decay, wavelength, bias or attention", what);
    return 0;
}
