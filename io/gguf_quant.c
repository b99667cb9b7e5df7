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

/* per type: elements and bytes of a block; 0 for a type pelab does not read */
static const struct {
    uint32_t type;
    int size, bytes;
} BLOCKS[] = {{GGML_TYPE_F32, 1, 4},         {GGML_TYPE_F16, 1, 2},          {GGML_TYPE_BF16, 1, 2},
              {GGML_TYPE_Q4_0, GGML_QK, 18},  {GGML_TYPE_Q4_1, GGML_QK, 20},  {GGML_TYPE_Q5_0, GGML_QK, 22},
              {GGML_TYPE_Q5_1, GGML_QK, 24},  {GGML_TYPE_Q8_0, GGML_QK, 34},  {GGML_TYPE_Q2_K, GGML_QK_K, 84},
              {GGML_TYPE_Q3_K, GGML_QK_K, 110}, {GGML_TYPE_Q4_K, GGML_QK_K, 144}, {GGML_TYPE_Q5_K, GGML_QK_K, 176},
              {GGML_TYPE_Q6_K, GGML_QK_K, 210}};
enum { N_BLOCKS = sizeof BLOCKS / sizeof BLOCKS[0] };

static int block_index(uint32_t type) {
    for (int i = 0; i < N_BLOCKS; i++)
        if (BLOCKS[i].type == type) return i;
    return -1;
}

int ggml_type_known(uint32_t type) { return block_index(type) >= 0; }

int ggml_block_size(uint32_t type) {
    int i = block_index(type);
    return i < 0 ? 1 : BLOCKS[i].size;
}

int ggml_block_bytes(uint32_t type) {
    int i = block_index(type);
    return i < 0 ? 2 : BLOCKS[i].bytes;
}

double ggml_min_bytes_per_weight(void) {
    double least = 4;
    /* a compare, not fmin: gcc 12's aarch64 vectorizer crashes on an fmin reduction over doubles
     * ("internal compiler error: in vect_transform_reduction"; tests/test.h's worse() is the same form) */
    for (int i = 0; i < N_BLOCKS; i++) {
        double per_weight = (double)BLOCKS[i].bytes / BLOCKS[i].size;
        least = per_weight >= least || least != least ? least : per_weight;
    }
    return least;
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

static float half_at(const unsigned char *p) { return fp16_to_float((uint16_t)(p[0] | p[1] << 8)); }

/* d, m, 16 bytes: x = q d + m */
static void decode_q4_1(const unsigned char *b, float *y) {
    float d = half_at(b), m = half_at(b + 2);
    for (int j = 0; j < GGML_QK / 2; j++) {
        y[j] = (float)(b[4 + j] & 0x0f) * d + m;
        y[j + GGML_QK / 2] = (float)(b[4 + j] >> 4) * d + m;
    }
}

/* the fifth bits of a Q5 block: element j's is bit j of the little-endian qh */
static uint32_t qh_at(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* d, qh, qs: x = (q - 16) d */
static void decode_q5_0(const unsigned char *b, float *y) {
    float d = half_at(b);
    uint32_t qh = qh_at(b + 2);
    for (int j = 0; j < GGML_QK / 2; j++) {
        int lo = (int)((b[6 + j] & 0x0f) | ((qh >> j) & 1) << 4), hi = (int)((b[6 + j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
        y[j] = (float)(lo - 16) * d;
        y[j + GGML_QK / 2] = (float)(hi - 16) * d;
    }
}

/* d, m, qh, qs: x = q d + m */
static void decode_q5_1(const unsigned char *b, float *y) {
    float d = half_at(b), m = half_at(b + 2);
    uint32_t qh = qh_at(b + 4);
    for (int j = 0; j < GGML_QK / 2; j++) {
        int lo = (int)((b[8 + j] & 0x0f) | ((qh >> j) & 1) << 4), hi = (int)((b[8 + j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
        y[j] = (float)lo * d + m;
        y[j + GGML_QK / 2] = (float)hi * d + m;
    }
}

/* scales[16], qs[64], d, dmin */
static void decode_q2_k(const unsigned char *b, float *y) {
    const unsigned char *sc = b, *q = b + 16;
    float d = half_at(b + 80), dmin = half_at(b + 82);
    for (int h = 0; h < 2; h++, q += 32)
        for (int k = 0; k < 4; k++)
            for (int part = 0; part < 2; part++) {
                int s = *sc++;
                float dl = d * (float)(s & 0x0f), ml = dmin * (float)(s >> 4);
                for (int l = 0; l < 16; l++) *y++ = dl * (float)((q[16 * part + l] >> (2 * k)) & 3) - ml;
            }
}

/* hmask[32], qs[64], scales[12], d */
static void decode_q3_k(const unsigned char *b, float *y) {
    const unsigned char *hm = b, *q = b + 32, *packed = b + 96;
    float d = half_at(b + 108);
    int s[16];
    for (int i = 0; i < 16; i++) {
        int low = i < 8 ? packed[i] & 0x0f : packed[i - 8] >> 4, top = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
        s[i] = (low | top << 4) - 32;
    }
    const int *sc = s;
    for (int h = 0; h < 2; h++, q += 32)
        for (int k = 0; k < 4; k++)
            for (int part = 0; part < 2; part++) {
                float dl = d * (float)*sc++;
                for (int l = 0; l < 16; l++) {
                    int lq = 16 * part + l, bit = 4 * h + k;
                    int v = ((q[lq] >> (2 * k)) & 3) - (hm[lq] >> bit & 1 ? 0 : 4);
                    *y++ = dl * (float)v;
                }
            }
}

/* the 6-bit scale and min of sub-block j (0..7) of a Q4_K or Q5_K super-block */
static void scale_min_k4(const unsigned char *p, int j, int *sc, int *m) {
    if (j < 4) {
        *sc = p[j] & 63, *m = p[j + 4] & 63;
    } else {
        *sc = (p[j + 4] & 0x0f) | (p[j - 4] >> 6) << 4;
        *m = (p[j + 4] >> 4) | (p[j] >> 6) << 4;
    }
}

/* Q4_K and Q5_K: d, dmin, scales[12], then qs[128] (Q5_K: qh[32] before it, NULL for Q4_K); each 64
 * elements read 32 bytes of qs, low nibbles (sub-block j) then high (j + 1); the fifth bit of
 * element l of sub-block j is bit j of qh[l]. Inlined into each type's decoder (qh a constant) */
static inline void decode_k45(const unsigned char *b, const unsigned char *qh, const unsigned char *q, float *y) {
    float d = half_at(b), dmin = half_at(b + 2);
    for (int j = 0; j < 8; j += 2, q += 32) {
        int sc, m;
        scale_min_k4(b + 4, j, &sc, &m);
        float d1 = d * (float)sc, m1 = dmin * (float)m;
        scale_min_k4(b + 4, j + 1, &sc, &m);
        float d2 = d * (float)sc, m2 = dmin * (float)m;
        for (int l = 0; l < 32; l++) *y++ = d1 * (float)((q[l] & 0x0f) | (qh ? (qh[l] >> j & 1) << 4 : 0)) - m1;
        for (int l = 0; l < 32; l++) *y++ = d2 * (float)((q[l] >> 4) | (qh ? (qh[l] >> (j + 1) & 1) << 4 : 0)) - m2;
    }
}

static void decode_q4_k(const unsigned char *b, float *y) { decode_k45(b, NULL, b + 16, y); }
static void decode_q5_k(const unsigned char *b, float *y) { decode_k45(b, b + 16, b + 48, y); }

/* ql[128], qh[64], int8 scales[16], d: x = (d s) q, in that order (d s q can round). Per half of
 * 128: element l + 32 k takes nibble k / 2 of ql[l + 32 (k % 2)] and bits 2k..2k+1 of qh[l]; each
 * run of 16 one scale (d s computed once, as ggml's d * sc * q multiplies it first) */
static void decode_q6_k(const unsigned char *b, float *y) {
    float d = half_at(b + 208);
    const unsigned char *ql = b, *qh = b + 128;
    const signed char *sc = (const signed char *)(b + 192);
    for (int h = 0; h < 2; h++, y += 128, ql += 64, qh += 32, sc += 8)
        for (int k = 0; k < 4; k++)
            for (int part = 0; part < 2; part++) {
                float ds = d * (float)sc[part + 2 * k];
                const unsigned char *lo = ql + 32 * (k % 2) + 16 * part, *hi = qh + 16 * part;
                float *out = y + 32 * k + 16 * part;
                for (int l = 0; l < 16; l++)
                    out[l] = ds * (float)((int)(((lo[l] >> (4 * (k / 2))) & 0x0f) | ((hi[l] >> (2 * k)) & 3) << 4) - 32);
            }
}

typedef void (*BlockDecoder)(const unsigned char *, float *);

static BlockDecoder block_decoder(uint32_t type) {
    switch (type) {
    case GGML_TYPE_Q4_0: return decode_q4_0;
    case GGML_TYPE_Q4_1: return decode_q4_1;
    case GGML_TYPE_Q5_0: return decode_q5_0;
    case GGML_TYPE_Q5_1: return decode_q5_1;
    case GGML_TYPE_Q8_0: return decode_q8_0;
    case GGML_TYPE_Q2_K: return decode_q2_k;
    case GGML_TYPE_Q3_K: return decode_q3_k;
    case GGML_TYPE_Q4_K: return decode_q4_k;
    case GGML_TYPE_Q5_K: return decode_q5_k;
    case GGML_TYPE_Q6_K: return decode_q6_k;
    }
    return NULL;
}

void ggml_decode(uint32_t type, const unsigned char *src, size_t n, float *dst) {
    BlockDecoder f = block_decoder(type);
    if (f) {
        size_t size = (size_t)ggml_block_size(type), bytes = (size_t)ggml_block_bytes(type);
        for (size_t i = 0; i < n / size; i++) f(src + i * bytes, dst + i * size);
        return;
    }
    switch (type) {
    case GGML_TYPE_F32: memcpy(dst, src, n * sizeof(float)); break;
    case GGML_TYPE_F16:
        for (size_t i = 0; i < n; i++) dst[i] = fp16_to_float((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
        break;
    case GGML_TYPE_BF16:
        for (size_t i = 0; i < n; i++) dst[i] = bf16_to_float((bf16)(src[2 * i] | src[2 * i + 1] << 8));
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
    return *bad = 0, -1; /* the others are read only */
}
