/* test_probe.c: the diagnostics of pelab probe, and the PNG writer behind the attention map
 * (read back with libpng). */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../infer/probe.h"
#include "../io/png.h"
#include "../model/model.h"
#include "test.h"

/* write a PNG and read it back with libpng: same size, same gray pixels; then paths that cannot
 * be written: one line naming each, and a device that fails the write is not removed */
static void png_round_trip(void) {
    enum { W = 300, H = 250 };
    unsigned char *px = xmalloc(W * H), *back = xmalloc(W * H);
    for (int i = 0; i < W * H; i++) px[i] = (unsigned char)(i * 7 + i / W);
    char path[256];
    snprintf(path, sizeof path, "%s/t.png", test_tmpdir());
    CHECK(png_write_gray(path, px, W, H) == 0, "png written: %s", pelab_errmsg);
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    int ok = png_image_begin_read_from_file(&im, path) && im.width == W && im.height == H &&
             im.format == PNG_FORMAT_GRAY;
    ok = ok && png_image_finish_read(&im, NULL, back, W, NULL) && memcmp(back, px, W * H) == 0;
    CHECK(ok, "png: libpng reads back %dx%d gray with the same pixels: %s", W, H, im.message);
    png_image_free(&im);
    snprintf(path, sizeof path, "%s/no-such-dir/t.png", test_tmpdir());
    CHECK(png_write_gray(path, px, W, H) == -1 && strstr(pelab_errmsg, path) && !strchr(pelab_errmsg, '\n') &&
              access(path, F_OK) != 0,
          "png: an unwritable path is one error line naming it: %s", pelab_errmsg);
    if (access("/dev/full", W_OK) == 0)
        CHECK(png_write_gray("/dev/full", px, W, H) == -1 && strstr(pelab_errmsg, "/dev/full") &&
                  access("/dev/full", F_OK) == 0,
              "png: a full device: %s", pelab_errmsg);
    CHECK(png_write_gray(path, px, 0, H) == -1 && strstr(pelab_errmsg, "empty image"), "png: empty image refused");
    free(px), free(back);
}

static void probes_on_tiny_models(void) {
    enum { N = 200 };
    int toks[N];
    for (int i = 0; i < N; i++) toks[i] = (i * 37 + i / 5) % 13;
    FILE *devnull = fopen("/dev/null", "w");

    /* one layer with zero q/k weights: attention is uniform over the visible prefix, so under nope
     * [ABC]Q and [CBA]Q show every query of Q the same multiset and the probe must read ~zero
     * (with a second layer the values would already carry order through the first layer) */
    Model m;
    tiny_model_shaped(&m, "nope", 4, 4, 1, 1, 3);
    memset(m.params.wq, 0, m.tensors[T_WQ].numel * sizeof(float));
    memset(m.params.wk, 0, m.tensors[T_WK].numel * sizeof(float));
    double kl, dl;
    CHECK(probe_permutation(&m, toks, N, 8, devnull, &kl, &dl) == 0 && kl < 1e-6 && dl < 1e-4,
          "permutation probe reads ~0 when position cannot matter (KL %.3g)", kl);
    model_free(&m);
    tiny_model(&m, "rope", 4, 1, 3);
    CHECK(probe_permutation(&m, toks, N, 8, devnull, &kl, &dl) == 0 && kl > 1e-4, "rope: the order reaches the model (KL %.3g)",
          kl);
    CHECK(probe_permutation(&m, toks, 20, 8, devnull, &kl, &dl) == -1, "permutation probe: too little text refused");

    CHECK(probe_cache(&m, toks, N, 8, devnull) == 0, "cache checklist passes on a correct model");
    CHECK(probe_cache(&m, toks, 5, 8, devnull) == 1, "cache checklist fails a text shorter than the window");

    float att[12 * 12];
    double mean_dist;
    CHECK(probe_attention(&m, toks, 12, 1, 2, att, &mean_dist) == 0, "attention probe: %s", pelab_errmsg);
    int rows_ok = 1;
    for (int row = 0; row < 12; row++) {
        double sum = 0, upper = 0;
        for (int col = 0; col < 12; col++) {
            sum += att[row * 12 + col];
            if (col > row) upper += fabs(att[row * 12 + col]);
        }
        rows_ok &= fabs(sum - 1) < 1e-4 && upper == 0;
    }
    CHECK(rows_ok && mean_dist >= 0 && mean_dist <= 11, "attention weights: 12 causal rows summing to 1 (mean distance %.2f)",
          mean_dist);
    CHECK(probe_attention(&m, toks, 12, 5, 0, att, &mean_dist) == -1 && strstr(pelab_errmsg, "--layer"),
          "attention probe: bad layer refused: %s", pelab_errmsg);

    /* sinks: per layer the first token's weight from queries 6..11, from the attention probe's
     * rows of every head of the window opened by the sink token (two windows: 0 and N - 12) */
    {
        int L = m.cfg.n_layers, H = m.cfg.n_heads, win[12], worst_ok = 1;
        double mass[8], head_max[8], uniform, want_u = 0;
        int rc = probe_sinks(&m, toks, N, 12, 2, 5, mass, head_max, &uniform);
        for (int i = 6; i < 12; i++) want_u += 1.0 / (i + 1) / 6;
        for (int l = 0; l < L && rc == 0; l++) {
            double sum = 0, top = 0;
            for (int h = 0; h < H; h++) {
                double head = 0;
                for (int w = 0; w < 2; w++) {
                    memcpy(win, toks + (w ? N - 12 : 0), sizeof win);
                    win[0] = 5;
                    probe_attention(&m, win, 12, l, h, att, &mean_dist);
                    for (int i = 6; i < 12; i++) head += att[i * 12] / 12.0;
                }
                sum += head / H, top = head > top ? head : top;
            }
            worst_ok &= fabs(mass[l] - sum) < 1e-6 && fabs(head_max[l] - top) < 1e-6;
        }
        CHECK(rc == 0 && worst_ok && fabs(uniform - want_u) < 1e-12,
              "sinks probe = the attention probe's first column, per layer (mean and largest head): %s",
              rc ? pelab_errmsg : "");
        CHECK(probe_sinks(&m, toks, N, 12, 2, 13, mass, head_max, &uniform) == -1 && strstr(pelab_errmsg, "below 13"),
              "sinks probe: a sink token past the vocabulary refused: %s", pelab_errmsg);
        CHECK(probe_sinks(&m, toks, 10, 12, 2, -1, mass, head_max, &uniform) == -1 && strstr(pelab_errmsg, "2..10"),
              "sinks probe: a text shorter than the window refused: %s", pelab_errmsg);
    }

    int dist[2] = {4, 16};
    double acc[2], lp[2];
    CHECK(probe_distance(&m, dist, 2, 3, 1, devnull, acc, lp) == -1 || (acc[0] >= 0 && acc[0] <= 1),
          "distance probe runs");
    model_free(&m);

    /* the distance probe needs a byte vocabulary: run it on an untrained byte model */
    ModelConfig c = {.vocab_size = 256, .dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .hidden_dim = 16,
                     .seq_len = 32, .norm_eps = 1e-5f, .tied = 1};
    model_create(&m, &c, "alibi");
    model_init_weights(&m, 5);
    int ok = probe_distance(&m, dist, 2, 3, 1, devnull, acc, lp) == 0;
    CHECK(ok && acc[0] >= 0 && acc[0] <= 1 && lp[0] < 0 && isfinite(lp[1]), "distance probe: accuracy and log-probs");
    model_free(&m);
    fclose(devnull);
}

void test_probe(void) {
    png_round_trip();
    probes_on_tiny_models();
}
