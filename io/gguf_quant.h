/* gguf_quant.h: the ggml tensor types pelab reads and writes in GGUF files, as ggml lays them out
 * (ggml-common.h), each to and from float32:
 *   F32   4 bytes an element
 *   F16   IEEE binary16 (round to nearest even)
 *   BF16  the top half of a float32 (round to nearest even; model/bf16.h)
 *   Q8_0  blocks of 32: fp16 scale d, 32 int8 q; x = d q. Written as ggml's reference quantizer:
 *         d = max|x| / 127, q = roundf(x / d) with the unrounded d, d stored as fp16
 *   Q4_0  blocks of 32: fp16 scale d, 16 bytes; byte j holds q_j (low nibble) and q_{j+16} (high),
 *         x = d (q - 8).
 * and read only (ggml's dequantize_row_*, the same float operations in the same order; every
 * product of an fp16 scale and the small integers below is exact in float32, so a fused
 * multiply-add computes the same bits):
 *   Q4_1  blocks of 32: fp16 d, fp16 m, 16 bytes of nibbles as Q4_0; x = q d + m
 *   Q5_0  blocks of 32: fp16 d, 4 bytes qh, 16 bytes qs; q_j = low nibble of qs[j] | bit j of qh << 4,
 *         q_{j+16} = high nibble of qs[j] | bit j+16 of qh << 4 (qh little-endian); x = (q - 16) d
 *   Q5_1  blocks of 32: fp16 d, fp16 m, qh, qs as Q5_0; x = q d + m
 *   K-quants, super-blocks of 256 elements:
 *   Q2_K  84 bytes: scales[16] (low nibble the scale, high the min of a group of 16), qs[64], fp16 d,
 *         fp16 dmin. Each half of 128 reads qs[32 h .. 32 h + 31]: group pair k (0..3) takes bits
 *         2k..2k+1 of bytes 0..15 then of bytes 16..31; x = (d sc) q - (dmin m)
 *   Q3_K  110 bytes: hmask[32], qs[64], scales[12] (16 6-bit scales s: scale i's low 4 bits the low
 *         nibble of byte i, for i >= 8 the high nibble of byte i - 8; its top 2 bits bits 2(i/4)..+1
 *         of byte 8 + i%4), fp16 d. Low 2 bits of q as Q2_K; the high bit is bit
 *         (4 h + k) of hmask[l], set meaning +0, clear -4; x = (d (s - 32)) (q - 4 [bit clear])
 *   Q4_K  144 bytes: fp16 d, fp16 dmin, scales[12] (eight 6-bit scales and eight 6-bit mins),
 *         qs[128]: each 64 elements read 32 bytes, low nibbles (scale 2i) then high (2i+1);
 *         x = (d sc) q - (dmin m)
 *   Q5_K  176 bytes: d, dmin, scales[12] as Q4_K, qh[32], qs[128]; the fifth bit of element l of
 *         sub-block s is bit s of qh[l]; x = (d sc) q - (dmin m)
 *   Q6_K  210 bytes: ql[128], qh[64], int8 scales[16], fp16 d; per half of 128 (ql 64 bytes,
 *         qh 32, scales 8): element l + 32 k (k 0..3) is (nibble of ql) | (bits 2k..2k+1 of qh[l]) << 4,
 *         minus 32; x = (d s) q */
#ifndef PELAB_GGUF_QUANT_H
#define PELAB_GGUF_QUANT_H

#include <stddef.h>
#include <stdint.h>

enum {
    GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1, GGML_TYPE_Q4_0 = 2, GGML_TYPE_Q4_1 = 3, GGML_TYPE_Q5_0 = 6, GGML_TYPE_Q5_1 = 7,
    GGML_TYPE_Q8_0 = 8, GGML_TYPE_Q2_K = 10, GGML_TYPE_Q3_K = 11, GGML_TYPE_Q4_K = 12, GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14, GGML_TYPE_BF16 = 30
};
enum { GGML_QK = 32, GGML_QK_K = 256 }; /* elements of a Q4_0..Q8_0 block, of a K-quant super-block */

/* ggml's name of a type ("Q4_K" too, for messages), "?" when unknown to ggml */
const char *ggml_type_name(uint32_t type);
/* 1 for the types above */
int ggml_type_known(uint32_t type);
/* elements of a block (1, 32 or 256) and bytes of a block, of a known type */
int ggml_block_size(uint32_t type);
int ggml_block_bytes(uint32_t type);
/* the fewest bytes a weight of any known type takes (Q2_K's 84 a block of 256) */
double ggml_min_bytes_per_weight(void);

/* n elements (a multiple of the block size) of src decoded into dst */
void ggml_decode(uint32_t type, const unsigned char *src, size_t n, float *dst);
/* n floats (a multiple of the block size) encoded as type into dst (ggml_block_bytes per block);
 * -1 with *bad the first element the type cannot hold (an fp16 value or scale past 65504), else 0 */
int ggml_encode(uint32_t type, const float *src, size_t n, unsigned char *dst, size_t *bad);

#endif
