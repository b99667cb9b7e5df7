/* progress.c: the progress line (progress.h). */
#include "progress.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "../core/sys.h"

void progress_init_to(Progress *p, FILE *out, int tty, long step0, long total, int every) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = tty;
    p->every = every > 0 ? every : 10;
    p->t_start = p->t_last = now_seconds();
    p->step0 = step0;
    p->total = total;
}

void progress_init(Progress *p, long step0, long total, int every) {
    progress_init_to(p, stderr, isatty(fileno(stderr)), step0, total, every);
}

void progress_format_eta(char *buf, size_t n, double seconds) {
    long s = seconds > 0 ? (long)(seconds + 0.5) : 0;
    if (s >= 3600) snprintf(buf, n, "%ldh%02ldm", s / 3600, s / 60 % 60);
    else snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
}

/* the line's start: on a terminal back to column 0 and the old line cleared */
static void line_start(Progress *p) {
    if (p->tty) fputs("\r\033[K", p->out);
}

/* its end: a newline when piped or kept (a milestone), else the line stays open for the next redraw */
static void line_end(Progress *p, int keep) {
    if (!p->tty || keep) fputc('\n', p->out);
    p->open_line = p->tty && !keep;
    fflush(p->out);
}

void progress_step(Progress *p, long step, float loss, float lr, double tokens_per_s) {
    int last = step == p->total;
    double now = now_seconds(), elapsed = now - p->t_start;
    if (!p->tty && step % p->every != 0 && !last && step != p->step0 + 1) return;
    if (p->tty && !last && step != p->step0 + 1 && now - p->t_last < 0.1) return; /* 10 redraws a second */
    p->t_last = now;
    long done = step - p->step0;
    char eta[32];
    progress_format_eta(eta, sizeof eta, done > 0 ? elapsed / done * (p->total - step) : 0);
    line_start(p);
    fprintf(p->out, "%sstep %ld/%ld | loss %.4f | lr %.2e | %.0f tok/s | ETA %s", p->prefix, step, p->total, loss, lr,
            tokens_per_s, eta);
    line_end(p, 0);
}

void progress_count_init(Progress *p, FILE *out, int tty, const char *what, const char *unit, int per_minute,
                         double total, double done0, double every_s) {
    progress_init_to(p, out, tty, 0, (long)total, 1);
    p->what = what, p->unit = unit, p->per_minute = per_minute;
    p->done0 = done0, p->every_s = every_s;
}

void progress_count(Progress *p, double done, double frac, int milestone, const char *detail) {
    double now = now_seconds(), elapsed = now - p->t_start;
    if (!milestone) {
        /* a terminal redraws at most 10 times a second; a pipe gets a line per interval */
        if (p->tty ? now - p->t_last < 0.1 : !(p->every_s > 0 && now - p->t_last >= p->every_s)) return;
    }
    p->t_last = now;
    if (frac < 0) frac = p->total > 0 ? done / p->total : 0;
    /* the rate and the time left from this process's work only: runs done before took no time here */
    double here = done - p->done0, rate = elapsed > 0 ? here / elapsed : 0, frac0 = p->total > 0 ? p->done0 / p->total : 0;
    char eta[32] = "?";
    if (frac >= 1) snprintf(eta, sizeof eta, "done");
    else if (frac > frac0 && here > 0) progress_format_eta(eta, sizeof eta, elapsed / (frac - frac0) * (1 - frac));
    line_start(p);
    fprintf(p->out, "%s: %.0f/%ld %s | ", p->what, done, p->total, p->unit);
    double shown = p->per_minute ? 60 * rate : rate;
    fprintf(p->out, "%.*f %s/%s", shown < 10 ? 1 : 0, shown, p->unit, p->per_minute ? "min" : "s");
    fprintf(p->out, " | %.0f%% | ETA %s", 100 * (frac < 1 ? frac : 1), eta);
    if (detail && *detail) fprintf(p->out, " | %s", detail);
    line_end(p, milestone);
}

void progress_note(Progress *p, const char *fmt, ...) {
    if (p->open_line) fputc('\n', p->out);
    p->open_line = 0;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
}

void progress_done(Progress *p) {
    if (p->open_line) fputc('\n', p->out);
    p->open_line = 0;
}
