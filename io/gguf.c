/* gguf.c: GGUF files read from an image and written (see gguf.h). */
#include "gguf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "gguf_quant.h"

/* bytes of a scalar of each type (0: a string or an array) */
static const int SCALAR_SIZE[GGUF_N_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const TYPE_NAMES[GGUF_N_TYPES] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
                                                     "bool", "string", "array", "uint64", "int64", "float64"};
enum { MAX_KEY = 65535 };

const char *gguf_type_name(uint32_t type) { return type < GGUF_N_TYPES ? TYPE_NAMES[type] : "unknown"; }

/* a cursor over the header (metadata and tensor table): every read checks the bytes left before
 * end, the file's length or GGUF_MAX_HEADER, whichever comes first */
typedef struct {
    const unsigned char *buf;
    size_t len, at, end;
    const char *name;
} Cursor;

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* -1 with "NAME: what at byte N ..." */
static int fail_at(const Cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_at(const Cursor *c, const char *fmt, ...) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pelab_fail("%s: %s (GGUF, byte %zu of %zu)", c->name, what, c->at, c->len);
}

/* the reason a read of what stops at c->end */
static int past_end(const Cursor *c, const char *what) {
    if (c->end < c->len)
        return fail_at(c, "%s: past the first %llu MB, where pelab wants the metadata and tensor table to end", what,
                       (unsigned long long)GGUF_MAX_HEADER >> 20);
    return fail_at(c, "%s: past the end of the file (truncated?)", what);
}

static int take(Cursor *c, size_t n, const unsigned char **p, const char *what) {
    if (n > c->end - c->at) return past_end(c, what);
    *p = c->buf + c->at;
    c->at += n;
    return 0;
}

static int take_u32(Cursor *c, uint32_t *v, const char *what) {
    const unsigned char *p = NULL;
    if (take(c, 4, &p, what) != 0) return -1;
    *v = (uint32_t)le(p, 4);
    return 0;
}

static int take_u64(Cursor *c, uint64_t *v, const char *what) {
    const unsigned char *p = NULL;
    if (take(c, 8, &p, what) != 0) return -1;
    *v = le(p, 8);
    return 0;
}

/* a string of at most max bytes; printable: only bytes 0x20..0x7e (names that go into messages) */
static int take_str(Cursor *c, uint64_t max, int printable, const unsigned char **s, uint64_t *n, const char *what) {
    if (take_u64(c, n, what) != 0) return -1;
    if (*n > max || *n > c->end - c->at)
        return fail_at(c, "%s: length %llu: expected at most %llu and the bytes left (%zu)", what,
                       (unsigned long long)*n, (unsigned long long)max, c->end - c->at);
    if (take(c, (size_t)*n, s, what) != 0) return -1;
    for (uint64_t i = 0; printable && i < *n; i++)
        if ((*s)[i] < 0x20 || (*s)[i] > 0x7e) return fail_at(c, "%s: byte %llu is 0x%02x: expected printable ASCII", what, (unsigned long long)i, (*s)[i]);
    return 0;
}

/* a value of type t (an array's elements: count of type t), its extent checked */
static int take_value(Cursor *c, uint32_t t, uint64_t count, const char *key) {
    const unsigned char *p = NULL;
    if (t == GGUF_STRING) {
        for (uint64_t i = 0; i < count; i++) {
            uint64_t n;
            if (take_str(c, UINT64_MAX, 0, &p, &n, key) != 0) return -1;
        }
        return 0;
    }
    if (count > (c->end - c->at) / (size_t)SCALAR_SIZE[t]) {
        char what[400];
        snprintf(what, sizeof what, "%s: %llu values of %s", key, (unsigned long long)count, TYPE_NAMES[t]);
        return past_end(c, what);
    }
    if (take(c, (size_t)count * (size_t)SCALAR_SIZE[t], &p, key) != 0) return -1;
    for (uint64_t i = 0; t == GGUF_BOOL && i < count; i++)
        if (p[i] > 1) return fail_at(c, "%s: bool value %u: expected 0 or 1", key, p[i]);
    return 0;
}

/* a key or tensor name: 1..max printable bytes, copied NUL-terminated into *out (malloc'd) */
static int take_name(Cursor *c, uint64_t max, char **out, const char *what) {
    const unsigned char *s = NULL;
    uint64_t n;
    if (take_str(c, max, 1, &s, &n, what) != 0) return -1;
    if (n == 0) return fail_at(c, "%s: empty", what);
    *out = xmalloc((size_t)n + 1);
    memcpy(*out, s, (size_t)n), (*out)[n] = 0;
    return 0;
}

static int read_kv(Cursor *c, GgufKv *kv, uint64_t i) {
    char what[64];
    snprintf(what, sizeof what, "metadata key %llu", (unsigned long long)i);
    if (take_name(c, MAX_KEY, &kv->key, what) != 0 || take_u32(c, &kv->type, kv->key) != 0) return -1;
    if (kv->type >= GGUF_N_TYPES)
        return fail_at(c, "%s: value type %u: expected 0..%d (a GGUF metadata type)", kv->key, kv->type, GGUF_N_TYPES - 1);
    kv->count = 1;
    if (kv->type == GGUF_ARRAY) {
        if (take_u32(c, &kv->elem_type, kv->key) != 0 || take_u64(c, &kv->count, kv->key) != 0) return -1;
        if (kv->elem_type >= GGUF_N_TYPES || kv->elem_type == GGUF_ARRAY)
            return fail_at(c, "%s: array of type %u: expected a scalar or string type (0..%d, not 9)", kv->key,
                           kv->elem_type, GGUF_N_TYPES - 1);
    }
    size_t begin = c->at;
    if (kv->type == GGUF_STRING) {
        const unsigned char *s = NULL;
        if (take_str(c, UINT64_MAX, 0, &s, &kv->count, kv->key) != 0) return -1;
        kv->data = s;
    } else {
        if (take_value(c, kv->type == GGUF_ARRAY ? kv->elem_type : kv->type, kv->count, kv->key) != 0) return -1;
        kv->data = c->buf + begin;
    }
    kv->size = c->at - (size_t)(kv->data - c->buf);
    return 0;
}

static int read_tensor_info(Cursor *c, GgufTensor *t, uint64_t i) {
    char what[64];
    snprintf(what, sizeof what, "tensor %llu's name", (unsigned long long)i);
    if (take_name(c, GGUF_MAX_NAME - 1, &t->name, what) != 0 || take_u32(c, &t->n_dims, t->name) != 0) return -1;
    if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
        return fail_at(c, "tensor %s: %u dimensions: expected 1 to %d", t->name, t->n_dims, GGUF_MAX_DIMS);
    t->numel = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        t->ne[d] = 1;
        if ((uint32_t)d < t->n_dims && take_u64(c, &t->ne[d], t->name) != 0) return -1;
        /* 2^62 elements bound every byte count below (at most 4 bytes an element) */
        if (t->ne[d] == 0 || t->ne[d] > ((uint64_t)1 << 62) / t->numel)
            return fail_at(c, "tensor %s: dimension %d is %llu: expected 1 or more, at most 2^62 elements in all", t->name,
                           d, (unsigned long long)t->ne[d]);
        t->numel *= t->ne[d];
    }
    if (take_u32(c, &t->type, t->name) != 0 || take_u64(c, &t->offset, t->name) != 0) return -1;
    if (!ggml_type_known(t->type))
        return fail_at(c, "tensor %s: ggml type %u (%s): pelab reads F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K", t->name, t->type,
                       ggml_type_name(t->type));
    if (t->ne[0] % (uint64_t)ggml_block_size(t->type) != 0)
        return fail_at(c, "tensor %s: rows of %llu elements: %s needs a multiple of %d", t->name,
                       (unsigned long long)t->ne[0], ggml_type_name(t->type), ggml_block_size(t->type));
    t->n_bytes = t->numel / (uint64_t)ggml_block_size(t->type) * (uint64_t)ggml_block_bytes(t->type);
    return 0;
}

static int by_key(const void *a, const void *b) { return strcmp((*(GgufKv *const *)a)->key, (*(GgufKv *const *)b)->key); }
static int by_name(const void *a, const void *b) {
    return strcmp((*(GgufTensor *const *)a)->name, (*(GgufTensor *const *)b)->name);
}
static int by_offset(const void *a, const void *b) {
    uint64_t x = (*(GgufTensor *const *)a)->offset, y = (*(GgufTensor *const *)b)->offset;
    return x < y ? -1 : x > y;
}

/* duplicate keys and tensor names refused; tensors inside the data section and apart */
static int check_unique_and_apart(GgufFile *g, size_t len) {
    int rc = 0;
    GgufKv **k = xmalloc(sizeof *k * (size_t)(g->n_kv + 1));
    for (uint64_t i = 0; i < g->n_kv; i++) k[i] = &g->kv[i];
    qsort(k, (size_t)g->n_kv, sizeof *k, by_key);
    for (uint64_t i = 1; i < g->n_kv && rc == 0; i++)
        if (!strcmp(k[i - 1]->key, k[i]->key)) rc = pelab_fail("%s: metadata key %s appears twice (GGUF)", g->name, k[i]->key);
    free(k);
    GgufTensor **t = xmalloc(sizeof *t * (size_t)(g->n_tensors + 1));
    for (uint64_t i = 0; i < g->n_tensors; i++) t[i] = &g->tensors[i];
    qsort(t, (size_t)g->n_tensors, sizeof *t, by_name);
    for (uint64_t i = 1; i < g->n_tensors && rc == 0; i++)
        if (!strcmp(t[i - 1]->name, t[i]->name)) rc = pelab_fail("%s: tensor %s appears twice (GGUF)", g->name, t[i]->name);
    size_t data_len = len - g->data_start;
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++) {
        GgufTensor *e = t[i];
        if (e->offset % g->alignment != 0)
            rc = pelab_fail("%s: tensor %s: offset %llu is not a multiple of the alignment %u (GGUF)", g->name, e->name,
                            (unsigned long long)e->offset, g->alignment);
        else if (e->offset > data_len || e->n_bytes > data_len - e->offset) /* no sum: it could wrap */
            rc = pelab_fail("%s: tensor %s: %llu bytes at offset %llu of the data section, which has %zu (truncated?)",
                            g->name, e->name, (unsigned long long)e->n_bytes, (unsigned long long)e->offset, data_len);
        else e->data = g->buf + g->data_start + e->offset;
    }
    qsort(t, (size_t)g->n_tensors, sizeof *t, by_offset);
    for (uint64_t i = 1; i < g->n_tensors && rc == 0; i++)
        if (t[i - 1]->offset + t[i - 1]->n_bytes > t[i]->offset)
            rc = pelab_fail("%s: tensors %s and %s overlap in the data section (GGUF)", g->name, t[i - 1]->name, t[i]->name);
    free(t);
    return rc;
}

int gguf_parse(GgufFile *g, const unsigned char *buf, size_t len, const char *name) {
    memset(g, 0, sizeof *g);
    g->name = name;
    g->buf = buf, g->len = len;
    Cursor c = {buf, len, 0, len < GGUF_MAX_HEADER ? len : GGUF_MAX_HEADER, name};
    const unsigned char *magic = NULL;
    if (take(&c, 4, &magic, "magic") != 0) return -1;
    if (memcmp(magic, "GGUF", 4) != 0)
        return fail_at(&c, "magic %02x %02x %02x %02x: expected \"GGUF\" (not a GGUF file)", magic[0], magic[1], magic[2], magic[3]);
    if (take_u32(&c, &g->version, "version") != 0) return -1;
    if (g->version != 2 && g->version != 3) return fail_at(&c, "version %u: expected 3 (or 2)", g->version);
    if (take_u64(&c, &g->n_tensors, "tensor count") != 0 || take_u64(&c, &g->n_kv, "metadata count") != 0) return -1;
    /* each pair takes at least 13 bytes (8 + 1 key, 4 type), each tensor 29 (8 + 1 name, 4 dims,
     * 8 ne, 4 type, 8 offset): counts past that cannot be real, and nothing is allocated for them */
    if (g->n_kv > (c.end - c.at) / 13 || g->n_tensors > (c.end - c.at) / 29)
        return fail_at(&c, "%llu metadata pairs and %llu tensors: more than %s can hold", (unsigned long long)g->n_kv,
                       (unsigned long long)g->n_tensors, c.end < len ? "the 64 MB pelab reads of a header" : "the file");
    g->kv = xcalloc((size_t)g->n_kv + 1, sizeof *g->kv);
    g->tensors = xcalloc((size_t)g->n_tensors + 1, sizeof *g->tensors);
    int rc = 0;
    for (uint64_t i = 0; i < g->n_kv && rc == 0; i++) rc = read_kv(&c, &g->kv[i], i);
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    const GgufKv *a = rc == 0 ? gguf_find(g, "general.alignment") : NULL;
    uint64_t al = a && a->type == GGUF_U32 ? le(a->data, 4) : 0; /* read only once the type says 4 bytes */
    if (a && (al == 0 || (al & (al - 1)) || al > (1u << 30)))
        rc = pelab_fail("%s: general.alignment: a %s %llu, expected a uint32 power of two up to 2^30 (GGUF)", name,
                        gguf_type_name(a->type), (unsigned long long)al);
    else if (a) g->alignment = (uint32_t)al;
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++) rc = read_tensor_info(&c, &g->tensors[i], i);
    if (rc == 0) {
        size_t pad = (g->alignment - c.at % g->alignment) % g->alignment;
        if (g->n_tensors && pad > len - c.at) rc = fail_at(&c, "the data section: past the end of the file (truncated?)");
        g->data_start = g->n_tensors ? c.at + pad : c.at;
    }
    if (rc == 0) rc = check_unique_and_apart(g, len);
    if (rc != 0) gguf_free(g);
    return rc;
}

void gguf_free(GgufFile *g) {
    for (uint64_t i = 0; g->kv && i < g->n_kv; i++) free(g->kv[i].key);
    for (uint64_t i = 0; g->tensors && i < g->n_tensors; i++) free(g->tensors[i].name);
    free(g->kv), free(g->tensors);
    memset(g, 0, sizeof *g);
}

const GgufKv *gguf_find(const GgufFile *g, const char *key) {
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (g->kv[i].key && !strcmp(g->kv[i].key, key)) return &g->kv[i];
    return NULL;
}

const GgufTensor *gguf_find_tensor(const GgufFile *g, const char *name) {
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].name && !strcmp(g->tensors[i].name, name)) return &g->tensors[i];
    return NULL;
}

/* a scalar's value as a double; *is_int set for the integer types (bool included) */
static double scalar(uint32_t type, const unsigned char *p, int *is_int) {
    uint64_t u = le(p, type < GGUF_N_TYPES && SCALAR_SIZE[type] ? SCALAR_SIZE[type] : 1);
    *is_int = 1;
    switch (type) {
    case GGUF_I8: return (double)(int8_t)u;
    case GGUF_I16: return (double)(int16_t)u;
    case GGUF_I32: return (double)(int32_t)u;
    case GGUF_I64: return (double)(int64_t)u;
    case GGUF_F32: {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, 4);
        *is_int = 0;
        return f;
    }
    case GGUF_F64: {
        double d;
        memcpy(&d, &u, 8);
        *is_int = 0;
        return d;
    }
    default: return (double)u;
    }
}

static int wrong_type(const GgufFile *g, const GgufKv *kv, const char *want) {
    return pelab_fail("%s: metadata %s: a %s%s%s, expected %s (GGUF)", g->name, kv->key, gguf_type_name(kv->type),
                      kv->type == GGUF_ARRAY ? " of " : "", kv->type == GGUF_ARRAY ? gguf_type_name(kv->elem_type) : "",
                      want);
}

int gguf_get_u32(const GgufFile *g, const char *key, uint32_t *out) {
    const GgufKv *kv = gguf_find(g, key);
    if (!kv) return 0;
    int is_int = 0;
    double v = SCALAR_SIZE[kv->type] && kv->type != GGUF_BOOL ? scalar(kv->type, kv->data, &is_int) : -1;
    if (!is_int) return wrong_type(g, kv, "an integer");
    if (v < 0 || v > UINT32_MAX) return pelab_fail("%s: metadata %s: %.17g: expected 0..%u (GGUF)", g->name, key, v, UINT32_MAX);
    *out = (uint32_t)v;
    return 1;
}

int gguf_get_f32(const GgufFile *g, const char *key, float *out) {
    const GgufKv *kv = gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_F32 && kv->type != GGUF_F64) return wrong_type(g, kv, "a float");
    int is_int;
    double v = scalar(kv->type, kv->data, &is_int);
    if (!(v == v) || v > 3.4e38 || v < -3.4e38) return pelab_fail("%s: metadata %s: %g: expected a finite float (GGUF)", g->name, key, v);
    *out = (float)v;
    return 1;
}

int gguf_get_bool(const GgufFile *g, const char *key, int *out) {
    const GgufKv *kv = gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_BOOL) return wrong_type(g, kv, "a bool");
    *out = kv->data[0];
    return 1;
}

int gguf_get_str(const GgufFile *g, const char *key, const unsigned char **s, size_t *n) {
    const GgufKv *kv = gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_STRING) return wrong_type(g, kv, "a string");
    *s = kv->data, *n = (size_t)kv->count;
    return 1;
}

int gguf_str_is(const GgufFile *g, const char *key, const char *want) {
    const GgufKv *kv = gguf_find(g, key);
    return kv && kv->type == GGUF_STRING && kv->count == strlen(want) && !memcmp(kv->data, want, (size_t)kv->count);
}

int gguf_get_array(const GgufFile *g, const char *key, uint32_t elem_type, const GgufKv **out) {
    const GgufKv *kv = gguf_find(g, key);
    if (!kv) return 0;
    if (kv->type != GGUF_ARRAY || kv->elem_type != elem_type) {
        char want[40];
        snprintf(want, sizeof want, "an array of %s", gguf_type_name(elem_type));
        return wrong_type(g, kv, want);
    }
    *out = kv;
    return 1;
}

double gguf_array_num(const GgufKv *kv, uint64_t i) {
    int is_int;
    return scalar(kv->elem_type, kv->data + i * (uint64_t)SCALAR_SIZE[kv->elem_type], &is_int);
}

void gguf_array_strings(const GgufKv *kv, const unsigned char **ptr, size_t *len) {
    const unsigned char *p = kv->data; /* parsing checked every length against the file */
    for (uint64_t i = 0; i < kv->count; i++) {
        len[i] = (size_t)le(p, 8);
        ptr[i] = p + 8;
        p += 8 + len[i];
    }
}

/* ---- writing ---- */

static void put_le(StrBuf *b, uint64_t v, int n) {
    char p[8];
    for (int i = 0; i < n; i++) p[i] = (char)(v >> (8 * i));
    sb_put(b, p, (size_t)n);
}

static void put_string(StrBuf *b, const char *s, size_t n) {
    put_le(b, n, 8);
    sb_put(b, s, n);
}

static void put_key(GgufWriter *w, const char *key, uint32_t type) {
    put_string(&w->meta, key, strlen(key));
    put_le(&w->meta, type, 4);
    w->n_kv++;
}

void gguf_w_u32(GgufWriter *w, const char *key, uint32_t v) {
    put_key(w, key, GGUF_U32);
    put_le(&w->meta, v, 4);
}

static uint32_t float_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

void gguf_w_f32(GgufWriter *w, const char *key, float v) {
    put_key(w, key, GGUF_F32);
    put_le(&w->meta, float_bits(v), 4);
}

void gguf_w_bool(GgufWriter *w, const char *key, int v) {
    put_key(w, key, GGUF_BOOL);
    put_le(&w->meta, v ? 1 : 0, 1);
}

void gguf_w_str(GgufWriter *w, const char *key, const char *s) { gguf_w_strn(w, key, s, strlen(s)); }

void gguf_w_strn(GgufWriter *w, const char *key, const char *s, size_t n) {
    put_key(w, key, GGUF_STRING);
    put_string(&w->meta, s, n);
}

void gguf_w_array(GgufWriter *w, const char *key, uint32_t elem_type, uint64_t n) {
    put_key(w, key, GGUF_ARRAY);
    put_le(&w->meta, elem_type, 4);
    put_le(&w->meta, n, 8);
}

void gguf_w_elem_str(GgufWriter *w, const char *s, size_t len) { put_string(&w->meta, s, len); }
void gguf_w_elem_f32(GgufWriter *w, float v) { put_le(&w->meta, float_bits(v), 4); }
void gguf_w_elem_i32(GgufWriter *w, int32_t v) { put_le(&w->meta, (uint32_t)v, 4); }

void gguf_w_tensor(GgufWriter *w, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, const float *src) {
    if (w->n_t == w->cap_t) w->t = xrealloc(w->t, sizeof *w->t * (size_t)(w->cap_t = w->cap_t * 2 + 16));
    GgufOutTensor *t = &w->t[w->n_t++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->n_dims = n_dims, t->type = type, t->src = src;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = (uint32_t)d < n_dims ? ne[d] : 1;
}

static uint64_t tensor_bytes(const GgufOutTensor *t) {
    uint64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    return n / (uint64_t)ggml_block_size(t->type) * (uint64_t)ggml_block_bytes(t->type);
}

static uint64_t padded(uint64_t n) { return (n + GGUF_DEFAULT_ALIGNMENT - 1) / GGUF_DEFAULT_ALIGNMENT * GGUF_DEFAULT_ALIGNMENT; }

static const unsigned char ZEROS[GGUF_DEFAULT_ALIGNMENT];

/* a tensor's values encoded piece by piece (a whole number of blocks each) and written to f, or
 * with f NULL only checked (before the file is begun: its failure would hide the reason) */
static int write_tensor(FILE *f, const GgufOutTensor *t) {
    enum { PIECE = 4096 };
    static __thread unsigned char out[PIECE * 4];
    uint64_t n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    for (uint64_t i = 0; i < n; i += PIECE) {
        size_t k = n - i < PIECE ? (size_t)(n - i) : PIECE, bad;
        if (ggml_encode(t->type, t->src + i, k, out, &bad) != 0)
            return pelab_fail("tensor %s: element %llu (%g) does not fit %s", t->name, (unsigned long long)(i + bad),
                              t->src[i + bad], ggml_type_name(t->type));
        if (f && write_all(f, out, k / (size_t)ggml_block_size(t->type) * (size_t)ggml_block_bytes(t->type)) != 0)
            return -1;
    }
    uint64_t bytes = tensor_bytes(t);
    return f ? write_all(f, ZEROS, (size_t)(padded(bytes) - bytes)) : 0;
}

static int write_body(FILE *f, const void *ctx) {
    const GgufWriter *w = ctx;
    StrBuf h = {0};
    sb_put(&h, "GGUF", 4);
    put_le(&h, 3, 4);
    put_le(&h, (uint64_t)w->n_t, 8);
    put_le(&h, w->n_kv, 8);
    sb_put(&h, w->meta.s ? w->meta.s : "", w->meta.len);
    uint64_t offset = 0;
    for (int i = 0; i < w->n_t; i++) {
        const GgufOutTensor *t = &w->t[i];
        put_string(&h, t->name, strlen(t->name));
        put_le(&h, t->n_dims, 4);
        for (uint32_t d = 0; d < t->n_dims; d++) put_le(&h, t->ne[d], 8);
        put_le(&h, t->type, 4);
        put_le(&h, offset, 8);
        offset += padded(tensor_bytes(t));
    }
    sb_put(&h, (const char *)ZEROS, (size_t)(padded(h.len) - h.len));
    int rc = write_all(f, h.s, h.len);
    sb_free(&h);
    for (int i = 0; i < w->n_t && rc == 0; i++) rc = write_tensor(f, &w->t[i]);
    return rc;
}

int gguf_write(const char *path, const GgufWriter *w) {
    for (int i = 0; i < w->n_t; i++)
        if (write_tensor(NULL, &w->t[i]) != 0) {
            char why[sizeof pelab_errmsg];
            snprintf(why, sizeof why, "%s", pelab_errmsg);
            return pelab_fail("%s: %s", path, why);
        }
    return write_file_atomic(path, write_body, w);
}

void gguf_w_free(GgufWriter *w) {
    sb_free(&w->meta);
    free(w->t);
    memset(w, 0, sizeof *w);
}
