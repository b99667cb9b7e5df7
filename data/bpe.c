/* bpe.c: byte-level BPE (rules and file format in bpe.h). Training keeps pair counts
 * incrementally: a hash (left, right) -> pair, each pair listing the chunk types that hold it,
 * and a max-heap of pairs whose stale entries are refreshed when they reach the top. */
#include "bpe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/hash.h"
#include "../core/mem.h"

static const char MAGIC[8] = {'P', 'E', 'L', 'A', 'B', 'B', 'P', 'E'};
enum { HEADER_BYTES = 16, MAX_MERGES = BPE_MAX_VOCAB - 256 };

/* ---- pre-tokenization ---- */

enum { C_SPACE, C_LETTER, C_DIGIT, C_OTHER };

static int byte_class(unsigned char c) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) return C_SPACE;
    if (((c | 32) >= 'a' && (c | 32) <= 'z') || c >= 0x80) return C_LETTER;
    if (c >= '0' && c <= '9') return C_DIGIT;
    return C_OTHER;
}

size_t bpe_chunk_end(const unsigned char *t, size_t n, size_t s) {
    /* scanning stops at the cap: a 10 MB run of one letter must not be rescanned per chunk */
    size_t lim = n - s > BPE_MAX_CHUNK ? s + BPE_MAX_CHUNK : n, e = s + 1;
    int c0 = byte_class(t[s]);
    if (t[s] == ' ' && s + 1 < n && byte_class(t[s + 1]) != C_SPACE) {
        int c = byte_class(t[s + 1]);
        for (e = s + 2; e < lim && byte_class(t[e]) == c;) e++;
    } else if (c0 == C_SPACE) {
        while (e < lim && byte_class(t[e]) == C_SPACE && !(t[e] == ' ' && e + 1 < n && byte_class(t[e + 1]) != C_SPACE))
            e++;
    } else {
        while (e < lim && byte_class(t[e]) == c0) e++;
    }
    return e;
}

/* ---- building the lookup structures from a merge list (training and loading share it) ---- */

static size_t mix32(uint32_t key) { return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32); }

static int rank_of(const Bpe *b, int left, int right) {
    uint32_t key = (uint32_t)left << 16 | (uint32_t)right;
    for (size_t i = mix32(key) & b->rank_mask;; i = (i + 1) & b->rank_mask) {
        if (b->rank_key[i] == key) return b->rank_val[i];
        if (b->rank_key[i] == UINT32_MAX) return -1;
    }
}

static int bpe_fail(Bpe *b, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* takes ownership of left and right (malloc'd, n_merges entries) */
static int bpe_build(Bpe *b, int n_merges, int *left, int *right, const char *name) {
    memset(b, 0, sizeof *b);
    b->n_merges = n_merges;
    b->vocab_size = 256 + n_merges;
    b->merge_left = left;
    b->merge_right = right;
    b->piece_len = xmalloc((size_t)b->vocab_size * sizeof *b->piece_len);
    b->piece = xmalloc((size_t)b->vocab_size * sizeof *b->piece);
    for (int i = 0; i < 256; i++) b->piece_len[i] = 1;
    size_t total = 256;
    for (int r = 0; r < n_merges; r++) {
        int l = left[r], rt = right[r], id = 256 + r;
        if (l < 0 || l >= id || rt < 0 || rt >= id)
            return bpe_fail(b, name, "merge %d (token %d) = (%d, %d) refers to a token not made before it", r, id, l,
                            rt);
        b->piece_len[id] = b->piece_len[l] + b->piece_len[rt];
        if (b->piece_len[id] > BPE_MAX_CHUNK)
            return bpe_fail(b, name, "merge %d (token %d) makes a %d-byte token, longer than a chunk (%d)", r, id,
                            b->piece_len[id], BPE_MAX_CHUNK);
        total += (size_t)b->piece_len[id];
    }
    b->piece_mem = xmalloc(total);
    unsigned char *p = b->piece_mem;
    for (int i = 0; i < b->vocab_size; i++) {
        b->piece[i] = p;
        if (i < 256) p[0] = (unsigned char)i;
        else {
            int l = left[i - 256], rt = right[i - 256];
            memcpy(p, b->piece[l], (size_t)b->piece_len[l]);
            memcpy(p + b->piece_len[l], b->piece[rt], (size_t)b->piece_len[rt]);
        }
        p += b->piece_len[i];
    }
    size_t cap = 16;
    while (cap < 2 * (size_t)n_merges) cap *= 2; /* load <= 1/2 */
    b->rank_mask = cap - 1;
    b->rank_key = xmalloc(cap * sizeof *b->rank_key);
    b->rank_val = xmalloc(cap * sizeof *b->rank_val);
    memset(b->rank_key, 0xff, cap * sizeof *b->rank_key);
    for (int r = 0; r < n_merges; r++) {
        uint32_t key = (uint32_t)left[r] << 16 | (uint32_t)right[r];
        size_t i = mix32(key) & b->rank_mask;
        while (b->rank_key[i] != UINT32_MAX && b->rank_key[i] != key) i = (i + 1) & b->rank_mask;
        if (b->rank_key[i] == key)
            return bpe_fail(b, name, "merges %d and %d are the same pair (%d, %d)", b->rank_val[i], r, left[r],
                            right[r]);
        b->rank_key[i] = key;
        b->rank_val[i] = r;
    }
    return 0;
}

void bpe_free(Bpe *b) {
    free(b->merge_left), free(b->merge_right), free(b->piece), free(b->piece_len), free(b->piece_mem);
    free(b->rank_key), free(b->rank_val);
    memset(b, 0, sizeof *b);
}

static int bpe_fail(Bpe *b, const char *name, const char *fmt, ...) {
    char why[sizeof pelab_errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    bpe_free(b);
    return pelab_fail("%s: %s", name, why);
}

const unsigned char *bpe_piece(const Bpe *b, int id, size_t *len) {
    if (id < 0 || id >= b->vocab_size || !b->piece) return NULL;
    *len = (size_t)b->piece_len[id];
    return b->piece[id];
}

/* ---- training ---- */

typedef struct {
    int left, right;
    int64_t count;   /* adjacent occurrences, weighted by chunk frequency */
    int *words;      /* chunk types that held the pair when it appeared (some may have lost it) */
    int n_words, cap_words, last_word;
} Pair;

typedef struct {
    int64_t count; /* the pair's count when pushed: stale if it differs now */
    int pair;
} HeapEntry;

typedef struct {
    /* chunk types: bytes at text + off (for counting), symbols at sym + start (while merging) */
    size_t *off, *start;
    int *len, n_words, cap_words;
    int64_t *freq;
    int *sym;
    /* chunk hash: slot -> word or -1 */
    int *chunk_slot;
    size_t chunk_mask;
    /* pairs and their hash: key (left << 32 | right) -> pair */
    Pair *pairs;
    int n_pairs, cap_pairs;
    uint64_t *pair_key;
    int *pair_val;
    size_t pair_mask;
    HeapEntry *heap;
    size_t heap_n, heap_cap;
} Trainer;

static size_t mix64(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key;
}

static void chunk_table_grow(Trainer *t, const unsigned char *text) {
    size_t cap = (t->chunk_mask + 1) * 2;
    int *slot = xmalloc(cap * sizeof *slot);
    memset(slot, 0xff, cap * sizeof *slot);
    for (int w = 0; w < t->n_words; w++) {
        size_t i = fnv1a64(text + t->off[w], (size_t)t->len[w], 0) & (cap - 1);
        while (slot[i] >= 0) i = (i + 1) & (cap - 1);
        slot[i] = w;
    }
    free(t->chunk_slot);
    t->chunk_slot = slot;
    t->chunk_mask = cap - 1;
}

static void count_chunks(Trainer *t, const unsigned char *text, size_t n) {
    t->chunk_mask = 1023;
    t->chunk_slot = xmalloc(1024 * sizeof *t->chunk_slot);
    memset(t->chunk_slot, 0xff, 1024 * sizeof *t->chunk_slot);
    for (size_t s = 0; s < n;) {
        size_t e = bpe_chunk_end(text, n, s);
        int len = (int)(e - s);
        size_t i = fnv1a64(text + s, (size_t)len, 0) & t->chunk_mask;
        int w;
        while ((w = t->chunk_slot[i]) >= 0 && !(t->len[w] == len && memcmp(text + t->off[w], text + s, (size_t)len) == 0))
            i = (i + 1) & t->chunk_mask;
        if (w >= 0) t->freq[w]++;
        else {
            if (t->n_words == t->cap_words) {
                t->cap_words = t->cap_words ? 2 * t->cap_words : 1024;
                t->off = xrealloc(t->off, (size_t)t->cap_words * sizeof *t->off);
                t->len = xrealloc(t->len, (size_t)t->cap_words * sizeof *t->len);
                t->freq = xrealloc(t->freq, (size_t)t->cap_words * sizeof *t->freq);
            }
            w = t->n_words++;
            t->off[w] = s, t->len[w] = len, t->freq[w] = 1;
            t->chunk_slot[i] = w;
            if (2 * (size_t)t->n_words > t->chunk_mask) chunk_table_grow(t, text);
        }
        s = e;
    }
}

static int pair_find(const Trainer *t, int left, int right) {
    uint64_t key = (uint64_t)left << 32 | (uint32_t)right;
    for (size_t i = mix64(key) & t->pair_mask;; i = (i + 1) & t->pair_mask) {
        if (t->pair_key[i] == key) return t->pair_val[i];
        if (t->pair_key[i] == UINT64_MAX) return -1;
    }
}

static void pair_table_insert(uint64_t *keys, int *vals, size_t mask, uint64_t key, int val) {
    size_t i = mix64(key) & mask;
    while (keys[i] != UINT64_MAX) i = (i + 1) & mask;
    keys[i] = key, vals[i] = val;
}

static int pair_get_or_add(Trainer *t, int left, int right) {
    int p = pair_find(t, left, right);
    if (p >= 0) return p;
    if (t->n_pairs == t->cap_pairs) {
        t->cap_pairs = t->cap_pairs ? 2 * t->cap_pairs : 4096;
        t->pairs = xrealloc(t->pairs, (size_t)t->cap_pairs * sizeof *t->pairs);
    }
    if (2 * ((size_t)t->n_pairs + 1) > t->pair_mask) { /* keep the load at most 1/2 */
        size_t cap = (t->pair_mask + 1) * 2;
        uint64_t *keys = xmalloc(cap * sizeof *keys);
        int *vals = xmalloc(cap * sizeof *vals);
        memset(keys, 0xff, cap * sizeof *keys);
        for (int q = 0; q < t->n_pairs; q++)
            pair_table_insert(keys, vals, cap - 1, (uint64_t)t->pairs[q].left << 32 | (uint32_t)t->pairs[q].right, q);
        free(t->pair_key), free(t->pair_val);
        t->pair_key = keys, t->pair_val = vals, t->pair_mask = cap - 1;
    }
    p = t->n_pairs++;
    t->pairs[p] = (Pair){.left = left, .right = right, .last_word = -1};
    pair_table_insert(t->pair_key, t->pair_val, t->pair_mask, (uint64_t)left << 32 | (uint32_t)right, p);
    return p;
}

static void pair_note_word(Pair *p, int w) {
    if (p->last_word == w) return; /* a word is added while it is processed, so this dedupes */
    if (p->n_words == p->cap_words) {
        p->cap_words = p->cap_words ? 2 * p->cap_words : 4;
        p->words = xrealloc(p->words, (size_t)p->cap_words * sizeof *p->words);
    }
    p->words[p->n_words++] = w;
    p->last_word = w;
}

/* heap order: higher count first, then the smaller (left, right): the deterministic tie-break */
static int heap_before(const Trainer *t, HeapEntry a, HeapEntry b) {
    if (a.count != b.count) return a.count > b.count;
    const Pair *pa = &t->pairs[a.pair], *pb = &t->pairs[b.pair];
    return pa->left != pb->left ? pa->left < pb->left : pa->right < pb->right;
}

static void heap_push(Trainer *t, HeapEntry e) {
    if (t->heap_n == t->heap_cap) {
        t->heap_cap = t->heap_cap ? 2 * t->heap_cap : 4096;
        t->heap = xrealloc(t->heap, t->heap_cap * sizeof *t->heap);
    }
    size_t i = t->heap_n++;
    while (i > 0 && heap_before(t, e, t->heap[(i - 1) / 2])) {
        t->heap[i] = t->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    t->heap[i] = e;
}

static void heap_pop(Trainer *t) {
    HeapEntry last = t->heap[--t->heap_n];
    size_t i = 0, n = t->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_before(t, t->heap[c + 1], t->heap[c])) c++;
        if (!heap_before(t, t->heap[c], last)) break;
        t->heap[i] = t->heap[c];
        i = c;
    }
    if (n) t->heap[i] = last;
}

/* the pair to merge next (its heap entry popped), or -1 when no pair occurs twice */
static int best_pair(Trainer *t) {
    while (t->heap_n) {
        HeapEntry top = t->heap[0];
        int64_t now = t->pairs[top.pair].count;
        heap_pop(t);
        if (now == top.count) return now >= 2 ? top.pair : -1;
        if (now > 0) heap_push(t, (HeapEntry){now, top.pair}); /* counts only fall: refresh and retry */
    }
    return -1;
}

/* merges (a, b) -> z in every chunk type that holds it, updating the pair counts */
static void apply_merge(Trainer *t, int best, int z) {
    int a = t->pairs[best].left, b = t->pairs[best].right;
    int *words = t->pairs[best].words, n_words = t->pairs[best].n_words;
    int first_new = t->n_pairs;
    for (int k = 0; k < n_words; k++) {
        int w = words[k], len = t->len[w];
        int *s = t->sym + t->start[w];
        int i = 0;
        while (i + 1 < len && !(s[i] == a && s[i + 1] == b)) i++;
        if (i + 1 >= len) continue; /* an earlier merge took the pair away from this word */
        int64_t f = t->freq[w];
        /* words are at most BPE_MAX_CHUNK symbols: recounting the whole word is cheap and simple */
        for (int j = 0; j + 1 < len; j++) t->pairs[pair_find(t, s[j], s[j + 1])].count -= f;
        int m = 0;
        for (int j = 0; j < len;) {
            if (j + 1 < len && s[j] == a && s[j + 1] == b) s[m++] = z, j += 2;
            else s[m++] = s[j++];
        }
        t->len[w] = m;
        for (int j = 0; j + 1 < m; j++) {
            int p = pair_get_or_add(t, s[j], s[j + 1]);
            t->pairs[p].count += f;
            if (s[j] == z || s[j + 1] == z) pair_note_word(&t->pairs[p], w); /* the only new adjacencies */
        }
    }
    /* every pair holding z was created in this step: one heap entry each */
    for (int p = first_new; p < t->n_pairs; p++)
        if (t->pairs[p].count > 0) heap_push(t, (HeapEntry){t->pairs[p].count, p});
    free(t->pairs[best].words);
    t->pairs[best].words = NULL, t->pairs[best].n_words = t->pairs[best].cap_words = 0;
}

static void trainer_free(Trainer *t) {
    for (int p = 0; p < t->n_pairs; p++) free(t->pairs[p].words);
    free(t->off), free(t->start), free(t->len), free(t->freq), free(t->sym), free(t->chunk_slot);
    free(t->pairs), free(t->pair_key), free(t->pair_val), free(t->heap);
}

int bpe_train(Bpe *b, const unsigned char *text, size_t n, int vocab_size) {
    memset(b, 0, sizeof *b);
    if (vocab_size < 256 || vocab_size > BPE_MAX_VOCAB)
        return pelab_fail("BPE vocabulary %d: expected 256 .. %d", vocab_size, BPE_MAX_VOCAB);
    Trainer t = {0};
    count_chunks(&t, text, n);
    free(t.chunk_slot);
    t.chunk_slot = NULL;
    t.start = xmalloc(((size_t)t.n_words + 1) * sizeof *t.start);
    size_t total = 0;
    for (int w = 0; w < t.n_words; w++) t.start[w] = total, total += (size_t)t.len[w];
    t.sym = xmalloc((total + 1) * sizeof *t.sym);
    for (int w = 0; w < t.n_words; w++)
        for (int j = 0; j < t.len[w]; j++) t.sym[t.start[w] + (size_t)j] = text[t.off[w] + (size_t)j];

    t.pair_mask = 4095;
    t.pair_key = xmalloc(4096 * sizeof *t.pair_key);
    t.pair_val = xmalloc(4096 * sizeof *t.pair_val);
    memset(t.pair_key, 0xff, 4096 * sizeof *t.pair_key);
    for (int w = 0; w < t.n_words; w++) {
        const int *s = t.sym + t.start[w];
        for (int j = 0; j + 1 < t.len[w]; j++) {
            int p = pair_get_or_add(&t, s[j], s[j + 1]);
            t.pairs[p].count += t.freq[w];
            pair_note_word(&t.pairs[p], w);
        }
    }
    for (int p = 0; p < t.n_pairs; p++) heap_push(&t, (HeapEntry){t.pairs[p].count, p});

    int want = vocab_size - 256, made = 0;
    int *left = xmalloc((size_t)(want ? want : 1) * sizeof *left);
    int *right = xmalloc((size_t)(want ? want : 1) * sizeof *right);
    while (made < want) {
        int best = best_pair(&t);
        if (best < 0) break;
        left[made] = t.pairs[best].left, right[made] = t.pairs[best].right;
        apply_merge(&t, best, 256 + made);
        made++;
    }
    trainer_free(&t);
    return bpe_build(b, made, left, right, "BPE training");
}

/* ---- encoding ---- */

/* standard BPE on one chunk: merge the present pair of lowest rank until none is left */
static int encode_chunk(const Bpe *b, const unsigned char *bytes, int len, int *out) {
    for (int i = 0; i < len; i++) out[i] = bytes[i];
    int k = len;
    while (k > 1) {
        int best = INT_MAX;
        for (int i = 0; i + 1 < k; i++) {
            int r = rank_of(b, out[i], out[i + 1]);
            if (r >= 0 && r < best) best = r;
        }
        if (best == INT_MAX) break;
        int a = b->merge_left[best], c = b->merge_right[best], m = 0;
        for (int i = 0; i < k;) {
            if (i + 1 < k && out[i] == a && out[i + 1] == c) out[m++] = 256 + best, i += 2;
            else out[m++] = out[i++];
        }
        k = m;
    }
    return k;
}

/* cache of encoded chunks for this call: ids of a chunk seen before are copied from where they
 * were first written in the output */
typedef struct {
    uint64_t hash;
    size_t text_off, ids_off;
    int len, n_ids; /* len 0: empty slot */
} CacheSlot;

size_t bpe_encode(const Bpe *b, const unsigned char *text, size_t n, int *ids) {
    if (b->n_merges == 0) {
        for (size_t i = 0; i < n; i++) ids[i] = text[i];
        return n;
    }
    size_t cap = 64, used = 0, out = 0;
    CacheSlot *cache = xcalloc(cap, sizeof *cache);
    for (size_t s = 0; s < n;) {
        size_t e = bpe_chunk_end(text, n, s);
        int len = (int)(e - s);
        uint64_t h = fnv1a64(text + s, (size_t)len, 0);
        size_t i = h & (cap - 1);
        while (cache[i].len && !(cache[i].hash == h && cache[i].len == len &&
                                 memcmp(text + cache[i].text_off, text + s, (size_t)len) == 0))
            i = (i + 1) & (cap - 1);
        if (cache[i].len) {
            memcpy(ids + out, ids + cache[i].ids_off, (size_t)cache[i].n_ids * sizeof *ids);
            out += (size_t)cache[i].n_ids;
        } else {
            int k = encode_chunk(b, text + s, len, ids + out);
            cache[i] = (CacheSlot){h, s, out, len, k};
            out += (size_t)k;
            if (2 * ++used > cap) { /* keep the load at most 1/2 */
                CacheSlot *bigger = xcalloc(2 * cap, sizeof *bigger);
                for (size_t j = 0; j < cap; j++) {
                    if (!cache[j].len) continue;
                    size_t q = cache[j].hash & (2 * cap - 1);
                    while (bigger[q].len) q = (q + 1) & (2 * cap - 1);
                    bigger[q] = cache[j];
                }
                free(cache);
                cache = bigger;
                cap *= 2;
            }
        }
        s = e;
    }
    free(cache);
    return out;
}

/* ---- file image ---- */

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int bpe_serialize(const Bpe *b, unsigned char **buf, size_t *len) {
    if (b->n_merges < 0 || b->n_merges > MAX_MERGES) return pelab_fail("BPE: %d merges is not a valid tokenizer", b->n_merges);
    *len = HEADER_BYTES + 8 * (size_t)b->n_merges;
    unsigned char *p = *buf = xmalloc(*len);
    memcpy(p, MAGIC, 8);
    put_u32(p + 8, BPE_VERSION);
    put_u32(p + 12, (uint32_t)b->n_merges);
    for (int r = 0; r < b->n_merges; r++) {
        put_u32(p + HEADER_BYTES + 8 * (size_t)r, (uint32_t)b->merge_left[r]);
        put_u32(p + HEADER_BYTES + 8 * (size_t)r + 4, (uint32_t)b->merge_right[r]);
    }
    return 0;
}

int bpe_parse(Bpe *b, const unsigned char *buf, size_t len, const char *name) {
    memset(b, 0, sizeof *b);
    if (len < HEADER_BYTES)
        return pelab_fail("%s: truncated BPE tokenizer (%zu bytes, the header alone is %d)", name, len, HEADER_BYTES);
    if (memcmp(buf, MAGIC, 8) != 0) return pelab_fail("%s: not a pelab BPE tokenizer (bad magic)", name);
    uint32_t version = get_u32(buf + 8), n_merges = get_u32(buf + 12);
    if (version != BPE_VERSION)
        return pelab_fail("%s: BPE tokenizer version %u, this build reads version %d", name, version, BPE_VERSION);
    if (n_merges > MAX_MERGES)
        return pelab_fail("%s: %u merges, at most %d (vocabulary %d)", name, n_merges, MAX_MERGES, BPE_MAX_VOCAB);
    size_t expect = HEADER_BYTES + 8 * (size_t)n_merges;
    if (len < expect) return pelab_fail("%s: truncated: %zu bytes, %u merges need %zu", name, len, n_merges, expect);
    if (len > expect)
        return pelab_fail("%s: %zu trailing bytes after %u merges (%zu bytes expected)", name, len - expect, n_merges,
                          expect);
    int *left = xmalloc((n_merges ? n_merges : 1) * sizeof *left);
    int *right = xmalloc((n_merges ? n_merges : 1) * sizeof *right);
    for (uint32_t r = 0; r < n_merges; r++) {
        /* int32 on disk; a negative value stays negative and is rejected by bpe_build */
        left[r] = (int)(int32_t)get_u32(buf + HEADER_BYTES + 8 * (size_t)r);
        right[r] = (int)(int32_t)get_u32(buf + HEADER_BYTES + 8 * (size_t)r + 4);
    }
    return bpe_build(b, (int)n_merges, left, right, name);
}

int bpe_save(const Bpe *b, const char *path) {
    unsigned char *buf;
    size_t len;
    if (bpe_serialize(b, &buf, &len) != 0) return -1;
    int rc = write_bytes_atomic(path, buf, len);
    free(buf);
    return rc;
}

int bpe_load(Bpe *b, const char *path) {
    memset(b, 0, sizeof *b);
    unsigned char *buf;
    size_t len;
    if (read_file_max(path, FILE_MAX_TOKENIZER, "a BPE vocabulary", &buf, &len) != 0) return -1;
    int rc = bpe_parse(b, buf, len, path);
    free(buf);
    return rc;
}
