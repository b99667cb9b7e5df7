/* hf_tok_run.c: encoding and decoding with a parsed tokenizer.json (see hf_tok.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "hf_tok.h"
#include "hf_regex.h"
#include "hf_tok_impl.h"
#include "hf_unicode.h"

/* pieces of text in one buffer; first: the piece starts at offset 0 of the input (Metaspace's "first") */
typedef struct {
    char *buf;
    size_t len, cap;
    size_t *start, *plen;
    unsigned char *first;
    size_t n, ncap;
} Pieces;

static void pieces_add(Pieces *p, const char *s, size_t n, int first) {
    if (n == 0) return; /* HF drops empty splits */
    if (p->len + n > p->cap) {
        while (p->len + n > p->cap) p->cap = p->cap ? 2 * p->cap : 256;
        p->buf = xrealloc(p->buf, p->cap);
    }
    if (p->n == p->ncap) {
        p->ncap = p->ncap ? 2 * p->ncap : 64;
        p->start = xrealloc(p->start, p->ncap * sizeof *p->start);
        p->plen = xrealloc(p->plen, p->ncap * sizeof *p->plen);
        p->first = xrealloc(p->first, p->ncap);
    }
    memcpy(p->buf + p->len, s, n);
    p->start[p->n] = p->len, p->plen[p->n] = n, p->first[p->n] = (unsigned char)first;
    p->len += n, p->n++;
}

static void pieces_free(Pieces *p) {
    free(p->buf), free(p->start), free(p->plen), free(p->first);
    memset(p, 0, sizeof *p);
}

typedef struct {
    size_t s, e;
    int match;
} Range;

typedef struct {
    const HfTok *t;
    int *ids;
    size_t n_ids, cap;
    HfBpeScratch scratch;
    HfMatcher matcher;
    Pieces a, b;
    Range *r;
    size_t nr, rcap;
    StrBuf tmp, mapped;
    /* the whole text's bound (hf_tok_growth_limit of its raw length), and how much of it the segments
     * so far took when normalized and when pre-tokenized: one budget for the text, however many
     * added tokens cut it into segments */
    size_t text_len, limit, norm_used, pre_used;
    int grew; /* the error was the growth bound's */
} Enc;

static void push_id(Enc *e, int id) {
    if (e->n_ids == e->cap) e->cap = e->cap ? 2 * e->cap : 256, e->ids = xrealloc(e->ids, e->cap * sizeof *e->ids);
    e->ids[e->n_ids++] = id;
}

/* a piece of the text between matches (never empty: HF pushes no empty gap) */
static void add_range(Enc *e, size_t s, size_t end, int match) {
    if (s == end && !match) return;
    if (e->nr == e->rcap) e->rcap = e->rcap ? 2 * e->rcap : 64, e->r = xrealloc(e->r, e->rcap * sizeof *e->r);
    e->r[e->nr++] = (Range){s, end, match};
}

/* the leftmost match of p's pattern in s[from..n] (the empty literal matches at from): 1 with
 * [*ms, *me), 0 if none, -1 when a regex ran past a limit (the message naming the file and field) */
static int find_at(Enc *e, const HfPre *p, const char *s, size_t n, size_t from, size_t *ms, size_t *me) {
    if (p->re) {
        char why[400];
        int found = hf_regex_find(&e->matcher, p->re, s, n, from, ms, me, why, sizeof why);
        return found < 0 ? pelab_fail("%s: %s", p->where, why) : found;
    }
    for (size_t i = from; i + p->lit_len <= n; i++)
        if (!memcmp(s + i, p->lit, p->lit_len)) {
            *ms = i, *me = i + p->lit_len;
            return 1;
        }
    return 0;
}

/* s as (range, matched) pieces covering it: HF's find_matches over onig's find_iter. A pattern that
 * matches empty ("" as a String, "a*", "(?=x)") gives empty matches, each a piece of its own that
 * cuts the text there (so "" splits a text into its characters), except one right where the
 * previous match ended; after an empty match the search goes on one character later, so every
 * pattern advances. -1 when a regex ran past a limit (hf_regex.h). */
static int find_matches(Enc *e, const HfPre *p, const char *s, size_t n) {
    e->nr = 0;
    size_t from = 0, prev = 0, last_end = SIZE_MAX;
    if (p->re) hf_matcher_allow(&e->matcher, n);
    while (from <= n) {
        size_t ms, me;
        int found = find_at(e, p, s, n, from, &ms, &me);
        if (found < 0) return -1;
        if (!found) break;
        if (ms == me && me == last_end) { /* an empty match where the last one ended: one character on */
            int cp;
            from += from < n ? hf_utf8_char((const unsigned char *)s + from, n - from, &cp) : 1;
            continue;
        }
        add_range(e, prev, ms, 0);
        add_range(e, ms, me, 1);
        prev = from = last_end = me;
    }
    add_range(e, prev, n, 0);
    return 0;
}

/* HF's split(pattern, behavior) of one piece, from the ranges find_matches made */
static void split_ranges(Enc *e, const char *s, SplitBehavior b, int invert, int first, Pieces *out) {
    Range *r = e->r;
    size_t n = e->nr, k = 0;
    for (size_t i = 0; i < n; i++) r[i].match ^= invert;
    switch (b) {
    case SPLIT_ISOLATED: k = n; break;
    case SPLIT_REMOVED:
        for (size_t i = 0; i < n; i++)
            if (!r[i].match) r[k++] = r[i];
        break;
    case SPLIT_MERGED_PREVIOUS: { /* a delimiter joins the piece before it */
        int prev_match = 0;
        for (size_t i = 0; i < n; i++) {
            int m = r[i].match;
            if (m && !prev_match && k > 0) r[k - 1].e = r[i].e;
            else r[k++] = r[i];
            prev_match = m;
        }
        break;
    }
    case SPLIT_MERGED_NEXT: { /* a delimiter joins the piece after it: HF folds from the right */
        int next_match = 0;
        size_t w = n; /* r[w..n) is the result, built right to left */
        for (size_t i = n; i-- > 0;) {
            int m = r[i].match;
            if (m && !next_match && w < n) r[w].s = r[i].s;
            else r[--w] = r[i];
            next_match = m;
        }
        memmove(r, r + w, (n - w) * sizeof *r);
        k = n - w;
        break;
    }
    case SPLIT_CONTIGUOUS: {
        int prev_match = 0;
        for (size_t i = 0; i < n; i++) {
            int m = r[i].match;
            if (m == prev_match && k > 0) r[k - 1].e = r[i].e;
            else r[k++] = r[i];
            prev_match = m;
        }
        break;
    }
    }
    for (size_t i = 0; i < k; i++) pieces_add(out, s + r[i].s, r[i].e - r[i].s, first && r[i].s == 0);
}

static void byte_map(StrBuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int cp = hf_byte_char((unsigned char)s[i]);
        char u[2];
        if (cp < 0x80) u[0] = (char)cp, sb_put(out, u, 1);
        else u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), sb_put(out, u, 2);
    }
}

static int pre_step(Enc *e, const HfPre *p, const char *s, size_t n, int first, Pieces *out) {
    switch (p->kind) {
    case PRE_SPLIT:
        if (find_matches(e, p, s, n) != 0) return -1;
        split_ranges(e, s, p->behavior, p->invert, first, out);
        break;
    case PRE_BYTELEVEL: {
        e->tmp.len = 0;
        if (p->add_prefix_space && s[0] != ' ') sb_put(&e->tmp, " ", 1);
        sb_put(&e->tmp, s, n);
        const char *w = e->tmp.s;
        size_t wn = e->tmp.len;
        if (p->re && find_matches(e, p, w, wn) != 0) return -1;
        if (!p->re) e->nr = 0, add_range(e, 0, wn, 1);
        for (size_t i = 0; i < e->nr; i++) {
            e->mapped.len = 0;
            byte_map(&e->mapped, w + e->r[i].s, e->r[i].e - e->r[i].s);
            pieces_add(out, e->mapped.s, e->mapped.len, first && e->r[i].s == 0);
        }
        break;
    }
    case PRE_METASPACE: {
        e->tmp.len = 0;
        int has_rep = n >= p->rep_len && !memcmp(s, p->rep, p->rep_len);
        if ((p->prepend == 1 || (p->prepend == 2 && first)) && !has_rep && s[0] != ' ') sb_put(&e->tmp, p->rep, p->rep_len);
        hf_replace(&e->tmp, s, n, " ", 1, p->rep, p->rep_len, SIZE_MAX); /* at most 4-fold: checked by the caller */
        if (!p->split) {
            pieces_add(out, e->tmp.s, e->tmp.len, first);
            break;
        }
        HfPre lit = {.kind = PRE_SPLIT, .lit = (char *)p->rep, .lit_len = p->rep_len};
        e->mapped.len = 0; /* find_matches reads tmp; keep a copy as the pieces' source */
        sb_put(&e->mapped, e->tmp.s, e->tmp.len);
        find_matches(e, &lit, e->mapped.s, e->mapped.len); /* a literal: never fails */
        split_ranges(e, e->mapped.s, SPLIT_MERGED_NEXT, 0, first, out);
        break;
    }
    }
    return 0;
}

/* one normalized stretch without added tokens: pre-tokenized, each word through BPE */
static int encode_words(Enc *e, const char *s, size_t n, int first) {
    const HfTok *t = e->t;
    e->a.len = e->a.n = 0;
    pieces_add(&e->a, s, n, first);
    for (int i = 0; i < t->n_pre; i++) {
        e->b.len = e->b.n = 0;
        for (size_t j = 0; j < e->a.n; j++) {
            if (pre_step(e, &t->pre[i], e->a.buf + e->a.start[j], e->a.plen[j], e->a.first[j], &e->b) != 0) return -1;
            if (e->b.len > e->limit - e->pre_used) /* one piece's step lengthens it at most 4-fold + 4: checked as it goes */
                return e->grew = 1, hf_tok_grew(t->name, t->pre[i].field, "a text", e->text_len);
        }
        Pieces tmp = e->a;
        e->a = e->b, e->b = tmp;
    }
    e->pre_used += e->a.len;
    for (size_t j = 0; j < e->a.n; j++)
        hf_bpe_word(&t->bpe, &e->scratch, e->a.buf + e->a.start[j], e->a.plen[j], &e->ids, &e->n_ids, &e->cap);
    return 0;
}

static int is_ws(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_word(unsigned char c) { return c >= 0x80 || c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

/* the leftmost-longest added token of the set (normalized or not) in s[from..n): its index and the
 * range it takes (lstrip / rstrip white space included); -1 if none */
static int next_added(const HfTok *t, const char *s, size_t n, size_t from, int normalized, size_t *ms, size_t *me) {
    for (size_t i = from; i < n; i++) {
        const int *cand = t->first_added[(unsigned char)s[i]];
        for (; cand && *cand >= 0; cand++) {
            const HfAdded *a = &t->added[*cand];
            if (a->normalized != normalized || a->len > n - i || memcmp(s + i, a->content, a->len) != 0) continue;
            if (a->single_word && ((i > 0 && is_word((unsigned char)s[i - 1])) ||
                                   (i + a->len < n && is_word((unsigned char)s[i + a->len]))))
                continue;
            size_t b = i, end = i + a->len;
            while (a->lstrip && b > from && is_ws((unsigned char)s[b - 1])) b--;
            while (a->rstrip && end < n && is_ws((unsigned char)s[end])) end++;
            *ms = b, *me = end;
            return *cand;
        }
    }
    return -1;
}

/* a stretch of the raw text between added tokens: normalized, then split on the normalized added tokens */
static int encode_segment(Enc *e, const char *s, size_t n, int first) {
    const HfTok *t = e->t;
    StrBuf cur = {0}, next = {0};
    sb_put(&cur, s, n);
    size_t limit = e->limit - e->norm_used;
    int rc = 0;
    for (int i = 0; i < t->n_norm && rc == 0; i++) {
        const HfNorm *m = &t->norm[i];
        next.len = 0;
        if (m->kind == NORM_PREPEND) {
            if (cur.len && cur.len + m->to_len > limit) rc = -1;
            else if (cur.len) sb_put(&next, m->to, m->to_len);
            sb_put(&next, cur.s, cur.len);
        } else if (m->kind == NORM_REPLACE) rc = hf_replace(&next, cur.s, cur.len, m->from, m->from_len, m->to, m->to_len, limit);
        else hf_unicode_normalize(m->form, cur.s, cur.len, &next), rc = next.len > limit ? -1 : 0; /* at most 11-fold */
        if (rc != 0) e->grew = 1, rc = hf_tok_grew(t->name, m->field, "a text", e->text_len);
        StrBuf tmp = cur;
        cur = next, next = tmp;
    }
    e->norm_used += cur.len;
    const char *ns = cur.s ? cur.s : "";
    size_t pos = 0;
    for (; rc == 0;) {
        size_t ms, me;
        int j = next_added(t, ns, cur.len, pos, 1, &ms, &me);
        size_t end = j >= 0 ? ms : cur.len;
        if (end > pos && (rc = encode_words(e, ns + pos, end - pos, first && pos == 0)) != 0) break;
        if (j < 0) break;
        push_id(e, t->added[j].id);
        pos = me;
    }
    sb_free(&cur), sb_free(&next);
    return rc;
}

/* hf_tok_encode; *grew (when not NULL): 1 when it failed on the growth bound */
static int *encode(const HfTok *t, const unsigned char *text, size_t n, int add_special, size_t extra, size_t *count,
                   int *grew) {
    Enc e = {.t = t, .text_len = n, .limit = hf_tok_growth_limit(n)};
    hf_matcher_init(&e.matcher);
    const char *s = (const char *)text;
    if (add_special)
        for (int i = 0; i < t->n_prefix; i++) push_id(&e, t->prefix[i]);
    size_t pos = 0;
    int rc = 0;
    for (;;) {
        size_t ms, me;
        int j = next_added(t, s, n, pos, 0, &ms, &me);
        size_t end = j >= 0 ? ms : n;
        if (end > pos && (rc = encode_segment(&e, s + pos, end - pos, pos == 0)) != 0) break;
        if (j < 0) break;
        push_id(&e, t->added[j].id);
        pos = me;
    }
    if (add_special)
        for (int i = 0; i < t->n_suffix; i++) push_id(&e, t->suffix[i]);
    *count = rc ? 0 : e.n_ids;
    int *ids = rc ? NULL : xrealloc(e.ids, (e.n_ids + extra + 1) * sizeof *ids);
    if (rc) free(e.ids);
    hf_bpe_scratch_free(&e.scratch);
    hf_matcher_free(&e.matcher);
    pieces_free(&e.a), pieces_free(&e.b);
    free(e.r);
    sb_free(&e.tmp), sb_free(&e.mapped);
    if (grew) *grew = e.grew;
    return ids;
}

int *hf_tok_encode(const HfTok *t, const unsigned char *text, size_t n, int add_special, size_t extra, size_t *count) {
    return encode(t, text, n, add_special, extra, count, NULL);
}

int hf_tok_check_growth(const HfTok *t) {
    StrBuf probe = {0}; /* what the steps act on: their own patterns and contents, and a few characters */
    for (int i = 0; i < t->n_norm; i++) sb_put(&probe, t->norm[i].from ? t->norm[i].from : "", t->norm[i].from_len);
    for (int i = 0; i < t->n_norm; i++) sb_put(&probe, t->norm[i].to ? t->norm[i].to : "", t->norm[i].to_len);
    for (int i = 0; i < t->n_pre; i++) sb_put(&probe, t->pre[i].lit ? t->pre[i].lit : "", t->pre[i].lit_len);
    sb_puts(&probe, " a1\xc3\xa9\xef\xb7\xba\xff "); /* a space, a letter, a digit, é, U+FDFA (NFKC: 18 characters), a bad byte */
    size_t n;
    int grew = 0, *ids = encode(t, (const unsigned char *)probe.s, probe.len, 0, 0, &n, &grew);
    free(ids);
    int rc = 0;
    if (!ids && grew) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        rc = pelab_fail("%s; at load, on a text of the file's own patterns", why);
    }
    sb_free(&probe);
    return rc;
}

int hf_tok_decode(const HfTok *t, const int *ids, size_t n, int skip_special, StrBuf *out) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->n_ids || !t->piece[ids[i]])
            return pelab_fail("token %zu: id %d is not in the vocabulary [0, %d)", i + 1, ids[i], t->n_ids);
    int strip_left = t->strip_start;
    size_t index = 0; /* of the token among those decoded (special ones skipped or not) */
    for (size_t i = 0; i < n; i++) {
        int id = ids[i];
        if (skip_special && t->special[id]) continue;
        const char *p = (const char *)t->piece[id];
        size_t len = (size_t)t->piece_len[id];
        if (t->metaspace_first && index == 0) { /* HF's Metaspace decoder drops the first token's replacements */
            for (size_t k = 0; k < len; k++)
                if (p[k] != ' ') sb_put(out, p + k, 1);
            index++;
            if (len) strip_left = 0;
            continue;
        }
        index++;
        while (strip_left > 0 && len >= t->strip_char_len && !memcmp(p, t->strip_char, t->strip_char_len))
            p += t->strip_char_len, len -= t->strip_char_len, strip_left--;
        if (len) strip_left = 0; /* a Strip after Fuse sees the whole text: it stops at its first other character */
        sb_put(out, p, len);
    }
    return 0;
}
