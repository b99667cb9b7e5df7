/* tokenizer.h: text <-> token ids. Byte-level (vocab 256, id = byte) is the default; the
 * interface leaves room for BPE and llama2.c's tokenizer. */
#ifndef PELAB_TOKENIZER_H
#define PELAB_TOKENIZER_H

#include <stddef.h>

typedef enum { TOK_BYTE } TokenizerKind;

typedef struct {
    TokenizerKind kind;
    int vocab_size;
} Tokenizer;

/* name as stored in checkpoint metadata ("byte"; NULL means byte); -1 if unknown */
int tokenizer_init(Tokenizer *t, const char *name, int model_vocab);
/* ids must hold at least n entries; returns the number of ids */
size_t tokenizer_encode(const Tokenizer *t, const char *text, size_t n, int *ids);
/* bytes of one token into out (at least 16 bytes); returns their count */
size_t tokenizer_decode(const Tokenizer *t, int id, char *out);

#endif
