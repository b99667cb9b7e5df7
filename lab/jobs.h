/* jobs.h: a sweep's job file (`compare --jobs`, `suite --jobs`), one self-contained shell command per
 * run that has not finished: as plain lines (GNU parallel, xargs -P, sh), or as a Slurm array script
 * whose task i runs line i (sbatch --wait FILE). Both run the same commands; README: "Running a sweep
 * on a cluster". */
#ifndef PELAB_JOBS_H
#define PELAB_JOBS_H

#include "../core/strbuf.h"

enum { JOBS_LINES, JOBS_SLURM };

/* --jobs-format NAME: "lines" or "slurm" into *fmt; -1 with pelab_errmsg */
int jobs_format_parse(const char *name, int *fmt);

/* w as one word for sh: as is when it is plain, else in single quotes (a quote inside becomes '\'') */
void shell_quote(StrBuf *b, const char *w);

/* 1 when w holds a line break, which no line of a job file may carry */
int jobs_word_breaks_line(const char *w);

/* lines (n commands, each ending in '\n') into path in format fmt; the Slurm script names its jobs
 * "pelab-" + what and asks for `threads` CPUs per task (0: one). No commands: an empty file. -1 with
 * pelab_errmsg */
int jobs_write(const char *path, int fmt, const char *what, const char *lines, int n, int threads);

/* what to run next, one clause for the messages: "parallel -j4 < FILE" or "sbatch --wait FILE", the
 * path quoted for the shell */
void jobs_how(StrBuf *b, int fmt, const char *path);

#endif
