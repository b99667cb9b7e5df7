/* mem.c: checked allocation. */
#include "mem.h"

#include <stdio.h>
#include <stdlib.h>

void *malloc_check(size_t size, const char *file, int line) {
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "pelab: out of memory allocating %zu bytes (%s:%d)\n", size, file, line);
        exit(1);
    }
    return p;
}

void *calloc_check(size_t n, size_t size, const char *file, int line) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "pelab: out of memory allocating %zu x %zu bytes (%s:%d)\n", n, size, file, line);
        exit(1);
    }
    return p;
}

void *realloc_check(void *p, size_t size, const char *file, int line) {
    void *q = realloc(p, size ? size : 1);
    if (!q) {
        fprintf(stderr, "pelab: out of memory allocating %zu bytes (%s:%d)\n", size, file, line);
        exit(1);
    }
    return q;
}
