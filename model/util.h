/* util.h: error reporting, checked allocation and file I/O, the project RNG. */
#ifndef PELAB_UTIL_H
#define PELAB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Library code never exits on bad input: it records one line here and returns -1.
 * The command-line layer prints it ("pelab: <msg>") and exits non-zero. */
extern char pelab_errmsg[512];
int pelab_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* CLI only: print the recorded error (or msg) and exit(1). */
void pelab_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Allocation failures are not input errors: report and exit, like llm.c's mallocCheck. */
void *malloc_check(size_t size, const char *file, int line);
void *calloc_check(size_t n, size_t size, const char *file, int line);
#define xmalloc(n) malloc_check((n), __FILE__, __LINE__)
#define xcalloc(n, s) calloc_check((n), (s), __FILE__, __LINE__)

/* Opens a regular file for reading ("rb") without blocking on a FIFO or device; anything that is
 * not a regular file is refused. NULL with pelab_errmsg naming the file. */
FILE *fopen_regular(const char *path);
/* Read a whole regular file into memory; returns -1 with pelab_errmsg naming the file. */
int read_file(const char *path, unsigned char **out, size_t *out_len);
/* the same from an open stream (from its start); path names it in messages */
int read_open_file(FILE *f, const char *path, unsigned char **out, size_t *out_len);

/* Before any work: can a file be written at path (atomically or not)? Not a directory, its
 * directory exists and is writable. -1 with one line naming the path and the problem. */
int check_output_file(const char *path);
/* the same for a directory that will be created if missing (mkdir -p): path, or its nearest
 * existing ancestor, is a writable directory */
int check_output_dir(const char *path);

/* xorshift64* (llama2.c's generator, so its samplers can be reproduced exactly). */
typedef struct { uint64_t state; } Rng;
void rng_seed(Rng *r, uint64_t seed);
uint32_t rng_u32(Rng *r);
float rng_f32(Rng *r);           /* uniform in [0,1), 24 bits */
float rng_normal(Rng *r);        /* standard normal, Box-Muller */
uint64_t rng_below(Rng *r, uint64_t n); /* uniform in [0,n) */

/* OpenMP loops with less work than this many elements run on one thread: forking costs more
 * than it saves, and on a busy machine a spinning team can stall for milliseconds */
#define PAR_MIN_WORK 32768

/* one CSV field followed by end (',' or '\n'), quoted when it holds a comma, quote or newline */
void csv_field(FILE *f, const char *s, char end);
/* sep, then "key": "s" with s escaped as a JSON string */
void json_field(FILE *f, const char *sep, const char *key, const char *s);

double now_seconds(void);
uint64_t fnv1a64(const void *data, size_t n, uint64_t h);
long peak_rss_kb(void);

/* Writes a file so that a crash leaves either the old file or the complete new one: write_body
 * streams into a new file PATH.tmp.XXXXXX (a unique name, created with O_EXCL|O_NOFOLLOW, mode
 * 0644 less the umask; returns 0 on success), which is flushed, fsynced and renamed over path
 * (then the directory is fsynced, best effort). A symlink at path is replaced, never followed.
 * -1 with one line naming the path and the step. */
int write_file_atomic(const char *path, int (*write_body)(FILE *f, const void *ctx), const void *ctx);
/* removes the regular files PATH.tmp.XXXXXX that a killed write_file_atomic left behind (never a
 * symlink); returns how many */
int remove_stale_temps(const char *path);
/* write_file_atomic of one buffer */
int write_bytes_atomic(const char *path, const void *buf, size_t len);
/* fwrite of n bytes (n may be 0): 0 or -1 */
int write_all(FILE *f, const void *p, size_t n);

#endif
