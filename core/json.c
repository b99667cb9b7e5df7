/* json.c: strict recursive-descent JSON parser (see json.h). Every read goes through the
 * parser's bounds check, so a truncated or hostile buffer ends in an error, never a read past it. */
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mem.h"

/* ---- arena: nodes and strings of one document, freed together ---- */

typedef struct ArenaBlock {
    struct ArenaBlock *prev;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} ArenaBlock;

#define ARENA_BLOCK_BYTES (64 * 1024)

static void *arena_alloc(JsonDoc *doc, size_t n) {
    n = (n + 15) & ~(size_t)15;
    ArenaBlock *b = doc->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK_BYTES ? n : ARENA_BLOCK_BYTES;
        ArenaBlock *nb = xmalloc(sizeof *nb + cap);
        nb->prev = b;
        nb->used = 0;
        nb->cap = cap;
        doc->arena = b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void json_free(JsonDoc *doc) {
    ArenaBlock *b = doc->arena;
    while (b) {
        ArenaBlock *prev = b->prev;
        free(b);
        b = prev;
    }
    doc->arena = NULL;
    doc->root = NULL;
}

/* ---- parser ---- */

typedef struct {
    const unsigned char *buf;
    size_t len, pos;
    JsonDoc *doc;
    size_t n_values; /* nodes made so far, against JSON_MAX_VALUES */
} Parser;

static int fail_at(const Parser *p, size_t at, const char *what) {
    if (at >= p->len) return pelab_fail("byte %zu: %s (at end of input)", at, what);
    unsigned char c = p->buf[at];
    if (c >= 0x20 && c < 0x7f) return pelab_fail("byte %zu: %s (found '%c')", at, what, c);
    return pelab_fail("byte %zu: %s (found byte 0x%02x)", at, what, c);
}

static int peek(const Parser *p) { return p->pos < p->len ? p->buf[p->pos] : -1; }

static void skip_ws(Parser *p) {
    while (p->pos < p->len) {
        unsigned char c = p->buf[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static JsonNode *new_node(Parser *p, JsonType type) {
    JsonNode *n = arena_alloc(p->doc, sizeof *n);
    memset(n, 0, sizeof *n);
    n->type = type;
    n->offset = p->pos;
    return n;
}

static int parse_literal(Parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->buf + p->pos, word, n) != 0) return fail_at(p, p->pos, "invalid literal");
    p->pos += n;
    return 0;
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }

static int parse_number(Parser *p, JsonNode *node) {
    size_t start = p->pos;
    int integral = 1;
    if (peek(p) == '-') p->pos++;
    if (peek(p) == '0') {
        p->pos++;
        if (is_digit(peek(p))) return fail_at(p, p->pos, "leading zeros are not allowed in numbers");
    } else if (is_digit(peek(p))) {
        while (is_digit(peek(p))) p->pos++;
    } else {
        return fail_at(p, p->pos, "expected a digit");
    }
    if (peek(p) == '.') {
        integral = 0;
        p->pos++;
        if (!is_digit(peek(p))) return fail_at(p, p->pos, "expected a digit after the decimal point");
        while (is_digit(peek(p))) p->pos++;
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        integral = 0;
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-') p->pos++;
        if (!is_digit(peek(p))) return fail_at(p, p->pos, "expected a digit in the exponent");
        while (is_digit(peek(p))) p->pos++;
    }
    /* strtod/strtoll need a NUL-terminated copy: the input buffer may end right here */
    size_t n = p->pos - start;
    if (n > JSON_MAX_NUMBER_LEN) return fail_at(p, start, "number literal longer than 64 characters");
    char *text = arena_alloc(p->doc, n + 1);
    memcpy(text, p->buf + start, n);
    text[n] = 0;
    node->str = text;
    node->str_len = n;
    node->number = strtod(text, NULL);
    if (!isfinite(node->number)) return fail_at(p, start, "number out of range");
    if (integral) {
        errno = 0;
        long long v = strtoll(text, NULL, 10);
        if (errno == 0) {
            node->is_int = 1;
            node->int_value = v;
        }
    }
    return 0;
}

static int hex4(const Parser *p, size_t at, unsigned *out) {
    if (p->len - at < 4) return fail_at(p, p->len, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p->buf[at + i];
        unsigned d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return fail_at(p, at + i, "expected a hex digit in \\u escape");
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* length of the valid UTF-8 sequence at s (lead byte >= 0x80, avail >= 1 bytes readable), 0 if
 * invalid: no overlong forms, no surrogates, nothing past U+10FFFF */
static size_t utf8_seq_len(const unsigned char *s, size_t avail) {
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    if (avail < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

/* at the opening quote; on success out and out_len hold the decoded NUL-terminated text */
static int parse_string(Parser *p, const char **out, size_t *out_len) {
    size_t open = p->pos++;
    /* find the closing quote first: the decoded text is never longer than the raw text */
    size_t end = p->pos;
    while (end < p->len && p->buf[end] != '"') end += p->buf[end] == '\\' ? 2 : 1;
    if (end >= p->len) return fail_at(p, open, "unterminated string");
    char *dst = arena_alloc(p->doc, end - p->pos + 1);
    size_t n = 0;
    while (p->pos < end) {
        unsigned char c = p->buf[p->pos];
        if (c < 0x20) return fail_at(p, p->pos, "control character in string (must be escaped)");
        if (c >= 0x80) {
            size_t k = utf8_seq_len(p->buf + p->pos, p->len - p->pos);
            if (k == 0 || p->pos + k > end) return fail_at(p, p->pos, "invalid UTF-8 in string");
            memcpy(dst + n, p->buf + p->pos, k);
            n += k;
            p->pos += k;
            continue;
        }
        if (c != '\\') {
            dst[n++] = (char)c;
            p->pos++;
            continue;
        }
        size_t esc = p->pos;
        unsigned char e = p->buf[p->pos + 1]; /* in bounds: the scan above stepped over it */
        p->pos += 2;
        switch (e) {
        case '"': dst[n++] = '"'; break;
        case '\\': dst[n++] = '\\'; break;
        case '/': dst[n++] = '/'; break;
        case 'b': dst[n++] = '\b'; break;
        case 'f': dst[n++] = '\f'; break;
        case 'n': dst[n++] = '\n'; break;
        case 'r': dst[n++] = '\r'; break;
        case 't': dst[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (p->pos + 4 > end) return fail_at(p, esc, "truncated \\u escape");
            if (hex4(p, p->pos, &cp) != 0) return -1;
            p->pos += 4;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return fail_at(p, esc, "unpaired low surrogate in \\u escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (p->pos + 6 > end || p->buf[p->pos] != '\\' || p->buf[p->pos + 1] != 'u')
                    return fail_at(p, esc, "high surrogate not followed by a \\u low surrogate");
                if (hex4(p, p->pos + 2, &lo) != 0) return -1;
                if (lo < 0xDC00 || lo > 0xDFFF) return fail_at(p, p->pos, "expected a low surrogate");
                p->pos += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) return fail_at(p, esc, "\\u0000 is not supported in strings");
            n += put_utf8(dst + n, cp);
            break;
        }
        default: return fail_at(p, esc + 1, "invalid escape in string");
        }
    }
    dst[n] = 0;
    p->pos = end + 1;
    *out = dst;
    *out_len = n;
    return 0;
}

static int parse_value(Parser *p, JsonNode **out, int depth);

/* '[' or '{' already current; members are linked in order */
static int parse_container(Parser *p, JsonNode *node, int depth) {
    int is_object = node->type == JSON_OBJECT;
    int close = is_object ? '}' : ']';
    JsonNode **tail = &node->child;
    p->pos++;
    skip_ws(p);
    if (peek(p) == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        const char *key = NULL;
        if (is_object) {
            size_t key_len;
            if (peek(p) != '"') return fail_at(p, p->pos, "expected a string key in object");
            if (parse_string(p, &key, &key_len) != 0) return -1;
            skip_ws(p);
            if (peek(p) != ':') return fail_at(p, p->pos, "expected ':' after object key");
            p->pos++;
            skip_ws(p);
        }
        JsonNode *child;
        if (parse_value(p, &child, depth + 1) != 0) return -1;
        child->key = key;
        *tail = child;
        tail = &child->next;
        node->n_children++;
        skip_ws(p);
        int c = peek(p);
        if (c == close) {
            p->pos++;
            return 0;
        }
        if (c != ',')
            return fail_at(p, p->pos, is_object ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
        p->pos++;
        skip_ws(p);
    }
}

static int parse_value(Parser *p, JsonNode **out, int depth) {
    if (depth > JSON_MAX_DEPTH) return fail_at(p, p->pos, "nesting too deep");
    if (++p->n_values > JSON_MAX_VALUES) {
        char what[64];
        snprintf(what, sizeof what, "more than %d values (the parser's limit)", JSON_MAX_VALUES);
        return fail_at(p, p->pos, what);
    }
    int c = peek(p);
    JsonNode *node;
    switch (c) {
    case '{': node = new_node(p, JSON_OBJECT); break;
    case '[': node = new_node(p, JSON_ARRAY); break;
    case '"': node = new_node(p, JSON_STRING); break;
    case 't': node = new_node(p, JSON_TRUE); break;
    case 'f': node = new_node(p, JSON_FALSE); break;
    case 'n': node = new_node(p, JSON_NULL); break;
    default:
        if (c == '-' || is_digit(c)) node = new_node(p, JSON_NUMBER);
        else return fail_at(p, p->pos, "expected a value");
    }
    int rc;
    switch (node->type) {
    case JSON_OBJECT:
    case JSON_ARRAY: rc = parse_container(p, node, depth); break;
    case JSON_STRING: rc = parse_string(p, &node->str, &node->str_len); break;
    case JSON_TRUE: rc = parse_literal(p, "true"); break;
    case JSON_FALSE: rc = parse_literal(p, "false"); break;
    case JSON_NULL: rc = parse_literal(p, "null"); break;
    default: rc = parse_number(p, node); break;
    }
    *out = node;
    return rc;
}

int json_parse(JsonDoc *doc, const char *buf, size_t len) {
    memset(doc, 0, sizeof *doc);
    Parser p = {(const unsigned char *)buf, len, 0, doc, 0};
    skip_ws(&p);
    JsonNode *root;
    if (parse_value(&p, &root, 1) != 0) {
        json_free(doc);
        return -1;
    }
    skip_ws(&p);
    if (p.pos != len) {
        fail_at(&p, p.pos, "unexpected data after the JSON value");
        json_free(doc);
        return -1;
    }
    doc->root = root;
    return 0;
}

const JsonNode *json_get(const JsonNode *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJECT) return NULL;
    for (const JsonNode *c = obj->child; c; c = c->next)
        if (strcmp(c->key, key) == 0) return c;
    return NULL;
}

const JsonNode *json_at(const JsonNode *arr, size_t i) {
    if (!arr || arr->type != JSON_ARRAY) return NULL;
    const JsonNode *c = arr->child;
    while (c && i--) c = c->next;
    return c;
}

const char *json_type_name(JsonType t) {
    static const char *names[] = {"null", "false", "true", "number", "string", "array", "object"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

int json_utf8_valid(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq_len(u + i, n - i);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}
