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

/* Typed reads of metadata, the config's and the training state's alike: key's whole value (meta_long,
 * meta_u64, meta_double), or its space-separated fields one at a time (meta_fields, then
 * meta_next_*, then meta_fields_end: no field left). Integers are decimal (an optional '-', digits,
 * nothing else: "1e3" and " 7" are refused), numbers finite, each within [lo, hi]. -1 with one line
 * naming file, key, the value and what was expected ("FILE: metadata KEY='V': expected an integer
 * from LO to HI"), or "FILE: metadata key KEY is missing". An optional key: test meta_get first. */
int meta_long(const CkptMeta *meta, const char *file, const char *key, long lo, long hi, long *out);
int meta_u64(const CkptMeta *meta, const char *file, const char *key, unsigned long long lo, unsigned long long *out);
int meta_double(const CkptMeta *meta, const char *file, const char *key, double lo, double hi, double *out);
typedef struct {
    const char *file, *key, *val; /* named in messages */
    const char *next;             /* the next field's first byte */
    int field;                    /* fields read so far */
    int multi;                    /* a value of several fields: messages name the field */
} MetaFields;
int meta_fields(MetaFields *r, const CkptMeta *meta, const char *file, const char *key);
int meta_next_long(MetaFields *r, long lo, long hi, long *out);
int meta_next_u64(MetaFields *r, unsigned long long lo, unsigned long long *out);
int meta_next_double(MetaFields *r, double lo, double hi, double *out);
/* the field must be one of words[0..n_words-1]: its index into *out */
int meta_next_word(MetaFields *r, const char *const *words, int n_words, int *out);
int meta_fields_end(MetaFields *r);

/* What a resumed run takes from a checkpoint of `pelab train` besides the weights and moments: the
 * entries train.steps, step, data_rng, train_loss, val_loss, cooldown and curve_loss. */
typedef struct {
    long step;                   /* steps done, 1..train.steps */
    unsigned long long data_rng; /* the data sampler's state, never 0 (xorshift64* never reaches it) */
    float train_loss, val_loss;  /* the last step's and validation's (NaN: none stored) */
    long cooldown_start, cooldown_end; /* --converge's cooldown, -1 before it began */
    int plateaued;               /* ... 1: the rule held, 0: forced by the cap */
    double curve_loss_sum;       /* the loss curve's running mean since its last row (sum of n losses) */
    long curve_loss_n;
} CkptTrainState;
/* every one of those entries typed and within its range (meta_long, ...); -1 with one line naming
 * file, the entry and what was expected */
int checkpoint_train_state(const CkptMeta *meta, const char *file, CkptTrainState *st);

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
