/* progress.h: the training progress line on stderr, redrawn in place on a terminal and printed
 * once per interval otherwise (logs, CI). */
#ifndef PELAB_PROGRESS_H
#define PELAB_PROGRESS_H

typedef struct {
    int tty;
    int every;        /* non-terminal: print every N steps */
    double t_start;
    long step0;       /* first step of this process (resume) */
    long total;
    int open_line;    /* a \r line is on screen */
} Progress;

void progress_init(Progress *p, long step0, long total, int every);
void progress_step(Progress *p, long step, float loss, float lr, double tokens_per_s);
/* a full line (validation, checkpoint): ends any open \r line first */
void progress_note(Progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_done(Progress *p);

#endif
