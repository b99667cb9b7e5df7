/* llama2c_tok.c: llama2.c's tokenizer.bin vocabulary, encoded and decoded as run.c does. */
#include "llama2c_tok.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/hash.h"
#include "../core/mem.h"

static int32_t read_i32(const unsigned char *p) {
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static void write_i32(unsigned char *p, int32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)((uint32_t)v >> (8 * i));
}

static unsigned hash_bytes(const unsigned char *s, size_t n) { return (unsigned)fnv1a64(s, n, 0); }

int llama2c_tok_lookup(const Llama2cTok *t, const unsigned char *s, size_t n) {
    for (unsigned h = hash_bytes(s, n) & t->hash_mask;; h = (h + 1) & t->hash_mask) {
        int id = t->hash_ids[h];
        if (id < 0) return -1;
        if ((size_t)t->piece_len[id] == n && memcmp(t->piece[id], s, n) == 0) return id;
    }
}

/* "<0xHH>": the byte it stands for, else -1 */
static int byte_token_value(const unsigned char *p, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    if (n < 5 || memcmp(p, "<0x", 3) != 0) return -1;
    const char *hi = memchr(hex, p[3], 16), *lo = memchr(hex, p[4], 16);
    if (!hi || !lo || !p[3] || !p[4]) return -1;
    return (int)((hi - hex) * 16 + (lo - hex));
}

static void build_index(Llama2cTok *t) {
    unsigned size = 16;
    while (size < 2u * (unsigned)t->vocab_size) size *= 2;
    t->hash_mask = size - 1;
    t->hash_ids = xmalloc(sizeof(int) * size);
    for (unsigned i = 0; i < size; i++) t->hash_ids[i] = -1;
    /* the first of duplicate pieces wins (SentencePiece exports have none) */
    for (int id = 0; id < t->vocab_size; id++) {
        if (llama2c_tok_lookup(t, t->piece[id], (size_t)t->piece_len[id]) >= 0) continue;
        unsigned h = hash_bytes(t->piece[id], (size_t)t->piece_len[id]) & t->hash_mask;
        while (t->hash_ids[h] >= 0) h = (h + 1) & t->hash_mask;
        t->hash_ids[h] = id;
    }
    t->byte_id = xmalloc(sizeof(int) * 256);
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    for (int id = 0; id < t->vocab_size; id++) {
        int b = byte_token_value(t->piece[id], (size_t)t->piece_len[id]);
        if (b < 0 && t->piece_len[id] == 1) b = t->piece[id][0]; /* a raw one-byte piece */
        if (b >= 0 && t->byte_id[b] < 0) t->byte_id[b] = id;
    }
}

int llama2c_tok_parse(Llama2cTok *t, const unsigned char *buf, size_t len, int expect_vocab, const char *name) {
    memset(t, 0, sizeof *t);
    if (len < 4) return pelab_fail("%s: %zu bytes, too short for a llama2.c tokenizer (truncated?)", name, len);
    int32_t max_len = read_i32(buf);
    if (max_len <= 0 || max_len > 4096)
        return pelab_fail("%s: max_token_length %d: expected 1..4096 (not a llama2.c tokenizer.bin?)", name, max_len);
    /* first pass: count and validate the entries */
    size_t off = 4;
    int n = 0;
    while (off < len) {
        if (len - off < 8) return pelab_fail("%s: token %d: entry header cut short at byte %zu (truncated?)", name, n, off);
        int32_t plen = read_i32(buf + off + 4);
        if (plen < 0 || plen > max_len)
            return pelab_fail("%s: token %d: length %d outside 0..max_token_length %d", name, n, plen, max_len);
        if (len - off - 8 < (size_t)plen)
            return pelab_fail("%s: token %d: %d piece bytes run past the end of the file (truncated?)", name, n, plen);
        if (memchr(buf + off + 8, 0, (size_t)plen))
            return pelab_fail("%s: token %d: the piece holds a NUL byte (run.c treats pieces as C strings)", name, n);
        float score;
        memcpy(&score, buf + off, 4);
        if (score != score) return pelab_fail("%s: token %d: score is NaN", name, n);
        off += 8 + (size_t)plen;
        if (++n > (1 << 24)) return pelab_fail("%s: more than 2^24 tokens", name);
    }
    if (n == 0) return pelab_fail("%s: no tokens", name);
    if (expect_vocab > 0 && n != expect_vocab)
        return pelab_fail("%s: %d tokens, but the model's vocabulary has %d", name, n, expect_vocab);
    if (n <= LLAMA2C_EOS) return pelab_fail("%s: %d tokens: expected at least <unk>, BOS and EOS", name, n);
    t->vocab_size = n;
    t->max_token_length = max_len;
    t->piece = xmalloc(sizeof(unsigned char *) * (size_t)n);
    t->piece_len = xmalloc(sizeof(int) * (size_t)n);
    t->scores = xmalloc(sizeof(float) * (size_t)n);
    off = 4;
    for (int id = 0; id < n; id++) {
        memcpy(&t->scores[id], buf + off, 4);
        int plen = read_i32(buf + off + 4);
        t->piece_len[id] = plen;
        t->piece[id] = xmalloc((size_t)plen + 1);
        memcpy(t->piece[id], buf + off + 8, (size_t)plen);
        t->piece[id][plen] = 0;
        off += 8 + (size_t)plen;
    }
    build_index(t);
    return 0;
}

void llama2c_tok_free(Llama2cTok *t) {
    for (int i = 0; t->piece && i < t->vocab_size; i++) free(t->piece[i]);
    free(t->piece), free(t->piece_len), free(t->scores), free(t->hash_ids), free(t->byte_id);
    memset(t, 0, sizeof *t);
}

int llama2c_tok_serialize(const Llama2cTok *t, unsigned char **buf, size_t *len) {
    size_t n = 4;
    for (int i = 0; i < t->vocab_size; i++) n += 8 + (size_t)t->piece_len[i];
    unsigned char *b = xmalloc(n), *p = b;
    write_i32(p, t->max_token_length), p += 4;
    for (int i = 0; i < t->vocab_size; i++) {
        memcpy(p, &t->scores[i], 4);
        write_i32(p + 4, t->piece_len[i]);
        memcpy(p + 8, t->piece[i], (size_t)t->piece_len[i]);
        p += 8 + t->piece_len[i];
    }
    *buf = b, *len = n;
    return 0;
}

/* id of the concatenation of two pieces, -1 if it is not a piece */
static int pair_id(const Llama2cTok *t, int a, int b, unsigned char *scratch) {
    size_t la = (size_t)t->piece_len[a], lb = (size_t)t->piece_len[b];
    if (la + lb > (size_t)t->max_token_length) return -1; /* no piece is that long */
    memcpy(scratch, t->piece[a], la);
    memcpy(scratch + la, t->piece[b], lb);
    return llama2c_tok_lookup(t, scratch, la + lb);
}

/* A merge candidate: the pair (left, right) of list nodes would become token id. It is stale once
 * either node changed (stamps) or they stopped being neighbours. */
typedef struct {
    float score;
    int left, right, id;
    unsigned stamp_left, stamp_right;
} Candidate;

/* run.c's order: the higher score first, then the leftmost pair (node indices keep text order) */
static int cand_before(const Candidate *a, const Candidate *b) {
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

typedef struct {
    Candidate *items;
    size_t n;
} CandHeap;

static void heap_push(CandHeap *h, Candidate c) {
    size_t i = h->n++;
    while (i > 0 && cand_before(&c, &h->items[(i - 1) / 2])) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = c;
}

static Candidate heap_pop(CandHeap *h) {
    Candidate top = h->items[0], last = h->items[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && cand_before(&h->items[c + 1], &h->items[c])) c++;
        if (!cand_before(&h->items[c], &last)) break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->n) h->items[i] = last;
    return top;
}

typedef struct {
    const Llama2cTok *t;
    int *tok, *next;
    unsigned *stamp;
    unsigned char *scratch;
    CandHeap heap;
} MergeState;

static void push_pair(MergeState *s, int left, int right) {
    if (left < 0 || right < 0) return;
    int id = pair_id(s->t, s->tok[left], s->tok[right], s->scratch);
    if (id < 0 || !(s->t->scores[id] > -1e10f)) return; /* run.c's best_score starts at -1e10 */
    Candidate c = {s->t->scores[id], left, right, id, s->stamp[left], s->stamp[right]};
    heap_push(&s->heap, c);
}

/* run.c's merge loop (repeatedly merge the best-scoring adjacent pair whose concatenation is a
 * piece, leftmost on ties) in O(n log n): a linked list of tokens and a heap of candidates
 * instead of a rescan per merge. tests/test_llama2c.c checks it against the literal loop.
 * Compacts tok[0..n) in place; returns the new count. */
static size_t merge_pairs(const Llama2cTok *t, int *tok, size_t n) {
    if (n < 2) return n;
    MergeState s = {t, tok, xmalloc(sizeof(int) * n), xcalloc(n, sizeof(unsigned)),
                    xmalloc((size_t)t->max_token_length + 1), {xmalloc(sizeof(Candidate) * 3 * n), 0}};
    int *prev = xmalloc(sizeof(int) * n);
    for (size_t i = 0; i < n; i++) s.next[i] = i + 1 < n ? (int)i + 1 : -1, prev[i] = (int)i - 1;
    for (size_t i = 0; i + 1 < n; i++) push_pair(&s, (int)i, (int)i + 1);
    while (s.heap.n) {
        Candidate c = heap_pop(&s.heap);
        if (s.next[c.left] != c.right || s.stamp[c.left] != c.stamp_left || s.stamp[c.right] != c.stamp_right)
            continue; /* stale: a neighbour merged since */
        tok[c.left] = c.id;
        s.stamp[c.left]++, s.stamp[c.right]++; /* right is gone: no pair with it is valid any more */
        s.next[c.left] = s.next[c.right];
        if (s.next[c.right] >= 0) prev[s.next[c.right]] = c.left;
        s.next[c.right] = -2;
        push_pair(&s, prev[c.left], c.left);
        push_pair(&s, c.left, s.next[c.left]);
    }
    size_t m = 0; /* node 0 never dies: merges remove the right node */
    for (int i = 0; i >= 0; i = s.next[i]) tok[m++] = tok[i];
    free(s.next), free(s.stamp), free(s.scratch), free(s.heap.items), free(prev);
    return m;
}

static size_t push_code_point(const Llama2cTok *t, const unsigned char *cp, size_t n, int *ids) {
    int id = llama2c_tok_lookup(t, cp, n);
    if (id >= 0) {
        ids[0] = id;
        return 1;
    }
    /* byte fallback: ids 3..258 are <0x00>..<0xFF>. A vocabulary too small for that (run.c would
     * read past its end) uses the token that decodes to the byte, else <unk> */
    for (size_t i = 0; i < n; i++) {
        int fallback = cp[i] + 3;
        ids[i] = fallback < t->vocab_size ? fallback : t->byte_id[cp[i]] >= 0 ? t->byte_id[cp[i]] : 0;
    }
    return n;
}

size_t llama2c_tok_encode(const Llama2cTok *t, const unsigned char *text, size_t n, int *ids) {
    size_t count = 0;
    ids[count++] = LLAMA2C_BOS;
    if (n == 0) return count;
    count += push_code_point(t, (const unsigned char *)" ", 1, ids + count);
    /* code points: a lead byte and up to 3 continuation bytes, as run.c groups them */
    for (size_t i = 0; i < n;) {
        size_t k = 1;
        while (i + k < n && (text[i + k] & 0xC0) == 0x80 && k < 4) k++;
        count += push_code_point(t, text + i, k, ids + count);
        i += k;
    }
    int *tok = ids + 1; /* BOS never merges: run.c encodes the text, then prepends it */
    size_t m = merge_pairs(t, tok, count - 1);
    return m + 1;
}

const unsigned char *llama2c_tok_decode(const Llama2cTok *t, int prev, int id, size_t *len) {
    static unsigned char byte_piece[256];
    if (id < 0 || id >= t->vocab_size) {
        *len = 0;
        return NULL;
    }
    const unsigned char *p = t->piece[id];
    size_t n = (size_t)t->piece_len[id];
    if (prev == LLAMA2C_BOS && n && p[0] == ' ') p++, n--;
    int b = byte_token_value(p, n);
    if (b >= 0) {
        if (!byte_piece[1]) /* the 256 raw bytes, filled once (byte_piece[1] == 1 afterwards) */
            for (int i = 0; i < 256; i++) byte_piece[i] = (unsigned char)i;
        p = byte_piece + b, n = 1;
    }
    *len = n;
    return p;
}

int llama2c_tok_printable(const unsigned char *bytes, size_t len) {
    if (len == 0 || bytes[0] == 0) return 0;
    if (len == 1) {
        unsigned char c = bytes[0];
        int print = c >= 0x20 && c < 0x7f, space = c == ' ' || (c >= '\t' && c <= '\r');
        return print || space;
    }
    return 1;
}
