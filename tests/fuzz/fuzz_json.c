/* fuzz_json.c: core/json.c's strict parser (json_parse) on arbitrary bytes, and a walk of every
 * tree it returns checking json.h's promises: child counts, member keys, NUL-terminated strings of
 * the stated length holding valid UTF-8 and no NUL, offsets inside the input at the value's first
 * character, number literals that read back to the value, unique keys, json_get/json_at. The same
 * bytes then go through the Hugging Face config reader (io/hf_config.c) and its per-layer attention
 * pattern (io/hf_pattern.c), which must parse back to the layers it was read from. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/json.h"
#include "../../io/hf_config.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

static void walk(const JsonNode *n, const char *in, size_t input_len, int depth) {
    FUZZ_CHECK(depth < JSON_MAX_DEPTH, "depth %d past the limit", depth);
    FUZZ_CHECK(n->offset < input_len, "offset %zu outside the %zu-byte input", n->offset, input_len);
    /* the offset is where the value starts (json.c finds it apart from jansson's tree) */
    static const char first[] = "nft0\"[{";
    char c = in[n->offset];
    FUZZ_CHECK(n->type == JSON_NUMBER ? c == '-' || (c >= '0' && c <= '9') : c == first[n->type],
               "a %s at offset %zu starts with '%c'", json_type_name(n->type), n->offset, c);
    (void)json_type_name(n->type);
    switch (n->type) {
    case JSON_STRING:
        FUZZ_CHECK(n->str && strlen(n->str) == n->str_len, "string length %zu", n->str_len);
        FUZZ_CHECK(json_utf8_valid(n->str, n->str_len), "decoded string is not UTF-8");
        break;
    case JSON_NUMBER:
        FUZZ_CHECK(n->str && n->str_len > 0 && strlen(n->str) == n->str_len, "number without its literal");
        FUZZ_CHECK(strtod(n->str, NULL) == n->number, "literal %s vs %.17g", n->str, n->number);
        if (n->is_int) FUZZ_CHECK((double)n->int_value == n->number, "int %lld vs %.17g", n->int_value, n->number);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        size_t count = 0;
        for (const JsonNode *c = n->child; c; c = c->next, count++) {
            if (n->type == JSON_OBJECT) {
                FUZZ_CHECK(c->key != NULL, "object member without a key");
                FUZZ_CHECK(json_utf8_valid(c->key, strlen(c->key)), "key is not UTF-8");
                FUZZ_CHECK(json_get(n, c->key) == c, "json_get misses key or a duplicate key %s", c->key);
            } else {
                FUZZ_CHECK(c->key == NULL, "array element with a key");
                FUZZ_CHECK(json_at(n, count) == c, "json_at(%zu) is not the %zu-th element", count, count);
            }
            walk(c, in, input_len, depth + 1);
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
        walk(doc.root, buf, size, 0);
        json_free(&doc);
    } else {
        FUZZ_CHECK(strncmp(pelab_errmsg, "byte ", 5) == 0, "error message '%s' does not start with a byte offset",
                   pelab_errmsg);
    }
    (void)json_utf8_valid(buf, size);
    /* the same bytes as a Hugging Face config.json (io/hf_config.c): never a crash, an error in one
     * line; its per-layer attention (hf_pattern.c) an --attn-pattern that parses to the layers' kinds */
    static HfConfig c;
    if (hf_config_parse(buf, size, "fuzz-config", &c) == 0) {
        static LayerAttn layers[HF_MAX_LAYERS];
        char spec[PATTERN_SPEC_MAX + 1];
        int rc = hf_config_pattern(&c, spec, sizeof spec, layers);
        FUZZ_CHECK(rc >= -1 && rc <= 1, "hf_config_pattern returned %d", rc);
        if (rc == -1) FUZZ_CHECK(pelab_errmsg[0] && !strchr(pelab_errmsg, '\n'), "pattern refusal: '%s'", pelab_errmsg);
        if (rc == 1) {
            AttnPattern p;
            FUZZ_CHECK(pattern_parse(&p, spec) == 0 && p.n >= 1, "config pattern '%s' does not parse: %s", spec,
                       pelab_errmsg);
            int L = c.n_layers < HF_MAX_LAYERS ? (int)c.n_layers : HF_MAX_LAYERS;
            for (int l = 0; l < L && p.n; l++) {
                LayerAttn k = pattern_layer(&p, 0, l);
                FUZZ_CHECK(k.window == layers[l].window && k.chunk == layers[l].chunk && k.nope == layers[l].nope &&
                               k.base == layers[l].base,
                           "layer %d: the pattern '%s' is not the config's", l, spec);
            }
        }
    } else {
        FUZZ_CHECK(pelab_errmsg[0] && !strchr(pelab_errmsg, '\n'), "config refusal: '%s'", pelab_errmsg);
    }
    free(buf);
    return 0;
}
