/* probe_cmd.c: `pelab probe CKPT distance|permutation|attention|sinks|cache`. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../data/tokenizer.h"
#include "../infer/probe.h"
#include "../io/png.h"
#include "../io/results.h"
#include "args.h"
#include "commands.h"
#include "../lab/gnuplot.h"
#include "load.h"

/* the attention probe's files: the weights as CSV, and a PNG with gray = sqrt of the weight (dark
 * = attended), so faint long-range attention stays visible */
static int attention_files(Model *m, const int *ids, int n, int layer, int head, const char *csv_path,
                           const char *png_path) {
    float *w = xmalloc(sizeof(float) * (size_t)n * n);
    double mean_dist;
    int rc = probe_attention(m, ids, n, layer, head, w, &mean_dist);
    if (rc == 0) rc = gp_matrix_csv(csv_path, w, n, n);
    unsigned char *img = xmalloc((size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++) img[i] = (unsigned char)(255.0 * (1.0 - sqrt(w[i])) + 0.5);
    if (rc == 0 && png_path) rc = png_write_gray(png_path, img, n, n);
    if (rc == 0)
        printf("attention layer %d head %d over %d tokens: %s%s%s; mean attended distance %.1f tokens\n", layer, head,
               n, csv_path, png_path ? ", " : "", png_path ? png_path : "", mean_dist);
    free(img), free(w);
    return rc;
}

/* the sink probe's table: per layer the first token's attention from the second half's queries */
static int sinks_report(Model *m, const int *ids, size_t n, int len, int windows, int sink_token) {
    int L = m->cfg.n_layers;
    double *mass = xmalloc(sizeof(double) * L), *head_max = xmalloc(sizeof(double) * L), uniform;
    int rc = probe_sinks(m, ids, n, len, windows, sink_token, mass, head_max, &uniform);
    if (rc == 0) {
        printf("first-token attention, queries %d..%d of %d windows of %d tokens%s (uniform row: %.4f)\n", len / 2,
               len - 1, windows, len, sink_token >= 0 ? ", each opened by the sink token" : "", uniform);
        results_csv_header(stdout, &RES_SINKS_CSV);
        for (int l = 0; l < L; l++) {
            ResultRow w = result_row();
            w.layer = l, w.value = mass[l], w.value2 = head_max[l], w.ratio = mass[l] / uniform;
            results_csv_row(stdout, &RES_SINKS_CSV, &w);
        }
    }
    free(mass), free(head_max);
    return rc;
}

int cmd_probe(int argc, char **argv) {
    const char *text = NULL, *distances = NULL, *csv = "attention.csv", *png = "attention.png";
    LoadFlags load = LOAD_FLAGS_DEFAULT;
    int trials = 20, layer = 0, head = 0, len = 0, threads = 0, windows = 16, sink_token = -1;
    unsigned long long seed = 1;
    const OptSpec opts[] = {
        {"--text", OPT_STR, &text, 0, 0, "text to probe with (default: the built-in corpus)"},
        {"--distances", OPT_STR, &distances, 0, 0, "distance: fact-to-query distances (default L/4,L,4L,16L)"},
        {"--trials", OPT_INT, &trials, 1, 1 << 20, "distance: trials per distance"},
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "distance: seed for words and filler"},
        {"--layer", OPT_INT, &layer, 0, 1 << 20, "attention: layer"},
        {"--head", OPT_INT, &head, 0, 1 << 20, "attention: head"},
        {"--csv", OPT_OUT_FILE, &csv, 0, 0, "attention: CSV output"},
        {"--png", OPT_OUT_FILE, &png, 0, 0, "attention: PNG output"},
        {"--len", OPT_INT, &len, 0, 1 << 20, "tokens to use (0: the training length)"},
        {"--windows", OPT_INT, &windows, 1, 1 << 20, "sinks: windows of --len tokens spread over the text"},
        {"--sink-token", OPT_INT, &sink_token, -1, 1 << 30,
         "sinks: each window's first token is this id (as train --sink-token; -1: the text's own)"},
        LOAD_FLAG_ROWS(&load),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[2];
    int n_pos;
    args_parse("probe", "CKPT distance|permutation|attention|sinks|cache [flags]", argc, argv, 1, opts,
               sizeof opts / sizeof opts[0], pos_args, 2, &n_pos);
    if (n_pos != 2) pelab_die("probe: expected a checkpoint and one of distance, permutation, attention, sinks, cache");
    set_threads(threads);
    Model m;
    Tokenizer tok;
    load_model_or_die("probe", pos_args[0], &load, &m, &tok);
    int L = m.cfg.seq_len;
    if (len == 0) len = L;
    const char *what = pos_args[1];
    int rc = 0;
    if (strcmp(what, "distance") == 0) {
        int d[32], nd = 0;
        if (distances) {
            double dd[32];
            nd = args_numbers("probe", "--distances", distances, 1, 1 << 24, dd, 32);
            for (int i = 0; i < nd; i++) d[i] = (int)dd[i];
        }
        if (!distances) d[0] = L / 4 > 1 ? L / 4 : 1, d[1] = L, d[2] = 4 * L, d[3] = 16 * L, nd = 4;
        double acc[32], lp[32];
        rc = probe_distance(&m, d, nd, trials, seed, stdout, acc, lp);
    } else {
        size_t n;
        int *ids = load_text_or_die("probe", text, &tok, &n);
        if (strcmp(what, "permutation") == 0) {
            double kl, dl;
            rc = probe_permutation(&m, ids, n, len / 4, stdout, &kl, &dl);
        } else if (strcmp(what, "attention") == 0) {
            if ((size_t)len > n) len = (int)n;
            rc = attention_files(&m, ids, len, layer, head, csv, png);
        } else if (strcmp(what, "sinks") == 0) {
            rc = sinks_report(&m, ids, n, len, windows, sink_token);
        } else if (strcmp(what, "cache") == 0) {
            int failed = probe_cache(&m, ids, n, len, stdout);
            free(ids);
            model_free(&m);
            return failed ? 1 : 0;
        } else {
            pelab_die("probe: '%s': expected distance, permutation, attention, sinks or cache", what);
        }
        free(ids);
    }
    if (rc != 0) pelab_die("probe %s: %s", what, pelab_errmsg);
    model_free(&m);
    tokenizer_free(&tok);
    return 0;
}
