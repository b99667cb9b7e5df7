/* json.c: json.h on top of jansson (Debian libjansson-dev). jansson does the parsing proper: the
 * grammar, escapes and surrogate pairs, UTF-8, \u0000, duplicate keys, data after the root, numbers
 * overflowing a double. A pre-scan here enforces pelab's own bounds before jansson allocates
 * anything, and records where each value starts, which jansson does not keep. */

/* jansson's enum json_type and json.h's JsonType share names (JSON_OBJECT, ...): jansson's are
 * renamed JANSSON_* in this file, and its json_is_* macros, which would see json.h's, are unused */
#define JSON_OBJECT JANSSON_OBJECT
#define JSON_ARRAY JANSSON_ARRAY
#define JSON_STRING JANSSON_STRING
#define JSON_INTEGER JANSSON_INTEGER
#define JSON_REAL JANSSON_REAL
#define JSON_TRUE JANSSON_TRUE
#define JSON_FALSE JANSSON_FALSE
#define JSON_NULL JANSSON_NULL
#include <jansson.h>
#undef JSON_OBJECT
#undef JSON_ARRAY
#undef JSON_STRING
#undef JSON_INTEGER
#undef JSON_REAL
#undef JSON_TRUE
#undef JSON_FALSE
#undef JSON_NULL

#include "json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mem.h"

/* a JsonDoc's private part, one block: jansson's tree (it holds the decoded strings and keys), the
 * nodes, then the number literals */
typedef struct {
    json_t *tree;
    JsonNode nodes[];
} Store;

typedef struct {
    const unsigned char *buf;
    size_t len;
    size_t *starts; /* where each value starts, in document order */
    size_t n, cap;
    size_t text_bytes; /* number literals, each with its NUL */
    size_t max_values;
} Scan;

static int is_ws(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* the characters a number literal may hold, from its first ('-' or a digit) */
static size_t number_len(const unsigned char *s, size_t avail) {
    size_t n = 0;
    while (n < avail && ((s[n] >= '0' && s[n] <= '9') || s[n] == '-' || s[n] == '+' || s[n] == '.' ||
                         s[n] == 'e' || s[n] == 'E'))
        n++;
    return n;
}

/* Bounds before jansson reads the input: nesting, value count, number length. A value starts where
 * the grammar expects one (the root, after '[', ':' and an array's ','), strings skipped. On valid
 * JSON this finds exactly jansson's values in document order; on invalid JSON at least those of the
 * prefix jansson reads before its error, so the caps bound jansson's memory either way. */
static int prescan(Scan *sc) {
    unsigned char in_object[JSON_MAX_DEPTH + 1];
    int depth = 0, expect = 1;
    for (size_t i = 0; i < sc->len; i++) {
        unsigned char c = sc->buf[i];
        if (is_ws(c)) continue;
        if (expect && c != ']' && c != '}') {
            if (depth >= JSON_MAX_DEPTH) return pelab_fail("byte %zu: nesting too deep", i);
            if (sc->n == sc->max_values)
                return pelab_fail("byte %zu: more than %zu values (the parser's limit)", i, sc->max_values);
            if (sc->n == sc->cap) {
                sc->cap = sc->cap ? 2 * sc->cap : 64;
                sc->starts = xrealloc(sc->starts, sc->cap * sizeof *sc->starts);
            }
            sc->starts[sc->n++] = i;
        }
        expect = 0;
        switch (c) {
        case '"':
            for (i++; i < sc->len && sc->buf[i] != '"'; i++)
                if (sc->buf[i] == '\\') i++;
            break;
        case '[':
        case '{':
            if (++depth > JSON_MAX_DEPTH) return pelab_fail("byte %zu: nesting too deep", i);
            in_object[depth] = c == '{';
            expect = c == '[';
            break;
        case ']':
        case '}': depth -= depth > 0; break;
        case ',': expect = depth > 0 && !in_object[depth]; break;
        case ':': expect = 1; break;
        default:
            if (c == '-' || (c >= '0' && c <= '9')) {
                size_t n = number_len(sc->buf + i, sc->len - i);
                if (n > JSON_MAX_NUMBER_LEN)
                    return pelab_fail("byte %zu: number literal longer than %d characters", i, JSON_MAX_NUMBER_LEN);
                sc->text_bytes += n + 1;
                i += n - 1;
            }
        }
    }
    return 0;
}

typedef struct {
    const Scan *sc;
    JsonNode *nodes;
    size_t next;
    char *text;
} Build;

/* jansson's value v, the next one in document order, as a node; NULL if the scan disagrees */
static JsonNode *build(Build *b, json_t *v, const char *key) {
    if (b->next == b->sc->n) return NULL;
    JsonNode *node = &b->nodes[b->next];
    memset(node, 0, sizeof *node);
    node->offset = b->sc->starts[b->next++];
    node->key = key;
    JsonNode **tail = &node->child;
    switch (json_typeof(v)) {
    case JANSSON_OBJECT: {
        node->type = JSON_OBJECT;
        const char *k;
        json_t *member;
        /* jansson keeps members in insertion order (since 2.8), which is document order here */
        json_object_foreach(v, k, member) {
            if (!(*tail = build(b, member, k))) return NULL;
            tail = &(*tail)->next;
            node->n_children++;
        }
        break;
    }
    case JANSSON_ARRAY:
        node->type = JSON_ARRAY;
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (!(*tail = build(b, json_array_get(v, i), NULL))) return NULL;
            tail = &(*tail)->next;
            node->n_children++;
        }
        break;
    case JANSSON_STRING:
        node->type = JSON_STRING;
        node->str = json_string_value(v);
        node->str_len = json_string_length(v);
        break;
    case JANSSON_REAL: {
        /* the literal as written, from the input (jansson keeps only the value); integers as
         * before: no fraction or exponent, and in range of long long */
        node->type = JSON_NUMBER;
        node->number = json_real_value(v);
        size_t n = number_len(b->sc->buf + node->offset, b->sc->len - node->offset);
        memcpy(b->text, b->sc->buf + node->offset, n);
        b->text[n] = 0;
        node->str = b->text;
        node->str_len = n;
        b->text += n + 1;
        if (!strpbrk(node->str, ".eE")) {
            errno = 0;
            node->int_value = strtoll(node->str, NULL, 10);
            node->is_int = errno == 0;
        }
        break;
    }
    case JANSSON_TRUE: node->type = JSON_TRUE; break;
    case JANSSON_FALSE: node->type = JSON_FALSE; break;
    default: node->type = JSON_NULL; break;
    }
    return node;
}

int json_parse(JsonDoc *doc, const char *buf, size_t len) { return json_parse_max(doc, buf, len, JSON_MAX_VALUES); }

int json_parse_max(JsonDoc *doc, const char *buf, size_t len, size_t max_values) {
    memset(doc, 0, sizeof *doc);
    Scan sc = {.buf = (const unsigned char *)buf, .len = len, .max_values = max_values};
    if (prescan(&sc) != 0) {
        free(sc.starts);
        return -1;
    }
    /* DECODE_ANY: any root value. INT_AS_REAL: integers past long long stay numbers, as RFC 8259
     * allows (jansson would refuse them); is_int and int_value come from the literal instead. */
    json_error_t err;
    json_t *tree = json_loadb(buf ? buf : "", len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL,
                              &err);
    if (!tree) {
        free(sc.starts);
        for (char *c = err.text; *c; c++) /* one line, whatever jansson quotes from the input */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        /* position counts the bytes jansson read: the last one is where the problem shows */
        return pelab_fail("byte %d: %s", err.position > 0 ? err.position - 1 : 0, err.text);
    }
    Store *st = xmalloc(sizeof *st + sc.n * sizeof(JsonNode) + sc.text_bytes);
    st->tree = tree;
    Build b = {&sc, st->nodes, 0, (char *)(st->nodes + sc.n)};
    doc->arena = st;
    doc->root = build(&b, tree, NULL);
    free(sc.starts);
    if (!doc->root || b.next != sc.n) {
        json_free(doc);
        return pelab_fail("byte 0: internal error: the pre-scan and jansson disagree on the values");
    }
    return 0;
}

void json_free(JsonDoc *doc) {
    Store *st = doc->arena;
    if (st) json_decref(st->tree);
    free(st);
    doc->arena = NULL;
    doc->root = NULL;
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

/* jansson's own check: json_stringn refuses invalid UTF-8 (overlong forms, surrogates, past U+10FFFF) */
int json_utf8_valid(const char *s, size_t n) {
    json_t *j = json_stringn(s ? s : "", n);
    if (!j) return 0;
    json_decref(j);
    return 1;
}
