/* hf_bpe.c: the BPE model of a tokenizer.json (see hf_bpe.h). */
#include "hf_bpe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/hash.h"
#include "../core/mem.h"

static size_t table_size(size_t n) {
    size_t s = 16;
    while (s < 2 * n) s *= 2;
    return s;
}

int hf_bpe_lookup(const HfBpe *b, const char *s, size_t n) {
    for (size_t i = fnv1a64(s, n, 0) & b->vocab_mask;; i = (i + 1) & b->vocab_mask) {
        uint32_t v = b->vocab_slot[i];
        if (!v) return -1;
        int id = (int)v - 1;
        if ((size_t)b->tok_len[id] == n && memcmp(b->tok[id], s, n) == 0) return id;
    }
}

static uint64_t mix(uint64_t k) { /* splitmix64's finalizer: pairs of small ids spread over the table */
    k ^= k >> 30, k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27, k *= 0x94d049bb133111ebull;
    return k ^ (k >> 31);
}

/* slot of pair (l, r): its own or the empty one where it would go */
static size_t merge_slot(const HfBpe *b, int l, int r) {
    uint64_t key = ((uint64_t)(uint32_t)l << 32 | (uint32_t)r) + 1;
    size_t i = mix(key) & b->merge_mask;
    while (b->merge_key[i] && b->merge_key[i] != key) i = (i + 1) & b->merge_mask;
    return i;
}

/* rank of pair (l, r) and its merged id, -1 if not a merge */
static int merge_rank(const HfBpe *b, int l, int r, int *new_id) {
    size_t i = merge_slot(b, l, r);
    if (!b->merge_key[i]) return -1;
    *new_id = b->merge_new[i];
    return b->merge_rank[i];
}

static int parse_vocab(HfBpe *b, const JsonNode *vocab, const char *name) {
    if (!vocab || vocab->type != JSON_OBJECT)
        return pelab_fail("%s: model.vocab: expected an object {token: id}", name);
    size_t bytes = 0;
    long long max_id = -1;
    for (const JsonNode *e = vocab->child; e; e = e->next) {
        if (e->type != JSON_NUMBER || !e->is_int || e->int_value < 0 || e->int_value >= HF_TOK_MAX_ID)
            return pelab_fail("%s: model.vocab: token '%.40s': id must be an integer in [0, %d)", name, e->key,
                              HF_TOK_MAX_ID);
        if (e->int_value > max_id) max_id = e->int_value;
        bytes += strlen(e->key) + 1;
    }
    if (max_id < 0) return pelab_fail("%s: model.vocab is empty", name);
    b->n_ids = (int)max_id + 1;
    b->tok = xcalloc((size_t)b->n_ids, sizeof *b->tok);
    b->tok_len = xcalloc((size_t)b->n_ids, sizeof *b->tok_len);
    b->tok_mem = xmalloc(bytes ? bytes : 1);
    b->vocab_mask = table_size(vocab->n_children) - 1;
    b->vocab_slot = xcalloc(b->vocab_mask + 1, sizeof *b->vocab_slot);
    char *p = b->tok_mem;
    for (const JsonNode *e = vocab->child; e; e = e->next) {
        int id = (int)e->int_value;
        size_t n = strlen(e->key);
        if (b->tok[id])
            return pelab_fail("%s: model.vocab: id %d is given to both '%.40s' and '%.40s'", name, id, b->tok[id], e->key);
        memcpy(p, e->key, n + 1);
        b->tok[id] = p, b->tok_len[id] = (int)n;
        p += n + 1;
        /* keys are unique (json.h), so every token string is new to the table */
        size_t i = fnv1a64(e->key, n, 0) & b->vocab_mask;
        while (b->vocab_slot[i]) i = (i + 1) & b->vocab_mask;
        b->vocab_slot[i] = (uint32_t)id + 1;
    }
    return 0;
}

/* merge i: "a b" or ["a", "b"] -> the two strings. A string with several spaces (Llama 2's file
 * merges tokens that hold spaces: "   " is " " + " ") is cut at the one space that leaves two
 * tokens of the vocabulary whose join is one too; none or more than one such space is refused. */
static int merge_parts(const HfBpe *b, const JsonNode *m, size_t i, const char **a, size_t *an, const char **c,
                       size_t *cn, const char *name) {
    if (m->type == JSON_STRING) {
        const char *sp = memchr(m->str, ' ', m->str_len);
        if (!sp) return pelab_fail("%s: model.merges[%zu] '%.40s': expected two tokens separated by a space", name, i, m->str);
        if (!memchr(sp + 1, ' ', m->str_len - (size_t)(sp + 1 - m->str))) {
            *a = m->str, *an = (size_t)(sp - m->str), *c = sp + 1, *cn = m->str_len - *an - 1;
            return 0;
        }
        int found = 0;
        char *joined = xmalloc(m->str_len);
        for (size_t k = 1; k + 1 < m->str_len; k++) {
            if (m->str[k] != ' ') continue;
            memcpy(joined, m->str, k), memcpy(joined + k, m->str + k + 1, m->str_len - k - 1);
            if (hf_bpe_lookup(b, m->str, k) >= 0 && hf_bpe_lookup(b, m->str + k + 1, m->str_len - k - 1) >= 0 &&
                hf_bpe_lookup(b, joined, m->str_len - 1) >= 0)
                found++, *a = m->str, *an = k, *c = m->str + k + 1, *cn = m->str_len - k - 1;
        }
        free(joined);
        if (found != 1)
            return pelab_fail("%s: model.merges[%zu] '%.40s': %s split at a space into two tokens of the vocabulary", name,
                              i, m->str, found ? "more than one" : "no");
        return 0;
    }
    const JsonNode *l = json_at(m, 0), *r = json_at(m, 1);
    if (m->type != JSON_ARRAY || m->n_children != 2 || l->type != JSON_STRING || r->type != JSON_STRING)
        return pelab_fail("%s: model.merges[%zu]: expected \"a b\" or [\"a\", \"b\"]", name, i);
    *a = l->str, *an = l->str_len, *c = r->str, *cn = r->str_len;
    return 0;
}

static int parse_merges(HfBpe *b, const JsonNode *merges, const char *name) {
    if (merges && merges->type != JSON_ARRAY) return pelab_fail("%s: model.merges: expected an array", name);
    size_t n = merges ? merges->n_children : 0;
    if (n > (size_t)HF_TOK_MAX_ID) return pelab_fail("%s: model.merges: more than %d merges", name, HF_TOK_MAX_ID);
    b->merge_mask = table_size(n) - 1;
    b->merge_key = xcalloc(b->merge_mask + 1, sizeof *b->merge_key);
    b->merge_rank = xmalloc((b->merge_mask + 1) * sizeof *b->merge_rank);
    b->merge_new = xmalloc((b->merge_mask + 1) * sizeof *b->merge_new);
    char *joined = NULL;
    size_t joined_cap = 0, i = 0;
    for (const JsonNode *m = merges ? merges->child : NULL; m; m = m->next, i++) {
        const char *a = NULL, *c = NULL;
        size_t an = 0, cn = 0;
        if (merge_parts(b, m, i, &a, &an, &c, &cn, name) != 0) break;
        if (an + cn + 1 > joined_cap) joined_cap = 2 * (an + cn + 1), joined = xrealloc(joined, joined_cap);
        memcpy(joined, a, an), memcpy(joined + an, c, cn);
        int l = hf_bpe_lookup(b, a, an), r = hf_bpe_lookup(b, c, cn), id = hf_bpe_lookup(b, joined, an + cn);
        if (l < 0 || r < 0) {
            const char *bad = l < 0 ? a : c;
            size_t bn = l < 0 ? an : cn;
            pelab_fail("%s: model.merges[%zu]: '%.*s' is not in the vocabulary", name, i, (int)(bn > 40 ? 40 : bn), bad);
            break;
        }
        if (id < 0) {
            pelab_fail("%s: model.merges[%zu]: the merged token '%.*s' is not in the vocabulary", name, i,
                       (int)(an + cn > 40 ? 40 : an + cn), joined);
            break;
        }
        size_t s = merge_slot(b, l, r);
        if (b->merge_key[s]) continue; /* a repeated merge keeps its first rank (HF's map keeps the first insert) */
        b->merge_key[s] = ((uint64_t)(uint32_t)l << 32 | (uint32_t)r) + 1;
        b->merge_rank[s] = (int)i, b->merge_new[s] = id;
        b->n_merges++;
    }
    free(joined);
    return i == n ? 0 : -1;
}

int hf_bpe_parse(HfBpe *b, const JsonNode *model, const char *name) {
    memset(b, 0, sizeof *b);
    b->unk_id = -1;
    for (int i = 0; i < 256; i++) b->byte_id[i] = -1;
    const JsonNode *f;
    for (const JsonNode *e = model->child; e; e = e->next) {
        static const char *const known[] = {"type", "vocab", "merges", "unk_token", "fuse_unk", "byte_fallback",
                                            "ignore_merges", "dropout", "continuing_subword_prefix",
                                            "end_of_word_suffix"};
        size_t k = 0;
        while (k < sizeof known / sizeof *known && strcmp(e->key, known[k])) k++;
        if (k == sizeof known / sizeof *known) return pelab_fail("%s: model.%.40s: unknown BPE field", name, e->key);
    }
    if (parse_vocab(b, json_get(model, "vocab"), name) != 0 || parse_merges(b, json_get(model, "merges"), name) != 0) {
        hf_bpe_free(b);
        return -1;
    }
    static const char *const flags[] = {"fuse_unk", "byte_fallback", "ignore_merges"};
    int *dst[] = {&b->fuse_unk, &b->byte_fallback, &b->ignore_merges};
    for (int i = 0; i < 3; i++) {
        f = json_get(model, flags[i]);
        if (f && f->type != JSON_TRUE && f->type != JSON_FALSE && f->type != JSON_NULL) {
            hf_bpe_free(b);
            return pelab_fail("%s: model.%s: expected true or false", name, flags[i]);
        }
        *dst[i] = f && f->type == JSON_TRUE;
    }
    f = json_get(model, "dropout");
    int bad = f && f->type != JSON_NULL && !(f->type == JSON_NUMBER && f->number == 0);
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2 && !bad; i++) {
        f = json_get(model, affixes[i]);
        if (f && f->type != JSON_NULL && !(f->type == JSON_STRING && f->str_len == 0)) {
            hf_bpe_free(b);
            return pelab_fail("%s: model.%s: a word-affix BPE is not read (only null or \"\")", name, affixes[i]);
        }
    }
    if (bad) {
        hf_bpe_free(b);
        return pelab_fail("%s: model.dropout: BPE dropout samples its merges; only null or 0 is read", name);
    }
    f = json_get(model, "unk_token");
    if (f && f->type == JSON_STRING) b->unk_id = hf_bpe_lookup(b, f->str, f->str_len);
    else if (f && f->type != JSON_NULL) {
        hf_bpe_free(b);
        return pelab_fail("%s: model.unk_token: expected a string or null", name);
    }
    for (int i = 0; i < 256; i++) {
        char hex[8];
        snprintf(hex, sizeof hex, "<0x%02X>", i);
        b->byte_id[i] = hf_bpe_lookup(b, hex, 6);
    }
    return 0;
}

void hf_bpe_free(HfBpe *b) {
    free(b->tok), free(b->tok_len), free(b->tok_mem), free(b->vocab_slot);
    free(b->merge_key), free(b->merge_rank), free(b->merge_new);
    memset(b, 0, sizeof *b);
}

void hf_bpe_scratch_free(HfBpeScratch *s) {
    free(s->sym_id), free(s->sym_prev), free(s->sym_next), free(s->sym_len), free(s->heap);
    memset(s, 0, sizeof *s);
}

size_t hf_utf8_char(const unsigned char *s, size_t n, int *cp) {
    size_t len = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3
                 : s[0] >= 0xF0 && s[0] < 0xF5 ? 4 : 1;
    *cp = s[0];
    if (len > n) return 1;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 1;
    if (len == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 1; /* overlong, surrogate */
    if (len == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 1;
    int v = len == 1 ? s[0] : len == 2 ? s[0] & 0x1F : len == 3 ? s[0] & 0x0F : s[0] & 0x07;
    for (size_t i = 1; i < len; i++) v = v << 6 | (s[i] & 0x3F);
    *cp = v;
    return len;
}

static void push_id(int **ids, size_t *n, size_t *cap, int id) {
    if (*n == *cap) *cap = *cap ? 2 * *cap : 256, *ids = xrealloc(*ids, *cap * sizeof **ids);
    (*ids)[(*n)++] = id;
}

static int merge_less(const struct HfMerge *a, const struct HfMerge *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(HfBpeScratch *s, int rank, int pos, int new_id) {
    if (s->heap_n == s->heap_cap) s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 64, s->heap = xrealloc(s->heap, s->heap_cap * sizeof *s->heap);
    size_t i = s->heap_n++;
    struct HfMerge m = {rank, pos, new_id};
    while (i > 0 && merge_less(&m, &s->heap[(i - 1) / 2])) s->heap[i] = s->heap[(i - 1) / 2], i = (i - 1) / 2;
    s->heap[i] = m;
}

static struct HfMerge heap_pop(HfBpeScratch *s) {
    struct HfMerge top = s->heap[0], last = s->heap[--s->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n) break;
        if (c + 1 < s->heap_n && merge_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!merge_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c], i = c;
    }
    if (s->heap_n) s->heap[i] = last;
    return top;
}

static void add_symbol(HfBpeScratch *s, size_t *n, int id, int len) {
    if (*n == s->sym_cap) {
        s->sym_cap = s->sym_cap ? 2 * s->sym_cap : 256;
        s->sym_id = xrealloc(s->sym_id, s->sym_cap * sizeof(int));
        s->sym_prev = xrealloc(s->sym_prev, s->sym_cap * sizeof(int));
        s->sym_next = xrealloc(s->sym_next, s->sym_cap * sizeof(int));
        s->sym_len = xrealloc(s->sym_len, s->sym_cap * sizeof(int));
    }
    s->sym_id[*n] = id, s->sym_len[*n] = len;
    s->sym_prev[*n] = (int)*n - 1, s->sym_next[*n] = (int)*n + 1;
    (*n)++;
}

void hf_bpe_word(const HfBpe *b, HfBpeScratch *s, const char *w, size_t n, int **ids, size_t *n_ids, size_t *cap) {
    if (n == 0) return;
    if (b->ignore_merges) {
        int id = hf_bpe_lookup(b, w, n);
        if (id >= 0) {
            push_id(ids, n_ids, cap, id);
            return;
        }
    }
    /* the symbols: every character's id, else its bytes' <0xHH> ids, else unk (fused when asked) */
    size_t ns = 0;
    int unk_len = 0;
    for (size_t i = 0; i < n;) {
        int cp;
        size_t cl = hf_utf8_char((const unsigned char *)w + i, n - i, &cp);
        int id = hf_bpe_lookup(b, w + i, cl), fallback = id < 0 && b->byte_fallback;
        for (size_t k = 0; k < cl && fallback; k++) fallback = b->byte_id[(unsigned char)w[i + k]] >= 0;
        if (id >= 0 || fallback) {
            if (unk_len) add_symbol(s, &ns, b->unk_id, unk_len), unk_len = 0;
            if (id >= 0) add_symbol(s, &ns, id, (int)cl);
            else
                for (size_t k = 0; k < cl; k++) add_symbol(s, &ns, b->byte_id[(unsigned char)w[i + k]], 1);
        } else if (b->unk_id >= 0) {
            if (unk_len && !b->fuse_unk) add_symbol(s, &ns, b->unk_id, unk_len), unk_len = 0;
            unk_len += (int)cl;
        } /* no unk token: HF drops the character */
        i += cl;
    }
    if (unk_len) add_symbol(s, &ns, b->unk_id, unk_len);
    if (ns == 0) return;
    s->sym_next[ns - 1] = -1;
    s->heap_n = 0;
    for (size_t i = 0; i + 1 < ns; i++) {
        int new_id, rank = merge_rank(b, s->sym_id[i], s->sym_id[i + 1], &new_id);
        if (rank >= 0) heap_push(s, rank, (int)i, new_id);
    }
    while (s->heap_n) {
        struct HfMerge top = heap_pop(s);
        int p = top.pos, q = s->sym_next[p];
        if (s->sym_len[p] == 0 || q < 0) continue;
        int new_id;
        /* HF checks the merged id only: a stale entry whose position now holds another pair making
         * the same token still merges */
        if (merge_rank(b, s->sym_id[p], s->sym_id[q], &new_id) < 0 || new_id != top.new_id) continue;
        s->sym_id[p] = new_id, s->sym_len[p] += s->sym_len[q], s->sym_next[p] = s->sym_next[q];
        s->sym_len[q] = 0;
        if (s->sym_next[p] >= 0) s->sym_prev[s->sym_next[p]] = p;
        int prev = s->sym_prev[p], next = s->sym_next[p], rank;
        if (prev >= 0 && (rank = merge_rank(b, s->sym_id[prev], new_id, &top.new_id)) >= 0)
            heap_push(s, rank, prev, top.new_id);
        if (next >= 0 && (rank = merge_rank(b, new_id, s->sym_id[next], &top.new_id)) >= 0)
            heap_push(s, rank, p, top.new_id);
    }
    for (size_t i = 0; i < ns; i++)
        if (s->sym_len[i]) push_id(ids, n_ids, cap, s->sym_id[i]);
}
