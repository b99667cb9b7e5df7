/* hf_bpe.h: the BPE model of a Hugging Face tokenizer.json (data/hf_tok.h): the vocabulary, the
 * merges as a hash (left id, right id) -> (rank, merged id), and the merging of one word as HF's
 * word.rs does it: a min-heap of candidate pairs ordered by (rank, position), stale entries skipped.
 * Used by hf_tok.c only. */
#ifndef PELAB_HF_BPE_H
#define PELAB_HF_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/json.h"

/* ids at most this (a vocabulary of 4M tokens; real ones hold 32k-260k) */
#define HF_TOK_MAX_ID (1 << 22)

typedef struct {
    int n_ids;           /* 1 + the largest vocabulary id */
    char **tok;          /* [n_ids] NUL-terminated token strings, NULL where no token has the id */
    int *tok_len;
    char *tok_mem;       /* every token string in one block */
    uint32_t *vocab_slot; /* open addressing: token string -> id + 1, 0 empty */
    size_t vocab_mask;
    uint64_t *merge_key; /* (left << 32 | right) + 1, 0 empty */
    int *merge_rank, *merge_new;
    size_t merge_mask;
    int n_merges;
    int unk_id;          /* -1: no unk_token */
    int fuse_unk, byte_fallback, ignore_merges;
    int byte_id[256];    /* the ids of "<0xHH>", -1 where absent */
} HfBpe;

/* the "model" object: -1 naming name and the field */
int hf_bpe_parse(HfBpe *b, const JsonNode *model, const char *name);
void hf_bpe_free(HfBpe *b);
/* id of the token string s[0..n), -1 if absent */
int hf_bpe_lookup(const HfBpe *b, const char *s, size_t n);

/* bytes of the UTF-8 character at s (n > 0 left), 1 for an invalid byte (a character of its own);
 * *cp gets its code point (the byte value if invalid) */
size_t hf_utf8_char(const unsigned char *s, size_t n, int *cp);

/* scratch space for hf_bpe_word, reused across words (one per encode call) */
typedef struct {
    int *sym_id, *sym_prev, *sym_next, *sym_len;
    size_t sym_cap;
    struct HfMerge { int rank, pos, new_id; } *heap; /* min (rank, pos) first */
    size_t heap_n, heap_cap;
} HfBpeScratch;
void hf_bpe_scratch_free(HfBpeScratch *s);
/* the ids of one word (a pre-tokenized piece) appended to *ids (growing it: *n used, *cap room) */
void hf_bpe_word(const HfBpe *b, HfBpeScratch *s, const char *w, size_t n, int **ids, size_t *n_ids, size_t *cap);

#endif
