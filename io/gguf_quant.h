/* gguf_quant.h: the ggml tensor types pelab reads and writes in GGUF files, as ggml lays them out
 * (ggml-common.h), each to and from float32:
 *   F32   4 bytes an element
 *   F16   IEEE binary16 (round to nearest even)
 *   BF16  the top half of a float32 (round to nearest even; model/bf16.h)
 *   Q8_0  blocks of 32: fp16 scale d, 32 int8 q; x = d q. Written as ggml's reference quantizer:
 *         d = max|x| / 127, q = roundf(x / d) with the unrounded d, d stored as fp16
 *   Q4_0  blocks of 32: fp16 scale d, 16 bytes; byte j holds q_j (low nibble) and q_{j+16} (high),
 *         x = d (q - 8). Read only. */
#ifndef PELAB_GGUF_QUANT_H
#define PELAB_GGUF_QUANT_H

#include <stddef.h>
#include <stdint.h>

enum { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2, GGML_TYPE_Q8_0 = 8, GGML_TYPE_BF16 = 30 };
enum { GGML_QK = 32 }; /* elements of a Q8_0 or Q4_0 block */

/* ggml's name of a type ("Q4_K" too, for messages), "?" when unknown to ggml */
const char *ggml_type_name(uint32_t type);
/* 1 for the five types above */
int ggml_type_known(uint32_t type);
/* elements of a block (1 or 32) and bytes of a block, of a known type */
int ggml_block_size(uint32_t type);
int ggml_block_bytes(uint32_t type);

/* n elements (a multiple of the block size) of src decoded into dst */
void ggml_decode(uint32_t type, const unsigned char *src, size_t n, float *dst);
/* n floats (a multiple of the block size) encoded as type into dst (ggml_block_bytes per block);
 * -1 with *bad the first element the type cannot hold (an fp16 value or scale past 65504), else 0 */
int ggml_encode(uint32_t type, const float *src, size_t n, unsigned char *dst, size_t *bad);

#endif
