/* hf_tok.c: a tokenizer.json parsed into the steps hf_tok_run.c runs (see hf_tok.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/json.h"
#include "../core/mem.h"
#include "hf_tok.h"
#include "hf_tok_impl.h"

int hf_byte_char(int b) {
    static int table[256];
    static int ready;
    if (!ready) { /* idempotent: racing threads write the same values */
        int k = 0; /* the bytes that are no printable character stand for 256, 257, ... in order */
        for (int c = 0; c < 256; c++) {
            int printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
            table[c] = printable ? c : 256 + k++;
        }
        ready = 1;
    }
    return table[b & 0xFF];
}

int hf_char_byte(int cp) {
    static int table[512];
    static int ready;
    if (!ready) { /* idempotent: racing threads write the same values */
        for (int i = 0; i < 512; i++) table[i] = -1;
        for (int b = 0; b < 256; b++) table[hf_byte_char(b)] = b;
        ready = 1;
    }
    return cp >= 0 && cp < 512 ? table[cp] : -1;
}

/* ---- small JSON helpers: every error names name and the field's path ---- */

typedef struct {
    const char *name;
    char path[160];
} Ctx;

static int fail_at(const Ctx *c, const char *what) { return pelab_fail("%s: %s: %s", c->name, c->path, what); }

static void sub_path(Ctx *out, const Ctx *in, const char *key, int index) {
    out->name = in->name;
    /* paths are a few levels deep; an absurd one is cut, never overrun */
    if (index >= 0) snprintf(out->path, sizeof out->path, "%.100s%s%.30s[%d]", in->path, *in->path ? "." : "", key, index);
    else snprintf(out->path, sizeof out->path, "%.100s%s%.30s", in->path, *in->path ? "." : "", key);
}

static char *dup_bytes(const char *s, size_t n) {
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* the string member key (NULL if absent or not a string) */
static const JsonNode *str_member(const JsonNode *o, const char *key) {
    const JsonNode *v = json_get(o, key);
    return v && v->type == JSON_STRING ? v : NULL;
}

/* a boolean member: 1 / 0, def when absent or null, -1 when another type */
static int bool_member(const JsonNode *o, const char *key, int def) {
    const JsonNode *v = json_get(o, key);
    if (!v || v->type == JSON_NULL) return def;
    return v->type == JSON_TRUE ? 1 : v->type == JSON_FALSE ? 0 : -1;
}

/* a one-character string (Metaspace's replacement, Strip's content) into out */
static int one_char(const JsonNode *v, char out[8], size_t *len, const Ctx *c, const char *field) {
    int cp;
    char why[96];
    if (v && v->type == JSON_STRING && v->str_len > 0 && v->str_len < 8 &&
        hf_utf8_char((const unsigned char *)v->str, v->str_len, &cp) == v->str_len) {
        memcpy(out, v->str, v->str_len);
        *len = v->str_len;
        return 0;
    }
    snprintf(why, sizeof why, "%s: expected a string of one character", field);
    return fail_at(c, why);
}

/* pat compiled into p->re (untrusted: a file's own pattern, under hf_regex.h's limits), with the
 * file, field and pattern every match error starts with in p->where */
static int compile_regex(HfPre *p, const char *pat, size_t n, int untrusted, const Ctx *c) {
    char why[320];
    StrBuf where = {0};
    sb_printf(&where, "%s: %s: regex '%.*s%s'", c->name, c->path, (int)(n < 60 ? n : 60), pat, n > 60 ? "..." : "");
    if (!(p->re = hf_regex_compile(pat, n, untrusted, why, sizeof why))) {
        pelab_fail("%s: %s", sb_str(&where), why);
        sb_free(&where);
        return -1;
    }
    p->where = where.s;
    return 0;
}

/* {"String": s} or {"Regex": r}: a literal into *lit, or a regex compiled into pre (NULL: a place
 * where only String is read) */
static int parse_pattern(const JsonNode *p, char **lit, size_t *lit_len, HfPre *pre, const Ctx *c) {
    const JsonNode *s = p ? str_member(p, "String") : NULL, *r = p ? str_member(p, "Regex") : NULL;
    if (!p || p->type != JSON_OBJECT || p->n_children != 1 || (!s && !r))
        return fail_at(c, "pattern: expected {\"String\": ...} or {\"Regex\": ...}");
    if (s) {
        *lit = dup_bytes(s->str, s->str_len), *lit_len = s->str_len;
        return 0;
    }
    if (!pre) return fail_at(c, "pattern: a Regex pattern is not read here (only String)");
    return compile_regex(pre, r->str, r->str_len, 1, c);
}

static const char *type_of(const JsonNode *o) {
    const JsonNode *t = str_member(o, "type");
    return t ? t->str : NULL;
}

/* a "Sequence" step: each element of its list (key) added in order by add */
static int add_sequence(HfTok *t, const JsonNode *n, const char *key, const Ctx *c,
                        int (*add)(HfTok *, const JsonNode *, const Ctx *)) {
    const JsonNode *list = json_get(n, key);
    if (!list || list->type != JSON_ARRAY) {
        char why[64];
        snprintf(why, sizeof why, "%s: expected an array", key);
        return fail_at(c, why);
    }
    int i = 0;
    for (const JsonNode *e = list->child; e; e = e->next, i++) {
        Ctx sub;
        sub_path(&sub, c, key, i);
        if (add(t, e, &sub) != 0) return -1;
    }
    return 0;
}

/* ---- normalizer ---- */

static int add_norm(HfTok *t, const JsonNode *n, const Ctx *c) {
    const char *type = type_of(n);
    char why[160];
    if (!type) return fail_at(c, "expected an object with a string \"type\"");
    if (!strcmp(type, "Sequence")) return add_sequence(t, n, "normalizers", c, add_norm);
    HfNorm s = {0};
    if (!strcmp(type, "Prepend")) {
        const JsonNode *p = str_member(n, "prepend");
        if (!p) return fail_at(c, "Prepend: \"prepend\" must be a string");
        s.kind = NORM_PREPEND, s.to = dup_bytes(p->str, p->str_len), s.to_len = p->str_len;
    } else if (!strcmp(type, "Replace")) {
        Ctx sub;
        sub_path(&sub, c, "pattern", -1);
        const JsonNode *to = str_member(n, "content");
        if (!to) return fail_at(c, "Replace: \"content\" must be a string");
        if (parse_pattern(json_get(n, "pattern"), &s.from, &s.from_len, NULL, &sub) != 0) return -1;
        if (s.from_len == 0) {
            free(s.from);
            return fail_at(c, "Replace: an empty String pattern");
        }
        s.kind = NORM_REPLACE, s.to = dup_bytes(to->str, to->str_len), s.to_len = to->str_len;
    } else {
        static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD"};
        int f = 0;
        while (f < 4 && strcmp(type, forms[f])) f++;
        if (f == 4) {
            snprintf(why, sizeof why, "normalizer type '%.40s' is not read (Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD)",
                     type);
            return fail_at(c, why);
        }
        s.kind = NORM_UNICODE, s.form = f;
    }
    s.field = dup_bytes(c->path, strlen(c->path));
    t->norm = xrealloc(t->norm, (size_t)(t->n_norm + 1) * sizeof *t->norm);
    t->norm[t->n_norm++] = s;
    return 0;
}

/* ---- pre-tokenizer ---- */

static int behavior_of(const JsonNode *n, SplitBehavior *b, const Ctx *c) {
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const JsonNode *v = str_member(n, "behavior");
    for (int i = 0; v && i < 5; i++)
        if (!strcmp(v->str, names[i])) {
            *b = (SplitBehavior)i;
            return 0;
        }
    return fail_at(c, "behavior: expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
}

static int add_pre(HfTok *t, const JsonNode *n, const Ctx *c) {
    const char *type = type_of(n);
    char why[200];
    if (!type) return fail_at(c, "expected an object with a string \"type\"");
    if (!strcmp(type, "Sequence")) return add_sequence(t, n, "pretokenizers", c, add_pre);
    HfPre p = {0};
    if (!strcmp(type, "ByteLevel")) {
        int aps = bool_member(n, "add_prefix_space", 1), use = bool_member(n, "use_regex", 1);
        if (aps < 0 || use < 0) return fail_at(c, "ByteLevel: add_prefix_space and use_regex must be true or false");
        p.kind = PRE_BYTELEVEL, p.add_prefix_space = aps;
        if (use && compile_regex(&p, HF_GPT2_REGEX, strlen(HF_GPT2_REGEX), 0, c) != 0) return -1;
    } else if (!strcmp(type, "Digits")) {
        int ind = bool_member(n, "individual_digits", 0);
        if (ind < 0) return fail_at(c, "Digits: individual_digits must be true or false");
        p.kind = PRE_SPLIT, p.behavior = ind ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS;
        if (compile_regex(&p, "\\p{N}", 5, 0, c) != 0) return -1; /* Rust's char::is_numeric */
    } else if (!strcmp(type, "Split")) {
        Ctx sub;
        sub_path(&sub, c, "pattern", -1);
        p.kind = PRE_SPLIT, p.invert = bool_member(n, "invert", 0);
        if (p.invert < 0) return fail_at(c, "Split: invert must be true or false");
        if (behavior_of(n, &p.behavior, c) != 0 || parse_pattern(json_get(n, "pattern"), &p.lit, &p.lit_len, &p, &sub) != 0) {
            if (p.re) pcre2_code_free(p.re);
            free(p.lit), free(p.where);
            return -1;
        }
    } else if (!strcmp(type, "Metaspace")) {
        p.kind = PRE_METASPACE;
        if (one_char(json_get(n, "replacement"), p.rep, &p.rep_len, c, "Metaspace: replacement") != 0) return -1;
        const JsonNode *scheme = str_member(n, "prepend_scheme");
        int aps = bool_member(n, "add_prefix_space", 1); /* the field before prepend_scheme existed */
        p.split = bool_member(n, "split", 1);
        if (aps < 0 || p.split < 0) return fail_at(c, "Metaspace: add_prefix_space and split must be true or false");
        p.prepend = aps ? 1 : 0;
        if (scheme) {
            p.prepend = !strcmp(scheme->str, "always") ? 1 : !strcmp(scheme->str, "first") ? 2
                        : !strcmp(scheme->str, "never") ? 0 : -1;
            if (p.prepend < 0) return fail_at(c, "Metaspace: prepend_scheme must be always, first or never");
        }
    } else {
        snprintf(why, sizeof why,
                 "pre-tokenizer type '%.40s' is not read (Sequence, ByteLevel, Digits, Split, Metaspace)", type);
        return fail_at(c, why);
    }
    p.field = dup_bytes(c->path, strlen(c->path));
    t->pre = xrealloc(t->pre, (size_t)(t->n_pre + 1) * sizeof *t->pre);
    t->pre[t->n_pre++] = p;
    return 0;
}

/* ---- decoder ---- */

static int add_dec(HfTok *t, const JsonNode *n, const Ctx *c) {
    const char *type = type_of(n);
    char why[200];
    if (!type) return fail_at(c, "expected an object with a string \"type\"");
    if (!strcmp(type, "Sequence")) return add_sequence(t, n, "decoders", c, add_dec);
    for (int i = 0; i < t->n_dec; i++)
        if (t->dec[i].kind == DEC_FUSE && strcmp(type, "Strip") != 0) {
            snprintf(why, sizeof why, "decoder %.40s after Fuse: only Strip is read there", type);
            return fail_at(c, why);
        }
    HfDec d = {0};
    if (!strcmp(type, "ByteLevel")) d.kind = DEC_BYTELEVEL;
    else if (!strcmp(type, "ByteFallback")) d.kind = DEC_BYTEFALLBACK;
    else if (!strcmp(type, "Fuse")) d.kind = DEC_FUSE;
    else if (!strcmp(type, "Replace")) {
        Ctx sub;
        sub_path(&sub, c, "pattern", -1);
        const JsonNode *to = str_member(n, "content");
        if (!to) return fail_at(c, "Replace: \"content\" must be a string");
        if (parse_pattern(json_get(n, "pattern"), &d.from, &d.from_len, NULL, &sub) != 0) return -1;
        if (d.from_len == 0) {
            free(d.from);
            return fail_at(c, "Replace: an empty String pattern");
        }
        d.kind = DEC_REPLACE, d.to = dup_bytes(to->str, to->str_len), d.to_len = to->str_len;
    } else if (!strcmp(type, "Metaspace")) {
        d.kind = DEC_METASPACE;
        if (one_char(json_get(n, "replacement"), d.rep, &d.rep_len, c, "Metaspace: replacement") != 0) return -1;
        const JsonNode *scheme = str_member(n, "prepend_scheme");
        int aps = bool_member(n, "add_prefix_space", 1);
        d.prepend = scheme ? strcmp(scheme->str, "never") != 0 : aps != 0;
    } else if (!strcmp(type, "Strip")) {
        const JsonNode *start = json_get(n, "start"), *stop = json_get(n, "stop");
        if (one_char(json_get(n, "content"), d.strip, &d.strip_len, c, "Strip: content") != 0) return -1;
        if (!start || start->type != JSON_NUMBER || !start->is_int || start->int_value < 0 || start->int_value > 64 ||
            !stop || stop->type != JSON_NUMBER || !stop->is_int || stop->int_value < 0 || stop->int_value > 64)
            return fail_at(c, "Strip: start and stop must be integers in [0, 64]");
        d.kind = DEC_STRIP, d.start = (int)start->int_value, d.stop = (int)stop->int_value;
        int fused = 0;
        for (int i = 0; i < t->n_dec; i++) fused |= t->dec[i].kind == DEC_FUSE;
        if (fused && d.stop) return fail_at(c, "Strip after Fuse with stop > 0: a decoded text's end is not stripped");
        if (fused && t->strip_start) return fail_at(c, "a second Strip after Fuse");
        if (fused) {
            t->strip_start = d.start;
            memcpy(t->strip_char, d.strip, d.strip_len), t->strip_char_len = d.strip_len;
            return 0; /* a text-level step: not a per-token one */
        }
    } else {
        snprintf(why, sizeof why,
                 "decoder type '%.40s' is not read (Sequence, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip)",
                 type);
        return fail_at(c, why);
    }
    if (d.kind == DEC_METASPACE && d.prepend) t->metaspace_first = 1;
    d.field = dup_bytes(c->path, strlen(c->path));
    t->dec = xrealloc(t->dec, (size_t)(t->n_dec + 1) * sizeof *t->dec);
    t->dec[t->n_dec++] = d;
    return 0;
}

/* ---- added tokens and post-processor ---- */

static int parse_added(HfTok *t, const JsonNode *list, const Ctx *c) {
    if (!list || list->type == JSON_NULL) return 0;
    if (list->type != JSON_ARRAY) return fail_at(c, "expected an array");
    t->added = xcalloc(list->n_children ? list->n_children : 1, sizeof *t->added);
    int i = 0;
    for (const JsonNode *e = list->child; e; e = e->next, i++) {
        Ctx sub;
        sub_path(&sub, c, "", i);
        const JsonNode *id = json_get(e, "id"), *content = str_member(e, "content");
        if (!id || id->type != JSON_NUMBER || !id->is_int || id->int_value < 0 || id->int_value >= HF_TOK_MAX_ID)
            return fail_at(&sub, "id: expected an integer in [0, 4194304)");
        if (!content || content->str_len == 0) return fail_at(&sub, "content: expected a non-empty string");
        HfAdded *a = &t->added[t->n_added];
        a->id = (int)id->int_value;
        a->special = bool_member(e, "special", 0), a->lstrip = bool_member(e, "lstrip", 0);
        a->rstrip = bool_member(e, "rstrip", 0), a->single_word = bool_member(e, "single_word", 0);
        a->normalized = bool_member(e, "normalized", !a->special); /* HF's default: special tokens are not */
        if (a->special < 0 || a->lstrip < 0 || a->rstrip < 0 || a->single_word < 0 || a->normalized < 0)
            return fail_at(&sub, "special, lstrip, rstrip, single_word and normalized must be true or false");
        a->content = dup_bytes(content->str, content->str_len), a->len = content->str_len;
        t->n_added++;
    }
    /* per first byte, longest first: the matcher takes the longest at the leftmost position */
    for (int b = 0; b < 256; b++) {
        int k = 0;
        for (int j = 0; j < t->n_added; j++) k += (unsigned char)t->added[j].content[0] == b;
        if (!k) continue;
        int *list_b = t->first_added[b] = xmalloc((size_t)(k + 1) * sizeof(int));
        k = 0;
        for (int j = 0; j < t->n_added; j++)
            if ((unsigned char)t->added[j].content[0] == b) {
                int at = k++;
                while (at > 0 && t->added[list_b[at - 1]].len < t->added[j].len) list_b[at] = list_b[at - 1], at--;
                list_b[at] = j;
            }
        list_b[k] = -1;
    }
    return 0;
}

static void push_ids(int **ids, int *n, const int *add, int k) {
    *ids = xrealloc(*ids, (size_t)(*n + k + 1) * sizeof **ids);
    memcpy(*ids + *n, add, (size_t)k * sizeof **ids);
    *n += k;
}

/* TemplateProcessing's "single": tokens before $A go first, after it last */
static int parse_template(HfTok *t, const JsonNode *pp, const Ctx *c) {
    const JsonNode *single = json_get(pp, "single"), *specials = json_get(pp, "special_tokens");
    if (!single || single->type != JSON_ARRAY) return fail_at(c, "TemplateProcessing: single: expected an array");
    int seen_a = 0, i = 0;
    for (const JsonNode *e = single->child; e; e = e->next, i++) {
        Ctx sub;
        sub_path(&sub, c, "single", i);
        const JsonNode *st = json_get(e, "SpecialToken"), *seq = json_get(e, "Sequence");
        if (seq) {
            seen_a = 1;
            continue;
        }
        const JsonNode *name = st ? str_member(st, "id") : NULL;
        if (!name) return fail_at(&sub, "expected {\"SpecialToken\": {\"id\": ...}} or {\"Sequence\": ...}");
        const JsonNode *def = json_get(specials, name->str), *ids = def ? json_get(def, "ids") : NULL;
        if (!ids || ids->type != JSON_ARRAY) {
            char why[160];
            snprintf(why, sizeof why, "special token '%.40s' is not in special_tokens (with its ids)", name->str);
            return fail_at(&sub, why);
        }
        for (const JsonNode *v = ids->child; v; v = v->next) {
            if (v->type != JSON_NUMBER || !v->is_int || v->int_value < 0 || v->int_value >= HF_TOK_MAX_ID)
                return fail_at(&sub, "special_tokens ids: expected integers in [0, 4194304)");
            int id = (int)v->int_value;
            if (seen_a) push_ids(&t->suffix, &t->n_suffix, &id, 1);
            else push_ids(&t->prefix, &t->n_prefix, &id, 1);
        }
    }
    return 0;
}

static int add_post(HfTok *t, const JsonNode *pp, const Ctx *c) {
    if (!pp || pp->type == JSON_NULL) return 0;
    const char *type = type_of(pp);
    if (!type) return fail_at(c, "expected an object with a string \"type\"");
    if (!strcmp(type, "ByteLevel")) return 0; /* it trims offsets only */
    if (!strcmp(type, "TemplateProcessing")) return parse_template(t, pp, c);
    if (!strcmp(type, "Sequence")) return add_sequence(t, pp, "processors", c, add_post);
    if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing")) {
        const JsonNode *cls = json_at(json_get(pp, "cls"), 1), *sep = json_at(json_get(pp, "sep"), 1);
        if (!cls || !sep || cls->type != JSON_NUMBER || !cls->is_int || sep->type != JSON_NUMBER || !sep->is_int ||
            cls->int_value < 0 || cls->int_value >= HF_TOK_MAX_ID || sep->int_value < 0 || sep->int_value >= HF_TOK_MAX_ID)
            return fail_at(c, "cls and sep: expected [token, id]");
        int a = (int)cls->int_value, b = (int)sep->int_value;
        push_ids(&t->prefix, &t->n_prefix, &a, 1);
        push_ids(&t->suffix, &t->n_suffix, &b, 1);
        return 0;
    }
    char why[200];
    snprintf(why, sizeof why,
             "post-processor type '%.40s' is not read (TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, "
             "Sequence)", type);
    return fail_at(c, why);
}

/* ---- decoding table: every id's token through the per-token decoder steps ---- */

static void put(StrBuf *b, const void *s, size_t n) { sb_put(b, s, n); }

size_t hf_tok_growth_limit(size_t n) {
    return n > (SIZE_MAX - HF_TOK_GROWTH_FLOOR) / HF_TOK_GROWTH ? SIZE_MAX : HF_TOK_GROWTH * n + HF_TOK_GROWTH_FLOOR;
}

int hf_tok_grew(const char *name, const char *field, const char *what, size_t n) {
    return pelab_fail("%s: %s: lengthens %s of %zu bytes past %zu bytes (%d x + %d): a tokenizer's steps lengthen a "
                      "text at most %d-fold", name, field, what, n, hf_tok_growth_limit(n), HF_TOK_GROWTH,
                      HF_TOK_GROWTH_FLOOR, HF_TOK_GROWTH);
}

int hf_replace(StrBuf *out, const char *s, size_t n, const char *from, size_t fn, const char *to, size_t tn, size_t cap) {
    for (size_t i = 0; i < n;) {
        size_t j = i + 1, add = tn; /* a match, or the bytes up to the next possible start of from */
        int match = i + fn <= n && !memcmp(s + i, from, fn);
        if (!match) {
            while (j < n && s[j] != from[0]) j++;
            add = j - i;
        }
        if (add > cap || out->len > cap - add) return -1;
        if (match) sb_put(out, to, tn), i += fn;
        else sb_put(out, s + i, add), i = j;
    }
    return 0;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* one token through decoder step d, appended to out; -1 when out would pass cap bytes (only
 * Replace lengthens a token) */
static int decode_step(const HfDec *d, const char *s, size_t n, StrBuf *out, size_t cap) {
    switch (d->kind) {
    case DEC_REPLACE: return hf_replace(out, s, n, d->from, d->from_len, d->to, d->to_len, cap);
    case DEC_METASPACE: return hf_replace(out, s, n, d->rep, d->rep_len, " ", 1, cap);
    case DEC_BYTEFALLBACK:
        if (n == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' && hex_digit(s[3]) >= 0 && hex_digit(s[4]) >= 0) {
            unsigned char byte = (unsigned char)(hex_digit(s[3]) * 16 + hex_digit(s[4]));
            put(out, &byte, 1);
        } else put(out, s, n);
        break;
    case DEC_BYTELEVEL: {
        StrBuf bytes = {0};
        int ok = 1;
        for (size_t i = 0; i < n && ok;) {
            int cp;
            size_t cl = hf_utf8_char((const unsigned char *)s + i, n - i, &cp);
            int b = cl > 1 || cp < 0x80 ? hf_char_byte(cp) : -1;
            if (b < 0) ok = 0;
            unsigned char byte = (unsigned char)b;
            if (ok) put(&bytes, &byte, 1);
            i += cl;
        }
        if (ok) put(out, bytes.s ? bytes.s : "", bytes.len); /* a character outside the map: the token as it is */
        else put(out, s, n);
        sb_free(&bytes);
        break;
    }
    case DEC_STRIP: { /* per token (before any Fuse) */
        size_t a = 0, e = n;
        for (int k = 0; k < d->start && a + d->strip_len <= e && !memcmp(s + a, d->strip, d->strip_len); k++) a += d->strip_len;
        for (int k = 0; k < d->stop && e >= a + d->strip_len && !memcmp(s + e - d->strip_len, d->strip, d->strip_len); k++)
            e -= d->strip_len;
        put(out, s + a, e - a);
        break;
    }
    case DEC_FUSE: put(out, s, n); break;
    }
    return 0;
}

/* -1 naming the decoder step when the decoded vocabulary would pass hf_tok_growth_limit of the
 * vocabulary's bytes */
static int build_pieces(HfTok *t) {
    t->piece = xcalloc((size_t)t->n_ids, sizeof *t->piece);
    t->piece_len = xcalloc((size_t)t->n_ids, sizeof *t->piece_len);
    t->special = xcalloc((size_t)t->n_ids, 1);
    size_t vocab_bytes = 0, len;
    for (int id = 0; id < t->n_ids; id++)
        if (hf_tok_token(t, id, &len)) vocab_bytes += len;
    size_t cap = hf_tok_growth_limit(vocab_bytes);
    StrBuf all = {0}, cur = {0}, next = {0};
    size_t *off = xmalloc((size_t)t->n_ids * sizeof *off);
    int rc = 0;
    for (int id = 0; id < t->n_ids && rc == 0; id++) {
        const char *tok = hf_tok_token(t, id, &len);
        off[id] = SIZE_MAX;
        if (!tok) continue;
        cur.len = 0;
        put(&cur, tok, len);
        for (int i = 0; i < t->n_dec && rc == 0; i++) {
            next.len = 0;
            if (decode_step(&t->dec[i], cur.s, cur.len, &next, cap - all.len) != 0)
                rc = hf_tok_grew(t->name, t->dec[i].field, "the vocabulary", vocab_bytes);
            StrBuf tmp = cur;
            cur = next, next = tmp;
        }
        off[id] = all.len;
        t->piece_len[id] = (int)cur.len;
        put(&all, cur.s ? cur.s : "", cur.len);
    }
    sb_free(&cur), sb_free(&next);
    for (int i = 0; i < t->n_added; i++) t->special[t->added[i].id] = (unsigned char)t->added[i].special;
    t->piece_mem = (unsigned char *)(all.s ? all.s : xmalloc(1));
    for (int id = 0; rc == 0 && id < t->n_ids; id++) /* refused: the ids after the step's are unset */
        if (off[id] != SIZE_MAX) t->piece[id] = t->piece_mem + off[id];
    free(off);
    return rc;
}

/* ---- the whole file ---- */

const char *hf_tok_token(const HfTok *t, int id, size_t *len) {
    if (id < 0 || id >= t->n_ids) return NULL;
    for (int i = t->n_added - 1; i >= 0; i--) /* a later entry for the same id wins, as in HF's map */
        if (t->added[i].id == id) {
            *len = t->added[i].len;
            return t->added[i].content;
        }
    if (id >= t->bpe.n_ids || !t->bpe.tok[id]) return NULL;
    *len = (size_t)t->bpe.tok_len[id];
    return t->bpe.tok[id];
}

static int parse_doc(HfTok *t, const JsonNode *root, const char *name) {
    Ctx c = {name, ""};
    if (root->type != JSON_OBJECT) return pelab_fail("%s: expected a JSON object (a tokenizer.json)", name);
    const JsonNode *model = json_get(root, "model");
    const char *mtype = model ? type_of(model) : NULL;
    if (!model || model->type != JSON_OBJECT)
        return pelab_fail("%s: model: expected an object (is this a Hugging Face tokenizer.json?)", name);
    if (!mtype && json_get(model, "merges")) mtype = "BPE"; /* files written before "type" was */
    if (!mtype || strcmp(mtype, "BPE") != 0)
        return pelab_fail("%s: model.type '%.40s': pelab reads BPE tokenizers only", name, mtype ? mtype : "(none)");
    if (hf_bpe_parse(&t->bpe, model, name) != 0) return -1;
    Ctx sub;
    sub_path(&sub, &c, "added_tokens", -1);
    if (parse_added(t, json_get(root, "added_tokens"), &sub) != 0) return -1;
    const JsonNode *n = json_get(root, "normalizer");
    sub_path(&sub, &c, "normalizer", -1);
    if (n && n->type != JSON_NULL && add_norm(t, n, &sub) != 0) return -1;
    n = json_get(root, "pre_tokenizer");
    sub_path(&sub, &c, "pre_tokenizer", -1);
    if (n && n->type != JSON_NULL && add_pre(t, n, &sub) != 0) return -1;
    n = json_get(root, "decoder");
    sub_path(&sub, &c, "decoder", -1);
    if (n && n->type != JSON_NULL && add_dec(t, n, &sub) != 0) return -1;
    sub_path(&sub, &c, "post_processor", -1);
    if (add_post(t, json_get(root, "post_processor"), &sub) != 0) return -1;
    t->n_ids = t->bpe.n_ids;
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].id >= t->n_ids) t->n_ids = t->added[i].id + 1;
    for (int i = 0; i < t->n_prefix + t->n_suffix; i++) {
        int id = i < t->n_prefix ? t->prefix[i] : t->suffix[i - t->n_prefix];
        size_t len;
        if (!hf_tok_token(t, id, &len))
            return pelab_fail("%s: post_processor: token id %d is neither in the vocabulary nor an added token", name, id);
    }
    t->name = dup_bytes(name, strlen(name));
    return build_pieces(t);
}

int hf_tok_parse(HfTok **out, const unsigned char *buf, size_t len, const char *name) {
    JsonDoc doc;
    *out = NULL;
    if (json_parse_max(&doc, (const char *)buf, len, HF_TOK_MAX_VALUES) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: not valid JSON: %s", name, why);
    }
    HfTok *t = xcalloc(1, sizeof *t);
    int rc = parse_doc(t, doc.root, name);
    json_free(&doc);
    if (rc != 0) {
        hf_tok_free(t);
        for (char *c = pelab_errmsg; *c; c++) /* one line, whatever token or key the message quotes */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        return -1;
    }
    *out = t;
    return 0;
}

void hf_tok_free(HfTok *t) {
    if (!t) return;
    hf_bpe_free(&t->bpe);
    for (int i = 0; i < t->n_norm; i++) free(t->norm[i].from), free(t->norm[i].to), free(t->norm[i].field);
    for (int i = 0; i < t->n_pre; i++) {
        if (t->pre[i].re) pcre2_code_free(t->pre[i].re);
        free(t->pre[i].lit), free(t->pre[i].where), free(t->pre[i].field);
    }
    for (int i = 0; i < t->n_added; i++) free(t->added[i].content);
    for (int b = 0; b < 256; b++) free(t->first_added[b]);
    for (int i = 0; i < t->n_dec; i++) free(t->dec[i].from), free(t->dec[i].to), free(t->dec[i].field);
    free(t->norm), free(t->pre), free(t->added), free(t->dec), free(t->prefix), free(t->suffix);
    free(t->piece), free(t->piece_len), free(t->piece_mem), free(t->special), free(t->name);
    free(t);
}

int hf_tok_vocab_size(const HfTok *t) { return t->n_ids; }
int hf_tok_bos(const HfTok *t) { return t->n_prefix ? t->prefix[0] : -1; }
int hf_tok_strip_start(const HfTok *t) { return t->strip_start; }

int hf_tok_first_special(const HfTok *t) {
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].special) return t->added[i].id;
    return -1;
}

const unsigned char *hf_tok_piece(const HfTok *t, int id, size_t *len, int *special) {
    if (id < 0 || id >= t->n_ids || !t->piece[id]) return NULL;
    *len = (size_t)t->piece_len[id];
    *special = t->special[id];
    return t->piece[id];
}
