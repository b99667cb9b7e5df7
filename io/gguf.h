/* gguf.h: GGUF, ggml's model file (llama.cpp), read from a file image and written; the format
 * only (io/gguf_llama.h maps it to pelab models). Little-endian throughout:
 *
 *   "GGUF", uint32 version (3; 2 has the same layout), uint64 n_tensors, uint64 n_kv,
 *   n_kv x (string key, uint32 value type, value),
 *   n_tensors x (string name, uint32 n_dims, n_dims x uint64 ne, uint32 ggml type, uint64 offset),
 *   padding to the alignment, then the data section: each tensor's bytes at its offset.
 *
 * A string is a uint64 length and that many bytes (no NUL). An array value is uint32 element type,
 * uint64 count, the elements. ne[0] is the innermost (contiguous) dimension: a pelab [out, in]
 * matrix is ne = {in, out}. The alignment is general.alignment (uint32, a power of two), else 32;
 * every offset is a multiple of it. llama.cpp's reader further wants the tensors in offset order,
 * each padded to the alignment, which is how gguf_write lays them out.
 *
 * gguf_parse trusts nothing: every count, length, dimension and offset is checked against the
 * image's size, with 64-bit overflow checks, before it is used or anything is allocated from it.
 * The metadata and tensor table must end within GGUF_MAX_HEADER bytes (a real one: a few MB, a
 * 256k vocabulary with its merges under 20): a sparse or hostile file costs at most that much
 * reading before it is refused, whatever its size. Tensor bytes are not touched by parsing: an
 * image that is a memory map (core/files.h) reads only the pages of the tensors used. */
#ifndef PELAB_GGUF_H
#define PELAB_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "../core/strbuf.h"

/* metadata value types */
enum {
    GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY, GGUF_U64,
    GGUF_I64, GGUF_F64, GGUF_N_TYPES
};
enum { GGUF_DEFAULT_ALIGNMENT = 32, GGUF_MAX_DIMS = 4, GGUF_MAX_NAME = 64 };
#define GGUF_MAX_HEADER (64ull << 20)

typedef struct {
    char *key;                 /* NUL-terminated copy */
    uint32_t type;             /* GGUF_* */
    uint32_t elem_type;        /* arrays: the elements' type */
    uint64_t count;            /* arrays: elements; strings: bytes */
    const unsigned char *data; /* in the image: a string's bytes, an array's first element, a scalar */
    size_t size;               /* the value's bytes from data on */
} GgufKv;

typedef struct {
    char *name;                /* NUL-terminated copy */
    uint32_t n_dims;
    uint64_t ne[GGUF_MAX_DIMS]; /* 1 past n_dims */
    uint64_t numel;
    uint32_t type;             /* ggml type (gguf_quant.h) */
    uint64_t offset;           /* in the data section */
    uint64_t n_bytes;
    const unsigned char *data; /* in the image */
} GgufTensor;

typedef struct {
    const char *name;          /* the file, for messages (not owned) */
    const unsigned char *buf;  /* the image (not owned) */
    size_t len;
    uint32_t version, alignment;
    uint64_t n_kv, n_tensors;
    GgufKv *kv;
    GgufTensor *tensors;
    size_t data_start;         /* the data section's offset in the image */
} GgufFile;

/* parses an image (buf stays owned by the caller and must outlive g); -1 with one line naming
 * name and the key, tensor or field at fault, and what was expected */
int gguf_parse(GgufFile *g, const unsigned char *buf, size_t len, const char *name);
void gguf_free(GgufFile *g);
const GgufKv *gguf_find(const GgufFile *g, const char *key);
const GgufTensor *gguf_find_tensor(const GgufFile *g, const char *name);
const char *gguf_type_name(uint32_t type);

/* typed reads of key: 1 with the value, 0 when absent, -1 (one line naming the key) when it has
 * another type or does not fit. Integers of any width are accepted where they fit; floats from
 * F32 or F64; a string as its bytes (not NUL-terminated) */
int gguf_get_u32(const GgufFile *g, const char *key, uint32_t *out);
int gguf_get_f32(const GgufFile *g, const char *key, float *out);
int gguf_get_bool(const GgufFile *g, const char *key, int *out);
int gguf_get_str(const GgufFile *g, const char *key, const unsigned char **s, size_t *n);
/* a string compared with want (0 when absent too) */
int gguf_str_is(const GgufFile *g, const char *key, const char *want);
/* an array of elem_type: 1 with its count and first element, 0 absent, -1 otherwise */
int gguf_get_array(const GgufFile *g, const char *key, uint32_t elem_type, const GgufKv **kv);
/* element i of a numeric array as a double (the array's type checked by gguf_get_array) */
double gguf_array_num(const GgufKv *kv, uint64_t i);
/* the strings of a string array, in order: ptr[i], len[i] (room for kv->count each) */
void gguf_array_strings(const GgufKv *kv, const unsigned char **ptr, size_t *len);

/* ---- writing ---- */

typedef struct {
    char name[GGUF_MAX_NAME];
    uint32_t n_dims;
    uint64_t ne[GGUF_MAX_DIMS];
    uint32_t type;       /* what it is stored as */
    const float *src;    /* its float32 values, encoded as type while the file is written */
} GgufOutTensor;

typedef struct {
    StrBuf meta;         /* the encoded key/value pairs */
    uint64_t n_kv;
    GgufOutTensor *t;
    int n_t, cap_t;
} GgufWriter;

void gguf_w_u32(GgufWriter *w, const char *key, uint32_t v);
void gguf_w_f32(GgufWriter *w, const char *key, float v);
void gguf_w_bool(GgufWriter *w, const char *key, int v);
void gguf_w_str(GgufWriter *w, const char *key, const char *s);
void gguf_w_strn(GgufWriter *w, const char *key, const char *s, size_t n);
/* an array of n elements: n gguf_w_elem_* calls of its type follow */
void gguf_w_array(GgufWriter *w, const char *key, uint32_t elem_type, uint64_t n);
void gguf_w_elem_str(GgufWriter *w, const char *s, size_t len);
void gguf_w_elem_f32(GgufWriter *w, float v);
void gguf_w_elem_i32(GgufWriter *w, int32_t v);
/* a tensor of n_dims dims ne (ne[0] innermost) stored as ggml type, from src (read while writing) */
void gguf_w_tensor(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, const float *src);
/* the file, atomically (core/files.h); -1 with one line (a value the type cannot hold: which tensor,
 * which element) */
int gguf_write(const char *path, const GgufWriter *w);
void gguf_w_free(GgufWriter *w);

#endif
