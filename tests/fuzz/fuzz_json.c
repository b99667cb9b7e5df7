/* fuzz_json.c: core/json.c's strict parser (json_parse) on arbitrary bytes, and a walk of every
 * tree it returns checking json.h's promises: child counts, member keys, NUL-terminated strings of
 * the stated length holding valid UTF-8 and no NUL, offsets inside the input, json_get/json_at. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/json.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

static void walk(const JsonNode *n, size_t input_len, int depth) {
    FUZZ_CHECK(depth <= JSON_MAX_DEPTH + 1, "depth %d past the limit", depth);
    FUZZ_CHECK(n->offset < input_len, "offset %zu outside the %zu-byte input", n->offset, input_len);
    (void)json_type_name(n->type);
    switch (n->type) {
    case JSON_STRING:
        FUZZ_CHECK(n->str && strlen(n->str) == n->str_len, "string length %zu", n->str_len);
        FUZZ_CHECK(json_utf8_valid(n->str, n->str_len), "decoded string is not UTF-8");
        break;
    case JSON_NUMBER:
        FUZZ_CHECK(n->str && n->str_len > 0, "number without its literal");
        if (n->is_int) FUZZ_CHECK((double)n->int_value == n->number, "int %lld vs %.17g", n->int_value, n->number);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        size_t count = 0;
        for (const JsonNode *c = n->child; c; c = c->next, count++) {
            if (n->type == JSON_OBJECT) {
                FUZZ_CHECK(c->key != NULL, "object member without a key");
                FUZZ_CHECK(json_utf8_valid(c->key, strlen(c->key)), "key is not UTF-8");
                FUZZ_CHECK(json_get(n, c->key) != NULL, "json_get misses key");
            } else {
                FUZZ_CHECK(c->key == NULL, "array element with a key");
                FUZZ_CHECK(json_at(n, count) == c, "json_at(%zu) is not the %zu-th element", count, count);
            }
            walk(c, input_len, depth + 1);
        }
        FUZZ_CHECK(count == n->n_children, "%zu children, n_children %zu", count, n->n_children);
        FUZZ_CHECK(json_at(n, count) == NULL, "json_at past the end");
        break;
    }
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* an exact-size copy, so ASan sees any read past the length (the parser never gets a NUL) */
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    JsonDoc doc;
    if (json_parse(&doc, buf, size) == 0) {
        FUZZ_CHECK(doc.root != NULL, "no root");
        walk(doc.root, size, 0);
        json_free(&doc);
    } else {
        FUZZ_CHECK(strncmp(pelab_errmsg, "byte ", 5) == 0, "error message '%s' does not start with a byte offset",
                   pelab_errmsg);
    }
    (void)json_utf8_valid(buf, size);
    free(buf);
    return 0;
}
