/* strbuf.h: a growable NUL-terminated string, for text whose length the input decides (JSON
 * headers, shell command lines): never a fixed buffer that could cut it short. */
#ifndef PELAB_STRBUF_H
#define PELAB_STRBUF_H

#include <stddef.h>

typedef struct {
    char *s; /* NULL until the first append; then always NUL-terminated */
    size_t len, cap;
} StrBuf;

void sb_put(StrBuf *b, const char *s, size_t n);
void sb_puts(StrBuf *b, const char *s);
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a quoted JSON string (s is valid UTF-8: only quotes, backslashes and controls need escapes) */
void sb_json(StrBuf *b, const char *s);
/* the text so far ("" before the first append) */
const char *sb_str(const StrBuf *b);
void sb_free(StrBuf *b);

#endif
