/* files.h: reading regular files without blocking, checking outputs before any work, and atomic
 * writes. Every function returns -1 (or NULL) with one pelab_errmsg line naming the path. */
#ifndef PELAB_FILES_H
#define PELAB_FILES_H

#include <stddef.h>
#include <stdio.h>

/* Opens a regular file for reading ("rb") without blocking on a FIFO or device; anything that is
 * not a regular file is refused. NULL with pelab_errmsg naming the file. */
FILE *fopen_regular(const char *path);
/* Read a whole regular file into memory; returns -1 with pelab_errmsg naming the file. For texts
 * that are data (corpora, prompts), whose size is the user's to choose; a file whose kind has a
 * sane size reads through read_file_max. */
int read_file(const char *path, unsigned char **out, size_t *out_len);
/* read_file of a file refused, before any byte is read, when it is over max bytes; what names the
 * kind in that message ("a tokenizer.json") */
int read_file_max(const char *path, size_t max, const char *what, unsigned char **out, size_t *out_len);
/* the same from an open stream (from its start); path names it in messages */
int read_open_file(FILE *f, const char *path, size_t max, const char *what, unsigned char **out, size_t *out_len);
/* read_file_max of path once every symlink on its way is resolved (realpath), refused when it
 * resolves outside the directory root (an absolute path without symlinks: realpath's); root_what
 * names root in the message ("the model folder") */
int read_file_within(const char *root, const char *root_what, const char *path, size_t max, const char *what,
                     unsigned char **out, size_t *out_len);

/* Size caps of the text files read whole, far above any real one: a hostile or mistaken path (a
 * 30 GB file named config.json) is refused in one line instead of filling memory. */
#define FILE_MAX_CONFIG (16ull << 20)     /* config.json, an index, a spec, a claims or factors file */
#define FILE_MAX_TOKENIZER (256ull << 20) /* tokenizer.json (Gemma's: 33 MB), tokenizer.bin, a BPE file */

/* A regular file mapped read-only (MAP_PRIVATE): its pages are read only when touched, so a loader
 * checks a file's header and declared sizes against len before a byte of its body is read, and a
 * model's weights are read straight from the page cache. An empty file maps to data NULL, len 0.
 * The file must not be truncated while mapped (SIGBUS): model files are not written in place. */
typedef struct {
    const unsigned char *data;
    size_t len;
} MappedFile;
int map_file(const char *path, MappedFile *m);
/* map_file under read_file_within's rule */
int map_file_within(const char *root, const char *root_what, const char *path, MappedFile *m);
void unmap_file(MappedFile *m);

/* Before any work: can a file be written at path (atomically or not)? Not a directory, its
 * directory exists and is writable. -1 with one line naming the path and the problem. */
int check_output_file(const char *path);
/* the same for a directory that will be created if missing (mkdir -p): path, or its nearest
 * existing ancestor, is a writable directory */
int check_output_dir(const char *path);
/* mkdir -p: path and its missing parents (mode 0755); -1 with one line naming the directory */
int make_dirs(const char *path);

/* Writes a file so that a crash leaves either the old file or the complete new one: write_body
 * streams into a new file PATH.tmp.XXXXXX (a unique name, created with O_EXCL|O_NOFOLLOW, mode
 * 0644 less the umask; returns 0 on success), which is flushed, fsynced and renamed over path
 * (then the directory is fsynced, best effort). A symlink at path is replaced, never followed.
 * -1 with one line naming the path and the step. */
int write_file_atomic(const char *path, int (*write_body)(FILE *f, const void *ctx), const void *ctx);
/* The same as a stream, for an output written while the work runs (a CSV row per token): atomic_open
 * removes the temporary files a killed write of path left and creates a new one (NULL with one
 * line); atomic_commit flushes, fsyncs and renames it over path (-1 with one line naming path and the
 * step); atomic_discard removes it. atomic_discard_all: every file still open, for a command that
 * exits on an error (pelab_die), so no temporary file is left beside an output. */
typedef struct {
    FILE *f;
    char *path, *tmp;
    long pid;   /* the process that opened it: a forked child's exit never removes its parent's file */
    int stream; /* path is a character device or a FIFO (/dev/stdout, a pipe): written in place, as a
                 * stream has no old content to keep and no name to rename over */
} AtomicFile;
FILE *atomic_open(AtomicFile *a, const char *path);
int atomic_commit(AtomicFile *a);
void atomic_discard(AtomicFile *a);
void atomic_discard_all(void);
/* for a log that grows after its first lines (a loss curve): renames the file, as written so far, over
 * path and leaves a->f open for appending; the AtomicFile is spent (-1 with one line; a->f then
 * closed and the temporary file removed) */
int atomic_publish(AtomicFile *a);
/* One writer per output: an exclusive advisory lock (flock) on the file PATH.lock beside path, held
 * until output_unlock, or until the process ends however it ends (the kernel releases it, even
 * after a SIGKILL: a lock is never stale). The lock file holds the holder's pid. Held by another
 * process (or another open of the same path in this one): -1, "PATH: another process (pid N) is
 * writing it (lock PATH.lock)". A file system that cannot lock (ENOLCK, EOPNOTSUPP): -1 with
 * *unsupported set, so that a caller may go on without it where the user vouches for one writer.
 * lock->path is NULL while none is held. */
typedef struct {
    int fd;
    char *path; /* the lock file's */
} OutputLock;
int output_lock(OutputLock *lock, const char *path, int *unsupported);
/* removes the lock file and releases the lock (nothing when none is held) */
void output_unlock(OutputLock *lock);

/* removes the regular files PATH.tmp.XXXXXX that a killed write_file_atomic left behind (never a
 * symlink); returns how many */
int remove_stale_temps(const char *path);
/* write_file_atomic of one buffer */
int write_bytes_atomic(const char *path, const void *buf, size_t len);
/* A report or result file composed in memory and written with write_file_atomic when committed, so
 * a kill, a full disk or a read-only folder leaves the old file or the whole new one, never a torn
 * one. memfile_open: the stream to print into (NULL with one line); memfile_commit: closes it,
 * removes the temporary files a killed write of path left (remove_stale_temps) and writes path (-1
 * with one line naming path and the step); memfile_discard: drops it. Either of the two frees the
 * buffer. */
typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} MemFile;
FILE *memfile_open(MemFile *m);
int memfile_commit(MemFile *m, const char *path);
void memfile_discard(MemFile *m);
/* fwrite of n bytes (n may be 0): 0 or -1 */
int write_all(FILE *f, const void *p, size_t n);

#endif
