/* lines.c: a file of texts, one per line, encoded (lines.h). */
#include "lines.h"

#include <stdlib.h>
#include <string.h>

#include "../core/mem.h"

int text_lines_encode(TextLines *tl, const Tokenizer *tok, const unsigned char *text, size_t n, int as_prompt,
                       size_t extra) {
    int cap = 16;
    memset(tl, 0, sizeof *tl);
    tl->ids = xmalloc(sizeof(int *) * cap), tl->len = xmalloc(sizeof(int) * cap), tl->line = xmalloc(sizeof(int) * cap);
    int line = 1;
    for (size_t at = 0; at < n; line++) {
        size_t end = at;
        while (end < n && text[end] != '\n') end++;
        if (end > at) {
            if (tl->n == cap) {
                cap *= 2;
                tl->ids = xrealloc(tl->ids, sizeof(int *) * cap), tl->len = xrealloc(tl->len, sizeof(int) * cap);
                tl->line = xrealloc(tl->line, sizeof(int) * cap);
            }
            size_t k;
            int *ids = as_prompt ? tokenizer_encode_prompt(tok, text + at, end - at, (size_t)extra, &k)
                                 : tokenizer_encode(tok, text + at, end - at, (size_t)extra, &k);
            if (!ids) {
                text_lines_free(tl);
                return -1;
            }
            tl->ids[tl->n] = ids, tl->len[tl->n] = (int)k, tl->line[tl->n++] = line;
        }
        at = end + 1;
    }
    return 0;
}

void text_lines_free(TextLines *tl) {
    for (int i = 0; i < tl->n; i++) free(tl->ids[i]);
    free(tl->ids), free(tl->len), free(tl->line);
    memset(tl, 0, sizeof *tl);
}
