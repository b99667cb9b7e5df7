/* tokenizer.h: text <-> token ids. Three kinds behind one interface:
 *   byte     id = byte value (vocab 256), the default;
 *   bpe      pelab's byte-level BPE (data/bpe.h), trained with `pelab tokenizer train`;
 *   llama2c  llama2.c's tokenizer.bin (data/llama2c_tok.h), brought in by `pelab import`.
 * A checkpoint stores the kind in its "tokenizer" metadata and the tokenizer file itself, byte for
 * byte, as the U8 tensor "tokenizer" (docs/FORMAT.md), so a checkpoint decodes on its own. */
#ifndef PELAB_TOKENIZER_H
#define PELAB_TOKENIZER_H

#include <stddef.h>
#include <stdio.h>

#include "bpe.h"
#include "llama2c_tok.h"

typedef enum { TOK_BYTE, TOK_BPE, TOK_LLAMA2C } TokenizerKind;

typedef struct {
    TokenizerKind kind;
    int vocab_size;
    int bos;              /* the id that starts a text, -1: none (byte and bpe models start from '\n') */
    Bpe bpe;              /* kind bpe */
    Llama2cTok l2c;       /* kind llama2c */
    unsigned char *image; /* the tokenizer file as stored in checkpoints; NULL for byte */
    size_t image_len;
} Tokenizer;

void tokenizer_init_byte(Tokenizer *t);
/* kind: "byte" (or NULL: checkpoints older than tokenizers), "bpe" or "llama2c", with its file
 * image (ignored for byte). The model's vocabulary must hold every id. -1 + pelab_errmsg. */
int tokenizer_from_image(Tokenizer *t, const char *kind, const unsigned char *image, size_t len, const char *name,
                         int model_vocab);
/* a tokenizer file: pelab's BPE (magic PELABBPE) or llama2.c's tokenizer.bin */
int tokenizer_load_file(Tokenizer *t, const char *path);
void tokenizer_free(Tokenizer *t);
const char *tokenizer_kind_name(const Tokenizer *t);

/* room for the ids of n bytes of text */
size_t tokenizer_max_ids(size_t n);
/* A corpus: byte and bpe encode the bytes as they are. llama2c encodes as llama2.c's training
 * data was made: documents separated by blank lines, each stripped of surrounding white space
 * and encoded by run.c's rule with BOS in front. ids needs tokenizer_max_ids(n). */
size_t tokenizer_encode(const Tokenizer *t, const unsigned char *text, size_t n, int *ids);
/* A prompt, as a runner feeds it: llama2c is BOS + run.c's encode of the whole text (BOS alone
 * for an empty prompt); byte and bpe as above, and '\n' alone for an empty prompt. */
size_t tokenizer_encode_prompt(const Tokenizer *t, const unsigned char *text, size_t n, int *ids);
/* the bytes of id following prev (-1: none); NULL for an id outside the vocabulary */
const unsigned char *tokenizer_decode(const Tokenizer *t, int prev, int id, size_t *len);
/* writes what a runner prints for id after prev (llama2c: run.c's safe_printf rule) */
void tokenizer_print(const Tokenizer *t, int prev, int id, FILE *f);

#endif
