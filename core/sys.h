/* sys.h: wall clock and peak memory of this process, and when a loop is worth parallelising. */
#ifndef PELAB_SYS_H
#define PELAB_SYS_H

/* OpenMP loops with less work than this many elements run on one thread: forking costs more
 * than it saves, and on a busy machine a spinning team can stall for milliseconds */
#define PAR_MIN_WORK 32768

double now_seconds(void);
long peak_rss_kb(void);

#endif
