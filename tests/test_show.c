/* test_show.c: the data of `pelab show` (infer/show.h) against the formulas, by hand on a few
 * points, and the command's files (CSV always; PNG only where gnuplot is installed and allowed,
 * so the checks run with PELAB_NO_GNUPLOT=1, the path CI takes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../infer/show.h"
#include "../io/checkpoint.h"
#include "../model/model.h"
#include "../lab/show_plots.h"
#include "test.h"

static int close_rel(double got, double want, double rel) { return fabs(got - want) <= rel * fabs(want) + 1e-9; }

static void test_similarity(void) {
    /* sinusoidal, dim 8, base 100: p(t) = scale (sin t w_i, cos t w_i), w_i = 100^(-2i/8), so
     * cos(p(s), p(t)) = (1/4) sum_i cos((s - t) w_i) */
    PosCtx pc;
    float *params, sim[10 * 10];
    CHECK(show_scheme_init(&pc, "sinusoidal:base=100", 8, 2, 1, 16, &params) == 0 && !params, "sinusoidal: %s",
          pelab_errmsg);
    CHECK(show_similarity(&pc, 10, sim) == 0, "similarity: %s", pelab_errmsg);
    int pairs[][2] = {{0, 1}, {3, 7}, {9, 2}, {5, 5}};
    for (int k = 0; k < 4; k++) {
        int s = pairs[k][0], t = pairs[k][1];
        double want = 0;
        for (int i = 0; i < 4; i++) want += cos((s - t) * pow(100.0, -2.0 * i / 8)) / 4;
        CHECK(fabs(sim[s * 10 + t] - want) < 1e-5, "sinusoidal similarity (%d, %d) = %.7f, expected %.7f", s, t,
              sim[s * 10 + t], want);
    }
    pos_free(&pc);
    CHECK(show_scheme_init(&pc, "alibi", 8, 2, 1, 16, &params) == 0 && show_similarity(&pc, 4, sim) == -1 &&
              strstr(pelab_errmsg, "nothing at the input"),
          "similarity refuses a scheme without input vectors: %s", pelab_errmsg);
    pos_free(&pc);
}

static void test_decay(void) {
    /* at distance 0 every S_j = j: the bound is (d/2 + 1) / 2 (RoFormer's normalisation) */
    PosCtx pc;
    float *params;
    double b[8];
    CHECK(show_scheme_init(&pc, "rope", 256, 4, 1, 128, &params) == 0 && show_decay(&pc, 128, 8, b) == 0,
          "rope decay: %s", pelab_errmsg);
    CHECK(close_rel(b[0], 16.5, 1e-9), "decay bound at 0 = %.6f, expected (32 + 1) / 2 = 16.5", b[0]);
    pos_free(&pc);
    /* two pairs, base 100: theta = (1, 0.1); |S_1| = 1, |S_2| = |e^{i m} + e^{0.1 i m}| = 2 |cos(0.45 m)| */
    const char *specs[] = {"rope:base=100", "rope:base=100,layout=half"};
    for (int s = 0; s < 2; s++) {
        CHECK(show_scheme_init(&pc, specs[s], 8, 2, 1, 16, &params) == 0 && show_decay(&pc, 16, 8, b) == 0,
              "%s: %s", specs[s], pelab_errmsg);
        int bad = -1;
        for (int m = 0; m < 8; m++)
            if (!(fabs(b[m] - (1 + 2 * fabs(cos(0.45 * m))) / 2) < 1e-5)) bad = m;
        CHECK(bad < 0, "%s: 2-pair bound at %d = %.6f, expected %.6f", specs[s], bad, bad < 0 ? 0 : b[bad],
              bad < 0 ? 0 : (1 + 2 * fabs(cos(0.45 * bad))) / 2);
        pos_free(&pc);
    }
    CHECK(show_scheme_init(&pc, "alibi", 8, 2, 1, 16, &params) == 0 && show_decay(&pc, 16, 4, b) == -1 &&
              strstr(pelab_errmsg, "no rotary pairs"),
          "decay refuses a scheme without rotary pairs: %s", pelab_errmsg);
    pos_free(&pc);
}

/* wavelengths of rope with head_dim 64, L 128 under rule at current length len */
static int wavelengths(const char *spec, long len, double *wl) {
    PosCtx pc;
    float *params;
    int rc = show_scheme_init(&pc, spec, 256, 4, 1, 128, &params) == 0 ? show_wavelengths(&pc, len, wl) : -1;
    pos_free(&pc);
    return rc;
}

static void test_wavelength(void) {
    enum { P = 32 };
    double base[P], wl[P], freq[P];
    CHECK(wavelengths("rope", 128, base) == 0, "rope wavelengths: %s", pelab_errmsg);
    CHECK(close_rel(base[0], 2 * M_PI, 1e-5) && close_rel(base[16], 2 * M_PI * 100, 1e-5),
          "rope: wavelength of pair 0 %.6f (2 pi), pair 16 %.4f (200 pi)", base[0], base[16]);
    CHECK(wavelengths("rope:scale=pi:4", 128, wl) == 0 && close_rel(wl[0], 4 * base[0], 1e-5) &&
              close_rel(wl[20], 4 * base[20], 1e-5),
          "PI: 4 x the base wavelength (pair 0 %.5f, pair 20 %.2f)", wl[0], wl[20]);
    /* NTK: base 10000 * 4^(64/62) */
    double ntk_base = 10000 * pow(4.0, 64.0 / 62.0);
    CHECK(wavelengths("rope:scale=ntk:4", 128, wl) == 0 && close_rel(wl[0], 2 * M_PI, 1e-5) &&
              close_rel(wl[31], 2 * M_PI * pow(ntk_base, 62.0 / 64.0), 1e-4),
          "NTK: pair 31 %.1f, expected %.1f", wl[31], 2 * M_PI * pow(ntk_base, 62.0 / 64.0));
    /* Llama 3 (low 1, high 4, L 128): wavelengths under L/4 = 32 kept, over L = 128 times 4 */
    CHECK(wavelengths("rope:scale=llama3:4", 128, wl) == 0, "llama3: %s", pelab_errmsg);
    int band_ok = 1;
    for (int j = 0; j < P; j++) {
        if (base[j] < 32) band_ok &= close_rel(wl[j], base[j], 1e-5);
        if (base[j] > 128) band_ok &= close_rel(wl[j], 4 * base[j], 1e-5);
        if (base[j] >= 32 && base[j] <= 128) band_ok &= wl[j] > base[j] * (1 - 1e-6) && wl[j] < 4 * base[j];
    }
    CHECK(band_ok, "llama3 bands: pair 5 %.2f (base %.2f), pair 12 %.2f (base %.2f)", wl[5], base[5], wl[12], base[12]);
    /* the other rules by hand (not through rope_rule_freqs, which the picture's tables come from);
     * base[j] = 2 pi 10000^(2j/64) */
    const char *rules[] = {"yarn:4", "dynamic-ntk", "ntk:8", "llama3:8"};
    long lens[] = {128, 512, 128, 128};
    /* YaRN (beta_fast 32, beta_slow 1): correction dims 64 ln(128 / (2 pi beta)) / (2 ln 10000) =
     * -1.57 and 10.47, rounded out and clamped to 0 and 11; frequency f_j (1 - ramp_j + ramp_j / 4),
     * ramp_j = min(j / 11, 1) */
    double yarn_low = floor(64 * log(128 / (32 * 2 * M_PI)) / (2 * log(10000.0))),
           yarn_high = ceil(64 * log(128 / (2 * M_PI)) / (2 * log(10000.0)));
    CHECK(yarn_low == -2 && yarn_high == 11, "yarn correction dims %g, %g", yarn_low, yarn_high);
    /* dynamic NTK (factor 1) at 512 = 4 L: base 10000 (512 / 128)^(64/62); NTK 8: 10000 8^(64/62) */
    double dyn_base = 10000 * pow(4.0, 64.0 / 62.0), ntk8_base = 10000 * pow(8.0, 64.0 / 62.0);
    for (int r = 0; r < 4; r++) {
        char spec[64];
        RopeRule rule;
        snprintf(spec, sizeof spec, "rope:scale=%s", rules[r]);
        CHECK(rope_rule_parse(rules[r], &rule) == 0, "%s: %s", rules[r], pelab_errmsg);
        CHECK(wavelengths(spec, lens[r], wl) == 0, "%s: %s", spec, pelab_errmsg);
        for (int j = 0; j < P; j++) {
            double f = 2 * M_PI / base[j];
            if (r == 0) {
                double ramp = j / 11.0 > 1 ? 1 : j / 11.0;
                f *= 1 - ramp + ramp / 4;
            } else if (r == 1) f = pow(dyn_base, -2.0 * j / 64);
            else if (r == 2) f = pow(ntk8_base, -2.0 * j / 64);
            else if (base[j] > 128) f /= 8; /* Llama 3, factor 8: over L divided by 8, under L/4 kept */
            else if (base[j] >= 32) {
                double smooth = (128 / base[j] - 1) / 3; /* between: (L / wavelength - 1) / (4 - 1) */
                f = (1 - smooth) * f / 8 + smooth * f;
            }
            freq[j] = f;
        }
        int bad = -1;
        for (int j = 0; j < P; j++)
            if (!close_rel(wl[j], 2 * M_PI / freq[j], 1e-4)) bad = j;
        CHECK(bad < 0, "%s at %ld: wavelength of pair %d is %.6g, expected %.6g", rules[r], lens[r], bad,
              bad < 0 ? 0 : wl[bad], bad < 0 ? 0 : 2 * M_PI / freq[bad]);
    }
    /* LongRoPE: pair j's frequency divided by short_j up to L, by long_j past it */
    char path[512], spec[600];
    snprintf(path, sizeof path, "%s/show_lr.json", test_tmpdir());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fprintf(f, "{\"original_max_position_embeddings\": 128, \"max_position_embeddings\": 512, \"short_factor\": [");
        for (int j = 0; j < P; j++) fprintf(f, "%s1", j ? "," : "");
        fprintf(f, "], \"long_factor\": [");
        for (int j = 0; j < P; j++) fprintf(f, "%s%g", j ? "," : "", 1 + j / 8.0);
        fprintf(f, "]}\n");
        fclose(f);
        snprintf(spec, sizeof spec, "rope:scale=longrope:%s", path);
        CHECK(wavelengths(spec, 128, wl) == 0 && close_rel(wl[31], base[31], 1e-5), "longrope within L: %s",
              pelab_errmsg);
        CHECK(wavelengths(spec, 512, wl) == 0 && close_rel(wl[8], 2 * base[8], 1e-5) &&
                  close_rel(wl[31], (1 + 31 / 8.0) * base[31], 1e-5),
              "longrope past L: pair 8 %.3f (2 x %.3f), pair 31 %.1f", wl[8], base[8], wl[31]);
    }
    /* p-RoPE keep=0.75: pairs 24.. still; HoPE max_period=128: pairs whose period passes 128 */
    CHECK(wavelengths("rope:keep=0.75", 128, wl) == 0 && isfinite(wl[23]) && isinf(wl[24]) && isinf(wl[31]),
          "p-RoPE: pair 23 %.1f, pair 24 %g", wl[23], wl[24]);
    int cut = 0;
    while (cut < P && base[cut] <= 128) cut++;
    CHECK(wavelengths("rope:max_period=128", 128, wl) == 0 && cut == 11 && isfinite(wl[cut - 1]) && isinf(wl[cut]),
          "HoPE max_period=128: first still pair %d (wavelength %g)", cut, cut < P ? wl[cut] : 0);
}

static void test_bias(void) {
    /* ALiBi, 4 heads: slopes 1/4, 1/16, 1/64, 1/256; b(i, j) = -m (i - j), NaN above the diagonal */
    enum { T = 130 };
    PosCtx pc;
    float *params, *map = xmalloc(sizeof(float) * T * T);
    const double slope[4] = {0.25, 0.0625, 0.015625, 0.00390625};
    CHECK(show_scheme_init(&pc, "alibi", 16, 4, 1, 8, &params) == 0, "alibi: %s", pelab_errmsg);
    for (int h = 0; h < 4; h++) {
        CHECK(show_bias_map(&pc, 12, h, 0, map) == 0, "alibi map: %s", pelab_errmsg);
        CHECK(close_rel(map[11 * 12 + 0], -11 * slope[h], 1e-6) && close_rel(map[7 * 12 + 4], -3 * slope[h], 1e-6) &&
                  map[5 * 12 + 5] == 0 && isnan(map[4 * 12 + 5]),
              "alibi head %d: b(11, 0) %g b(7, 4) %g b(5, 5) %g b(4, 5) %g", h, map[11 * 12], map[7 * 12 + 4],
              map[5 * 12 + 5], map[4 * 12 + 5]);
    }
    CHECK(show_bias_map(&pc, 4, 4, 0, map) == -1 && strstr(pelab_errmsg, "--head 4"), "bad head refused: %s",
          pelab_errmsg);
    pos_free(&pc);
    /* T5 with w[b][h] = b: the map is the bucket of i - j (reference table of
     * docs/position-encodings.md section 3: 16 -> 16, 19 -> 17, 46 -> 24, 112 -> 30, 113 and on -> 31) */
    CHECK(show_scheme_init(&pc, "t5", 8, 1, 1, 8, &params) == 0 && params, "t5: %s", pelab_errmsg);
    for (int b = 0; b < 32; b++) params[b] = (float)b;
    CHECK(show_bias_map(&pc, T, 0, 0, map) == 0, "t5 map: %s", pelab_errmsg);
    const int d[] = {0, 15, 16, 19, 46, 112, 113, 129}, want[] = {0, 15, 16, 17, 24, 30, 31, 31};
    for (int k = 0; k < 8; k++)
        CHECK(map[(T - 1) * T + (T - 1 - d[k])] == want[k] && map[d[k] * T] == want[k],
              "t5 bucket of distance %d: %g, expected %d", d[k], map[(T - 1) * T + (T - 1 - d[k])], want[k]);
    pos_free(&pc);
    free(params), free(map);
    CHECK(show_scheme_init(&pc, "rope", 8, 2, 1, 8, &params) == 0 && show_bias_map(&pc, 4, 0, 0, NULL) == -1 &&
              strstr(pelab_errmsg, "no score bias"),
          "bias refuses rope: %s", pelab_errmsg);
    pos_free(&pc);
}

/* the n x n CSV matrix at path into m; 0 if it has exactly that shape */
static int read_matrix(const char *path, float *m, int n) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int got = 0;
    while (got < n * n && fscanf(f, "%f%*[,\n]", &m[got]) == 1) got++;
    int extra = fgetc(f) != EOF;
    fclose(f);
    return got == n * n && !extra ? 0 : -1;
}

static int exists(const char *path) {
    FILE *f = fopen(path, "r");
    if (f) fclose(f);
    return f != NULL;
}

static void test_show_cli(void) {
    static char out[16384], cmd[2048], path[1024];
    const char *dir = test_tmpdir();
    snprintf(cmd, sizeof cmd,
             "./pelab train --steps 3 --dim 16 --layers 1 --heads 2 --seq-len 16 --batch 2 --synth-bytes 20000 "
             "--pos learned --quiet --out %s/show_learned.safetensors",
             dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "train a tiny learned model: %s", out);

    /* the learned table's cosine similarity against the checkpoint's table */
    snprintf(cmd, sizeof cmd,
             "PELAB_NO_GNUPLOT=1 ./pelab show similarity --ckpt %s/show_learned.safetensors --out %s/show", dir, dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "gnuplot not found"), "show similarity --ckpt (exit %d): %s", rc, out);
    Model m;
    snprintf(path, sizeof path, "%s/show_learned.safetensors", dir);
    CHECK(checkpoint_load(path, &m, NULL, NULL, NULL) == 0, "load: %s", pelab_errmsg);
    float sim[16 * 16];
    snprintf(path, sizeof path, "%s/show/similarity.csv", dir);
    CHECK(read_matrix(path, sim, 16) == 0, "similarity.csv: 16 x 16 numbers");
    const float *P = m.pos.params;
    int worst = -1;
    for (int s = 0; s < 16; s++)
        for (int t = 0; t < 16; t += 5) {
            double dot = 0, ns = 0, nt = 0;
            for (int k = 0; k < 16; k++)
                dot += P[s * 16 + k] * P[t * 16 + k], ns += P[s * 16 + k] * P[s * 16 + k], nt += P[t * 16 + k] * P[t * 16 + k];
            if (!(fabs(sim[s * 16 + t] - dot / sqrt(ns * nt)) < 1e-5)) worst = s * 16 + t;
        }
    CHECK(worst < 0, "learned similarity entry %d differs from the table's cosine", worst);
    snprintf(path, sizeof path, "%s/show/similarity.png", dir);
    CHECK(!exists(path), "no PNG under PELAB_NO_GNUPLOT");

    /* attention of the trained model: causal rows summing to 1 */
    snprintf(cmd, sizeof cmd,
             "PELAB_NO_GNUPLOT=1 ./pelab show attention --ckpt %s/show_learned.safetensors --n 8 --head 1 --out %s/show",
             dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "mean attended distance"), "show attention (exit %d): %s", rc, out);
    float att[8 * 8];
    snprintf(path, sizeof path, "%s/show/attention.csv", dir);
    int rows_ok = read_matrix(path, att, 8) == 0;
    for (int i = 0; rows_ok && i < 8; i++) {
        double sum = 0;
        for (int j = 0; j < 8; j++) sum += att[i * 8 + j], rows_ok &= j <= i || att[i * 8 + j] == 0;
        rows_ok &= fabs(sum - 1) < 1e-4;
    }
    CHECK(rows_ok, "attention.csv: 8 causal rows summing to 1");
    model_free(&m);

    /* decay and wavelength CSVs: header, the bound at 0 and the base wavelength of pair 0 */
    snprintf(cmd, sizeof cmd,
             "PELAB_NO_GNUPLOT=1 ./pelab show decay --scales none,pi:4,dynamic-ntk --at 512 --also 'rope:keep=0.5' "
             "--dist 16 --out %s/show && head -2 %s/show/decay.csv && "
             "PELAB_NO_GNUPLOT=1 ./pelab show wavelength --scales none,pi:4 --out %s/show && sed -n 2p %s/show/wavelength.csv",
             dir, dir, dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "distance,\"none\",\"pi:4\",\"dynamic-ntk at length 512\",\"rope:keep=0.5\"\n"
                                 "0,16.5,16.5,16.5,16.5\n") &&
              strstr(out, "\n0,6.28319,25.1327\n"),
          "show decay / wavelength CSVs (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab show bias --pos alibi --heads 2 --n 4 --out %s/show && cat %s/show/bias_h1.csv",
             dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "0,nan,nan,nan\n-0.00390625,0,nan,nan\n"), "show bias CSV (exit %d): %s", rc, out);
    expect_pelab_error("./pelab show decay --pos alibi --out /tmp", "no rotation to draw");
    expect_pelab_error("./pelab show wavelength --scales none,rerope:8 --out /tmp", "extension method");
    expect_pelab_error("./pelab show attention --out /tmp", "--ckpt");
    /* --dist 0 is the documented default, 4L: distances 0..32 for L = 8 */
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab show decay --len 8 --dist 0 --out %s/show && wc -l < %s/show/decay.csv",
             dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "\n34\n"), "show decay --dist 0: a header and 33 distances (exit %d): %s", rc, out);
    /* --at through args_numbers: bounded (3e9 overflowed an int and asked for exabytes), no trailing comma */
    expect_pelab_error("./pelab show wavelength --scales dynamic-ntk --at 3000000000 --out /tmp", "--at 3000000000");
    expect_pelab_error("./pelab show wavelength --scales dynamic-ntk --at 256, --out /tmp", "trailing comma");
    expect_pelab_error("./pelab show wavelength --scales dynamic-ntk --at 300.5 --out /tmp", "whole length");
    /* one position: the summary line's cos(p0, p1) would read past the 1 x 1 matrix */
    expect_pelab_error("./pelab show similarity --n 1 --out /tmp", "at least 2 positions");
    expect_pelab_error("./pelab show pictures --out /tmp", "expected similarity");
}

/* the whole file at path (NUL-terminated, at most cap - 1 bytes) into buf */
static const char *slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static void test_gp_quoting(void) {
    /* a title, a panel title and a line label with a backquote, a quote and a newline end up in
     * gnuplot single quotes (no `command` run), the quote doubled, the newline a space */
    static char gp[65536];
    char dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s/show_quote", test_tmpdir());
    CHECK(make_dirs(dir) == 0, "%s: %s", dir, pelab_errmsg);
    const char *was = getenv("PELAB_NO_GNUPLOT");
    char *saved = was ? strdup(was) : NULL;
    setenv("PELAB_NO_GNUPLOT", "1", 1);
    const float m[4] = {1, 0, 0, 1};
    CHECK(show_plot_heatmap(dir, "quoted", "a `touch x` 'b'\nc", m, 2, "3") == 0, "heatmap: %s", pelab_errmsg);
    snprintf(path, sizeof path, "%s/quoted.gp", dir);
    CHECK(strstr(slurp(path, gp, sizeof gp), "set title 'a `touch x` ''b'' c'\n") && !strstr(gp, "\"a `"),
          "heatmap title single-quoted: %s", gp);
    CHECK(show_plot_bias(dir, "x`y'z", 0, m, 1, 2, NULL) == 0, "bias: %s", pelab_errmsg);
    snprintf(path, sizeof path, "%s/bias.gp", dir);
    CHECK(strstr(slurp(path, gp, sizeof gp), "title 'score bias b(i, j), x`y''z, layer 0'\n") && !strchr(gp, '"'),
          "bias title single-quoted: %s", gp);
    ShowRotary r = {.pos = "rope", .train_len = 16, .dim = 8, .heads = 2};
    CHECK(show_rotary_series(&r, "none", NULL, 0, NULL) == 0, "series: %s", pelab_errmsg);
    snprintf(r.label[0], sizeof r.label[0], "l`s'\n");
    CHECK(show_plot_wavelength(dir, &r, NULL) == 0, "wavelength: %s", pelab_errmsg);
    show_rotary_free(&r);
    snprintf(path, sizeof path, "%s/wavelength.gp", dir);
    CHECK(strstr(slurp(path, gp, sizeof gp), " pi 1 title 'l`s'' '"), "line label single-quoted: %s", gp);
    if (saved) setenv("PELAB_NO_GNUPLOT", saved, 1), free(saved);
    else unsetenv("PELAB_NO_GNUPLOT");
}

void test_show(void) {
    test_similarity();
    test_decay();
    test_wavelength();
    test_bias();
    test_gp_quoting();
    test_show_cli();
}
