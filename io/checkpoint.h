/* checkpoint.h: safetensors checkpoints (see docs/FORMAT.md).
 * A file holds the model's parameters, optionally the AdamW moments (tensors "optim.m.*",
 * "optim.v.*"), and string metadata: the model config, the position scheme, and whatever the
 * caller adds (training state, tokenizer). Writes are atomic: PATH.tmp, fsync, rename. */
#ifndef PELAB_CHECKPOINT_H
#define PELAB_CHECKPOINT_H

#include <stddef.h>

#include "../model/model.h"

#define CKPT_META_MAX 64
typedef struct {
    char key[64];
    char val[448];
} MetaEntry;
typedef struct {
    int n;
    MetaEntry e[CKPT_META_MAX];
    /* the tokenizer file, stored as the U8 tensor "tokenizer" (none when NULL). checkpoint_load
     * fills it with a malloc'd copy (free with meta_free); checkpoint_save only reads it. */
    unsigned char *tokenizer_image;
    size_t tokenizer_len;
} CkptMeta;

/* set (or replace) key; printf-style value. -1 if full or too long. */
int meta_set(CkptMeta *meta, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* NULL if absent */
const char *meta_get(const CkptMeta *meta, const char *key);
/* frees the tokenizer image a load filled in */
void meta_free(CkptMeta *meta);

/* Save m's parameters, the config metadata and the entries of extra (may be NULL).
 * adam_m / adam_v: NULL, or n_params floats each, laid out like the parameter block. */
int checkpoint_save(const char *path, const Model *m, const CkptMeta *extra, const float *adam_m,
                    const float *adam_v);

/* The same, every parameter stored as BF16 (rounded to nearest even): lossless when
 * model_weights_bf16_exact (the import of a bf16 model), half the file. Loading widens them back
 * exactly, or keeps them in bf16 alone (checkpoint_load_precision). */
int checkpoint_save_bf16(const char *path, const Model *m, const CkptMeta *extra);

/* Load a checkpoint: lays *m out from the file's config and position scheme (model_layout), checks
 * every header tensor against it, only then allocates it and copies the parameters. meta (may be NULL) receives every metadata entry. If adam_m/adam_v are
 * non-NULL they receive malloc'd moments when the file has them, else NULL.
 * -1 with one line in pelab_errmsg naming the file and the problem. */
int checkpoint_load(const char *path, Model *m, CkptMeta *meta, float **adam_m, float **adam_v);
/* checkpoint_load for inference at this precision (no optimizer state): a bf16 checkpoint under
 * PRECISION_BF16 keeps its weights in bf16 alone (model_alloc_params_bf16: half the memory of the widened
 * block, read from the file straight into it); otherwise float32, then model_set_precision. The
 * header is read first and every tensor straight into its place: never a copy of the whole file. */
int checkpoint_load_precision(const char *path, Model *m, CkptMeta *meta, Precision precision);
/* Same from a memory buffer (fuzzing, tests); name is used in error messages. */
int checkpoint_parse(const unsigned char *buf, size_t len, const char *name, Model *m, CkptMeta *meta,
                     float **adam_m, float **adam_v);

#endif
