/* hash.h: FNV-1a, 64 bit (fingerprints of data files and tokenizers in checkpoints). */
#ifndef PELAB_HASH_H
#define PELAB_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t fnv1a64(const void *data, size_t n, uint64_t h);

#endif
