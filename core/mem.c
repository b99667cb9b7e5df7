/* mem.c: checked allocation. */
#include "mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"

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

void *mem_reserve(size_t bytes) {
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        pelab_fail("cannot reserve %zu bytes of address space: %s", bytes, strerror(errno));
        return NULL;
    }
    return p;
}

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

size_t mem_commit_span(size_t off, size_t len) {
    if (!len) return 0;
    size_t pg = page_size(), first = off / pg * pg, end = (off + len + pg - 1) / pg * pg;
    return end - first;
}

int mem_commit(void *base, size_t off, size_t len) {
    if (!len) return 0;
    size_t pg = page_size(), first = off / pg * pg;
    if (mprotect((char *)base + first, mem_commit_span(off, len), PROT_READ | PROT_WRITE) != 0)
        return pelab_fail("cannot commit %zu bytes of a reservation: %s", len, strerror(errno));
    return 0;
}

void mem_release(void *base, size_t bytes) {
    if (base) munmap(base, bytes ? bytes : 1);
}
