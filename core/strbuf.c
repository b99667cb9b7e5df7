#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

void sb_put(StrBuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *ns = xmalloc(cap);
        if (b->len) memcpy(ns, b->s, b->len);
        free(b->s);
        b->s = ns;
        b->cap = cap;
    }
    if (n) memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_json(StrBuf *b, const char *s) {
    sb_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            sb_printf(b, "\\u%04x", c);
        } else {
            sb_put(b, (const char *)&c, 1);
        }
    }
    sb_put(b, "\"", 1);
}

void sb_printf(StrBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap); /* measure, then write in place */
    va_end(ap);
    if (n <= 0) return;
    sb_put(b, "", 0); /* make room for the NUL at least */
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *ns = xmalloc(cap);
        memcpy(ns, b->s, b->len + 1);
        free(b->s);
        b->s = ns;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *sb_str(const StrBuf *b) { return b->s ? b->s : ""; }

void sb_free(StrBuf *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
