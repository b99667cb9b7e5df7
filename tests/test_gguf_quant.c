/* test_gguf_quant.c: the ggml block types pelab reads only (io/gguf_quant.h): Q4_1, Q5_0, Q5_1 and
 * the K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
 *   - hand-made blocks of each, their values worked out here from the format (not by the decoder):
 *     known scales, mins and quants, a scale of 0, negative scales, the largest quants;
 *   - a GGUF end to end: a small llama model exported by pelab, its matrices rewritten as blocks of
 *     every type (seeded bytes, finite fp16 scales), imports, and each imported weight is its block's
 *     value (read back through an F32 export);
 *   - bytes-per-block in the size checks: a K-quant tensor cut short is refused;
 *   - with node-llama-cpp (PELAB_LLAMACPP_DIR: where `npm install node-llama-cpp@3.21.1` ran) and
 *     python3: ggml's own to_float (tools/ggml_to_float.py, ggml_get_type_traits through ctypes) is
 *     the oracle, bit for bit: blocks of seeded random bytes and blocks ggml's quantizer wrote, of
 *     every type; the end-to-end file's tensors; and files written by llama.cpp's own quantizer
 *     (tools/llamacpp_quantize.py: Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_M, Q4_K_M, Q5_K_M, Q6_K) import
 *     with every weight equal to ggml's dequantization of its tensor. Skipped with one message
 *     otherwise. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../io/checkpoint.h"
#include "../io/gguf.h"
#include "../io/gguf_llama.h"
#include "../io/gguf_quant.h"
#include "../model/model.h"
#include "test.h"

static const uint32_t NEW_TYPES[] = {GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q2_K,
                                     GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K};
enum { N_NEW = sizeof NEW_TYPES / sizeof NEW_TYPES[0] };

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int rc = fwrite(p, 1, n, f) == n ? 0 : -1;
    return fclose(f) != 0 ? -1 : rc;
}

static void put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }

/* how many of n values differ from want, as bits (a -0 equals 0 here: == ) */
static int differ(const float *got, const float *want, int n, int *first) {
    int bad = 0;
    *first = -1;
    for (int i = 0; i < n; i++)
        if (!(got[i] == want[i])) {
            if (*first < 0) *first = i;
            bad++;
        }
    return bad;
}

#define EXPECT_BLOCK(type, blk, want, n, what)                                                               \
    do {                                                                                                     \
        float got_[256];                                                                                     \
        int first_;                                                                                          \
        ggml_decode(type, blk, n, got_);                                                                     \
        int bad_ = differ(got_, want, n, &first_);                                                           \
        CHECK(bad_ == 0, "%s %s: %d of %d values differ, first %d: %g, expected %g", ggml_type_name(type), what, \
              bad_, n, first_, first_ >= 0 ? got_[first_] : 0.0, first_ >= 0 ? want[first_] : 0.0);         \
    } while (0)

/* ---- hand-made blocks ---- */

static void q4_1(void) {
    unsigned char b[20];
    float want[32];
    /* d 0.5 (fp16 0x3800), m -1 (0xbc00); byte j = (15 - j) << 4 | j: x_j = j/2 - 1, x_{j+16} = (15 - j)/2 - 1 */
    put16(b, 0x3800), put16(b + 2, 0xbc00);
    for (int j = 0; j < 16; j++) b[4 + j] = (unsigned char)((15 - j) << 4 | j);
    for (int j = 0; j < 16; j++) want[j] = 0.5f * (float)j - 1, want[j + 16] = 0.5f * (float)(15 - j) - 1;
    EXPECT_BLOCK(GGML_TYPE_Q4_1, b, want, 32, "nibbles 0..15 at d 0.5, m -1");
    /* scale 0: every value the min, 2.5 (0x4100) */
    put16(b, 0x0000), put16(b + 2, 0x4100);
    for (int j = 0; j < 32; j++) want[j] = 2.5f;
    EXPECT_BLOCK(GGML_TYPE_Q4_1, b, want, 32, "d 0: all m");
    /* negative d -2 (0xc000), m 0, every nibble 15: -30 */
    put16(b, 0xc000), put16(b + 2, 0x0000), memset(b + 4, 0xff, 16);
    for (int j = 0; j < 32; j++) want[j] = -30;
    EXPECT_BLOCK(GGML_TYPE_Q4_1, b, want, 32, "d -2, max nibbles");
}

static void q5(void) {
    unsigned char b[24];
    float want[32];
    /* Q5_0: d 0.25 (0x3400), qh 0xffff0000 (the fifth bit of elements 16..31), byte j = (15 - j) << 4 | j:
     * x_j = (j - 16)/4, x_{j+16} = ((15 - j) + 16 - 16)/4 */
    put16(b, 0x3400), b[2] = b[3] = 0x00, b[4] = b[5] = 0xff;
    for (int j = 0; j < 16; j++) b[6 + j] = (unsigned char)((15 - j) << 4 | j);
    for (int j = 0; j < 16; j++) want[j] = 0.25f * (float)(j - 16), want[j + 16] = 0.25f * (float)(15 - j);
    EXPECT_BLOCK(GGML_TYPE_Q5_0, b, want, 32, "qh on the high half, d 0.25");
    /* d -1 (0xbc00), qh 1 (element 0's fifth bit only), quants 0: x_0 = (16 - 16)(-1) = 0, the rest 16 */
    put16(b, 0xbc00), b[2] = 1, b[3] = b[4] = b[5] = 0, memset(b + 6, 0, 16);
    for (int j = 0; j < 32; j++) want[j] = j ? 16.0f : 0.0f;
    EXPECT_BLOCK(GGML_TYPE_Q5_0, b, want, 32, "negative d, one fifth bit");
    /* Q5_1: d 1 (0x3c00), m -16 (0xcc00), qh 0xaaaaaaaa (odd elements), byte j = j (high nibbles 0):
     * x_j = j + 16 [j odd] - 16, x_{j+16} = 16 [j odd] - 16 */
    put16(b, 0x3c00), put16(b + 2, 0xcc00), memset(b + 4, 0xaa, 4);
    for (int j = 0; j < 16; j++) b[8 + j] = (unsigned char)j;
    for (int j = 0; j < 16; j++) want[j] = (float)(j + 16 * (j % 2) - 16), want[j + 16] = (float)(16 * (j % 2) - 16);
    EXPECT_BLOCK(GGML_TYPE_Q5_1, b, want, 32, "odd fifth bits, m -16");
    /* d 0: every value m = 0.5 (0x3800); then max quants 31 at d 0.5, m 0: 15.5 */
    put16(b, 0x0000), put16(b + 2, 0x3800);
    for (int j = 0; j < 32; j++) want[j] = 0.5f;
    EXPECT_BLOCK(GGML_TYPE_Q5_1, b, want, 32, "d 0: all m");
    put16(b, 0x3800), put16(b + 2, 0x0000), memset(b + 4, 0xff, 20);
    for (int j = 0; j < 32; j++) want[j] = 15.5f;
    EXPECT_BLOCK(GGML_TYPE_Q5_1, b, want, 32, "max quants");
}

static void q2_k(void) {
    unsigned char b[84];
    float want[256];
    /* scales[g] = (g % 4) << 4 | g: group g of 16 has scale g and min g % 4; d 1 (0x3c00), dmin 0.5
     * (0x3800); every qs byte 0xe4 (2-bit fields 0,1,2,3): element e's quant is its field
     * k = (e % 128) / 32, so x_e = g k - 0.5 (g % 4) with g = e / 16 */
    for (int g = 0; g < 16; g++) b[g] = (unsigned char)((g % 4) << 4 | g);
    memset(b + 16, 0xe4, 64), put16(b + 80, 0x3c00), put16(b + 82, 0x3800);
    for (int e = 0; e < 256; e++) want[e] = (float)(e / 16) * (float)((e % 128) / 32) - 0.5f * (float)(e / 16 % 4);
    EXPECT_BLOCK(GGML_TYPE_Q2_K, b, want, 256, "scale g, min g%4, fields by shift");
    /* which byte: qs[i] = i; element e reads byte 32 (e / 128) + e % 32 at shift 2 ((e % 128) / 32);
     * scales 0xff (15, 15), d -2 (0xc000), dmin 0: x = -30 q */
    memset(b, 0xff, 16), put16(b + 80, 0xc000), put16(b + 82, 0x0000);
    for (int i = 0; i < 64; i++) b[16 + i] = (unsigned char)i;
    for (int e = 0; e < 256; e++) want[e] = -30.0f * (float)((32 * (e / 128) + e % 32) >> (2 * ((e % 128) / 32)) & 3);
    EXPECT_BLOCK(GGML_TYPE_Q2_K, b, want, 256, "byte order, negative d, max scales");
    /* d 0 and dmin 0.25 (0x3400): only the mins, -0.25 x 15 */
    put16(b + 80, 0x0000), put16(b + 82, 0x3400);
    for (int e = 0; e < 256; e++) want[e] = -3.75f;
    EXPECT_BLOCK(GGML_TYPE_Q2_K, b, want, 256, "d 0");
}

static void q3_k(void) {
    unsigned char b[110];
    float want[256];
    /* hmask[l] = 0xff for l < 16, 0x0f for l >= 16: element e (l = e % 32, bit 4 (e / 128) + (e % 128) / 32)
     * has its high bit set (+0) for l < 16 or e < 128, else clear (-4). qs all 0x1b: low 2 bits
     * 3 - k at field k = (e % 128) / 32. Scales: bytes 0..7 = 0x21 (scale i < 8: low 4 bits 1;
     * i >= 8: 2), bytes 8..11 = 0xe4 (scale i's top 2 bits, at shift 2 (i / 4) of byte 8 + i % 4,
     * are i / 4): s_i = (i < 8 ? 1 : 2) + 16 (i / 4), used as s_i - 32. d 0.5 (0x3800):
     * x_e = 0.5 (s_i - 32) (3 - k - 4 [bit clear]), i = e / 16 */
    for (int l = 0; l < 32; l++) b[l] = l < 16 ? 0xff : 0x0f;
    memset(b + 32, 0x1b, 64), memset(b + 96, 0x21, 8), memset(b + 104, 0xe4, 4), put16(b + 108, 0x3800);
    for (int e = 0; e < 256; e++) {
        int i = e / 16, k = e % 128 / 32, set = e % 32 < 16 || e < 128;
        int s = (i < 8 ? 1 : 2) + 16 * (i / 4);
        want[e] = 0.5f * (float)(s - 32) * (float)(3 - k - (set ? 0 : 4));
    }
    EXPECT_BLOCK(GGML_TYPE_Q3_K, b, want, 256, "packed 6-bit scales, high-bit mask");
    /* scales at their largest (every byte 0xff: s = 63, 31 after -32), negative d -1 (0xbc00), quants
     * all 3 with the high bit set: -93; scale 0 (d 0): all 0 */
    memset(b, 0xff, 108), put16(b + 108, 0xbc00);
    for (int e = 0; e < 256; e++) want[e] = -93;
    EXPECT_BLOCK(GGML_TYPE_Q3_K, b, want, 256, "max scales and quants, d -1");
    put16(b + 108, 0x0000);
    for (int e = 0; e < 256; e++) want[e] = 0;
    EXPECT_BLOCK(GGML_TYPE_Q3_K, b, want, 256, "d 0");
}

/* Q4_K's and Q5_K's 12 scale bytes of the blocks below: bytes 0..3 = 0xc0 | (j + 1) (scale j < 4 is
 * j + 1; top bits 3 for scale j + 4), bytes 4..7 = 0x40 | (10 + j) (min j < 4 is 10 + j; top bits 1
 * for min j + 4), bytes 8..11 = 0x25 (scale j >= 4: 5 | 3 << 4 = 53, min: 2 | 1 << 4 = 18) */
static void k_scales(unsigned char *p, int *sc, int *mn) {
    for (int j = 0; j < 4; j++) p[j] = (unsigned char)(0xc0 | (j + 1)), p[4 + j] = (unsigned char)(0x40 | (10 + j));
    memset(p + 8, 0x25, 4);
    for (int j = 0; j < 8; j++) sc[j] = j < 4 ? j + 1 : 53, mn[j] = j < 4 ? 10 + j : 18;
}

static void q4_k(void) {
    unsigned char b[144];
    float want[256];
    int sc[8], mn[8];
    /* d 2 (0x4000), dmin 1 (0x3c00); qs[32 c + l] = (15 - l % 16) << 4 | l % 16: sub-block j = e / 32
     * reads chunk j / 2, low nibbles when j is even (q = l % 16), high when odd (q = 15 - l % 16);
     * x = 2 sc_j q - m_j */
    put16(b, 0x4000), put16(b + 2, 0x3c00), k_scales(b + 4, sc, mn);
    for (int i = 0; i < 128; i++) b[16 + i] = (unsigned char)((15 - i % 16) << 4 | i % 16);
    for (int e = 0; e < 256; e++) {
        int j = e / 32, l = e % 32, q = j % 2 ? 15 - l % 16 : l % 16;
        want[e] = 2.0f * (float)sc[j] * (float)q - (float)mn[j];
    }
    EXPECT_BLOCK(GGML_TYPE_Q4_K, b, want, 256, "6-bit scales and mins, nibble order");
    /* every byte 0xff past d, dmin (scales, mins 63; nibbles 15), d 1, dmin 1: 63 x 15 - 63 = 882 */
    put16(b, 0x3c00), put16(b + 2, 0x3c00), memset(b + 4, 0xff, 140);
    for (int e = 0; e < 256; e++) want[e] = 882;
    EXPECT_BLOCK(GGML_TYPE_Q4_K, b, want, 256, "max scales, mins and nibbles");
    /* d 0, dmin -0.5 (0xb800): x = 0.5 x 63 */
    put16(b, 0x0000), put16(b + 2, 0xb800);
    for (int e = 0; e < 256; e++) want[e] = 31.5f;
    EXPECT_BLOCK(GGML_TYPE_Q4_K, b, want, 256, "d 0, negative dmin");
}

static void q5_k(void) {
    unsigned char b[176];
    float want[256];
    int sc[8], mn[8];
    /* as the Q4_K block, with qh[l] = l * 37 mod 256: element l of sub-block j gains 16 when bit j of qh[l] is set */
    put16(b, 0x4000), put16(b + 2, 0x3c00), k_scales(b + 4, sc, mn);
    for (int l = 0; l < 32; l++) b[16 + l] = (unsigned char)(l * 37);
    for (int i = 0; i < 128; i++) b[48 + i] = (unsigned char)((15 - i % 16) << 4 | i % 16);
    for (int e = 0; e < 256; e++) {
        int j = e / 32, l = e % 32, q = (j % 2 ? 15 - l % 16 : l % 16) + 16 * ((l * 37 % 256) >> j & 1);
        want[e] = 2.0f * (float)sc[j] * (float)q - (float)mn[j];
    }
    EXPECT_BLOCK(GGML_TYPE_Q5_K, b, want, 256, "fifth bits by sub-block");
    /* max: every byte 0xff, d -1 (0xbc00), dmin 1: -63 x 31 - 63 = -2016 */
    put16(b, 0xbc00), put16(b + 2, 0x3c00), memset(b + 4, 0xff, 172);
    for (int e = 0; e < 256; e++) want[e] = -2016;
    EXPECT_BLOCK(GGML_TYPE_Q5_K, b, want, 256, "max quants, d -1");
}

static void q6_k(void) {
    unsigned char b[210];
    float want[256];
    /* ql[i] = i (per half: 64 bytes), qh all 0xe4 (field k's 2 bits are k), int8 scales i - 8, d 0.25
     * (0x3400). Element e: half h = e / 128, k = (e % 128) / 32, l = e % 32 reads ql[64 h + l + 32 (k % 2)],
     * its low nibble for k < 2, high for k >= 2; q = nibble + 16 k - 32; scale 8 h + l / 16 + 2 k */
    for (int i = 0; i < 128; i++) b[i] = (unsigned char)(i % 64);
    memset(b + 128, 0xe4, 64), put16(b + 208, 0x3400);
    for (int i = 0; i < 16; i++) b[192 + i] = (unsigned char)(int8_t)(i - 8);
    for (int e = 0; e < 256; e++) {
        int h = e / 128, k = e % 128 / 32, l = e % 32, byte = l + 32 * (k % 2);
        int q = (k < 2 ? byte & 15 : byte >> 4) + 16 * k - 32, s = 8 * h + l / 16 + 2 * k - 8;
        want[e] = 0.25f * (float)s * (float)q;
    }
    EXPECT_BLOCK(GGML_TYPE_Q6_K, b, want, 256, "ql/qh/scales by position, negative scales");
    /* extremes: quants 63 (31 after -32) and 0 (-32), scales -128 and 127, d 1 */
    memset(b, 0xff, 128), memset(b + 128, 0xff, 64), put16(b + 208, 0x3c00);
    for (int i = 0; i < 16; i++) b[192 + i] = i % 2 ? 0x80 : 0x7f;
    for (int e = 0; e < 256; e++) want[e] = (float)((e % 32) / 16 % 2 ? -128 : 127) * 31.0f;
    EXPECT_BLOCK(GGML_TYPE_Q6_K, b, want, 256, "max quants, scales -128 and 127");
    memset(b, 0, 192);
    for (int e = 0; e < 256; e++) want[e] = (float)((e % 32) / 16 % 2 ? -128 : 127) * -32.0f;
    EXPECT_BLOCK(GGML_TYPE_Q6_K, b, want, 256, "min quants");
}

static void sizes(void) {
    static const int want[N_NEW][2] = {{32, 20}, {32, 22}, {32, 24}, {256, 84}, {256, 110}, {256, 144}, {256, 176}, {256, 210}};
    int ok = 1;
    for (int i = 0; i < N_NEW; i++)
        ok &= ggml_type_known(NEW_TYPES[i]) && ggml_block_size(NEW_TYPES[i]) == want[i][0] &&
              ggml_block_bytes(NEW_TYPES[i]) == want[i][1];
    CHECK(ok, "block sizes and bytes as ggml's (Q4_1 20, Q5_0 22, Q5_1 24, Q2_K 84, Q3_K 110, Q4_K 144, Q5_K 176, Q6_K 210)");
    CHECK(ggml_min_bytes_per_weight() == 84.0 / 256, "fewest bytes a weight: Q2_K's 84/256");
    CHECK(!ggml_type_known(15) && !ggml_type_known(20), "Q8_K and IQ4_NL stay unknown");
}

/* ---- seeded blocks ---- */

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* offsets of a block's fp16 fields (d, and m / dmin), -1 for none */
static void half_fields(uint32_t type, int *a, int *b) {
    *a = *b = -1;
    switch (type) {
    case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_1: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: *a = 0, *b = 2; break;
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q5_0: case GGML_TYPE_Q8_0: *a = 0; break;
    case GGML_TYPE_Q2_K: *a = 80, *b = 82; break;
    case GGML_TYPE_Q3_K: *a = 108; break;
    case GGML_TYPE_Q6_K: *a = 208; break;
    }
}

/* n blocks of type of seeded bytes, the fp16 fields finite: any exponent when wide (subnormals to
 * 65504), else below 2^-6 in magnitude (weights a model can run on) */
static void seeded_blocks(uint32_t type, unsigned char *dst, size_t n, uint64_t seed, int wide) {
    size_t bytes = (size_t)ggml_block_bytes(type);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
    for (size_t i = 0; i < n * bytes; i++) dst[i] = (unsigned char)(rng_next(&s) >> 24);
    int a, b;
    half_fields(type, &a, &b);
    for (size_t k = 0; k < n; k++)
        for (int f = 0; f < 2; f++) {
            int at = f ? b : a;
            if (at < 0) continue;
            uint16_t h = (uint16_t)(rng_next(&s) >> 20);
            h = wide ? ((h & 0x7c00) == 0x7c00 ? h & 0x83ff : h) : (uint16_t)((h & 0x83ff) | (uint16_t)(rng_next(&s) % 9) << 10);
            put16(dst + k * bytes + at, h);
        }
}

/* ---- a GGUF end to end ---- */

static void u64le(StrBuf *b, uint64_t v) {
    unsigned char p[8];
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
    sb_put(b, (const char *)p, 8);
}
static void u32le(StrBuf *b, uint32_t v) {
    unsigned char p[4];
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
    sb_put(b, (const char *)p, 4);
}

/* the F32 file at src with every matrix rewritten as type_of(index) blocks (seeded), the metadata
 * copied byte for byte; cut bytes short at the end of the data. 0 on success */
static int requantize(const char *src, const char *dst, uint32_t (*type_of)(int), uint64_t seed, size_t cut) {
    unsigned char *img;
    size_t len;
    GgufFile g;
    if (read_file(src, &img, &len) != 0) return -1;
    if (gguf_parse(&g, img, len, src) != 0) return free(img), -1;
    const GgufKv *last = &g.kv[g.n_kv - 1];
    size_t meta_end = (size_t)(last->data - img) + last->size;
    StrBuf h = {0}, data = {0};
    sb_put(&h, (const char *)img, meta_end); /* magic, version, counts, metadata */
    int matrix = 0;
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const GgufTensor *t = &g.tensors[i];
        uint32_t type = t->n_dims == 2 ? type_of(matrix++) : GGML_TYPE_F32;
        u64le(&h, strlen(t->name)), sb_put(&h, t->name, strlen(t->name));
        u32le(&h, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) u64le(&h, t->ne[d]);
        u32le(&h, type), u64le(&h, data.len);
        size_t nb = (size_t)t->numel / (size_t)ggml_block_size(type), bytes = nb * (size_t)ggml_block_bytes(type);
        unsigned char *blk = xmalloc(bytes + 1);
        if (type == GGML_TYPE_F32) memcpy(blk, t->data, bytes);
        else seeded_blocks(type, blk, nb, seed + i, 0);
        sb_put(&data, (const char *)blk, bytes);
        free(blk);
        while (data.len % 32) sb_put(&data, "", 1);
    }
    while (h.len % 32) sb_put(&h, "", 1);
    sb_put(&h, data.s, data.len - cut);
    int rc = write_file(dst, h.s, h.len);
    sb_free(&h), sb_free(&data), gguf_free(&g), free(img);
    return rc;
}

static uint32_t cycle_types(int i) { return NEW_TYPES[i % N_NEW]; }
static uint32_t q4_k_only(int i) { (void)i; return GGML_TYPE_Q4_K; }

/* every tensor of the quantized file q: pelab's import (read back as F32 through an export of the
 * imported model) equals the decoding of its blocks, and (oracle non-NULL) ggml's to_float of them.
 * Returns the tensors compared, -1 when anything failed */
static int (*oracle_fn)(uint32_t type, const unsigned char *blocks, size_t n_blocks, float *out);

static int imported_equals_blocks(const char *q, const char *what) {
    Model m;
    GgufTokImage tok;
    char back[600], note[300];
    snprintf(back, sizeof back, "%s.back.gguf", q);
    int ok = gguf_llama_read(q, PRECISION_FP32, &m, &tok) == 0;
    CHECK(ok, "%s: imports: %s", what, pelab_errmsg);
    if (!ok) return -1;
    ok = gguf_llama_write(back, &m, NULL, GGML_TYPE_F32, note, sizeof note) == 0;
    CHECK(ok, "%s: the imported model exports again: %s", what, pelab_errmsg);
    free(tok.image), model_free(&m);
    if (!ok) return -1;
    unsigned char *a = NULL, *b = NULL;
    size_t la, lb;
    GgufFile ga, gb;
    if (read_file(q, &a, &la) != 0 || gguf_parse(&ga, a, la, q) != 0) return free(a), -1;
    if (read_file(back, &b, &lb) != 0 || gguf_parse(&gb, b, lb, back) != 0) return gguf_free(&ga), free(a), free(b), -1;
    int n = 0, bad = 0, oracle_bad = 0, types_seen = 0;
    for (uint64_t i = 0; i < ga.n_tensors; i++) {
        const GgufTensor *t = &ga.tensors[i], *u = gguf_find_tensor(&gb, t->name);
        if (!u || u->type != GGML_TYPE_F32 || u->numel != t->numel) {
            bad++;
            continue;
        }
        float *want = xmalloc(sizeof(float) * (size_t)t->numel);
        ggml_decode(t->type, t->data, (size_t)t->numel, want);
        if (memcmp(want, u->data, sizeof(float) * (size_t)t->numel)) bad++;
        if (oracle_fn && t->type != GGML_TYPE_F32) {
            size_t nb = (size_t)t->numel / (size_t)ggml_block_size(t->type);
            if (oracle_fn(t->type, t->data, nb, want) != 0 || memcmp(want, u->data, sizeof(float) * (size_t)t->numel))
                oracle_bad++;
        }
        types_seen |= t->type < 31 ? 1 << t->type : 0;
        n++;
        free(want);
    }
    CHECK(n == (int)ga.n_tensors && bad == 0, "%s: every imported weight is its block's value (%d tensors, %d differ)",
          what, n, bad);
    if (oracle_fn)
        CHECK(oracle_bad == 0, "%s: ggml's to_float of each tensor equals pelab's import, bit for bit (%d of %d differ)", what,
              oracle_bad, n);
    gguf_free(&ga), gguf_free(&gb), free(a), free(b);
    return bad || oracle_bad ? -1 : types_seen;
}

static int shaped(Model *m, const char *spec) {
    ModelConfig c = {.vocab_size = 256, .dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2,
                     .hidden_dim = 512, .seq_len = 16, .norm_eps = 1e-5f, .tied = 0};
    if (model_create(m, &c, spec) != 0) return -1;
    model_init_weights(m, 7);
    return 0;
}

static void end_to_end(void) {
    Model m;
    char f32[512], q[512], cut[512], note[300];
    snprintf(f32, sizeof f32, "%s/kq-src.gguf", test_tmpdir());
    snprintf(q, sizeof q, "%s/kq-all.gguf", test_tmpdir());
    snprintf(cut, sizeof cut, "%s/kq-cut.gguf", test_tmpdir());
    int ok = shaped(&m, "rope") == 0 && gguf_llama_write(f32, &m, NULL, GGML_TYPE_F32, note, sizeof note) == 0;
    CHECK(ok, "a 256-wide llama model exports as F32: %s", pelab_errmsg);
    if (!ok) return;
    model_free(&m);
    ok = requantize(f32, q, cycle_types, 11, 0) == 0;
    CHECK(ok, "its matrices rewritten in the new types: %s", pelab_errmsg);
    if (ok) {
        int seen = imported_equals_blocks(q, "a file of Q4_1, Q5_0, Q5_1, Q2_K..Q6_K matrices");
        int all = 1;
        for (int i = 0; i < N_NEW; i++) all &= seen > 0 && (seen >> NEW_TYPES[i] & 1);
        CHECK(all, "the file held every new type (mask %#x)", (unsigned)seen);
    }
    /* a K-quant tensor cut short: the last tensor's last block lacks a byte */
    ok = requantize(f32, cut, q4_k_only, 12, 1) == 0;
    Model r;
    GgufTokImage tok;
    CHECK(ok && gguf_llama_read(cut, PRECISION_FP32, &r, &tok) != 0 && strstr(pelab_errmsg, "truncated") && strstr(pelab_errmsg, "kq-cut.gguf") &&
              !strchr(pelab_errmsg, '\n'),
          "a Q4_K file cut one byte short is refused in one line: %s", pelab_errmsg);
}

/* ---- --precision bf16 ---- */

/* b (read under bf16) against a (float32) of the same file: held in bf16 alone, every weight a's
 * rounded to nearest even, the norms and biases a's float32 too; 0 when all held */
static int bf16_of(const Model *a, const Model *b, const char *what) {
    int ok = b->bf16_only && b->precision == PRECISION_BF16 && b->n_params == a->n_params;
    CHECK(ok, "%s: a model held in bf16 alone", what);
    if (!ok) return -1;
    size_t bad = 0, bad32 = 0;
    for (int t = 0; t < N_PARAM_TENSORS; t++) {
        const TensorInfo *ti = &a->tensors[t];
        for (size_t i = ti->offset; i < ti->offset + ti->numel; i++) {
            bad += b->params_bf16[i] != bf16_from_float(a->params_mem[i]);
            if (!model_weight_in_bf16_only(t)) bad32 += b->params_mem[i] != a->params_mem[i];
        }
    }
    CHECK(bad == 0 && bad32 == 0, "%s: every weight is the float32 read rounded to bf16 (%zu differ), the norms float32 "
          "as read (%zu differ)", what, bad, bad32);
    CHECK(model_weight_bytes(b) * 10 < model_weight_bytes(a) * 6, "%s: weights take %zu bytes, float32's %zu", what,
          model_weight_bytes(b), model_weight_bytes(a));
    return bad || bad32 ? -1 : 0;
}

/* a file of every type, rows rotated (layout=half) or not, read as float32 and as bf16; and
 * import --gguf --precision bf16 writes a bf16 checkpoint that loads as the same bf16 model */
static void bf16_reads(void) {
    static const char *const SPECS[] = {"rope", "rope:layout=half,base=50000"};
    for (int s = 0; s < 2; s++) {
        Model m, a, b, c;
        GgufTokImage ta, tb;
        char f32[512], q[512], ck[512], note[300], cmd[2048], out[4096];
        snprintf(f32, sizeof f32, "%s/kq16-src.gguf", test_tmpdir());
        snprintf(q, sizeof q, "%s/kq16.gguf", test_tmpdir());
        snprintf(ck, sizeof ck, "%s/kq16.st", test_tmpdir());
        int ok = shaped(&m, SPECS[s]) == 0 && gguf_llama_write(f32, &m, NULL, GGML_TYPE_F32, note, sizeof note) == 0;
        if (ok) model_free(&m);
        ok = ok && requantize(f32, q, cycle_types, 21 + (uint64_t)s, 0) == 0;
        CHECK(ok, "%s: a file of every type: %s", SPECS[s], pelab_errmsg);
        if (!ok) continue;
        ok = gguf_llama_read(q, PRECISION_FP32, &a, &ta) == 0 && gguf_llama_read(q, PRECISION_BF16, &b, &tb) == 0;
        CHECK(ok, "%s: read as float32 and as bf16: %s", SPECS[s], pelab_errmsg);
        if (!ok) continue;
        bf16_of(&a, &b, SPECS[s]);
        CHECK(gguf_llama_write(f32, &b, NULL, GGML_TYPE_F32, note, sizeof note) != 0 && strstr(pelab_errmsg, "bf16 only"),
              "%s: a model held in bf16 alone is not exported: %s", SPECS[s], pelab_errmsg);
        snprintf(cmd, sizeof cmd, "./pelab import --gguf %s --precision bf16 --out %s", q, ck);
        int rc = run_pelab(cmd, out, sizeof out);
        CHECK(rc == 0 && strstr(out, "bf16, rounded (--precision bf16)"), "%s: import --gguf --precision bf16: %s", SPECS[s], out);
        if (rc == 0) {
            ok = checkpoint_load_precision(ck, &c, NULL, PRECISION_BF16) == 0;
            CHECK(ok, "%s: its checkpoint loads under bf16: %s", SPECS[s], pelab_errmsg);
            if (ok) {
                int same = c.bf16_only && c.n_params == b.n_params;
                for (size_t i = 0; same && i < b.n_params; i++) same = c.params_bf16[i] == b.params_bf16[i];
                CHECK(same, "%s: the checkpoint holds the same bf16 weights, in bf16 alone", SPECS[s]);
                model_free(&c);
            }
        }
        free(ta.image), free(tb.image);
        model_free(&a), model_free(&b);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "./pelab import --hf %s --precision bf16 --out %s/x.st", test_tmpdir(), test_tmpdir());
    expect_pelab_error(cmd, "--precision goes with --gguf");
}

/* ---- ggml's own to_float ---- */

static const char *llamacpp_dir(void) {
    const char *d = getenv("PELAB_LLAMACPP_DIR");
    return d && *d ? d : NULL;
}

static int run_tool(const char *args) {
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "python3 tools/ggml_to_float.py %s >/dev/null 2>&1", args);
    return system(cmd);
}

static int ggml_to_float(uint32_t type, const unsigned char *blocks, size_t n_blocks, float *out) {
    char in[512], fl[512], args[1200];
    snprintf(in, sizeof in, "%s/oracle-in.bin", test_tmpdir());
    snprintf(fl, sizeof fl, "%s/oracle-out.bin", test_tmpdir());
    size_t bytes = n_blocks * (size_t)ggml_block_bytes(type), n = n_blocks * (size_t)ggml_block_size(type);
    if (write_file(in, blocks, bytes) != 0) return -1;
    snprintf(args, sizeof args, "to_float %u %s %s", type, in, fl);
    if (run_tool(args) != 0) return -1;
    unsigned char *f;
    size_t len;
    if (read_file(fl, &f, &len) != 0) return -1;
    int rc = len == n * sizeof(float) ? 0 : -1;
    if (rc == 0) memcpy(out, f, len);
    free(f);
    return rc;
}

/* blocks of type vs ggml's to_float, bit for bit; returns the blocks that matched */
static size_t bit_equal_blocks(uint32_t type, const unsigned char *blocks, size_t nb, const char *what) {
    size_t n = nb * (size_t)ggml_block_size(type), same = 0;
    float *mine = xmalloc(sizeof(float) * n), *theirs = xmalloc(sizeof(float) * n);
    ggml_decode(type, blocks, n, mine);
    int ran = ggml_to_float(type, blocks, nb, theirs) == 0;
    for (size_t k = 0; ran && k < nb; k++) {
        size_t bs = (size_t)ggml_block_size(type);
        same += memcmp(mine + k * bs, theirs + k * bs, bs * sizeof(float)) == 0;
    }
    CHECK(ran && same == nb, "%s %s: %zu of %zu blocks equal ggml's to_float bit for bit", ggml_type_name(type), what, same, nb);
    free(mine), free(theirs);
    return same;
}

static void oracle(void) {
    if (!llamacpp_dir() || run_tool("to_float 8 /dev/null /dev/null") != 0) {
        fprintf(stderr, "  test_gguf_quant: no node-llama-cpp 3.21.1 with python3 (PELAB_LLAMACPP_DIR unset or without it): "
                        "ggml's own to_float oracle is skipped\n");
        return;
    }
    enum { RANDOM = 512, QUANTIZED = 512 };
    char path[512], args[1200], summary[600] = "";
    static const uint32_t ORACLE_TYPES[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                            GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K};
    for (size_t i = 0; i < sizeof ORACLE_TYPES / sizeof ORACLE_TYPES[0]; i++) {
        uint32_t t = ORACLE_TYPES[i];
        size_t bytes = (size_t)ggml_block_bytes(t);
        unsigned char *blk = xmalloc(bytes * RANDOM);
        /* half the seeded blocks with scales of any exponent (subnormal to 65504), half small */
        seeded_blocks(t, blk, RANDOM / 2, 100 + t, 1);
        seeded_blocks(t, blk + bytes * (RANDOM / 2), RANDOM / 2, 200 + t, 0);
        size_t a = bit_equal_blocks(t, blk, RANDOM, "seeded bytes");
        free(blk);
        snprintf(path, sizeof path, "%s/oracle-q.bin", test_tmpdir());
        snprintf(args, sizeof args, "quantize %u %d %u %s", t, QUANTIZED, 300 + t, path);
        unsigned char *qb = NULL;
        size_t len = 0, b = 0;
        int ok = run_tool(args) == 0 && read_file(path, &qb, &len) == 0 && len == bytes * QUANTIZED;
        CHECK(ok, "%s: ggml's quantizer wrote %d blocks", ggml_type_name(t), QUANTIZED);
        if (ok) b = bit_equal_blocks(t, qb, QUANTIZED, "from ggml's quantizer");
        free(qb);
        size_t at = strlen(summary);
        snprintf(summary + at, sizeof summary - at, " %s %zu/%d", ggml_type_name(t), a + b, RANDOM + QUANTIZED);
    }
    fprintf(stderr, "  test_gguf_quant: blocks equal to ggml's to_float:%s\n", summary);

    /* the end-to-end file through ggml's to_float */
    char f32[512], q[512];
    snprintf(f32, sizeof f32, "%s/kq-src.gguf", test_tmpdir());
    snprintf(q, sizeof q, "%s/kq-all.gguf", test_tmpdir());
    oracle_fn = ggml_to_float;
    imported_equals_blocks(q, "ggml's to_float of the rewritten file");

    /* files of llama.cpp's own quantizer, from the F32 export */
    static const char *const FTYPES[] = {"q4_1", "q5_0", "q5_1", "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k"};
    for (size_t i = 0; i < sizeof FTYPES / sizeof FTYPES[0]; i++) {
        char out[600], cmd[1600], what[80];
        snprintf(out, sizeof out, "%s/llamacpp-%s.gguf", test_tmpdir(), FTYPES[i]);
        snprintf(cmd, sizeof cmd, "python3 tools/llamacpp_quantize.py %s %s %s >/dev/null 2>&1", f32, out, FTYPES[i]);
        snprintf(what, sizeof what, "llama.cpp's %s file", FTYPES[i]);
        int ok = system(cmd) == 0;
        CHECK(ok, "llama.cpp's quantizer wrote %s", FTYPES[i]);
        if (!ok) continue;
        int seen = imported_equals_blocks(out, what);
        char types[200] = "";
        for (int t = 0; seen > 0 && t < 31; t++)
            if (seen >> t & 1) {
                size_t at = strlen(types);
                snprintf(types + at, sizeof types - at, " %s", ggml_type_name((uint32_t)t));
            }
        fprintf(stderr, "  test_gguf_quant: %s: tensor types%s: imported equal to ggml's to_float\n", what, types);
    }
    oracle_fn = NULL;
}

void test_gguf_quant(void) {
    sizes();
    q4_1();
    q5();
    q2_k();
    q3_k();
    q4_k();
    q5_k();
    q6_k();
    end_to_end();
    bf16_reads();
    oracle();
}
