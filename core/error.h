/* error.h: library code never exits on bad input: it records one line here and returns -1.
 * The command layer (tools/) prints it ("pelab: <msg>") and exits non-zero. */
#ifndef PELAB_ERROR_H
#define PELAB_ERROR_H

/* one per thread: the seeds of `train --seeds` fail on their own threads (train.c copies it out) */
extern __thread char pelab_errmsg[512];
int pelab_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
