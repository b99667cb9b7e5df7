/* sys.c: wall clock, peak memory and the path of this process. */
#include "sys.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

long maxrss_kb(long ru_maxrss) {
#ifdef __APPLE__
    return ru_maxrss / 1024;
#else
    return ru_maxrss;
#endif
}

long peak_rss_kb(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    return maxrss_kb(ru.ru_maxrss);
}

char *self_exe_path(void) {
#ifdef __APPLE__
    uint32_t size = 0;
    _NSGetExecutablePath(NULL, &size); /* says the size it needs */
    char *raw = malloc(size + 1);
    if (!raw || _NSGetExecutablePath(raw, &size) != 0) {
        free(raw);
        return NULL;
    }
    char *path = realpath(raw, NULL); /* without the ./ and symlinks dyld may report */
    free(raw);
    return path;
#else
    for (size_t cap = 256; cap <= (1u << 20); cap *= 2) {
        char *buf = malloc(cap);
        if (!buf) return NULL;
        ssize_t n = readlink("/proc/self/exe", buf, cap); /* fails where there is no /proc */
        if (n < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = 0;
            return buf;
        }
        free(buf);
    }
    return NULL;
#endif
}
