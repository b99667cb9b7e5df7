/* hash.h: FNV-1a, 64 bit (fingerprints of data files and tokenizers in checkpoints), and SHA-256
 * (FIPS 180-4: the checksums of the corpora shipped in data/corpora). */
#ifndef PELAB_HASH_H
#define PELAB_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t fnv1a64(const void *data, size_t n, uint64_t h);

/* SHA-256 of n bytes as 64 lowercase hex digits and a NUL, into hex[65] */
void sha256_hex(const void *data, size_t n, char hex[65]);

#endif
