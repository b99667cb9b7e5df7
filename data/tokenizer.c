#include "tokenizer.h"

#include <string.h>

#include "../model/util.h"

int tokenizer_init(Tokenizer *t, const char *name, int model_vocab) {
    memset(t, 0, sizeof *t);
    if (name && strcmp(name, "byte") != 0)
        return pelab_fail("tokenizer '%s': unknown (this build knows: byte)", name);
    if (model_vocab < 256) return pelab_fail("byte tokenizer needs a vocabulary of 256, the model has %d", model_vocab);
    t->kind = TOK_BYTE;
    t->vocab_size = 256;
    return 0;
}

size_t tokenizer_encode(const Tokenizer *t, const char *text, size_t n, int *ids) {
    (void)t;
    for (size_t i = 0; i < n; i++) ids[i] = (unsigned char)text[i];
    return n;
}

size_t tokenizer_decode(const Tokenizer *t, int id, char *out) {
    (void)t;
    if (id < 0 || id > 255) return 0; /* ids a byte model never emits */
    out[0] = (char)id;
    return 1;
}
