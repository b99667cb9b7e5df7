/* json.h: a strict JSON parser (RFC 8259) for safetensors headers (io/checkpoint.c) and LongRoPE's
 * factor files (model/pos/rope_scaling.c): in core/ so the position schemes may read them. jansson
 * parses (core/json.c); this API turns its result into a tree of nodes owned by a JsonDoc: the input
 * is never read past its length and need not be NUL-terminated; nesting is bounded by
 * JSON_MAX_DEPTH; anything after the root value other than whitespace is an error; strings must
 * be valid UTF-8 and are decoded (escapes, \uXXXX with surrogate pairs) to NUL-terminated copies.
 * \u0000 is rejected so every decoded string is a plain C string. Duplicate object keys are an
 * error. Numbers past a double's range (1e999) are errors; integers past long long are numbers
 * without is_int. Limits (depth, values, number length) are errors like any other, checked
 * before jansson reads the input.
 * Errors: -1 and one line in pelab_errmsg, "byte N: <problem>", N counted from the buffer start
 * (for jansson's errors, the last byte it read: the problem ends there). */
#ifndef PELAB_JSON_H
#define PELAB_JSON_H

#include <stddef.h>

#define JSON_MAX_DEPTH 64
/* Memory is bounded by the input, not amplified by it: at most JSON_MAX_VALUES values (a real
 * checkpoint header has a few hundred), counted before jansson allocates (which, left alone, takes
 * ~2 GB for 100 MB of "0,"), and number literals of at most JSON_MAX_NUMBER_LEN characters. At the
 * cap a 16 MB document of short strings peaks at ~80 MB over its input (nodes ~100 bytes each,
 * jansson's tree, the strings); one long string at ~2x its length. */
#define JSON_MAX_VALUES (1 << 18)
#define JSON_MAX_NUMBER_LEN 64

typedef enum { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

typedef struct JsonNode JsonNode;
struct JsonNode {
    JsonType type;
    size_t offset;       /* byte offset of the value in the input, for error messages */
    const char *key;     /* member of an object: its decoded key; else NULL */
    JsonNode *next;      /* next element / member of the parent */
    /* JSON_STRING: decoded text; JSON_NUMBER: the literal as written */
    const char *str;
    size_t str_len;
    double number;       /* JSON_NUMBER */
    int is_int;          /* JSON_NUMBER with no fraction/exponent that fits in long long */
    long long int_value; /* valid when is_int */
    JsonNode *child;     /* JSON_ARRAY / JSON_OBJECT: first element / member */
    size_t n_children;
};

typedef struct {
    JsonNode *root;
    void *arena; /* private: the nodes, number literals and jansson's tree (the strings) */
} JsonDoc;

int json_parse(JsonDoc *doc, const char *buf, size_t len);
/* the same with another cap on the number of values (a tokenizer.json holds ~10^5-10^6) */
int json_parse_max(JsonDoc *doc, const char *buf, size_t len, size_t max_values);
void json_free(JsonDoc *doc);

/* object member by key; NULL if absent or obj is not an object */
const JsonNode *json_get(const JsonNode *obj, const char *key);
/* array element i; NULL if out of range or arr is not an array */
const JsonNode *json_at(const JsonNode *arr, size_t i);
/* 1 if s[0..n) is valid UTF-8 (the rule strings are held to), else 0; for writers */
int json_utf8_valid(const char *s, size_t n);
/* "object", "string", ... for messages */
const char *json_type_name(JsonType t);

#endif
