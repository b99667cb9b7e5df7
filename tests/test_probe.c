/* test_probe.c: the diagnostics of pelab probe, and the PNG writer behind the attention map. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../infer/probe.h"
#include "../io/png.h"
#include "../model/model.h"
#include "test.h"

/* parse our own PNG back: signature, IHDR, one IDAT of stored deflate blocks, IEND */
static void png_round_trip(void) {
    enum { W = 300, H = 250 }; /* 75,250 raw bytes: two stored blocks */
    unsigned char *px = xmalloc(W * H);
    for (int i = 0; i < W * H; i++) px[i] = (unsigned char)(i * 7 + i / W);
    char path[256];
    snprintf(path, sizeof path, "%s/t.png", test_tmpdir());
    CHECK(png_write_gray(path, px, W, H) == 0, "png written: %s", pelab_errmsg);
    unsigned char *buf;
    size_t n;
    int ok = read_file(path, &buf, &n) == 0 && n > 8 + 25 && memcmp(buf, "\x89PNG\r\n\x1a\n", 8) == 0 &&
             memcmp(buf + 12, "IHDR", 4) == 0 && buf[16 + 3] == W % 256 && buf[24] == 8 && buf[25] == 0;
    size_t idat_len = ok ? ((size_t)buf[33] << 24 | (size_t)buf[34] << 16 | (size_t)buf[35] << 8 | buf[36]) : 0;
    ok = ok && memcmp(buf + 37, "IDAT", 4) == 0;
    /* walk the stored blocks and compare the scanlines */
    const unsigned char *z = buf + 41 + 2;
    unsigned char *raw = xmalloc((W + 1) * H);
    size_t got = 0;
    int last = 0;
    while (ok && !last && z < buf + 41 + idat_len) {
        last = z[0] & 1;
        size_t len = z[1] | z[2] << 8, nlen = z[3] | z[4] << 8;
        ok = (len ^ 0xffff) == nlen && got + len <= (size_t)(W + 1) * H;
        if (ok) memcpy(raw + got, z + 5, len), got += len, z += 5 + len;
    }
    ok = ok && got == (size_t)(W + 1) * H;
    for (int y = 0; ok && y < H; y++) ok = raw[y * (W + 1)] == 0 && memcmp(raw + y * (W + 1) + 1, px + y * W, W) == 0;
    CHECK(ok, "png: structure and pixels read back (%zu bytes)", n);
    CHECK(ok && memcmp(buf + n - 8, "IEND", 4) == 0, "png ends with IEND");
    if (ok) free(buf);
    free(px), free(raw);
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
