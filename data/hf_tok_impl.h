/* hf_tok_impl.h: what a parsed tokenizer.json holds (hf_tok.c parses it, hf_tok_run.c encodes and
 * decodes with it). Private to those two files. */
#ifndef PELAB_HF_TOK_IMPL_H
#define PELAB_HF_TOK_IMPL_H

#include "../core/strbuf.h"
#include "hf_bpe.h"
#include "hf_regex.h" /* (not hf_tok.h: the struct below is what it declares, and modules include no cycle) */

/* HF's SplitDelimiterBehavior */
typedef enum { SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_MERGED_PREVIOUS, SPLIT_MERGED_NEXT, SPLIT_CONTIGUOUS } SplitBehavior;

typedef enum { NORM_PREPEND, NORM_REPLACE, NORM_UNICODE } NormKind;
typedef struct {
    NormKind kind;
    char *from, *to; /* prepend: to; replace: from -> to */
    size_t from_len, to_len;
    int form;        /* NORM_UNICODE: 0 NFC, 1 NFD, 2 NFKC, 3 NFKD */
    char *field;     /* its place in the file ("normalizer.normalizers[1]"), for messages */
} HfNorm;

typedef enum { PRE_SPLIT, PRE_BYTELEVEL, PRE_METASPACE } PreKind;
typedef struct {
    PreKind kind;
    pcre2_code *re;      /* PRE_SPLIT with a regex (Digits: \p{N}); PRE_BYTELEVEL with use_regex: GPT-2's */
    char *where;         /* with re: "FILE: FIELD: regex 'PATTERN'", the start of a limit's message */
    char *lit;           /* PRE_SPLIT with a String pattern */
    size_t lit_len;
    SplitBehavior behavior;
    int invert;
    int add_prefix_space; /* ByteLevel */
    char rep[8];          /* Metaspace's replacement (one character) */
    size_t rep_len;
    int prepend;          /* Metaspace: 0 never, 1 always, 2 first */
    int split;
    char *field; /* its place in the file, for messages */
} HfPre;

typedef struct {
    int id;
    char *content;
    size_t len;
    int special, normalized, lstrip, rstrip, single_word;
} HfAdded;

typedef enum { DEC_BYTELEVEL, DEC_METASPACE, DEC_REPLACE, DEC_BYTEFALLBACK, DEC_FUSE, DEC_STRIP } DecKind;
typedef struct {
    DecKind kind;
    char *from, *to;
    size_t from_len, to_len;
    char rep[8]; /* Metaspace */
    size_t rep_len;
    int prepend;
    char strip[8]; /* Strip's content character */
    size_t strip_len;
    int start, stop;
    char *field; /* its place in the file, for messages */
} HfDec;

struct HfTok {
    char *name; /* the file's, for messages at encoding time */
    HfBpe bpe;
    int n_ids;
    HfNorm *norm;
    int n_norm;
    HfPre *pre;
    int n_pre;
    HfAdded *added;
    int n_added;
    int *first_added[256]; /* per first byte: added token indices, longest first, -1 ended */
    int *prefix, n_prefix, *suffix, n_suffix;
    HfDec *dec;
    int n_dec;
    /* decoding, per id: the token through every per-token decoder step */
    unsigned char **piece;
    int *piece_len;
    unsigned char *piece_mem;
    unsigned char *special;  /* 1: an added token marked special */
    int strip_start;          /* leading strip characters dropped from a decoded text (a Strip after Fuse) */
    char strip_char[8];
    size_t strip_char_len;
    int metaspace_first;      /* Metaspace decoder: the first token loses its replacement characters */
};

/* GPT-2's pre-tokenization regex (HF's ByteLevel with use_regex) */
#define HF_GPT2_REGEX "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

/* one line: field grew what (a text, the vocabulary) of n bytes past hf_tok_growth_limit(n); -1 */
int hf_tok_grew(const char *name, const char *field, const char *what, size_t n);
/* s[0..n) with every from (fn > 0 bytes) replaced by to, appended to out; -1 (nothing more appended)
 * when out would pass cap bytes */
int hf_replace(StrBuf *out, const char *s, size_t n, const char *from, size_t fn, const char *to, size_t tn, size_t cap);

/* ByteLevel's character -> byte (the inverse of hf_byte_char), -1 if cp is no byte's */
int hf_char_byte(int cp);

#endif
