/* gnuplot.c: gnuplot scripts and a shell-free gnuplot runner (gnuplot.h). */
#include "gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/strbuf.h"

void gp_sb_string(StrBuf *b, const char *s) {
    sb_put(b, "'", 1);
    for (; *s; s++) {
        if (*s == '\'') sb_put(b, "''", 2);
        else sb_put(b, *s == '\n' || *s == '\r' ? " " : s, 1);
    }
    sb_put(b, "'", 1);
}

void gp_string(FILE *f, const char *s) {
    StrBuf b = {0};
    gp_sb_string(&b, s);
    fputs(sb_str(&b), f);
    sb_free(&b);
}

/* 21 colours picked greedily, each the farthest in CIELAB from those before it, from the Okabe-Ito
 * blue and vermillion over common categorical palettes (Okabe-Ito, Kelly, Trubetskoy, Tableau,
 * ColorBrewer), lightness L* <= 82 to show on white; the closest pair is 30 apart (CIE76 delta E;
 * tests/test_plots.c checks) */
static const char *const gp_colours[GP_COLOURS] = {
    "#0072b2", "#d55e00", "#3cb44b", "#f032e6", "#b3446c", "#000000", "#000075", "#c2b280", "#f3c300", "#dcbeff",
    "#17becf", "#654522", "#800000", "#f99379", "#808000", "#4363d8", "#e6194b", "#1b9e77", "#984ea3", "#7f7f7f",
    "#8db600"};

void gp_series_style(int i, const char **colour, int *point) {
    if (i < 0) i = 0;
    *colour = gp_colours[i % GP_COLOURS];
    *point = 1 + i % GP_MARKERS; /* gnuplot's point types 1..13 (+, x, *, squares, circles, triangles, diamonds) */
}

void gp_sb_series_style(StrBuf *b, int i) {
    const char *colour;
    int point;
    gp_series_style(i, &colour, &point);
    sb_printf(b, "lc rgb '%s' pt %d", colour, point);
}

void gp_series(FILE *f, int i) {
    StrBuf b = {0};
    gp_sb_series_style(&b, i);
    fputs(sb_str(&b), f);
    sb_free(&b);
}

void gp_preamble(FILE *f) {
    fprintf(f, "set datafile missing 'NaN'\nset key outside right\nset grid\n");
    /* linetype k: series k - 1's colour and marker, for the plots that name linetypes */
    for (int i = 0; i < GP_COLOURS; i++) {
        const char *colour;
        int point;
        gp_series_style(i, &colour, &point);
        fprintf(f, "set linetype %d lc rgb '%s' lw 2 pt %d ps 1.3\n", i + 1, colour, point);
    }
    fprintf(f, "set linetype cycle %d\n", GP_COLOURS);
}

void gp_output(FILE *f, const char *name, const char *ext, int width, int height) {
    if (strcmp(ext, "png") == 0)
        fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo noenhanced size %d,%d } "
                   "else { set terminal png truecolor noenhanced size %d,%d }\n", width, height, width, height);
    else fprintf(f, "set terminal svg noenhanced size %d,%d\n", width, height);
    fprintf(f, "set output ");
    char file[512];
    snprintf(file, sizeof file, "%s.%s", name, ext);
    gp_string(f, file);
    fputc('\n', f);
}

int gp_matrix_csv(const char *path, const float *m, int rows, int cols) {
    AtomicFile file;
    FILE *f = atomic_open(&file, path);
    if (!f) return -1;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) fprintf(f, "%.6g%c", m[(size_t)i * cols + j], j + 1 < cols ? ',' : '\n');
    return atomic_commit(&file);
}

void gp_png_svg(FILE *f, const char *name, int width, int height, const char *body) {
    gp_output(f, name, "png", width, height);
    fputs(body, f);
    gp_output(f, name, "svg", width, height);
    fputs(body, f);
}

/* 1 if prog is an executable file in a directory of $PATH: looked up here, not by a shell */
static int on_path(const char *prog) {
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    StrBuf full = {0};
    int found = 0;
    for (const char *p = path; !found;) {
        size_t n = strcspn(p, ":");
        full.len = 0;
        if (n) sb_put(&full, p, n);
        else sb_put(&full, ".", 1); /* an empty entry is the current directory */
        sb_printf(&full, "/%s", prog);
        struct stat st;
        found = stat(sb_str(&full), &st) == 0 && S_ISREG(st.st_mode) && access(sb_str(&full), X_OK) == 0;
        if (!p[n]) break;
        p += n + 1;
    }
    sb_free(&full);
    return found;
}

static int gp_disabled(void) {
    const char *no_gp = getenv("PELAB_NO_GNUPLOT");
    return no_gp && *no_gp;
}

int gp_available(void) { return !gp_disabled() && on_path("gnuplot"); }

const char *gp_missing(void) {
    return gp_disabled() ? "gnuplot was not run (PELAB_NO_GNUPLOT is set)" : "gnuplot is not installed (not on PATH)";
}

int gp_run(const char *dir, const char *script, int *have_gp) {
    *have_gp = gp_available();
    if (!*have_gp) return 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        /* stdin from /dev/null (gnuplot would wait at a "pause"), stdout and stderr to gnuplot.log */
        int log = chdir(dir) == 0 ? open("gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644) : -1;
        int null = open("/dev/null", O_RDONLY);
        if (log < 0 || null < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) _exit(127);
        char *const argv[] = {"gnuplot", (char *)script, NULL};
        execvp("gnuplot", argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
