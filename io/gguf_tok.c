/* gguf_tok.c: pelab's tokenizers as GGUF tokenizer metadata, and back (see gguf_tok.h). */
#define _GNU_SOURCE /* memmem */
#include "gguf_tok.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/hash.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../data/hf_bpe.h"

/* llama.cpp's token types (llama.h: llama_token_type) */
enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_BYTE = 6 };
#define SPACE_MARK "\xe2\x96\x81" /* U+2581, SentencePiece's space */

static int is_byte_piece(const unsigned char *p, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    return n == 6 && !memcmp(p, "<0x", 3) && strchr(hex, p[3]) && strchr(hex, p[4]) && p[5] == '>';
}

/* ---- writing ---- */

static void put_llama(GgufWriter *w, const Llama2cTok *t) {
    StrBuf s = {0};
    gguf_w_str(w, "tokenizer.ggml.model", "llama");
    gguf_w_array(w, "tokenizer.ggml.tokens", GGUF_STRING, (uint64_t)t->vocab_size);
    for (int id = 0; id < t->vocab_size; id++) {
        s.len = 0;
        for (int i = 0; i < t->piece_len[id]; i++)
            if (t->piece[id][i] == ' ') sb_puts(&s, SPACE_MARK);
            else sb_put(&s, (const char *)t->piece[id] + i, 1);
        gguf_w_elem_str(w, sb_str(&s), s.len);
    }
    sb_free(&s);
    gguf_w_array(w, "tokenizer.ggml.scores", GGUF_F32, (uint64_t)t->vocab_size);
    for (int id = 0; id < t->vocab_size; id++) gguf_w_elem_f32(w, t->scores[id]);
    gguf_w_array(w, "tokenizer.ggml.token_type", GGUF_I32, (uint64_t)t->vocab_size);
    for (int id = 0; id < t->vocab_size; id++)
        gguf_w_elem_i32(w, id == 0                                            ? TT_UNKNOWN
                           : id == LLAMA2C_BOS || id == LLAMA2C_EOS           ? TT_CONTROL
                           : is_byte_piece(t->piece[id], (size_t)t->piece_len[id]) ? TT_BYTE
                                                                               : TT_NORMAL);
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", LLAMA2C_BOS);
    gguf_w_u32(w, "tokenizer.ggml.eos_token_id", LLAMA2C_EOS);
    gguf_w_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", 1);
    gguf_w_bool(w, "tokenizer.ggml.add_space_prefix", 1);
}

/* bytes as GPT-2's byte characters (each one code point below 0x800: one or two UTF-8 bytes) */
static void put_byte_chars(StrBuf *s, const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int cp = hf_byte_char(p[i]);
        char u[2] = {(char)(0xC0 | cp >> 6), (char)(0x80 | (cp & 0x3F))};
        if (cp < 0x80) sb_put(s, (const char *)p + i, 1);
        else sb_put(s, u, 2);
    }
}

/* byte (b NULL) or pelab's BPE as byte-level BPE */
static void put_gpt2(GgufWriter *w, const Bpe *b) {
    int n = b ? b->vocab_size : 256;
    StrBuf s = {0};
    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_str(w, "tokenizer.ggml.pre", "default");
    gguf_w_array(w, "tokenizer.ggml.tokens", GGUF_STRING, (uint64_t)n);
    for (int id = 0; id < n; id++) {
        unsigned char byte = (unsigned char)id;
        size_t len = 1;
        const unsigned char *p = b ? bpe_piece(b, id, &len) : &byte;
        s.len = 0;
        put_byte_chars(&s, p, len);
        gguf_w_elem_str(w, sb_str(&s), s.len);
    }
    gguf_w_array(w, "tokenizer.ggml.token_type", GGUF_I32, (uint64_t)n);
    for (int id = 0; id < n; id++) gguf_w_elem_i32(w, TT_NORMAL);
    gguf_w_array(w, "tokenizer.ggml.merges", GGUF_STRING, (uint64_t)(b ? b->n_merges : 0));
    for (int r = 0; b && r < b->n_merges; r++) {
        size_t ll, rl;
        const unsigned char *lp = bpe_piece(b, b->merge_left[r], &ll), *rp = bpe_piece(b, b->merge_right[r], &rl);
        s.len = 0;
        put_byte_chars(&s, lp, ll);
        sb_puts(&s, " ");
        put_byte_chars(&s, rp, rl);
        gguf_w_elem_str(w, sb_str(&s), s.len);
    }
    sb_free(&s);
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", 0);
    if (b) gguf_w_str(w, "pelab.tokenizer", "bpe");
}

void gguf_tok_put(GgufWriter *w, const Tokenizer *t, int vocab_size, char *note, size_t note_len) {
    int has_mark = 0;
    for (int id = 0; t->kind == TOK_LLAMA2C && id < t->vocab_size && !has_mark; id++)
        has_mark = t->l2c.piece_len[id] >= 3 &&
                   memmem(t->l2c.piece[id], (size_t)t->l2c.piece_len[id], SPACE_MARK, 3) != NULL;
    if (t->vocab_size != vocab_size || has_mark || t->kind == TOK_HF) {
        gguf_w_str(w, "tokenizer.ggml.model", "none");
        if (t->kind == TOK_HF) gguf_w_strn(w, "tokenizer.huggingface.json", (const char *)t->image, t->image_len);
        snprintf(note, note_len, "%s",
                 t->kind == TOK_HF ? "tokenizer.json kept whole; llama.cpp gets ids only (tokenizer.ggml.model none)"
                 : has_mark        ? "a piece holds U+2581, SentencePiece's space: no tokenizer for llama.cpp, ids only"
                                   : "the tokenizer's size is not the model's vocabulary: no tokenizer for llama.cpp, ids only");
        return;
    }
    if (t->kind == TOK_LLAMA2C) put_llama(w, &t->l2c);
    else put_gpt2(w, t->kind == TOK_BPE ? &t->bpe : NULL);
    snprintf(note, note_len, "%s", t->kind == TOK_LLAMA2C ? "tokenizer: llama (SentencePiece), as run.c encodes"
                                   : t->kind == TOK_BPE ? "tokenizer: gpt2 byte-level BPE; llama.cpp cuts text by its own regex, not "
                                                          "pelab's chunk rule, so its ids of a text can differ (decoding is exact)"
                                                        : "tokenizer: gpt2 with the 256 bytes and no merges (ids = bytes)");
}

/* ---- reading ---- */

/* the strings of a string array of exactly n elements: 1, 0 when absent, -1 otherwise */
static int strings_of(const GgufFile *g, const char *key, int n, const unsigned char ***p, size_t **len) {
    const GgufKv *kv;
    int got = gguf_get_array(g, key, GGUF_STRING, &kv);
    if (got <= 0) return got;
    if (kv->count != (uint64_t)n)
        return pelab_fail("%s: %s: %llu entries, expected %d (the model's vocabulary)", g->name, key,
                          (unsigned long long)kv->count, n);
    *p = xmalloc(sizeof **p * (size_t)(n + 1));
    *len = xmalloc(sizeof **len * (size_t)(n + 1));
    gguf_array_strings(kv, *p, *len);
    return 1;
}

static int none(GgufTokImage *out, const char *fmt, const char *what) {
    snprintf(out->note, sizeof out->note, fmt, what);
    return 0;
}

/* "llama": a tokenizer.bin image, U+2581 back to a space */
static int read_llama(const GgufFile *g, int n, const unsigned char **tok, const size_t *len, GgufTokImage *out) {
    const GgufKv *scores = NULL;
    uint32_t bos = LLAMA2C_BOS;
    int prefix = 1;
    if (gguf_get_array(g, "tokenizer.ggml.scores", GGUF_F32, &scores) < 0 || gguf_get_u32(g, "tokenizer.ggml.bos_token_id", &bos) < 0 ||
        gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &prefix) < 0)
        return -1;
    if (scores && scores->count != (uint64_t)n)
        return pelab_fail("%s: tokenizer.ggml.scores: %llu entries, expected %d", g->name, (unsigned long long)scores->count, n);
    if (bos != LLAMA2C_BOS) return none(out, "tokenizer.ggml.bos_token_id %s: llama2.c's tokenizer starts texts with id 1; imported without a tokenizer", "is not 1");
    if (!prefix) return none(out, "%s: run.c always adds the dummy prefix; imported without a tokenizer", "tokenizer.ggml.add_space_prefix false");
    if (n <= LLAMA2C_EOS) return none(out, "%s: fewer than <unk>, BOS and EOS; imported without a tokenizer", "tokenizer.ggml.tokens");
    StrBuf img = {0};
    int32_t max_len = 1;
    sb_put(&img, "\0\0\0\0", 4);
    for (int id = 0; id < n; id++) {
        size_t at = img.len;
        sb_put(&img, "\0\0\0\0\0\0\0\0", 8);
        for (size_t i = 0; i < len[id]; i++)
            if (i + 3 <= len[id] && !memcmp(tok[id] + i, SPACE_MARK, 3)) sb_put(&img, " ", 1), i += 2;
            else sb_put(&img, (const char *)tok[id] + i, 1);
        size_t plen = img.len - at - 8;
        if (plen > 4096 || memchr(img.s + at + 8, 0, plen)) {
            sb_free(&img);
            return none(out, "%s longer than 4096 bytes or holding a NUL, which llama2.c's format cannot; imported without a tokenizer", "a token");
        }
        float sc = scores ? (float)gguf_array_num(scores, (uint64_t)id) : 0;
        int32_t pl = (int32_t)plen;
        memcpy(img.s + at, &sc, 4), memcpy(img.s + at + 4, &pl, 4);
        if (pl > max_len) max_len = pl;
    }
    memcpy(img.s, &max_len, 4);
    out->kind = "llama2c", out->image = (unsigned char *)img.s, out->len = img.len;
    return none(out, "%s", "tokenizer: llama (SentencePiece) as llama2.c's tokenizer");
}

/* the bytes of a string of GPT-2 byte characters into out (room for cap); -1 if it is not one or
 * does not fit */
static long byte_chars_to_bytes(const unsigned char *s, size_t n, unsigned char *out, size_t cap, const short *byte_of) {
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int cp;
        size_t c = hf_utf8_char(s + i, n - i, &cp);
        if ((c == 1 && s[i] >= 0x80) || cp >= 0x200 || byte_of[cp] < 0 || k == cap) return -1;
        out[k++] = (unsigned char)byte_of[cp];
        i += c;
    }
    return (long)k;
}

/* open-addressing table of token strings -> id */
typedef struct {
    int *slot;
    size_t mask;
    const unsigned char **tok;
    const size_t *len;
} TokIndex;

static size_t tok_hash(const unsigned char *s, size_t n) { return (size_t)fnv1a64(s, n, 1469598103934665603ULL); }

static void index_build(TokIndex *x, const unsigned char **tok, const size_t *len, int n) {
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    x->slot = xmalloc(sizeof(int) * cap), x->mask = cap - 1, x->tok = tok, x->len = len;
    memset(x->slot, -1, sizeof(int) * cap);
    for (int id = 0; id < n; id++) {
        size_t h = tok_hash(tok[id], len[id]) & x->mask;
        while (x->slot[h] >= 0) h = (h + 1) & x->mask;
        x->slot[h] = id;
    }
}

static int index_find(const TokIndex *x, const unsigned char *s, size_t n) {
    for (size_t h = tok_hash(s, n) & x->mask; x->slot[h] >= 0; h = (h + 1) & x->mask)
        if (x->len[x->slot[h]] == n && !memcmp(x->tok[x->slot[h]], s, n)) return x->slot[h];
    return -1;
}

/* "gpt2" back to pelab's BPE file (the 256 bytes in order, token 256 + r made by merge r) */
static int read_pelab_bpe(const GgufFile *g, int n, const unsigned char **tok, const size_t *len, const short *byte_of,
                          GgufTokImage *out) {
    const unsigned char **mp = NULL;
    size_t *ml = NULL;
    const GgufKv *kv;
    int got = gguf_get_array(g, "tokenizer.ggml.merges", GGUF_STRING, &kv);
    if (got < 0) return -1;
    if (!got || kv->count != (uint64_t)(n - 256))
        return none(out, "%s: not one merge per token past the 256 bytes; imported without a tokenizer", "pelab.tokenizer bpe");
    mp = xmalloc(sizeof *mp * (size_t)(n - 255)), ml = xmalloc(sizeof *ml * (size_t)(n - 255));
    gguf_array_strings(kv, mp, ml);
    TokIndex x;
    index_build(&x, tok, len, n);
    unsigned char head[16] = "PELABBPE\1\0\0\0";
    uint32_t merges = (uint32_t)(n - 256);
    memcpy(head + 12, &merges, 4);
    StrBuf img = {0};
    sb_put(&img, (const char *)head, 16);
    int ok = 1;
    for (int r = 0; r < n - 256 && ok; r++) {
        const unsigned char *sp = memchr(mp[r], ' ', ml[r]);
        int32_t pair[2] = {-1, -1};
        if (sp) {
            pair[0] = index_find(&x, mp[r], (size_t)(sp - mp[r]));
            pair[1] = index_find(&x, sp + 1, ml[r] - (size_t)(sp - mp[r]) - 1);
        }
        /* token 256 + r must be exactly the pair joined (bpe_parse checks the ranks) */
        ok = pair[0] >= 0 && pair[1] >= 0 && len[pair[0]] + len[pair[1]] == len[256 + r] &&
             !memcmp(tok[256 + r], tok[pair[0]], len[pair[0]]) &&
             !memcmp(tok[256 + r] + len[pair[0]], tok[pair[1]], len[pair[1]]);
        sb_put(&img, (const char *)pair, 8);
    }
    unsigned char byte;
    for (int id = 0; id < 256 && ok; id++) ok = byte_chars_to_bytes(tok[id], len[id], &byte, 1, byte_of) == 1 && byte == id;
    free(x.slot), free(mp), free(ml);
    if (!ok) {
        sb_free(&img);
        return none(out, "%s: tokens and merges are not a pelab BPE; imported without a tokenizer", "pelab.tokenizer bpe");
    }
    out->kind = "bpe", out->image = (unsigned char *)img.s, out->len = img.len;
    return none(out, "%s", "tokenizer: pelab's BPE");
}

static int read_gpt2(const GgufFile *g, int n, const unsigned char **tok, const size_t *len, GgufTokImage *out) {
    short byte_of[0x200];
    memset(byte_of, -1, sizeof byte_of);
    for (int b = 0; b < 256; b++) byte_of[hf_byte_char(b)] = (short)b;
    if (gguf_str_is(g, "pelab.tokenizer", "bpe") && n > 256) return read_pelab_bpe(g, n, tok, len, byte_of, out);
    const GgufKv *merges = NULL;
    if (gguf_get_array(g, "tokenizer.ggml.merges", GGUF_STRING, &merges) < 0) return -1;
    int bytes = n == 256 && (!merges || merges->count == 0);
    unsigned char byte;
    for (int id = 0; id < n && bytes; id++) bytes = byte_chars_to_bytes(tok[id], len[id], &byte, 1, byte_of) == 1 && byte == id;
    if (!bytes)
        return none(out, "%s (byte-level BPE under a llama.cpp pre-tokenizer): pelab reads back only its own BPE and its "
                         "byte tokenizer; imported without a tokenizer", "tokenizer.ggml.model gpt2");
    out->kind = "byte";
    return none(out, "%s", "tokenizer: bytes (gpt2 with the 256 bytes and no merges)");
}

static int tok_read(const GgufFile *g, int vocab_size, GgufTokImage *out);

int gguf_tok_read(const GgufFile *g, int vocab_size, GgufTokImage *out) {
    if (tok_read(g, vocab_size, out) != 0) return -1;
    Tokenizer t; /* what was built must load as a checkpoint's tokenizer (a NaN score, say, does not) */
    if (out->kind && tokenizer_from_image(&t, out->kind, out->image, out->len, g->name, vocab_size) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        free(out->image);
        memset(out, 0, sizeof *out);
        return pelab_fail("%s: its tokenizer metadata: %s", g->name, why);
    }
    if (out->kind) tokenizer_free(&t);
    return 0;
}

static int tok_read(const GgufFile *g, int vocab_size, GgufTokImage *out) {
    memset(out, 0, sizeof *out);
    const unsigned char *model, *s;
    size_t mn, sn;
    int got = gguf_get_str(g, "tokenizer.ggml.model", &model, &mn);
    if (got < 0) return -1;
    if (!got) return none(out, "%s: imported without a tokenizer", "no tokenizer.ggml.model");
    char name[24];
    snprintf(name, sizeof name, "%.*s", (int)(mn < sizeof name - 1 ? mn : sizeof name - 1), (const char *)model);
    for (char *c = name; *c; c++) *c = *c < 0x20 || *c > 0x7e ? '?' : *c;
    if (!strcmp(name, "none") || !strcmp(name, "no_vocab")) {
        if ((got = gguf_get_str(g, "tokenizer.huggingface.json", &s, &sn)) < 0) return -1;
        if (!got) return none(out, "tokenizer.ggml.model %s and no tokenizer.huggingface.json: imported without a tokenizer", name);
        out->kind = "hf", out->image = xmalloc(sn + 1), out->len = sn;
        memcpy(out->image, s, sn);
        return none(out, "%s", "tokenizer: tokenizer.huggingface.json");
    }
    if (strcmp(name, "llama") && strcmp(name, "gpt2"))
        return none(out, "tokenizer.ggml.model %s: pelab has no such tokenizer; imported without a tokenizer", name);
    const unsigned char **tok = NULL;
    size_t *len = NULL;
    if ((got = strings_of(g, "tokenizer.ggml.tokens", vocab_size, &tok, &len)) <= 0)
        return got < 0 ? -1 : none(out, "%s: imported without a tokenizer", "no tokenizer.ggml.tokens");
    int rc = !strcmp(name, "llama") ? read_llama(g, vocab_size, tok, len, out) : read_gpt2(g, vocab_size, tok, len, out);
    free(tok), free(len);
    return rc;
}
