/* gguf_quant.c: ggml tensor types to and from float32 (see gguf_quant.h). */
#include "gguf_quant.h"

#include <math.h>
#include <string.h>

#include "../core/fp16.h"
#include "../model/bf16.h"

static const char *const TYPE_NAMES[] = {
    "F32", "F16", "Q4_0", "Q4_1", "?", "?", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
    "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64",
    "F64", "IQ1_M", "BF16", "?", "?", "?", "TQ1_0", "TQ2_0", "?", "?", "?", "MXFP4", "NVFP4", "Q1_0", "Q2_0"};

const char *ggml_type_name(uint32_t type) {
    return type < sizeof TYPE_NAMES / sizeof TYPE_NAMES[0] ? TYPE_NAMES[type] : "?";
}

int ggml_type_known(uint32_t type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 || type == GGML_TYPE_Q8_0 ||
           type == GGML_TYPE_Q4_0;
}

int ggml_block_size(uint32_t type) { return type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q4_0 ? GGML_QK : 1; }

int ggml_block_bytes(uint32_t type) {
    switch (type) {
    case GGML_TYPE_F32: return 4;
    case GGML_TYPE_Q8_0: return 2 + GGML_QK;
    case GGML_TYPE_Q4_0: return 2 + GGML_QK / 2;
    default: return 2; /* F16, BF16 */
    }
}

static void decode_q8_0(const unsigned char *b, float *y) {
    float d = fp16_to_float((uint16_t)(b[0] | b[1] << 8));
    for (int j = 0; j < GGML_QK; j++) y[j] = (float)(int8_t)b[2 + j] * d;
}

static void decode_q4_0(const unsigned char *b, float *y) {
    float d = fp16_to_float((uint16_t)(b[0] | b[1] << 8));
    for (int j = 0; j < GGML_QK / 2; j++) {
        y[j] = (float)((b[2 + j] & 0x0f) - 8) * d;
        y[j + GGML_QK / 2] = (float)((b[2 + j] >> 4) - 8) * d;
    }
}

void ggml_decode(uint32_t type, const unsigned char *src, size_t n, float *dst) {
    switch (type) {
    case GGML_TYPE_F32: memcpy(dst, src, n * sizeof(float)); break;
    case GGML_TYPE_F16:
        for (size_t i = 0; i < n; i++) dst[i] = fp16_to_float((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
        break;
    case GGML_TYPE_BF16:
        for (size_t i = 0; i < n; i++) dst[i] = bf16_to_float((bf16)(src[2 * i] | src[2 * i + 1] << 8));
        break;
    case GGML_TYPE_Q8_0:
        for (size_t i = 0; i < n / GGML_QK; i++) decode_q8_0(src + i * (2 + GGML_QK), dst + i * GGML_QK);
        break;
    case GGML_TYPE_Q4_0:
        for (size_t i = 0; i < n / GGML_QK; i++) decode_q4_0(src + i * (2 + GGML_QK / 2), dst + i * GGML_QK);
        break;
    }
}

static void put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }

/* ggml's quantize_row_q8_0_ref: -1 when the scale does not fit an fp16 */
static int encode_q8_0(const float *x, unsigned char *b) {
    float amax = 0;
    for (int j = 0; j < GGML_QK; j++) amax = fmaxf(amax, fabsf(x[j]));
    float d = amax / 127, id = d != 0 ? 1.0f / d : 0.0f;
    uint16_t dh = fp16_from_float(d);
    if ((dh & 0x7c00) == 0x7c00) return -1;
    put16(b, dh);
    for (int j = 0; j < GGML_QK; j++) b[2 + j] = (unsigned char)(int8_t)roundf(x[j] * id);
    return 0;
}

int ggml_encode(uint32_t type, const float *src, size_t n, unsigned char *dst, size_t *bad) {
    switch (type) {
    case GGML_TYPE_F32: memcpy(dst, src, n * sizeof(float)); return 0;
    case GGML_TYPE_BF16:
        for (size_t i = 0; i < n; i++) put16(dst + 2 * i, bf16_from_float(src[i]));
        return 0;
    case GGML_TYPE_F16:
        for (size_t i = 0; i < n; i++) {
            uint16_t h = fp16_from_float(src[i]);
            if ((h & 0x7c00) == 0x7c00 && isfinite(src[i])) return *bad = i, -1;
            put16(dst + 2 * i, h);
        }
        return 0;
    case GGML_TYPE_Q8_0:
        for (size_t i = 0; i < n / GGML_QK; i++)
            if (encode_q8_0(src + i * GGML_QK, dst + i * (2 + GGML_QK)) != 0) return *bad = i * GGML_QK, -1;
        return 0;
    }
    return *bad = 0, -1; /* Q4_0 is read only */
}
