/* progress.h: the progress line of a long command on stderr, with its rate and the time left:
 * redrawn in place on a terminal, plain lines when piped (logs, CI: one per interval and one per
 * milestone, never a \r). Two kinds share the line and its rules: training steps (loss, lr, tok/s;
 * train.c) and counted work (runs of compare and suite, tokens of eval: "3/8 runs | 2.1 runs/min
 * | ETA 2m10s"). progress_note prints a full line without breaking an open one. */
#ifndef PELAB_PROGRESS_H
#define PELAB_PROGRESS_H

#include <stdio.h>

typedef struct {
    FILE *out;
    int tty;          /* 1: redraw in place (\r); 0: plain lines */
    int every;        /* training steps, piped: a line every N steps */
    double every_s;   /* counted work, piped: a line at most every this many seconds (0: milestones only) */
    double t_start, t_last;
    long step0;       /* first step of this process (resume) */
    long total;
    double done0;     /* counted work: units done before this process (skipped runs) */
    int open_line;    /* a \r line is on screen */
    const char *what; /* counted work: the line's name ("compare") */
    const char *unit; /* ... and its unit ("runs", "tok") */
    int per_minute;   /* the rate per minute (runs/min) instead of per second (tok/s) */
    char prefix[200]; /* training: text before "step" (compare's overall progress) */
} Progress;

/* training steps on stderr, in place when it is a terminal */
void progress_init(Progress *p, long step0, long total, int every);
/* the same on out, tty saying whether to redraw in place (tests take both paths) */
void progress_init_to(Progress *p, FILE *out, int tty, long step0, long total, int every);
void progress_step(Progress *p, long step, float loss, float lr, double tokens_per_s);

/* counted work of `total` units (what, unit: static strings) on out; done0 units already done
 * (their time is not in the rate); piped, at most one line per every_s seconds between milestones */
void progress_count_init(Progress *p, FILE *out, int tty, const char *what, const char *unit, int per_minute,
                         double total, double done0, double every_s);
/* done units of total, frac the share of the work done (0..1: the time left is the elapsed time per
 * share; < 0: done / total), detail a short tail ("rope seed 2", may be NULL). A milestone (a run
 * finished) always prints and stays on screen; other calls redraw in place on a terminal and print
 * every every_s seconds when piped. */
void progress_count(Progress *p, double done, double frac, int milestone, const char *detail);
/* "2m05s", "1h10m" */
void progress_format_eta(char *buf, size_t n, double seconds);

/* a full line (validation, checkpoint): ends any open \r line first */
void progress_note(Progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_done(Progress *p);

#endif
