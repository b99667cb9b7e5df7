/* tokenizer.h: text <-> token ids. Four kinds behind one interface:
 *   byte     id = byte value (vocab 256), the default;
 *   bpe      pelab's byte-level BPE (data/bpe.h), trained with `pelab tokenizer train`;
 *   llama2c  llama2.c's tokenizer.bin (data/llama2c_tok.h), brought in by `pelab import`;
 *   hf       a Hugging Face tokenizer.json (data/hf_tok.h), brought in by `pelab import --hf`.
 * A checkpoint stores the kind in its "tokenizer" metadata and the tokenizer file itself, byte for
 * byte, as the U8 tensor "tokenizer" (docs/FORMAT.md), so a checkpoint decodes on its own. */
#ifndef PELAB_TOKENIZER_H
#define PELAB_TOKENIZER_H

#include <stddef.h>
#include <stdio.h>

#include "bpe.h"
#include "hf_tok.h"
#include "llama2c_tok.h"

typedef enum { TOK_BYTE, TOK_BPE, TOK_LLAMA2C, TOK_HF } TokenizerKind;

typedef struct {
    TokenizerKind kind;
    int vocab_size;
    int bos;              /* the id that starts a text, -1: none (byte and bpe models start from '\n') */
    Bpe bpe;              /* kind bpe */
    Llama2cTok l2c;       /* kind llama2c */
    HfTok *hf;            /* kind hf */
    unsigned char *image; /* the tokenizer file as stored in checkpoints; NULL for byte */
    size_t image_len;
} Tokenizer;

void tokenizer_init_byte(Tokenizer *t);
/* kind: "byte" (or NULL: checkpoints older than tokenizers), "bpe", "llama2c" or "hf", with its file
 * image (ignored for byte). The model's vocabulary must hold every id. -1 + pelab_errmsg. */
int tokenizer_from_image(Tokenizer *t, const char *kind, const unsigned char *image, size_t len, const char *name,
                         int model_vocab);
/* tokenizer_from_image for the bytes of the file path (not a checkpoint's tensor): an empty file is
 * refused naming path */
int tokenizer_from_file_image(Tokenizer *t, const char *kind, const unsigned char *image, size_t len, const char *path,
                              int model_vocab);
/* a tokenizer file: pelab's BPE (magic PELABBPE), a tokenizer.json (starts with '{') or llama2.c's
 * tokenizer.bin */
int tokenizer_load_file(Tokenizer *t, const char *path);
void tokenizer_free(Tokenizer *t);
const char *tokenizer_kind_name(const Tokenizer *t);

/* A corpus as ids, in a malloc'd array with room for extra more ids; *n_ids gets the count.
 * byte and bpe encode the bytes as they are. llama2c encodes as llama2.c's training data was made:
 * documents separated by blank lines, each stripped of surrounding white space and encoded by
 * run.c's rule with BOS in front. hf encodes the whole text as HF's tokenizer.encode(text) does
 * (the post-processor's tokens around it: Llama's <s> in front). NULL with one line in
 * pelab_errmsg when an hf tokenizer's regex runs past its limits (data/hf_regex.h): a hostile file. */
int *tokenizer_encode(const Tokenizer *t, const unsigned char *text, size_t n, size_t extra, size_t *n_ids);
/* A prompt, as a runner feeds it: llama2c is BOS + run.c's encode of the whole text (BOS alone
 * for an empty prompt); hf as above, and for an empty prompt without a BOS its first special token
 * (GPT-2's <|endoftext|>); byte and bpe as above, and '\n' alone for an empty prompt. NULL as above. */
int *tokenizer_encode_prompt(const Tokenizer *t, const unsigned char *text, size_t n, size_t extra, size_t *n_ids);
/* the bytes of id following prev (-1: none); NULL for an id outside the vocabulary. hf: special
 * tokens decode to nothing (skip_special_tokens), and the decoder's leading strip (Llama's space)
 * applies to the token after none or after BOS */
const unsigned char *tokenizer_decode(const Tokenizer *t, int prev, int id, size_t *len);
/* writes what a runner prints for id after prev (llama2c: run.c's safe_printf rule) */
void tokenizer_print(const Tokenizer *t, int prev, int id, FILE *f);

#endif
