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

#endif
