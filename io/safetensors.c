/* safetensors.c: the safetensors container (see safetensors.h and docs/FORMAT.md). */
#include "safetensors.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../core/fp16.h"
#include "../model/bf16.h"

#define ST_ALIGN 8

int st_fail(const char *name, const char *fmt, ...) {
    char why[sizeof pelab_errmsg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return pelab_fail("%s: %s", name, why);
}

int st_open(StFile *f, const unsigned char *buf, size_t len, const char *name) {
    return st_open_part(f, buf, len, len, name);
}

int st_open_part(StFile *f, const unsigned char *buf, size_t avail, size_t len, const char *name) {
    memset(f, 0, sizeof *f);
    if (len < 8 || avail < 8) return st_fail(name, "file is %zu bytes, too short for a safetensors header (truncated?)", len);
    unsigned long long hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | buf[i];
    if (hlen < 2) return st_fail(name, "header length %llu is too small", hlen);
    if (hlen > len - 8)
        return st_fail(name, "header length %llu exceeds the file size %zu less its 8-byte length field (truncated or "
                       "not a safetensors file)", hlen, len);
    if (hlen > ST_MAX_HEADER) return st_fail(name, "header length %llu exceeds the 16 MB limit", hlen);
    if (hlen > avail - 8) return st_fail(name, "header length %llu: only %zu bytes of it were read", hlen, avail - 8);
    if (json_parse(&f->doc, (const char *)buf + 8, (size_t)hlen) != 0)
        return st_fail(name, "header is not valid JSON: %s (offsets from the header start, file byte 8)",
                       pelab_errmsg);
    if (f->doc.root->type != JSON_OBJECT) {
        st_fail(name, "header is a JSON %s, expected an object", json_type_name(f->doc.root->type));
        json_free(&f->doc);
        return -1;
    }
    f->open = 1;
    f->data_start = 8 + (size_t)hlen;
    f->data = avail == len ? buf + f->data_start : NULL;
    f->data_len = len - f->data_start;
    return 0;
}

void st_close(StFile *f) {
    if (f->open) json_free(&f->doc);
    memset(f, 0, sizeof *f);
}

static void format_shape(char *buf, size_t n, const int *shape, int ndim) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, "%s%d", d ? "," : "", shape[d]);
    if (used < n) snprintf(buf + used, n - used, "]");
}

/* entry e's data_offsets as r: two integers, in order, inside the data section */
static int entry_range(const JsonNode *e, const char *tname, size_t data_len, const char *name, StRange *r) {
    const JsonNode *offs = json_get(e, "data_offsets");
    const JsonNode *b = offs ? json_at(offs, 0) : NULL, *en = offs ? json_at(offs, 1) : NULL;
    if (!offs || offs->type != JSON_ARRAY || offs->n_children != 2 || b->type != JSON_NUMBER || !b->is_int ||
        b->int_value < 0 || en->type != JSON_NUMBER || !en->is_int || en->int_value < 0)
        return st_fail(name, "tensor %s: data_offsets must be [begin, end], two non-negative integers below 2^63",
                       tname);
    unsigned long long begin = (unsigned long long)b->int_value, end = (unsigned long long)en->int_value;
    if (begin > end || end > data_len)
        return st_fail(name, "tensor %s: data_offsets [%llu,%llu] out of range of the %zu-byte data section", tname,
                       begin, end, data_len);
    r->name = tname;
    r->begin = begin;
    r->end = end;
    return 0;
}

/* one tensor entry against the model's expectation; fills r with its byte range in the data */
int st_check_tensor(const JsonNode *e, const char *tname, const TensorInfo *t, const char *want_dtype,
                        size_t elem_size, size_t data_len, const char *name, StRange *r) {
    if (e->type != JSON_OBJECT)
        return st_fail(name, "tensor %s: entry is a %s, expected an object", tname, json_type_name(e->type));
    for (const JsonNode *f = e->child; f; f = f->next)
        if (strcmp(f->key, "dtype") && strcmp(f->key, "shape") && strcmp(f->key, "data_offsets"))
            return st_fail(name, "tensor %s: unexpected field '%.64s'", tname, f->key);
    const JsonNode *dtype = json_get(e, "dtype"), *shape = json_get(e, "shape"), *offs = json_get(e, "data_offsets");
    if (!dtype || !shape || !offs) return st_fail(name, "tensor %s: needs dtype, shape and data_offsets", tname);
    if (dtype->type != JSON_STRING || strcmp(dtype->str, want_dtype) != 0)
        return st_fail(name, "tensor %s: dtype %.32s is not supported (expected %s)", tname,
                      dtype->type == JSON_STRING ? dtype->str : json_type_name(dtype->type), want_dtype);

    if (shape->type != JSON_ARRAY)
        return st_fail(name, "tensor %s: shape is a %s, expected an array", tname, json_type_name(shape->type));
    char want[128], got[128];
    format_shape(want, sizeof want, t->shape, t->ndim);
    int matches = shape->n_children == (size_t)t->ndim;
    size_t d = 0, used = 0;
    got[used++] = '[';
    for (const JsonNode *s = shape->child; s; s = s->next, d++) {
        if (s->type != JSON_NUMBER || !s->is_int || s->int_value < 0)
            return st_fail(name, "tensor %s: shape must be an array of non-negative integers", tname);
        if (d < (size_t)t->ndim && s->int_value != t->shape[d]) matches = 0;
        /* the file's own spelling, cut short for absurd shapes */
        if (used < 100) used += (size_t)snprintf(got + used, sizeof got - used, "%s%.20s", d ? "," : "", s->str);
        else if (!s->next) used += (size_t)snprintf(got + used, sizeof got - used, ",...");
    }
    snprintf(got + used, sizeof got - used, "]");
    if (!matches) return st_fail(name, "tensor %s: shape %s does not match the model's %s", tname, got, want);

    if (entry_range(e, tname, data_len, name, r) != 0) return -1;
    if (r->end - r->begin != t->numel * elem_size)
        return st_fail(name, "tensor %s: data_offsets [%llu,%llu] span %llu bytes, expected %zu (%zu x %s)", tname,
                      r->begin, r->end, r->end - r->begin, t->numel * elem_size, t->numel, want_dtype);
    return 0;
}

static int range_cmp(const void *a, const void *b) {
    const StRange *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

int st_check_ranges(StRange *r, int n, size_t data_len, const char *name) {
    qsort(r, (size_t)n, sizeof *r, range_cmp);
    unsigned long long covered = 0;
    for (int k = 0; k < n; k++) {
        if (k && r[k].begin < r[k - 1].end)
            return st_fail(name, "tensors %s [%llu,%llu] and %s [%llu,%llu] overlap", r[k - 1].name, r[k - 1].begin,
                           r[k - 1].end, r[k].name, r[k].begin, r[k].end);
        covered += r[k].end - r[k].begin;
    }
    if (covered != data_len)
        return st_fail(name, "data section is %zu bytes but the tensors cover %llu (safetensors allows no holes)",
                       data_len, covered);
    return 0;
}

int st_check_layout(const StFile *f, const char *name) {
    StRange *r = xcalloc(f->doc.root->n_children + 1, sizeof *r);
    int n = 0, rc = 0;
    for (const JsonNode *e = f->doc.root->child; e && rc == 0; e = e->next) {
        if (!strcmp(e->key, "__metadata__")) continue;
        if (e->type != JSON_OBJECT)
            rc = st_fail(name, "tensor %s: entry is a %s, expected an object", e->key, json_type_name(e->type));
        else rc = entry_range(e, e->key, f->data_len, name, &r[n++]);
    }
    if (rc == 0) rc = st_check_ranges(r, n, f->data_len, name);
    free(r);
    return rc;
}

/* key's entry checked as st_read_f32 reads it: its byte range r, its dtype (F32, BF16 or F16) */
static int check_f32(const StFile *f, const char *key, const TensorInfo *t, const char *name, StRange *r,
                     const char **dtype) {
    const JsonNode *e = json_get(f->doc.root, key);
    *dtype = "F32";
    if (!e) return st_fail(name, "missing tensor %s", key);
    /* float32 as it is; BF16 and F16 (most HF checkpoints) widened exactly */
    const JsonNode *dt = e->type == JSON_OBJECT ? json_get(e, "dtype") : NULL;
    *dtype = dt && dt->type == JSON_STRING && (!strcmp(dt->str, "BF16") || !strcmp(dt->str, "F16")) ? dt->str : "F32";
    return st_check_tensor(e, key, t, *dtype, (*dtype)[1] == '3' ? 4 : 2, f->data_len, name, r);
}

int st_check_f32(const StFile *f, const char *key, const TensorInfo *t, const char *name) {
    StRange r = {0};
    const char *dtype;
    return check_f32(f, key, t, name, &r, &dtype);
}

int st_read_f32(const StFile *f, const char *key, const TensorInfo *t, float *dst, const char *name) {
    StRange r = {0};
    const char *dtype;
    if (check_f32(f, key, t, name, &r, &dtype) != 0) return -1;
    const unsigned char *src = f->data + r.begin;
    if (dtype[1] == '3') memcpy(dst, src, t->numel * sizeof(float));
    for (size_t i = 0; dtype[1] != '3' && i < t->numel; i++) {
        uint16_t h = (uint16_t)(src[2 * i] | src[2 * i + 1] << 8);
        dst[i] = dtype[0] == 'B' ? bf16_to_float(h) : fp16_to_float(h);
    }
    for (size_t i = 0; i < t->numel; i++)
        if (!isfinite(dst[i]))
            return st_fail(name, "tensor %s: element %zu is %f (expected a finite number)", key, i, dst[i]);
    return 0;
}

int st_write_header(FILE *f, const char *json, size_t len) {
    unsigned char len_le[8];
    for (int i = 0; i < 8; i++) len_le[i] = (unsigned char)((uint64_t)len >> (8 * i));
    return write_all(f, len_le, 8) != 0 || write_all(f, json, len) != 0 ? -1 : 0;
}

typedef struct {
    const StrBuf *header;
    const StTensor *t;
    int n, as_bf16;
} StBody;

/* n floats rounded to bf16, in pieces */
static int write_rounded(FILE *f, const float *x, size_t n) {
    enum { PIECE = 1 << 14 };
    bf16 piece[PIECE];
    for (size_t i = 0; i < n; i += PIECE) {
        size_t k = n - i < PIECE ? n - i : PIECE;
        for (size_t j = 0; j < k; j++) piece[j] = bf16_from_float(x[i + j]);
        if (write_all(f, piece, k * sizeof(bf16)) != 0) return -1;
    }
    return 0;
}

static int write_st_body(FILE *f, const void *ctx) {
    const StBody *b = ctx;
    if (st_write_header(f, b->header->s, b->header->len) != 0) return -1;
    for (int i = 0; i < b->n; i++)
        if ((b->as_bf16 ? write_rounded(f, b->t[i].data, b->t[i].info.numel)
                     : write_all(f, b->t[i].data, b->t[i].info.numel * sizeof(float))) != 0)
            return -1;
    return 0;
}

int st_write_f32(const char *path, const StTensor *t, int n, const char *format) {
    return st_write(path, t, n, format, 0);
}

int st_write(const char *path, const StTensor *t, int n, const char *format, int as_bf16) {
    StrBuf h = {0};
    sb_printf(&h, "{\"__metadata__\":{\"format\":\"%s\"}", format);
    size_t off = 0, elem = as_bf16 ? sizeof(bf16) : sizeof(float);
    for (int i = 0; i < n; i++) {
        sb_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t[i].name, as_bf16 ? "BF16" : "F32");
        for (int d = 0; d < t[i].info.ndim; d++) sb_printf(&h, "%s%d", d ? "," : "", t[i].info.shape[d]);
        sb_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + t[i].info.numel * elem);
        off += t[i].info.numel * elem;
    }
    sb_put(&h, "}", 1);
    while (h.len % ST_ALIGN) sb_put(&h, " ", 1); /* spaces are JSON whitespace: 8 + N = 0 mod 8 */
    StBody body = {&h, t, n, as_bf16};
    int rc = write_file_atomic(path, write_st_body, &body);
    sb_free(&h);
    return rc;
}
