/* gguf_tok.h: pelab's tokenizers as GGUF's tokenizer metadata (what llama.cpp's src/llama-vocab.cpp
 * reads), and back.
 *   llama2c  tokenizer.ggml.model "llama" (SentencePiece): tokens with U+2581 for a space, scores,
 *            token_type (0 unknown, 1 and 2 control, "<0xHH>" byte, else normal), BOS 1, EOS 2;
 *            llama.cpp encodes it as run.c does (dummy prefix, merges by score, byte fallback) when
 *            every character of a piece is a piece itself, as in SentencePiece's vocabularies (run.c's
 *            byte fallback ids never merge; SentencePiece merges characters and falls back at the end)
 *   byte     "gpt2" with the 256 bytes as GPT-2's byte characters and no merges: every text's ids
 *            are its bytes, in llama.cpp as in pelab
 *   bpe      "gpt2": tokens as byte characters, merges "LEFT RIGHT" in rank order, and
 *            pelab.tokenizer "bpe"; llama.cpp cuts text by its default regex before merging, not
 *            by pelab's chunk rule (data/bpe.h), so its ids of a text can differ; decoding is exact
 *   hf       tokenizer.json kept whole as tokenizer.huggingface.json, with model "none": llama.cpp
 *            gets no tokenizer (its pre-tokenizer names are not derived), only the ids
 * A tokenizer of another size than the model's vocabulary (llama.cpp needs one token per row) is
 * written as model "none". Reading takes back exactly these forms, and "llama" from other files
 * when it holds BOS 1 and the dummy prefix; anything else imports without a tokenizer, said in
 * the note. */
#ifndef PELAB_GGUF_TOK_H
#define PELAB_GGUF_TOK_H

#include <stddef.h>

#include "../data/tokenizer.h"
#include "gguf.h"

/* t's metadata for a model of vocab_size rows; note: one line on what llama.cpp gets */
void gguf_tok_put(GgufWriter *w, const Tokenizer *t, int vocab_size, char *note, size_t note_len);

typedef struct {
    const char *kind;     /* "llama2c", "byte", "bpe", "hf" (tokenizer.h's kinds); NULL: none */
    unsigned char *image; /* the tokenizer file as checkpoints store it (malloc'd; NULL for byte) */
    size_t len;
    char note[300];       /* why there is none, or what was mapped */
} GgufTokImage;

/* 0 with out set (kind NULL and the note when the file's tokenizer has no pelab form); -1 with one
 * line naming the key when the metadata is broken (a count other than vocab_size, a wrong type, a
 * tokenizer that does not load: tokenizer_from_image) */
int gguf_tok_read(const GgufFile *g, int vocab_size, GgufTokImage *out);

#endif
