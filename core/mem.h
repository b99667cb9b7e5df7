/* mem.h: allocation failures are not input errors: report and exit, like llm.c's mallocCheck. */
#ifndef PELAB_MEM_H
#define PELAB_MEM_H

#include <stddef.h>

void *malloc_check(size_t size, const char *file, int line);
void *calloc_check(size_t n, size_t size, const char *file, int line);
void *realloc_check(void *p, size_t size, const char *file, int line);
#define xmalloc(n) malloc_check((n), __FILE__, __LINE__)
#define xrealloc(p, n) realloc_check((p), (n), __FILE__, __LINE__)
#define xcalloc(n, s) calloc_check((n), (s), __FILE__, __LINE__)

/* Address space of `bytes` with no memory behind it and no access (mmap PROT_NONE): a block whose
 * parts are committed (readable, writable, zeroed) one range at a time, so that a read of a part
 * never committed faults at once instead of returning a silent zero. NULL with one pelab_errmsg
 * line if the system refuses. */
void *mem_reserve(size_t bytes);
/* make [off, off + len) of a reservation readable and writable (whole pages around it); 0 or -1 */
int mem_commit(void *base, size_t off, size_t len);
/* the bytes committed so far in whole pages, for [off, off + len) (what mem_commit would cover) */
size_t mem_commit_span(size_t off, size_t len);
void mem_release(void *base, size_t bytes);

#endif
