/* safetensors.h: the safetensors container shared by pelab checkpoints (checkpoint.c) and Hugging
 * Face model files (hf_llama.c): u64 little-endian header length N | N bytes of JSON (tensor name ->
 * {dtype, shape, data_offsets}, an optional "__metadata__" of strings, keys in any order) | data. */
#ifndef PELAB_SAFETENSORS_H
#define PELAB_SAFETENSORS_H

#include <stddef.h>
#include <stdio.h>

#include "../core/json.h"
#include "../model/model.h"

/* safetensors allows 100 MB; a pelab header is a few KB (the tokenizer is a tensor, not metadata)
 * and a large Hugging Face one a few hundred KB: 16 MB leaves room and bounds a hostile header */
#define ST_MAX_HEADER (16ull << 20)

typedef struct {
    JsonDoc doc;               /* the header; doc.root is an object */
    const unsigned char *data; /* the data section, inside the caller's buffer (NULL: st_open_part of the header alone) */
    size_t data_start;         /* its byte offset in the file: 8 + the header length */
    size_t data_len;
    int open;
} StFile;

/* one line "name: <problem>" into pelab_errmsg, -1 (fmt may refer to pelab_errmsg) */
int st_fail(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* parse the header of buf (which must outlive f); -1 with one line naming name otherwise */
int st_open(StFile *f, const unsigned char *buf, size_t len, const char *name);
/* the same when buf holds only the first avail bytes of a len-byte file (at least the header): the
 * data are then read from the file by the caller (f->data NULL, f->data_start where they begin) */
int st_open_part(StFile *f, const unsigned char *buf, size_t avail, size_t len, const char *name);
void st_close(StFile *f);

typedef struct {
    const char *name;
    unsigned long long begin, end; /* bytes in the data section */
} StRange;
/* header entry e of tensor tname against the expected shape and dtype (elem_size bytes each); fills
 * r with its byte range. Fields other than dtype, shape and data_offsets are refused. */
int st_check_tensor(const JsonNode *e, const char *tname, const TensorInfo *t, const char *want_dtype,
                    size_t elem_size, size_t data_len, const char *name, StRange *r);
/* ranges r[0..n) (sorted here) against a data section of data_len bytes: no two overlap and together
 * they cover it all (safetensors allows no holes); -1 naming the two tensors or the bytes covered */
int st_check_ranges(StRange *r, int n, size_t data_len, const char *name);
/* every entry of f's header (but __metadata__) has valid data_offsets, and their ranges pass
 * st_check_ranges: what a reader of some of the tensors checks for all of them */
int st_check_layout(const StFile *f, const char *name);
/* tensor key (F32, or BF16 / F16 widened exactly) into dst as t->numel floats, every one finite;
 * -1 if absent or mismatched */
int st_read_f32(const StFile *f, const char *key, const TensorInfo *t, float *dst, const char *name);
/* st_read_f32's checks alone (present, dtype, shape, range), reading no data: a loader matches every
 * tensor of a header to its model before it allocates the model */
int st_check_f32(const StFile *f, const char *key, const TensorInfo *t, const char *name);

/* the u64 little-endian length and the header text (its caller pads it so the data start 8-byte aligned) */
int st_write_header(FILE *f, const char *json, size_t len);
/* write float32 tensors in the given order, 8-byte aligned, __metadata__ {"format": format}
 * (Hugging Face's loader wants "pt"); atomic */
typedef struct {
    char name[96];
    TensorInfo info;   /* ndim, shape, numel */
    const float *data; /* numel floats */
} StTensor;
int st_write_f32(const char *path, const StTensor *t, int n, const char *format);
/* the same, as BF16 (rounded to nearest even) when bf16 is set, as HF's bfloat16 checkpoints */
int st_write(const char *path, const StTensor *t, int n, const char *format, int as_bf16);

#endif
