/* lines.h: a file of texts, one per line (sample --prompts, score --lines): every non-empty line
 * encoded by the checkpoint's tokenizer, with its line number for messages and reports. */
#ifndef PELAB_LINES_H
#define PELAB_LINES_H

#include <stddef.h>

#include "tokenizer.h"

typedef struct {
    int n;      /* texts (non-empty lines) */
    int **ids;  /* [n] each text's token ids, with room for `extra` more */
    int *len;   /* [n] ids in each */
    int *line;  /* [n] its 1-based line number */
} TextLines;

/* as_prompt: encode as sample's --prompt (the tokenizer's BOS first, where it has one). -1 (tl
 * empty) with the tokenizer's message when a line cannot be encoded (tokenizer_encode) */
int text_lines_encode(TextLines *tl, const Tokenizer *tok, const unsigned char *text, size_t n, int as_prompt,
                       size_t extra);
void text_lines_free(TextLines *tl);

#endif
