/* corpus.c: the shipped corpora and their checks (corpus.h). */
#include "corpus.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/hash.h"

const ShippedCorpus shipped_corpora[] = {
    {"tinyshakespeare", "tinyshakespeare.txt", 1115394, "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
     "karpathy/char-rnn data/tinyshakespeare/input.txt; the text is public domain"},
};
const int n_shipped_corpora = sizeof shipped_corpora / sizeof shipped_corpora[0];

const ShippedCorpus *corpus_shipped(const char *path) {
    const char *base = strrchr(path, '/');
    if (!base || base - path < 7 || strncmp(base - 7, "corpora", 7) != 0) return NULL;
    if (base - path > 7 && base[-8] != '/') return NULL; /* "mycorpora/" is not the folder */
    for (int i = 0; i < n_shipped_corpora; i++)
        if (strcmp(base + 1, shipped_corpora[i].file) == 0) return &shipped_corpora[i];
    return NULL;
}

int corpus_verify(const char *path, const unsigned char *bytes, size_t n) {
    const ShippedCorpus *c = corpus_shipped(path);
    if (!c) return 0;
    char hex[65];
    sha256_hex(bytes, n, hex);
    if (n == c->bytes && strcmp(hex, c->sha256) == 0) return 0;
    return pelab_fail("%s: the shipped %s corpus is damaged or truncated: %zu bytes with SHA-256 %.16s..., expected %zu "
                      "bytes with SHA-256 %s (restore it: git checkout -- %s/%s)",
                      path, c->name, n, hex, c->bytes, c->sha256, CORPUS_DIR, c->file);
}

int corpus_read_file(const char *path, unsigned char **out, size_t *out_len) {
    if (read_file(path, out, out_len) != 0) return -1;
    if (corpus_verify(path, *out, *out_len) == 0) return 0;
    free(*out);
    *out = NULL;
    return -1;
}
