/* test_plots.c: the pictures. The palette: every series its own (colour, marker) pair, 20 series
 * and far more; its colours far apart in CIELAB and dark enough for a white page. A 20-variant
 * `show decay` script styles each line differently. A demo-sized compare (3 schemes x 2 seeds,
 * a few seconds) whose runs pass the gate: its script draws every series' mean with a band over
 * the seeds, in its own style, with its verdict ranks in the key; where gnuplot is installed the
 * PNGs decode (libpng) to non-blank pictures of the stated size and the SVGs are whole documents
 * holding the keys. Without gnuplot on PATH the report's first lines say the plots were not drawn
 * and how to get them, and so does the terminal. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../lab/gnuplot.h"
#include "../lab/show_plots.h"
#include "test.h"

/* sRGB "#rrggbb" to CIELAB (D65), for the palette's distances */
static void to_lab(const char *hex, double lab[3]) {
    double c[3];
    for (int i = 0; i < 3; i++) {
        unsigned v = 0;
        sscanf(hex + 1 + 2 * i, "%2x", &v);
        double x = v / 255.0;
        c[i] = x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4);
    }
    double xyz[3] = {(0.4124 * c[0] + 0.3576 * c[1] + 0.1805 * c[2]) / 0.95047,
                     0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2],
                     (0.0193 * c[0] + 0.1192 * c[1] + 0.9505 * c[2]) / 1.08883};
    double f[3];
    for (int i = 0; i < 3; i++) f[i] = xyz[i] > 216.0 / 24389 ? cbrt(xyz[i]) : (24389.0 / 27 * xyz[i] + 16) / 116;
    lab[0] = 116 * f[1] - 16, lab[1] = 500 * (f[0] - f[1]), lab[2] = 200 * (f[1] - f[2]);
}

static void palette(void) {
    CHECK(GP_COLOURS >= 20, "at least 20 colours (%d)", GP_COLOURS);
    enum { N = GP_COLOURS * GP_MARKERS };
    static const char *colour[N];
    static int point[N];
    for (int i = 0; i < N; i++) gp_series_style(i, &colour[i], &point[i]);
    int same = 0, same_colour = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        bad += strlen(colour[i]) != 7 || colour[i][0] != '#' || point[i] < 1 || point[i] > 13;
        for (int j = 0; j < i; j++) {
            same += strcmp(colour[i], colour[j]) == 0 && point[i] == point[j];
            same_colour += i < GP_COLOURS && strcmp(colour[i], colour[j]) == 0;
        }
    }
    CHECK(!bad, "styles are #rrggbb and gnuplot point types 1..13");
    CHECK(!same, "all %d series get distinct (colour, marker) pairs (%d repeats)", N, same);
    CHECK(!same_colour, "the first %d series distinct colours", GP_COLOURS);
    int pairs20 = 0;
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < i; j++) pairs20 += strcmp(colour[i], colour[j]) != 0 || point[i] != point[j];
    CHECK(pairs20 == 190, "20 series: 20 distinct (colour, marker) pairs");
    double closest = INFINITY, lightest = 0;
    for (int i = 0; i < GP_COLOURS; i++) {
        double a[3], b[3];
        to_lab(colour[i], a);
        lightest = fmax(lightest, a[0]);
        for (int j = 0; j < i; j++) {
            to_lab(colour[j], b);
            closest = fmin(closest, sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                                         (a[2] - b[2]) * (a[2] - b[2])));
        }
    }
    CHECK(closest >= 25, "colours distinguishable: the closest two are %.1f apart in CIELAB (>= 25)", closest);
    CHECK(lightest <= 85, "every colour shows on white: lightness L* at most %.0f (<= 85)", lightest);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) {
        buf[fread(buf, 1, (size_t)n, f)] = 0;
        if (len) *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

/* the distinct "lc rgb '#rrggbb' pt N" styles in a script */
static int distinct_styles(const char *gp) {
    static char seen[64][40];
    int n = 0;
    for (const char *p = gp; p && (p = strstr(p, "lc rgb '#")); p++) {
        char style[40];
        int len = 0;
        if (sscanf(p, "lc rgb '#%*6[0-9a-f]' pt %*d%n", &len) != 0 || len == 0 || len >= (int)sizeof style) continue;
        snprintf(style, sizeof style, "%.*s", len, p);
        int dup = 0;
        for (int i = 0; i < n && !dup; i++) dup = strcmp(seen[i], style) == 0;
        if (!dup && n < 64) snprintf(seen[n++], sizeof seen[0], "%s", style);
    }
    return n;
}

/* PELAB_NO_GNUPLOT set to value (NULL: unset) in this process; its old value, for no_gnuplot_restore */
static char *no_gnuplot(const char *value) {
    const char *was = getenv("PELAB_NO_GNUPLOT");
    char *saved = was ? strdup(was) : NULL;
    if (value) setenv("PELAB_NO_GNUPLOT", value, 1);
    else unsetenv("PELAB_NO_GNUPLOT");
    return saved;
}

static void no_gnuplot_restore(char *saved) {
    if (saved) setenv("PELAB_NO_GNUPLOT", saved, 1), free(saved);
    else unsetenv("PELAB_NO_GNUPLOT");
}

/* 20 rotary variants in one `show decay` picture: 20 styles in its script */
static void show_twenty(void) {
    static ShowRotary r = {.pos = "rope", .train_len = 16, .dim = 16, .heads = 2};
    char also[2048] = "", dir[512];
    for (int k = 1; k < 20; k++)
        snprintf(also + strlen(also), sizeof also - strlen(also), "%srope:base=%d", k > 1 ? ";" : "", 100 * k);
    int rc = show_rotary_series(&r, "none", NULL, 0, also);
    CHECK(rc == 0 && r.n == 20, "20 variants: %s", rc ? pelab_errmsg : "");
    if (rc != 0) {
        show_rotary_free(&r);
        return;
    }
    snprintf(dir, sizeof dir, "%s/plots-show", test_tmpdir());
    mkdir(dir, 0755);
    char *saved = no_gnuplot("1");
    CHECK(show_plot_decay(dir, &r, 64, NULL) == 0, "decay: %s", pelab_errmsg);
    no_gnuplot_restore(saved);
    show_rotary_free(&r);
    char path[600];
    snprintf(path, sizeof path, "%s/decay.gp", dir);
    char *gp = slurp(path, NULL);
    CHECK(gp && distinct_styles(gp) == 20, "decay.gp: 20 distinct (colour, marker) styles (%d)", gp ? distinct_styles(gp) : -1);
    free(gp);
}

/* a PNG that libpng decodes whole, of the given size, with more than a blank page in it */
static void check_png(const char *path, int width, int height) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) {
        CHECK(0, "%s: not a PNG: %s", path, img.message);
        return;
    }
    img.format = PNG_FORMAT_RGB;
    unsigned char *px = malloc(PNG_IMAGE_SIZE(img));
    int ok = px && png_image_finish_read(&img, NULL, px, 0, NULL);
    CHECK(ok, "%s decodes: %s", path, img.message);
    CHECK((int)img.width == width && (int)img.height == height, "%s: %ux%u, want %dx%d", path, img.width, img.height,
          width, height);
    if (ok) {
        size_t inked = 0, n = (size_t)img.width * img.height, coloured = 0;
        for (size_t i = 0; i < n; i++) {
            const unsigned char *p = px + 3 * i;
            inked += p[0] < 200 || p[1] < 200 || p[2] < 200;
            coloured += abs(p[0] - p[1]) > 40 || abs(p[1] - p[2]) > 40; /* not grey: a series */
        }
        CHECK(inked > n / 100 && coloured > n / 1000, "%s is a picture: %zu inked and %zu coloured pixels of %zu", path,
              inked, coloured, n);
    }
    png_image_free(&img);
    free(px);
}

/* a whole SVG document holding the needle */
static void check_svg(const char *path, const char *needle) {
    size_t n = 0;
    char *svg = slurp(path, &n);
    int paths = 0;
    for (const char *p = svg; p && (p = strstr(p, "<path")); p++) paths++;
    CHECK(svg && n > 4000 && strncmp(svg, "<?xml", 5) == 0 && strstr(svg, "<svg") && strstr(svg + n - 16, "</svg>") &&
              paths > 10,
          "%s: an SVG document (%zu bytes, %d paths)", path, n, paths);
    CHECK(svg && strstr(svg, needle), "%s holds '%s'", path, needle);
    free(svg);
}

/* gnuplot installed, whatever PELAB_NO_GNUPLOT says in this process */
static int gnuplot_on_path(void) {
    char *saved = no_gnuplot(NULL);
    int have = gp_available();
    no_gnuplot_restore(saved);
    return have;
}

#define SMALL "--schemes rope,alibi,nope --seeds 1,2 --dim 16 --layers 1 --heads 2 --seq-len 16 --steps 150 --lr 1e-2 " \
              "--batch 8 --mult 0.5,1,2,4 --synth-bytes 30000 --eval-tokens 512 --rules none --finetune-steps 0 "     \
              "--gen-tokens 0 --keyppl-tokens 0 --threads 1"

static void compare_plots(void) {
    static char out[1 << 16];
    char cmd[2048], path[600], dir[512];
    snprintf(dir, sizeof dir, "%s/plots-cmp", test_tmpdir());
    int have = gnuplot_on_path();
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT= ./pelab compare " SMALL " --out %s", dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0, "the small compare runs (exit %d): %.2000s", rc, out);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *rep = slurp(path, NULL);
    CHECK(rep && strstr(rep, "- rope: 2 of 2 seeds passed the gate") && strstr(rep, "- alibi: 2 of 2 seeds passed") &&
              strstr(rep, "- nope: 2 of 2 seeds passed"),
          "every run passes the gate, so every series has a mean and a spread: %.3000s", rep ? rep : "");
    snprintf(path, sizeof path, "%s/plots/plots.gp", dir);
    char *gp = slurp(path, NULL);
    int bands = 0;
    for (const char *p = gp; p && (p = strstr(p, "with filledcurves")); p++) bands++;
    CHECK(gp && bands == 12, "a band over the seeds per series, plot and terminal (%d of 12)", bands);
    CHECK(gp && distinct_styles(gp) == 3 && strstr(gp, "title 'rope (rank ") && strstr(gp, " at L, ") &&
              strstr(gp, " at 4L)'") && strstr(gp, "title 'nope (rank "),
          "each series its own style, its ranks at L and 4L in the key: %.1500s", gp ? gp : "");
    free(gp);
    snprintf(path, sizeof path, "%s/plots/loss_vs_length.dat", dir);
    char *dat = slurp(path, NULL);
    CHECK(dat && strstr(dat, "\n# columns 2-4: rope\n") && strstr(dat, "\n# columns 8-10: nope\n") && strstr(dat, "\n16 "),
          "the plot data for other tools: per series mean, std, seeds: %s", dat ? dat : "");
    free(dat);
    if (!have) {
        fprintf(stderr, "  (test_plots: gnuplot not on PATH: the drawn PNG and SVG checks skipped)\n");
        CHECK(rep && strstr(rep, "> **No plots drawn**: gnuplot is not installed"), "the report says why");
    } else {
        CHECK(rep && !strstr(rep, "No plots drawn") && strstr(rep, "![loss vs length](plots/loss_vs_length.png)"),
              "report.md shows the plots");
        const char *names[] = {"loss_vs_length", "loss_by_position"};
        for (int i = 0; i < 2; i++) {
            snprintf(path, sizeof path, "%s/plots/%s.png", dir, names[i]);
            check_png(path, 1200, 600);
            snprintf(path, sizeof path, "%s/plots/%s.svg", dir, names[i]);
            check_svg(path, "alibi (rank ");
        }
        snprintf(path, sizeof path, "%s/plots/curves_rope.png", dir);
        check_png(path, 900, 500);
    }
    free(rep);

    /* without gnuplot on PATH: said first in the report, and on the terminal */
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT= PATH=/nonexistent ./pelab compare " SMALL " --out %s --collect", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "compare: no plots drawn: gnuplot is not installed (not on PATH); to get them, install "
                                 "gnuplot (Debian/Ubuntu: `sudo apt-get install gnuplot-nox`"),
          "the terminal says the plots were not drawn (exit %d): %.3000s", rc, out);
    snprintf(path, sizeof path, "%s/report.md", dir);
    rep = slurp(path, NULL);
    const char *head = "# pelab compare report\n\n> **No plots drawn**: gnuplot is not installed (not on PATH). To get "
                       "them, install gnuplot (Debian/Ubuntu: `sudo apt-get install gnuplot-nox`; macOS: `brew install "
                       "gnuplot`), then draw the data and scripts this run wrote: `cd ";
    CHECK(rep && strncmp(rep, head, strlen(head)) == 0 && strstr(rep, "/plots && gnuplot plots.gp curves.gp`") &&
              strstr(rep, "or rerun the command with `--collect`, which trains nothing.\n\n## Verdict\n"),
          "the report's first lines say so and how to get them: %.600s", rep ? rep : "");
    free(rep);
}

void test_plots(void) {
    palette();
    show_twenty();
    compare_plots();
}
