/* corpus.h: the corpora shipped in the repository (data/corpora/, README there) and their
 * checksums. A file whose path ends in corpora/NAME of a shipped corpus is checked against its
 * size and SHA-256 when it is read as text: a damaged or truncated copy is an error naming the
 * file and the expected checksum, never a silently different corpus. */
#ifndef PELAB_CORPUS_H
#define PELAB_CORPUS_H

#include <stddef.h>

typedef struct {
    const char *name;   /* "tinyshakespeare" */
    const char *file;   /* its file in data/corpora/ */
    size_t bytes;
    const char *sha256; /* 64 lowercase hex digits */
    const char *source; /* where it comes from and its licence, one line */
} ShippedCorpus;

/* the shipped corpora, n_shipped_corpora of them; the first is the default of `pelab suite`'s lm */
extern const ShippedCorpus shipped_corpora[];
extern const int n_shipped_corpora;
/* the path of a shipped corpus relative to the repository root ("data/corpora/FILE") */
#define CORPUS_DIR "data/corpora"

/* the shipped corpus that path names (its last two components are corpora/FILE), or NULL */
const ShippedCorpus *corpus_shipped(const char *path);
/* 0 if path is not a shipped corpus or bytes are its exact content; -1 with one line naming the
 * file, what was read and the expected size and SHA-256 */
int corpus_verify(const char *path, const unsigned char *bytes, size_t n);
/* read_file (core/files.h) and corpus_verify: the reader of every text a command trains on or
 * scores; -1 with one line (the bytes freed) */
int corpus_read_file(const char *path, unsigned char **out, size_t *out_len);

#endif
