/* llama2c_tok.h: llama2.c's tokenizer (a SentencePiece vocabulary exported to tokenizer.bin),
 * encoding and decoding exactly as its run.c does.
 *
 * File (tokenizer.bin): int32 max_token_length, then for every token: float32 score, int32 length,
 * `length` bytes of the piece. Little-endian. The vocabulary size is not stored: it is the number
 * of entries up to the end of the file (llama2.c takes it from the model instead).
 *
 * Encoding (run.c encode(text, bos=1, eos=0)): BOS (id 1), a dummy leading space (the piece " ")
 * when the text is not empty, then every UTF-8 code point (at most 4 bytes) looked up as a piece,
 * or byte fallback ids byte+3 when absent (in a vocabulary smaller than 259, where run.c would read
 * past its end: the token decoding to that byte, else <unk>); then, repeatedly, the adjacent pair whose concatenated
 * piece exists with the highest score is merged (the leftmost on ties; scores <= -1e10 never merge).
 * Decoding: a piece after BOS loses its leading space; "<0xHH>" pieces are the raw byte. */
#ifndef PELAB_LLAMA2C_TOK_H
#define PELAB_LLAMA2C_TOK_H

#include <stddef.h>

#define LLAMA2C_BOS 1
#define LLAMA2C_EOS 2

typedef struct {
    int vocab_size;
    int max_token_length;
    unsigned char **piece; /* [vocab_size], NUL-terminated (pieces hold no NUL byte) */
    int *piece_len;
    float *scores;
    int *hash_ids;         /* open-addressing table piece -> id, -1 empty */
    unsigned hash_mask;
    int *byte_id;          /* [256] the first id decoding to this single byte ("<0xHH>" or the raw byte), -1:
                            * none; byte fallback uses it when byte + 3 is past the vocabulary */
} Llama2cTok;

/* Parses a tokenizer.bin image; expect_vocab > 0 requires exactly that many tokens (0: to EOF).
 * -1 with one line in pelab_errmsg naming name and the problem. */
int llama2c_tok_parse(Llama2cTok *t, const unsigned char *buf, size_t len, int expect_vocab, const char *name);
void llama2c_tok_free(Llama2cTok *t);
/* id of the piece with these bytes, -1 if none */
int llama2c_tok_lookup(const Llama2cTok *t, const unsigned char *s, size_t n);
/* run.c's encode of text[0..n) with BOS; ids needs room for n + 2. Returns the count. */
size_t llama2c_tok_encode(const Llama2cTok *t, const unsigned char *text, size_t n, int *ids);
/* run.c's decode of `id` following `prev`: its bytes (the leading space dropped after BOS,
 * "<0xHH>" as the raw byte); NULL for an id out of range */
const unsigned char *llama2c_tok_decode(const Llama2cTok *t, int prev, int id, size_t *len);
/* run.c's safe_printf rule: 1 if these decoded bytes are printed (it drops an empty piece and a
 * lone byte that is neither printable ASCII nor white space) */
int llama2c_tok_printable(const unsigned char *bytes, size_t len);
/* serializes t back to a tokenizer.bin image (malloc'd) */
int llama2c_tok_serialize(const Llama2cTok *t, unsigned char **buf, size_t *len);

#endif
