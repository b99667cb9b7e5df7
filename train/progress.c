#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "../core/sys.h"

void progress_init(Progress *p, long step0, long total, int every) {
    p->tty = isatty(fileno(stderr));
    p->every = every > 0 ? every : 10;
    p->t_start = now_seconds();
    p->step0 = step0;
    p->total = total;
    p->open_line = 0;
}

static void format_eta(char *buf, size_t n, double seconds) {
    long s = seconds > 0 ? (long)(seconds + 0.5) : 0;
    if (s >= 3600) snprintf(buf, n, "%ldh%02ldm", s / 3600, s / 60 % 60);
    else snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
}

void progress_step(Progress *p, long step, float loss, float lr, double tokens_per_s) {
    int last = step == p->total;
    if (!p->tty && step % p->every != 0 && !last && step != p->step0 + 1) return;
    double elapsed = now_seconds() - p->t_start;
    long done = step - p->step0;
    char eta[32];
    format_eta(eta, sizeof eta, done > 0 ? elapsed / done * (p->total - step) : 0);
    fprintf(stderr, "%sstep %ld/%ld | loss %.4f | lr %.2e | %.0f tok/s | ETA %s%s", p->tty ? "\r\033[K" : "", step,
            p->total, loss, lr, tokens_per_s, eta, p->tty ? "" : "\n");
    p->open_line = p->tty;
    fflush(stderr);
}

void progress_note(Progress *p, const char *fmt, ...) {
    if (p->open_line) fputc('\n', stderr);
    p->open_line = 0;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void progress_done(Progress *p) {
    if (p->open_line) fputc('\n', stderr);
    p->open_line = 0;
}
