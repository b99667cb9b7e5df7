/* files.c: reading regular files without blocking, output checks, atomic writes. */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "mem.h"

#include "rng.h"
#include "sys.h"
/* fopen_regular of path, the messages naming shown (the path as the user gave it) */
static FILE *open_regular(const char *path, const char *shown) {
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        pelab_fail("%s: cannot open: %s", shown, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        pelab_fail("%s: cannot stat: %s", shown, strerror(err));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        const char *kind = S_ISDIR(st.st_mode)    ? "a directory"
                           : S_ISFIFO(st.st_mode) ? "a FIFO"
                           : S_ISCHR(st.st_mode)  ? "a character device"
                           : S_ISBLK(st.st_mode)  ? "a block device"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : "not a plain file";
        pelab_fail("%s: is %s, not a regular file", shown, kind);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int err = errno;
        close(fd);
        pelab_fail("%s: cannot open: %s", shown, strerror(err));
    }
    return f;
}

FILE *fopen_regular(const char *path) { return open_regular(path, path); }

/* a file of size bytes against a cap: -1 naming the kind and the cap */
static int check_cap(const char *path, unsigned long long size, size_t max, const char *what) {
    if (size <= max) return 0;
    return pelab_fail("%s: %llu bytes: more than %s can be (pelab reads at most %llu MB of it; not that file?)", path,
                      size, what, (unsigned long long)max >> 20);
}

int read_open_file(FILE *f, const char *path, size_t max, const char *what, unsigned char **out, size_t *out_len) {
    struct stat st;
    if (fstat(fileno(f), &st) != 0) return pelab_fail("%s: cannot stat: %s", path, strerror(errno));
    if (check_cap(path, (unsigned long long)st.st_size, max, what) != 0) return -1;
    size_t n = (size_t)st.st_size;
    unsigned char *buf = xmalloc(n + 1);
    rewind(f);
    if (n > 0 && fread(buf, 1, n, f) != n) {
        free(buf);
        return pelab_fail("%s: short read", path);
    }
    buf[n] = 0;
    *out = buf;
    *out_len = n;
    return 0;
}

int read_file_max(const char *path, size_t max, const char *what, unsigned char **out, size_t *out_len) {
    FILE *f = fopen_regular(path);
    if (!f) return -1;
    int rc = read_open_file(f, path, max, what, out, out_len);
    fclose(f);
    return rc;
}

int read_file(const char *path, unsigned char **out, size_t *out_len) {
    return read_file_max(path, SIZE_MAX, "a file", out, out_len);
}

/* path opened once every symlink on its way is resolved, NULL (one line) when it resolves outside root */
static FILE *open_within(const char *root, const char *root_what, const char *path) {
    char *real = realpath(path, NULL);
    if (!real) {
        pelab_fail("%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t n = strlen(root);
    int inside = !strcmp(root, "/") || (!strncmp(real, root, n) && real[n] == '/');
    /* the resolved path is opened: no symlink is followed after the check */
    FILE *f = inside ? open_regular(real, path) : NULL;
    if (!inside) pelab_fail("%s: a symlink to %s, outside %s %s (copy the file in)", path, real, root_what, root);
    free(real);
    return f;
}

int read_file_within(const char *root, const char *root_what, const char *path, size_t max, const char *what,
                     unsigned char **out, size_t *out_len) {
    FILE *f = open_within(root, root_what, path);
    int rc = f ? read_open_file(f, path, max, what, out, out_len) : -1;
    if (f) fclose(f);
    return rc;
}

static int map_open_file(FILE *f, const char *path, MappedFile *m) {
    struct stat st;
    memset(m, 0, sizeof *m);
    if (fstat(fileno(f), &st) != 0) return pelab_fail("%s: cannot stat: %s", path, strerror(errno));
    if ((unsigned long long)st.st_size > SIZE_MAX / 2) return pelab_fail("%s: %lld bytes: too large to map", path, (long long)st.st_size);
    if (st.st_size == 0) return 0;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    if (p == MAP_FAILED) return pelab_fail("%s: cannot map %lld bytes: %s", path, (long long)st.st_size, strerror(errno));
    m->data = p, m->len = (size_t)st.st_size;
    return 0;
}

int map_file(const char *path, MappedFile *m) {
    FILE *f = fopen_regular(path);
    memset(m, 0, sizeof *m);
    if (!f) return -1;
    int rc = map_open_file(f, path, m); /* the mapping outlives the descriptor */
    fclose(f);
    return rc;
}

int map_file_within(const char *root, const char *root_what, const char *path, MappedFile *m) {
    FILE *f = open_within(root, root_what, path);
    memset(m, 0, sizeof *m);
    int rc = f ? map_open_file(f, path, m) : -1;
    if (f) fclose(f);
    return rc;
}

void unmap_file(MappedFile *m) {
    if (m->data) munmap((void *)m->data, m->len);
    memset(m, 0, sizeof *m);
}

/* the directory part of path ("." when there is none), malloc'ed */
static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    while (slash && slash > path && slash[-1] == '/') slash--; /* "a//b" */
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* dir must be an existing directory this process can create files in */
static int check_writable_dir(const char *path, const char *dir) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) return pelab_fail("%s: directory %s does not exist", path, dir);
        return pelab_fail("%s: cannot use directory %s: %s", path, dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return pelab_fail("%s: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0) return pelab_fail("%s: cannot create files in %s: %s", path, dir, strerror(errno));
    return 0;
}

int check_output_file(const char *path) {
    if (!*path) return pelab_fail("an empty path");
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return pelab_fail("%s: is a directory, expected a file path", path);
    } else if (errno != ENOENT && errno != ENOTDIR) {
        return pelab_fail("%s: %s", path, strerror(errno));
    }
    char *dir = dir_of(path);
    if (!dir) return pelab_fail("%s: out of memory", path);
    int rc = check_writable_dir(path, dir);
    free(dir);
    return rc;
}

int check_output_dir(const char *path) {
    if (!*path) return pelab_fail("an empty path");
    /* the nearest part of the path that exists must be a directory we can write in (mkdir -p does the rest) */
    char *dir = strdup(path);
    if (!dir) return pelab_fail("%s: out of memory", path);
    struct stat st;
    int rc = 0;
    while (stat(dir, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) { /* ENOTDIR: a file on the way, named by the check below */
            rc = pelab_fail("%s: %s: %s", path, dir, strerror(errno));
            break;
        }
        char *up = dir_of(dir);
        free(dir);
        dir = up;
        if (!dir) return pelab_fail("%s: out of memory", path);
    }
    if (rc == 0) rc = check_writable_dir(path, dir);
    free(dir);
    return rc;
}

int make_dirs(const char *path) {
    char *dir = strdup(path);
    if (!dir) return pelab_fail("%s: out of memory", path);
    for (char *p = dir + 1; *p; p++) /* the parents first; one that fails is named by the last mkdir */
        if (*p == '/') *p = 0, mkdir(dir, 0755), *p = '/';
    int rc = 0;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) rc = pelab_fail("cannot create %s: %s", dir, strerror(errno));
    free(dir);
    return rc;
}

int write_all(FILE *f, const void *p, size_t n) { return n == 0 || fwrite(p, 1, n, f) == n ? 0 : -1; }

/* make the rename itself durable; best effort, as not every filesystem can fsync a directory */
static void fsync_parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else if ((size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
    } else return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

/* path + ".tmp." + TMP_SUFFIX_LEN random characters: unique, so a planted file or symlink with a
 * predictable name is never opened, and two writers never share one */
#define TMP_SUFFIX_LEN 6
static const char tmp_alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/* creates a new temporary file beside path: O_EXCL (never an existing file), O_NOFOLLOW (never
 * through a symlink), mode 0644 less the umask; the name is left in tmp */
static FILE *create_temp_beside(const char *path, char *tmp, int *err) {
    static uint64_t counter;
    size_t plen = strlen(path);
    Rng r;
    rng_seed(&r, ((uint64_t)getpid() << 32) ^ (uint64_t)(now_seconds() * 1e9) ^ (++counter * 0x9E3779B97F4A7C15ull));
    for (int attempt = 0; attempt < 100; attempt++) {
        memcpy(tmp, path, plen);
        memcpy(tmp + plen, ".tmp.", 5);
        for (int i = 0; i < TMP_SUFFIX_LEN; i++) tmp[plen + 5 + i] = tmp_alphabet[rng_below(&r, sizeof tmp_alphabet - 1)];
        tmp[plen + 5 + TMP_SUFFIX_LEN] = 0;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            if (errno == EEXIST) continue;
            *err = errno;
            return NULL;
        }
        FILE *f = fdopen(fd, "wb");
        if (!f) {
            *err = errno;
            close(fd);
            unlink(tmp);
        }
        return f;
    }
    *err = EEXIST;
    return NULL;
}

/* the open atomic files, so that a command that exits on an error removes their temporary files
 * (atomic_discard_all) instead of leaving them beside its outputs */
enum { MAX_OPEN_ATOMIC = 16 };
static AtomicFile *open_atomic[MAX_OPEN_ATOMIC];

static void track_atomic(AtomicFile *a, int add) {
    for (int i = 0; i < MAX_OPEN_ATOMIC; i++)
        if (add ? !open_atomic[i] : open_atomic[i] == a) {
            open_atomic[i] = add ? a : NULL;
            return;
        }
}

/* atomic_open without the removal of stale temporary files: a checkpoint's writer removes them
 * once, when its run starts (train.c), never while another writer of the path could be writing */
static FILE *atomic_create(AtomicFile *a, const char *path) {
    size_t plen = strlen(path);
    a->path = xmalloc(plen + 1);
    memcpy(a->path, path, plen + 1);
    a->tmp = xmalloc(plen + 5 + TMP_SUFFIX_LEN + 1);
    memcpy(a->tmp, path, plen);
    memcpy(a->tmp + plen, ".tmp.XXXXXX", 5 + TMP_SUFFIX_LEN + 1); /* the name in messages until one is made */
    int err = 0;
    struct stat st; /* followed: /dev/stdout is a symlink to the stream */
    a->stream = stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
    if (a->stream) {
        a->f = fopen(path, "wb");
        err = errno;
    } else {
        a->f = create_temp_beside(path, a->tmp, &err);
    }
    if (!a->f) {
        pelab_fail("%s: cannot create %s: %s", path, a->tmp, strerror(err));
        free(a->path), free(a->tmp);
        a->path = a->tmp = NULL;
        return NULL;
    }
    a->pid = (long)getpid();
    track_atomic(a, 1);
    return a->f;
}

FILE *atomic_open(AtomicFile *a, const char *path) {
    remove_stale_temps(path); /* those a killed write of this file left (the fsync is where kills land) */
    return atomic_create(a, path);
}

static void atomic_free(AtomicFile *a) {
    track_atomic(a, 0);
    free(a->path), free(a->tmp);
    a->f = NULL, a->path = a->tmp = NULL;
}

void atomic_discard(AtomicFile *a) {
    if (!a->path) return;
    if (a->f) fclose(a->f);
    if (!a->stream) unlink(a->tmp);
    atomic_free(a);
}

void atomic_discard_all(void) {
    for (int i = 0; i < MAX_OPEN_ATOMIC; i++)
        if (open_atomic[i] && open_atomic[i]->pid == (long)getpid()) atomic_discard(open_atomic[i]);
}

/* a stream's end: flushed and closed, nothing to sync or rename */
static int stream_commit(AtomicFile *a) {
    errno = 0;
    int bad = ferror(a->f) || fflush(a->f) != 0, err = errno;
    if (fclose(a->f) != 0 && !bad) bad = 1, err = errno;
    a->f = NULL;
    int rc = bad ? pelab_fail("%s: cannot write: %s", a->path, err ? strerror(err) : "I/O error") : 0;
    atomic_free(a);
    return rc;
}

int atomic_commit(AtomicFile *a) {
    if (a->stream) return stream_commit(a);
    const char *what = NULL; /* the failed step, if any */
    int err = 0;
    errno = 0;
    if (ferror(a->f) || fflush(a->f) != 0) {
        what = "cannot write";
        err = errno;
    } else if (fsync(fileno(a->f)) != 0) {
        what = "cannot fsync";
        err = errno;
    }
    if (fclose(a->f) != 0 && !what) {
        what = "cannot close";
        err = errno;
    }
    a->f = NULL;
    if (!what && rename(a->tmp, a->path) != 0) {
        what = "rename";
        err = errno;
    }
    int rc = 0;
    if (what) {
        /* a folder made read-only meanwhile keeps the temporary file: say so (remove_stale_temps takes it) */
        const char *kept = unlink(a->tmp) != 0 ? " (the temporary file is left behind)" : "";
        const char *why = err ? strerror(err) : "I/O error";
        if (strcmp(what, "rename") == 0)
            rc = pelab_fail("%s: cannot rename %s to %s: %s%s", a->path, a->tmp, a->path, why, kept);
        else rc = pelab_fail("%s: %s %s: %s%s", a->path, what, a->tmp, why, kept);
    } else {
        fsync_parent_dir(a->path);
    }
    atomic_free(a);
    return rc;
}

int atomic_publish(AtomicFile *a) {
    errno = 0;
    if (!a->stream) {
        if (ferror(a->f) || fflush(a->f) != 0 || fsync(fileno(a->f)) != 0 || rename(a->tmp, a->path) != 0) {
            int err = errno;
            int rc = pelab_fail("%s: cannot write %s: %s", a->path, a->tmp, err ? strerror(err) : "I/O error");
            atomic_discard(a);
            return rc;
        }
        fsync_parent_dir(a->path);
    }
    FILE *f = a->f; /* atomic_free forgets it: the caller keeps it */
    atomic_free(a);
    a->f = f;
    return 0;
}

int write_file_atomic(const char *path, int (*write_body)(FILE *f, const void *ctx), const void *ctx) {
    AtomicFile a;
    FILE *f = atomic_create(&a, path);
    if (!f) return -1;
    errno = 0;
    if (write_body(f, ctx) != 0) {
        int err = errno;
        fclose(f);
        a.f = NULL;
        const char *kept = !a.stream && unlink(a.tmp) != 0 ? " (the temporary file is left behind)" : "";
        pelab_fail("%s: cannot write %s: %s%s", path, a.stream ? path : a.tmp, err ? strerror(err) : "I/O error", kept);
        atomic_free(&a);
        return -1;
    }
    return atomic_commit(&a);
}

/* the pid a lock file holds, 0 when it holds none (its holder has not written it yet) */
static long lock_holder(int fd) {
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *end;
    long pid = strtol(buf, &end, 10);
    return pid > 0 && (*end == '\n' || !*end) ? pid : 0;
}

int output_lock(OutputLock *lock, const char *path, int *unsupported) {
    lock->fd = -1, lock->path = NULL, *unsupported = 0;
    size_t n = strlen(path) + 6;
    char *lpath = xmalloc(n);
    snprintf(lpath, n, "%s.lock", path);
    /* a holder removes the file as it releases it: a lock taken on a file no longer at lpath is
     * retried on the new one (the holder's successor may have created it) */
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            int err = errno;
            free(lpath);
            return pelab_fail("%s: cannot create its lock file %s.lock: %s", path, path, strerror(err));
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            long pid = err == EWOULDBLOCK ? lock_holder(fd) : 0;
            close(fd);
            free(lpath);
            if (err != EWOULDBLOCK) {
                *unsupported = err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS;
                return pelab_fail("%s: cannot lock %s.lock: %s", path, path, strerror(err));
            }
            if (pid) return pelab_fail("%s: another process (pid %ld) is writing it (lock %s.lock)", path, pid, path);
            return pelab_fail("%s: another process is writing it (lock %s.lock)", path, path);
        }
        struct stat held, named;
        if (fstat(fd, &held) != 0 || stat(lpath, &named) != 0 || held.st_ino != named.st_ino ||
            held.st_dev != named.st_dev) {
            close(fd);
            continue;
        }
        char pid[32];
        int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        int wrote = ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)len, 0) == len;
        (void)wrote; /* the pid only names the holder in another process's message */
        lock->fd = fd, lock->path = lpath;
        return 0;
    }
    free(lpath);
    return pelab_fail("%s: cannot lock %s.lock: it keeps being replaced", path, path);
}

void output_unlock(OutputLock *lock) {
    if (!lock->path) return;
    unlink(lock->path); /* while held: a process waiting on this file retries on a new one */
    close(lock->fd);
    free(lock->path);
    lock->fd = -1, lock->path = NULL;
}

int remove_stale_temps(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dlen = slash ? (size_t)(slash - path) : 0, blen = strlen(base);
    char *dir = xmalloc(dlen + 2);
    if (!slash) strcpy(dir, ".");
    else if (dlen == 0) strcpy(dir, "/");
    else memcpy(dir, path, dlen), dir[dlen] = 0;
    DIR *d = opendir(dir);
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *name = e->d_name;
        if (strlen(name) != blen + 5 + TMP_SUFFIX_LEN || strncmp(name, base, blen) != 0 ||
            strncmp(name + blen, ".tmp.", 5) != 0 || strspn(name + blen + 5, tmp_alphabet) != TMP_SUFFIX_LEN)
            continue;
        struct stat st;
        /* AT_SYMLINK_NOFOLLOW: a symlink with that name is someone else's, never ours to touch */
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            unlinkat(dirfd(d), name, 0) == 0)
            removed++;
    }
    if (d) closedir(d);
    free(dir);
    return removed;
}

typedef struct {
    const void *buf;
    size_t len;
} Bytes;

static int write_bytes_body(FILE *f, const void *ctx) {
    const Bytes *b = ctx;
    return write_all(f, b->buf, b->len);
}

int write_bytes_atomic(const char *path, const void *buf, size_t len) {
    Bytes b = {buf, len};
    return write_file_atomic(path, write_bytes_body, &b);
}

FILE *memfile_open(MemFile *m) {
    m->buf = NULL, m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    if (!m->f) pelab_fail("cannot open a stream in memory: %s", strerror(errno));
    return m->f;
}

void memfile_discard(MemFile *m) {
    if (m->f) fclose(m->f);
    free(m->buf);
    m->f = NULL, m->buf = NULL, m->len = 0;
}

int memfile_commit(MemFile *m, const char *path) {
    int bad = ferror(m->f);
    if (fclose(m->f) != 0 || bad) { /* open_memstream fails only for want of memory */
        m->f = NULL;
        memfile_discard(m);
        return pelab_fail("%s: cannot compose the file in memory: %s", path, strerror(ENOMEM));
    }
    m->f = NULL;
    remove_stale_temps(path); /* those a killed write of this file left (the fsync is where kills land) */
    int rc = write_bytes_atomic(path, m->buf, m->len);
    memfile_discard(m);
    return rc;
}
