/* bpe.h: a deterministic byte-level BPE tokenizer: train, encode, decode, save and load.
 *
 * Tokens 0..255 are the single bytes; merge r (0-based) makes token 256 + r from the pair
 * (left, right), whose bytes are the left token's followed by the right token's. Decoding is
 * concatenating pieces, so decode(encode(x)) == x for every byte string (invalid UTF-8, NULs).
 *
 * Pre-tokenization (rule version 1). Merges never cross chunk boundaries; the text is cut into
 * chunks from left to right. Byte classes:
 *   SPACE  ' ' \t \n \v \f \r
 *   LETTER A-Z a-z and every byte >= 0x80 (so UTF-8 letters stay together, valid or not)
 *   DIGIT  0-9
 *   OTHER  everything else (punctuation, NUL and other control bytes, 0x7F)
 * A chunk starting at byte s is:
 *   1. if text[s] is ' ' and the next byte exists and is not SPACE: that space followed by the
 *      maximal run of bytes of the next byte's class (" the", " 123", " ...");
 *   2. else if text[s] is SPACE: the maximal run of SPACE bytes, stopping before a ' ' that is
 *      followed by a non-SPACE byte (that space starts the next chunk by rule 1);
 *   3. else: the maximal run of bytes of text[s]'s class.
 * A chunk longer than BPE_MAX_CHUNK bytes is cut after BPE_MAX_CHUNK bytes and the rule starts
 * again on the rest (this bounds the cost of encoding one chunk and the length of any token).
 *
 * Training: count distinct chunks, then repeatedly merge the most frequent adjacent pair
 * (counted over chunk types weighted by their frequency, overlapping occurrences such as the two
 * (a,a) of "aaa" both counted); ties go to the smallest (left, right). A pair is merged left to
 * right without overlap ("aaa" -> [aa][a]). Training stops early when no pair occurs twice.
 * Encoding applies, per chunk, the present pair of lowest rank (all its occurrences, left to
 * right) until none is left: this reproduces the training segmentation exactly.
 *
 * File format (version 1), little-endian, exactly 16 + 8 * n_merges bytes:
 *   offset 0   8 bytes   magic "PELABBPE"
 *   offset 8   uint32    version (1: the pre-tokenization rule above, BPE_MAX_CHUNK 64)
 *   offset 12  uint32    n_merges (0 .. 65280; vocabulary 256 + n_merges)
 *   offset 16  n_merges x (int32 left, int32 right)
 * Loading checks the magic, the version, the exact length, that merge r refers only to tokens
 * < 256 + r (bytes or earlier merges), that no pair is merged twice, and that no token is longer
 * than BPE_MAX_CHUNK bytes (training can never make one). */
#ifndef PELAB_BPE_H
#define PELAB_BPE_H

#include <stddef.h>
#include <stdint.h>

#define BPE_MAX_CHUNK 64
#define BPE_MAX_VOCAB 65536
#define BPE_VERSION 1

typedef struct {
    int vocab_size; /* 256 + n_merges */
    int n_merges;
    int *merge_left, *merge_right;   /* merge r makes token 256 + r from (left, right) */
    unsigned char **piece;           /* bytes of every token (0..255: the single bytes) */
    int *piece_len;
    /* private: every piece in one block; open-addressing hash (left << 16 | right) -> rank */
    unsigned char *piece_mem;
    uint32_t *rank_key; /* UINT32_MAX: empty slot */
    int *rank_val;
    size_t rank_mask;   /* table size - 1 (a power of two) */
} Bpe;

/* b is overwritten (free it first); on failure it is left empty. vocab_size in [256, 65536];
 * fewer merges are made when no pair occurs twice (b->vocab_size tells). -1 + pelab_errmsg */
int bpe_train(Bpe *b, const unsigned char *text, size_t n, int vocab_size);
/* ids must hold n entries (a token is at least one byte); returns the number of ids */
size_t bpe_encode(const Bpe *b, const unsigned char *text, size_t n, int *ids);
/* the bytes of token id (at most BPE_MAX_CHUNK); NULL if id is out of range */
const unsigned char *bpe_piece(const Bpe *b, int id, size_t *len);
/* a malloc'd file image (the format above) */
int bpe_serialize(const Bpe *b, unsigned char **buf, size_t *len);
/* validates everything; errors are one line naming name. b is overwritten, empty on failure */
int bpe_parse(Bpe *b, const unsigned char *buf, size_t len, const char *name);
/* atomic: path.tmp, fflush + fsync, rename */
int bpe_save(const Bpe *b, const char *path);
int bpe_load(Bpe *b, const char *path);
void bpe_free(Bpe *b);

/* end (exclusive) of the chunk that starts at start < n: the rule above, exposed for tests */
size_t bpe_chunk_end(const unsigned char *text, size_t n, size_t start);

#endif
