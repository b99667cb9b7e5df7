/* checkpoint.c: safetensors checkpoints (layout and validation rules in docs/FORMAT.md).
 * File = u64 little-endian header length N | N bytes of JSON | raw little-endian float32 data. */
#include "checkpoint.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../model/bf16.h"
#include "../core/strbuf.h"
#include "../core/json.h"
#include "safetensors.h"

#define CKPT_FORMAT "pelab"
#define CKPT_VERSION "1"
/* a file with a per-layer attention pattern (attn_pattern): a reader of version 1 would run it
 * without its windows, so it refuses it; every other file stays version 1 */
#define CKPT_VERSION_PATTERN "2"
#define CKPT_ALIGN 8
#define TOKENIZER_TENSOR "tokenizer"

/* written from the model itself; a caller's extra entry may repeat one only with the same value */
static const char *const config_keys[] = {"format",     "format_version", "vocab_size", "dim",
                                          "n_layers",   "n_heads",        "n_kv_heads", "hidden_dim",
                                          "seq_len",    "norm_eps",       "tied",       "pos",
                                          "qkv_bias",   "sliding_window", "attn_pattern"};
#define N_CONFIG_KEYS ((int)(sizeof config_keys / sizeof config_keys[0]))

/* the data are raw little-endian floats copied with memcpy */
static int host_is_little_endian(void) {
    uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* ---- metadata ---- */

int meta_set(CkptMeta *meta, const char *key, const char *fmt, ...) {
    size_t key_len = strlen(key);
    if (key_len == 0 || key_len >= sizeof meta->e[0].key)
        return pelab_fail("metadata key '%.64s': expected 1..%zu bytes", key, sizeof meta->e[0].key - 1);
    char val[sizeof meta->e[0].val];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof val)
        return pelab_fail("metadata %s: value too long (%d bytes, at most %zu)", key, n, sizeof val - 1);
    MetaEntry *e = NULL;
    for (int i = 0; i < meta->n; i++)
        if (strcmp(meta->e[i].key, key) == 0) e = &meta->e[i];
    if (!e) {
        if (meta->n >= CKPT_META_MAX) return pelab_fail("metadata %s: table full (%d entries)", key, CKPT_META_MAX);
        e = &meta->e[meta->n++];
        memcpy(e->key, key, key_len + 1);
    }
    memcpy(e->val, val, (size_t)n + 1);
    return 0;
}

const char *meta_get(const CkptMeta *meta, const char *key) {
    for (int i = 0; i < meta->n; i++)
        if (strcmp(meta->e[i].key, key) == 0) return meta->e[i].val;
    return NULL;
}

void meta_free(CkptMeta *meta) {
    free(meta->tokenizer_image);
    meta->tokenizer_image = NULL;
    meta->tokenizer_len = 0;
}

static int is_config_key(const char *key) {
    for (int i = 0; i < N_CONFIG_KEYS; i++)
        if (strcmp(key, config_keys[i]) == 0) return 1;
    return 0;
}

/* ---- the training state (train/train.c writes it) ---- */

int checkpoint_train_state(const CkptMeta *meta, const char *file, CkptTrainState *st) {
    memset(st, 0, sizeof *st);
    st->train_loss = st->val_loss = NAN;
    st->cooldown_start = st->cooldown_end = -1;
    long planned;
    /* a checkpoint is written after a step, at most at the run's last: 1 <= step <= train.steps */
    if (meta_long(meta, file, "train.steps", 1, LONG_MAX, &planned) != 0 ||
        meta_long(meta, file, "step", 1, planned, &st->step) != 0 ||
        meta_u64(meta, file, "data_rng", 1, &st->data_rng) != 0) /* xorshift never reaches the state 0 */
        return -1;
    double loss;
    if (meta_get(meta, "train_loss")) { /* a finished run resumed reports its losses */
        if (meta_double(meta, file, "train_loss", 0, INFINITY, &loss) != 0) return -1;
        st->train_loss = (float)loss;
    }
    const char *vl = meta_get(meta, "val_loss"); /* "nan": no validation yet */
    if (vl && strcmp(vl, "nan") != 0) {
        if (meta_double(meta, file, "val_loss", 0, INFINITY, &loss) != 0) return -1;
        st->val_loss = (float)loss;
    }
    MetaFields f;
    if (meta_get(meta, "cooldown")) { /* --converge: "START END plateau|cap", START <= step, END <= train.steps */
        static const char *const why[] = {"cap", "plateau"};
        if (meta_fields(&f, meta, file, "cooldown") != 0 || meta_next_long(&f, 0, st->step, &st->cooldown_start) != 0 ||
            meta_next_long(&f, st->cooldown_start, planned, &st->cooldown_end) != 0 ||
            meta_next_word(&f, why, 2, &st->plateaued) != 0 || meta_fields_end(&f) != 0)
            return -1;
    }
    /* the curve's running mean since its last row: "SUM N", N of the steps so far (absent before it
     * was stored: the mean restarts) */
    if (meta_get(meta, "curve_loss") &&
        (meta_fields(&f, meta, file, "curve_loss") != 0 || meta_next_double(&f, 0, INFINITY, &st->curve_loss_sum) != 0 ||
         meta_next_long(&f, 0, st->step, &st->curve_loss_n) != 0 || meta_fields_end(&f) != 0))
        return -1;
    return 0;
}

/* ---- writing ---- */

/* the config entries followed by the caller's, checked for what the loader would refuse */
static int build_meta(CkptMeta *all, const Model *m, const CkptMeta *extra) {
    const ModelConfig *c = &m->cfg;
    char spec[512], pattern[PATTERN_SPEC_MAX + 1];
    pos_spec(&m->pos, spec, sizeof spec);
    if (pattern_spec(&c->pattern, pattern, sizeof pattern) >= sizeof pattern)
        return pelab_fail("attn_pattern: the canonical pattern is longer than %d characters", PATTERN_SPEC_MAX);
    all->n = 0;
    if (meta_set(all, "format", CKPT_FORMAT) ||
        meta_set(all, "format_version", "%s", c->pattern.n ? CKPT_VERSION_PATTERN : CKPT_VERSION) ||
        meta_set(all, "vocab_size", "%d", c->vocab_size) || meta_set(all, "dim", "%d", c->dim) ||
        meta_set(all, "n_layers", "%d", c->n_layers) || meta_set(all, "n_heads", "%d", c->n_heads) ||
        meta_set(all, "n_kv_heads", "%d", c->n_kv_heads) || meta_set(all, "hidden_dim", "%d", c->hidden_dim) ||
        meta_set(all, "seq_len", "%d", c->seq_len) || meta_set(all, "norm_eps", "%.9g", c->norm_eps) ||
        meta_set(all, "tied", "%d", c->tied ? 1 : 0) || meta_set(all, "pos", "%s", spec) ||
        (c->qkv_bias && meta_set(all, "qkv_bias", "1")) || /* written only when set: older files stay as they were */
        (c->sliding_window && meta_set(all, "sliding_window", "%d", c->sliding_window)) ||
        (c->pattern.n && meta_set(all, "attn_pattern", "%s", pattern)))
        return -1;
    for (int i = 0; extra && i < extra->n; i++) {
        const MetaEntry *e = &extra->e[i];
        size_t klen = strnlen(e->key, sizeof e->key), vlen = strnlen(e->val, sizeof e->val);
        if (klen == 0 || klen == sizeof e->key || vlen == sizeof e->val)
            return pelab_fail("metadata entry %d: key or value empty or not NUL-terminated", i);
        if (!json_utf8_valid(e->key, klen) || !json_utf8_valid(e->val, vlen))
            return pelab_fail("metadata %s: key or value is not valid UTF-8", e->key);
        const char *have = meta_get(all, e->key);
        if (have && is_config_key(e->key)) {
            if (strcmp(have, e->val) != 0)
                return pelab_fail("metadata %s='%s': this key is written from the model ('%s') and cannot be "
                                  "overridden", e->key, e->val, have);
            continue; /* same value: e.g. metadata read from a checkpoint and passed back */
        }
        if (have) return pelab_fail("metadata %s: duplicate key", e->key);
        if (all->n >= CKPT_META_MAX)
            return pelab_fail("metadata: too many entries (at most %d including the %d config keys)", CKPT_META_MAX,
                              N_CONFIG_KEYS);
        all->e[all->n++] = *e;
    }
    return 0;
}

static void put_tensor_entry(StrBuf *h, const char *prefix, const TensorInfo *t, size_t *data_off, int as_bf16) {
    size_t nbytes = t->numel * (as_bf16 ? sizeof(bf16) : sizeof(float));
    sb_printf(h, ",\"%s%s\":{\"dtype\":\"%s\",\"shape\":[", prefix, t->name, as_bf16 ? "BF16" : "F32");
    for (int d = 0; d < t->ndim; d++) sb_printf(h, "%s%d", d ? "," : "", t->shape[d]);
    sb_printf(h, "],\"data_offsets\":[%zu,%zu]}", *data_off, *data_off + nbytes);
    *data_off += nbytes;
}

static void build_header(StrBuf *h, const CkptMeta *all, const Model *m, int with_optim, size_t tokenizer_len,
                         int as_bf16) {
    sb_put(h, "{\"__metadata__\":{", 17);
    for (int i = 0; i < all->n; i++) {
        if (i) sb_put(h, ",", 1);
        sb_json(h, all->e[i].key);
        sb_put(h, ":", 1);
        sb_json(h, all->e[i].val);
    }
    sb_put(h, "}", 1);
    size_t data_off = 0;
    const char *prefixes[3] = {"", "optim.m.", "optim.v."};
    for (int k = 0; k < (with_optim ? 3 : 1); k++)
        for (int i = 0; i < N_PARAM_TENSORS; i++)
            if (m->tensors[i].numel) put_tensor_entry(h, prefixes[k], &m->tensors[i], &data_off, as_bf16 && k == 0);
    if (tokenizer_len) /* raw bytes after the floats: alignment does not matter for U8 */
        sb_printf(h, ",\"" TOKENIZER_TENSOR "\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}",
                  tokenizer_len, data_off, data_off + tokenizer_len);
    sb_put(h, "}", 1);
    /* spaces are JSON whitespace: pad so the data starts 8-byte aligned (8 + N = 0 mod 8) */
    while (h->len % CKPT_ALIGN) sb_put(h, " ", 1);
}

static int write_block(FILE *f, const Model *m, const float *block) {
    for (int i = 0; i < N_PARAM_TENSORS; i++) {
        const TensorInfo *t = &m->tensors[i];
        if (t->numel && write_all(f, block + t->offset, t->numel * sizeof(float)) != 0) return -1;
    }
    return 0;
}

/* the parameters as bf16: a bf16-only model's own block, else float32 rounded (in pieces) */
static int write_block_bf16(FILE *f, const Model *m) {
    if (m->bf16_only) return write_all(f, m->params_bf16, m->n_params * sizeof(bf16));
    enum { PIECE = 1 << 16 };
    bf16 *piece = xmalloc(PIECE * sizeof(bf16));
    int rc = 0;
    for (int i = 0; i < N_PARAM_TENSORS && rc == 0; i++) {
        const TensorInfo *t = &m->tensors[i];
        for (size_t e = 0; e < t->numel && rc == 0; e += PIECE) {
            size_t n = t->numel - e < PIECE ? t->numel - e : PIECE;
            bf16_convert(piece, m->params_mem + t->offset + e, n);
            rc = write_all(f, piece, n * sizeof(bf16));
        }
    }
    free(piece);
    return rc;
}

typedef struct {
    const StrBuf *header;
    const Model *m;
    const float *adam_m, *adam_v;
    const unsigned char *tokenizer;
    size_t tokenizer_len;
    int as_bf16;
} CkptBody;

static int write_body(FILE *f, const void *ctx) {
    const CkptBody *b = ctx;
    if (st_write_header(f, b->header->s, b->header->len) != 0 ||
        (b->as_bf16 ? write_block_bf16(f, b->m) : write_block(f, b->m, b->m->params_mem)) != 0)
        return -1;
    if (b->adam_m && (write_block(f, b->m, b->adam_m) != 0 || write_block(f, b->m, b->adam_v) != 0)) return -1;
    return write_all(f, b->tokenizer, b->tokenizer_len);
}

static int save(const char *path, const Model *m, const CkptMeta *extra, const float *adam_m, const float *adam_v,
                int as_bf16) {
    if (!host_is_little_endian()) return pelab_fail("%s: checkpoints need a little-endian host", path);
    if (m->bf16_only && !as_bf16) return pelab_fail("%s: the model's weights are held in bf16 only: no float32 to write", path);
    if (!adam_m != !adam_v) return pelab_fail("%s: adam_m and adam_v must be given together", path);
    CkptMeta all;
    if (build_meta(&all, m, extra) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: %s", path, why);
    }
    StrBuf h = {0};
    size_t tok_len = extra && extra->tokenizer_image ? extra->tokenizer_len : 0;
    build_header(&h, &all, m, adam_m != NULL, tok_len, as_bf16);
    CkptBody body = {&h, m, adam_m, adam_v, tok_len ? extra->tokenizer_image : NULL, tok_len, as_bf16};
    int rc = write_file_atomic(path, write_body, &body);
    free(h.s);
    return rc;
}

int checkpoint_save(const char *path, const Model *m, const CkptMeta *extra, const float *adam_m,
                    const float *adam_v) {
    return save(path, m, extra, adam_m, adam_v, 0);
}

int checkpoint_save_bf16(const char *path, const Model *m, const CkptMeta *extra) {
    return save(path, m, extra, NULL, NULL, 1);
}

/* ---- reading ---- */

/* __metadata__ into out: string to string, keys and values within MetaEntry's limits (json_parse
 * refuses duplicate keys) */
static int read_meta(const JsonNode *md, const char *name, CkptMeta *out) {
    out->n = 0;
    if (!md) return st_fail(name, "header has no __metadata__ (not a pelab checkpoint)");
    if (md->type != JSON_OBJECT)
        return st_fail(name, "__metadata__ is a %s, expected an object", json_type_name(md->type));
    if (md->n_children > CKPT_META_MAX)
        return st_fail(name, "__metadata__ has %zu entries, at most %d are supported", md->n_children, CKPT_META_MAX);
    for (const JsonNode *c = md->child; c; c = c->next) {
        if (c->type != JSON_STRING)
            return st_fail(name, "metadata %.64s is a %s, expected a string", c->key, json_type_name(c->type));
        size_t klen = strlen(c->key);
        if (klen == 0 || klen >= sizeof out->e[0].key)
            return st_fail(name, "metadata key '%.64s...': expected 1..%zu bytes", c->key, sizeof out->e[0].key - 1);
        if (c->str_len >= sizeof out->e[0].val)
            return st_fail(name, "metadata %s: value is %zu bytes, at most %zu are supported", c->key, c->str_len,
                          sizeof out->e[0].val - 1);
        MetaEntry *e = &out->e[out->n++];
        memcpy(e->key, c->key, klen + 1);
        memcpy(e->val, c->str, c->str_len + 1);
    }
    return 0;
}

/* ---- typed reads of metadata ---- */

/* v as a message shows it: at most 64 bytes, control characters as '?' (one line whatever the file holds) */
static const char *shown_value(const char *v, char *buf, size_t cap) {
    size_t n = 0;
    for (; v[n] && n < cap - 1 && n < 64; n++) buf[n] = (unsigned char)v[n] < 0x20 || v[n] == 0x7f ? '?' : v[n];
    buf[n] = 0;
    return buf;
}

static int field_fail(const MetaFields *r, const char *field, const char *expected) {
    char v[72], f[72];
    if (!r->multi) return pelab_fail("%s: metadata %s='%s': expected %s", r->file, r->key, shown_value(r->val, v, sizeof v), expected);
    return pelab_fail("%s: metadata %s='%s': field %d ('%s'): expected %s", r->file, r->key,
                      shown_value(r->val, v, sizeof v), r->field, shown_value(field, f, sizeof f), expected);
}

int meta_fields(MetaFields *r, const CkptMeta *meta, const char *file, const char *key) {
    r->file = file, r->key = key, r->val = meta_get(meta, key), r->next = r->val, r->field = 0, r->multi = 1;
    if (!r->val) return pelab_fail("%s: metadata key %s is missing", file, key);
    return 0;
}

/* the next field (up to a space or the end) into buf; -1 when the value has no more or it is too long */
static int next_field(MetaFields *r, char *buf, size_t cap, const char *expected) {
    r->field++;
    if (!r->next) return field_fail(r, "", expected);
    size_t n = r->multi ? strcspn(r->next, " ") : strlen(r->next);
    if (n >= cap) return field_fail(r, "...", expected);
    memcpy(buf, r->next, n), buf[n] = 0;
    r->next = r->next[n] ? r->next + n + 1 : NULL;
    return 0;
}

int meta_next_long(MetaFields *r, long lo, long hi, long *out) {
    char buf[32], expected[80];
    snprintf(expected, sizeof expected, "an integer from %ld to %ld", lo, hi);
    if (next_field(r, buf, sizeof buf, expected) != 0) return -1;
    const char *digits = buf + (buf[0] == '-');
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (!(*digits >= '0' && *digits <= '9') || errno || *end || x < lo || x > hi) return field_fail(r, buf, expected);
    *out = (long)x;
    return 0;
}

int meta_next_u64(MetaFields *r, unsigned long long lo, unsigned long long *out) {
    char buf[32], expected[80];
    snprintf(expected, sizeof expected, "an unsigned integer from %llu to %llu", lo, ULLONG_MAX);
    if (next_field(r, buf, sizeof buf, expected) != 0) return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (!(buf[0] >= '0' && buf[0] <= '9') || errno || *end || x < lo) return field_fail(r, buf, expected);
    *out = x;
    return 0;
}

int meta_next_double(MetaFields *r, double lo, double hi, double *out) {
    char buf[64], expected[80];
    if (isinf(hi)) snprintf(expected, sizeof expected, "a finite number >= %g", lo);
    else snprintf(expected, sizeof expected, "a number from %g to %g", lo, hi);
    if (next_field(r, buf, sizeof buf, expected) != 0) return -1;
    char *end;
    errno = 0;
    double x = strtod(buf, &end);
    /* strtod skips spaces and takes a sign, "inf" and "nan": the first byte must be the number's own */
    if (!((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-' || buf[0] == '.') || errno == ERANGE || *end ||
        end == buf || !isfinite(x) || !(x >= lo && x <= hi))
        return field_fail(r, buf, expected);
    *out = x;
    return 0;
}

int meta_next_word(MetaFields *r, const char *const *words, int n_words, int *out) {
    char buf[64], expected[200];
    int len = snprintf(expected, sizeof expected, "one of");
    for (int i = 0; i < n_words && len < (int)sizeof expected; i++)
        len += snprintf(expected + len, sizeof expected - len, "%s %s", i ? "," : "", words[i]);
    if (next_field(r, buf, sizeof buf, expected) != 0) return -1;
    for (int i = 0; i < n_words; i++)
        if (strcmp(buf, words[i]) == 0) return *out = i, 0;
    return field_fail(r, buf, expected);
}

int meta_fields_end(MetaFields *r) {
    if (!r->next) return 0;
    char v[72];
    return pelab_fail("%s: metadata %s='%s': expected %d field%s, more follow", r->file, r->key,
                      shown_value(r->val, v, sizeof v), r->field, r->field > 1 ? "s" : "");
}

int meta_long(const CkptMeta *meta, const char *file, const char *key, long lo, long hi, long *out) {
    MetaFields r;
    if (meta_fields(&r, meta, file, key) != 0) return -1;
    r.multi = 0;
    return meta_next_long(&r, lo, hi, out) != 0 || meta_fields_end(&r) != 0 ? -1 : 0;
}

int meta_u64(const CkptMeta *meta, const char *file, const char *key, unsigned long long lo, unsigned long long *out) {
    MetaFields r;
    if (meta_fields(&r, meta, file, key) != 0) return -1;
    r.multi = 0;
    return meta_next_u64(&r, lo, out) != 0 || meta_fields_end(&r) != 0 ? -1 : 0;
}

int meta_double(const CkptMeta *meta, const char *file, const char *key, double lo, double hi, double *out) {
    MetaFields r;
    if (meta_fields(&r, meta, file, key) != 0) return -1;
    r.multi = 0;
    return meta_next_double(&r, lo, hi, out) != 0 || meta_fields_end(&r) != 0 ? -1 : 0;
}

/* a config entry: an int from 0 (config_validate then checks its own range) */
static int meta_int(const CkptMeta *meta, const char *name, const char *key, int *out) {
    long x;
    if (meta_long(meta, name, key, 0, INT32_MAX, &x) != 0) return -1;
    *out = (int)x;
    return 0;
}

static int read_config(const CkptMeta *meta, const char *name, ModelConfig *cfg) {
    const char *format = meta_get(meta, "format"), *version = meta_get(meta, "format_version");
    if (!format) return st_fail(name, "metadata key format is missing (not a pelab checkpoint)");
    if (strcmp(format, CKPT_FORMAT) != 0)
        return st_fail(name, "metadata format='%.64s': expected '" CKPT_FORMAT "' (not a pelab checkpoint)", format);
    if (!version) return st_fail(name, "metadata key format_version is missing");
    if (strcmp(version, CKPT_VERSION) != 0 && strcmp(version, CKPT_VERSION_PATTERN) != 0)
        return st_fail(name, "format_version '%.64s' is not supported (this build reads versions " CKPT_VERSION
                             " and " CKPT_VERSION_PATTERN ")", version);
    memset(cfg, 0, sizeof *cfg);
    if (meta_int(meta, name, "vocab_size", &cfg->vocab_size) || meta_int(meta, name, "dim", &cfg->dim) ||
        meta_int(meta, name, "n_layers", &cfg->n_layers) || meta_int(meta, name, "n_heads", &cfg->n_heads) ||
        meta_int(meta, name, "n_kv_heads", &cfg->n_kv_heads) || meta_int(meta, name, "hidden_dim", &cfg->hidden_dim) ||
        meta_int(meta, name, "seq_len", &cfg->seq_len) || meta_int(meta, name, "tied", &cfg->tied))
        return -1;
    double eps;
    if (meta_double(meta, name, "norm_eps", 0, 1, &eps) != 0) return -1; /* config_validate: 0 < eps < 1 */
    cfg->norm_eps = (float)eps;
    if (cfg->tied != 0 && cfg->tied != 1) return st_fail(name, "metadata tied=%d: expected 0 or 1", cfg->tied);
    if (meta_get(meta, "qkv_bias") && meta_int(meta, name, "qkv_bias", &cfg->qkv_bias)) return -1;
    if (meta_get(meta, "sliding_window") && meta_int(meta, name, "sliding_window", &cfg->sliding_window)) return -1;
    const char *pattern = meta_get(meta, "attn_pattern");
    if (pattern && strcmp(version, CKPT_VERSION_PATTERN) != 0)
        return st_fail(name, "metadata attn_pattern in a version " CKPT_VERSION " file (expected version "
                             CKPT_VERSION_PATTERN ")");
    if (!pattern && strcmp(version, CKPT_VERSION_PATTERN) == 0)
        return st_fail(name, "format_version " CKPT_VERSION_PATTERN " without its attn_pattern");
    if (pattern && pattern_parse(&cfg->pattern, pattern) != 0) return st_fail(name, "metadata %s", pelab_errmsg);
    if (pattern && !cfg->pattern.n) return st_fail(name, "metadata attn_pattern='none': expected a pattern");
    if (config_validate(cfg) != 0) return st_fail(name, "metadata: %s", pelab_errmsg);
    return 0;
}

/* the file must hold the bytes of the largest parameters a config declares: a truncated file is
 * named as such before its tensors are matched (check_tensors bounds the allocation itself) */
static int check_data_size(const ModelConfig *c, const char *spec, size_t data_len, size_t elem, const char *name) {
    PosCtx pc;
    if (pos_init(&pc, spec, c->dim, c->n_heads, c->n_kv_heads, c->n_layers, c->seq_len) != 0)
        return st_fail(name, "metadata pos='%.200s': %s", spec, pelab_errmsg);
    size_t pos_params = pos_n_params(&pc);
    pos_free(&pc);
    size_t D = (size_t)c->dim, hd = D / (size_t)c->n_heads, F = (size_t)c->hidden_dim;
    size_t q = (size_t)c->n_heads * hd, kv = (size_t)c->n_kv_heads * hd;
    /* tok_emb, pos.weight, and per layer wq+wo, wk+wv, w1+w2+w3 */
    size_t lower = (size_t)c->vocab_size * D + pos_params + (size_t)c->n_layers * (2 * q * D + 2 * kv * D + 3 * F * D);
    if (lower > data_len / elem)
        return st_fail(name, "data section is %zu bytes, too small for the %zu+ parameters of this config (truncated?)",
                      data_len, lower);
    return 0;
}

typedef StRange Range;

/* index of the model tensor this header key names (kind 0: parameter, 1: optim.m, 2: optim.v), -1 if none */
static int find_tensor(const Model *m, const char *key, int *kind) {
    *kind = 0;
    if (strncmp(key, "optim.m.", 8) == 0) *kind = 1;
    else if (strncmp(key, "optim.v.", 8) == 0) *kind = 2;
    const char *base = *kind ? key + 8 : key;
    for (int i = 0; i < N_PARAM_TENSORS; i++)
        if (m->tensors[i].numel && strcmp(m->tensors[i].name, base) == 0) return i;
    return -1;
}

/* the tokenizer tensor: a U8 vector of any length; fills t with that shape */
static int tokenizer_tensor_info(const JsonNode *e, size_t data_len, const char *name, TensorInfo *t) {
    const JsonNode *shape = e->type == JSON_OBJECT ? json_get(e, "shape") : NULL;
    const JsonNode *n = shape && shape->type == JSON_ARRAY && shape->n_children == 1 ? json_at(shape, 0) : NULL;
    if (!n || n->type != JSON_NUMBER || !n->is_int || n->int_value < 0 || (unsigned long long)n->int_value > data_len ||
        (unsigned long long)n->int_value > FILE_MAX_TOKENIZER) /* the cap of a tokenizer file read from disk */
        return st_fail(name, "tensor " TOKENIZER_TENSOR ": shape must be [n], the byte count of the tokenizer file (at most %llu MB)",
                       (unsigned long long)FILE_MAX_TOKENIZER >> 20);
    memset(t, 0, sizeof *t);
    t->ndim = 1;
    t->shape[0] = (int)n->int_value;
    t->numel = (size_t)n->int_value;
    return 0;
}

/* where the data section's bytes come from: the caller's buffer, or the open file (read straight
 * into the model's blocks: no copy of the whole file in memory) */
typedef struct {
    const unsigned char *mem;
    FILE *f;
    size_t start; /* the data section's offset in the file */
    const char *name;
} DataSrc;

static int src_read(const DataSrc *s, size_t off, void *dst, size_t n) {
    if (s->mem) {
        memcpy(dst, s->mem + off, n);
        return 0;
    }
    if (fseeko(s->f, (off_t)(s->start + off), SEEK_SET) != 0 || fread(dst, 1, n, s->f) != n)
        return st_fail(s->name, "read of %zu bytes at data offset %zu failed (file changed or truncated?)", n, off);
    return 0;
}

/* the dtype of a header entry ("" when it has none: st_check_tensor then says what is wrong) */
static const char *entry_dtype(const JsonNode *e) {
    const JsonNode *d = e->type == JSON_OBJECT ? json_get(e, "dtype") : NULL;
    return d && d->type == JSON_STRING ? d->str : "";
}

/* how many parameter tensors of the header are BF16 (a bf16 checkpoint: import of a bf16 HF model), and of how many */
static int header_params_bf16(const JsonNode *root, int *n_params) {
    int n_bf16 = 0;
    *n_params = 0;
    for (const JsonNode *c = root->child; c; c = c->next) {
        if (!strcmp(c->key, "__metadata__") || !strcmp(c->key, TOKENIZER_TENSOR) || !strncmp(c->key, "optim.", 6))
            continue;
        n_bf16 += !strcmp(entry_dtype(c), "BF16");
        ++*n_params;
    }
    return n_bf16;
}

/* tensor t (n elements at data offset off) of dtype BF16: into the bf16 block of a bf16-only model
 * (and widened into the float32 block for the tensors kept there), else widened in pieces */
static int read_bf16_tensor(const DataSrc *src, size_t off, Model *m, int i, const char *tname) {
    const TensorInfo *t = &m->tensors[i];
    enum { PIECE = 1 << 16 };
    bf16 *piece = m->bf16_only ? m->params_bf16 + t->offset : xmalloc(PIECE * sizeof(bf16));
    int rc = 0;
    for (size_t e = 0; e < t->numel && rc == 0; e += PIECE) {
        size_t n = t->numel - e < PIECE ? t->numel - e : PIECE;
        bf16 *h = m->bf16_only ? piece + e : piece;
        if ((rc = src_read(src, off + e * sizeof(bf16), h, n * sizeof(bf16))) != 0) break;
        for (size_t j = 0; j < n; j++) {
            if ((h[j] & 0x7f80) == 0x7f80) {
                rc = st_fail(src->name, "tensor %s: element %zu is %f (expected a finite number)", tname, e + j,
                             bf16_to_float(h[j]));
                break;
            }
            if (!m->bf16_only || !model_weight_in_bf16_only(i)) m->params_mem[t->offset + e + j] = bf16_to_float(h[j]);
        }
    }
    if (!m->bf16_only) free(piece);
    return rc;
}

/* what a header declares, matched to a laid-out model (model_layout: shapes, no block yet) */
typedef struct {
    const JsonNode *found[3][N_PARAM_TENSORS]; /* [kind][tensor]: parameter, optim.m, optim.v */
    const JsonNode *tok_entry;
    TensorInfo tok_info;
    int n_optim;
} CkptTable;

/* every header tensor's name, dtype, shape and byte range against m's layout, before a block the
 * config's size is allocated: a forged config over a few huge tensors is refused by name */
static int check_tensors(const JsonNode *root, size_t data_len, const char *name, const Model *m, CkptTable *tab) {
    Range ranges[3 * N_PARAM_TENSORS + 1];
    int n_ranges = 0, n_expected = 0;
    memset(tab, 0, sizeof *tab);
    for (int i = 0; i < N_PARAM_TENSORS; i++) n_expected += m->tensors[i].numel > 0;
    /* json_parse refuses duplicate keys: each tensor comes at most once */
    for (const JsonNode *c = root->child; c; c = c->next) {
        if (strcmp(c->key, "__metadata__") == 0) continue;
        if (strcmp(c->key, TOKENIZER_TENSOR) == 0) {
            if (tokenizer_tensor_info(c, data_len, name, &tab->tok_info) != 0 ||
                st_check_tensor(c, c->key, &tab->tok_info, "U8", 1, data_len, name, &ranges[n_ranges]) != 0)
                return -1;
            tab->tok_entry = c;
            n_ranges++;
            continue;
        }
        int kind, i = find_tensor(m, c->key, &kind);
        if (i < 0) return st_fail(name, "unknown tensor '%.100s' (not a parameter of this model)", c->key);
        /* parameters in float32 or bf16 (a bf16 model's import), optimizer moments in float32 */
        int as_bf16 = kind == 0 && !strcmp(entry_dtype(c), "BF16");
        if (st_check_tensor(c, c->key, &m->tensors[i], as_bf16 ? "BF16" : "F32", as_bf16 ? sizeof(bf16) : sizeof(float),
                            data_len, name, &ranges[n_ranges]) != 0)
            return -1;
        tab->found[kind][i] = c;
        n_ranges++;
        tab->n_optim += kind > 0;
    }
    for (int i = 0; i < N_PARAM_TENSORS; i++)
        if (m->tensors[i].numel && !tab->found[0][i]) return st_fail(name, "missing tensor %s", m->tensors[i].name);
    if (tab->n_optim && tab->n_optim != 2 * n_expected)
        for (int k = 1; k < 3; k++)
            for (int i = 0; i < N_PARAM_TENSORS; i++)
                if (m->tensors[i].numel && !tab->found[k][i])
                    return st_fail(name, "optimizer state incomplete: missing tensor optim.%c.%s (%d of %d present)",
                                  k == 1 ? 'm' : 'v', m->tensors[i].name, tab->n_optim, 2 * n_expected);
    return st_check_ranges(ranges, n_ranges, data_len, name);
}

/* the tensors check_tensors matched, into m's block (allocated since), the AdamW moments (sized
 * by the model: the header's shapes matched it) and meta's tokenizer image */
static int read_tensors(const CkptTable *tab, const DataSrc *src, const char *name, Model *m, float **adam_m,
                        float **adam_v, CkptMeta *meta) {
    float *block[3] = {m->params_mem, NULL, NULL};
    if (tab->n_optim && adam_m) block[1] = *adam_m = xcalloc(m->n_params, sizeof(float));
    if (tab->n_optim && adam_v) block[2] = *adam_v = xcalloc(m->n_params, sizeof(float));
    for (int k = 0; k < 3; k++)
        for (int i = 0; block[k] && i < N_PARAM_TENSORS; i++) {
            const TensorInfo *t = &m->tensors[i];
            if (!t->numel) continue;
            const JsonNode *entry = tab->found[k][i];
            size_t off = (size_t)json_at(json_get(entry, "data_offsets"), 0)->int_value;
            const char *prefix = k == 0 ? "" : k == 1 ? "optim.m." : "optim.v.";
            if (k == 0 && !strcmp(entry_dtype(entry), "BF16")) {
                if (read_bf16_tensor(src, off, m, i, t->name) != 0) return -1;
                continue;
            }
            if (m->bf16_only) return st_fail(name, "tensor %s: F32 in a model loaded as bf16 only", t->name);
            float *dst = block[k] + t->offset;
            if (src_read(src, off, dst, t->numel * sizeof(float)) != 0) return -1;
            for (size_t e = 0; e < t->numel; e++) /* a NaN weight would only show up as garbage later */
                if (!isfinite(dst[e]))
                    return st_fail(name, "tensor %s%s: element %zu is %f (expected a finite number)", prefix, t->name,
                                  e, dst[e]);
            /* AdamW's second moments are running means of squares: a negative one turns into a NaN
             * (its square root) steps later */
            for (size_t e = 0; k == 2 && e < t->numel; e++)
                if (dst[e] < 0.0f)
                    return st_fail(name, "tensor %s%s: element %zu is %g (expected a second moment, >= 0)", prefix,
                                   t->name, e, dst[e]);
        }
    if (tab->tok_entry && meta) {
        size_t off = (size_t)json_at(json_get(tab->tok_entry, "data_offsets"), 0)->int_value;
        meta->tokenizer_len = tab->tok_info.numel;
        meta->tokenizer_image = xmalloc(tab->tok_info.numel ? tab->tok_info.numel : 1);
        if (src_read(src, off, meta->tokenizer_image, tab->tok_info.numel) != 0) return -1;
    }
    return 0;
}

/* a checkpoint whose header is st: builds *m (bf16 only when want_bf16 and every parameter is BF16) */
static int parse_opened(const StFile *st, const DataSrc *src, const char *name, Model *m, CkptMeta *meta,
                        float **adam_m, float **adam_v, int want_bf16) {
    const JsonNode *root = st->doc.root;
    CkptMeta loaded;
    loaded.tokenizer_image = NULL, loaded.tokenizer_len = 0;
    ModelConfig cfg;
    const char *spec;
    int rc = -1;
    if (read_meta(json_get(root, "__metadata__"), name, &loaded) == 0 && read_config(&loaded, name, &cfg) == 0) {
        spec = meta_get(&loaded, "pos");
        int n_params, n_bf16 = header_params_bf16(root, &n_params), bf16_only = want_bf16 && n_bf16 && n_bf16 == n_params;
        CkptTable tab;
        /* laid out, its tensors matched to the header, and only then allocated */
        if (!spec || !*spec) st_fail(name, "metadata key pos is missing or empty");
        else if (check_data_size(&cfg, spec, st->data_len, n_bf16 ? sizeof(bf16) : sizeof(float), name) != 0) {
        } else if (model_layout(m, &cfg, spec) != 0) {
            st_fail(name, "cannot build the model: %s", pelab_errmsg);
        } else if (check_tensors(root, st->data_len, name, m, &tab) != 0) {
        } else if ((bf16_only ? model_alloc_params_bf16(m) : model_alloc_params(m)) != 0) {
            st_fail(name, "cannot build the model: %s", pelab_errmsg);
        } else {
            rc = read_tensors(&tab, src, name, m, adam_m, adam_v, &loaded);
        }
    }
    if (rc != 0) {
        meta_free(&loaded);
        model_free(m);
        if (adam_m) free(*adam_m), *adam_m = NULL;
        if (adam_v) free(*adam_v), *adam_v = NULL;
        return -1;
    }
    if (meta) *meta = loaded;
    else meta_free(&loaded);
    return 0;
}

static void clear_outputs(Model *m, CkptMeta *meta, float **adam_m, float **adam_v) {
    memset(m, 0, sizeof *m);
    if (adam_m) *adam_m = NULL;
    if (adam_v) *adam_v = NULL;
    if (meta) meta->n = 0, meta->tokenizer_image = NULL, meta->tokenizer_len = 0;
}

int checkpoint_parse(const unsigned char *buf, size_t len, const char *name, Model *m, CkptMeta *meta,
                     float **adam_m, float **adam_v) {
    clear_outputs(m, meta, adam_m, adam_v);
    if (!name) name = "checkpoint";
    if (!host_is_little_endian()) return st_fail(name, "checkpoints need a little-endian host");
    StFile st;
    if (st_open(&st, buf, len, name) != 0) return -1;
    DataSrc src = {.mem = st.data, .name = name};
    int rc = parse_opened(&st, &src, name, m, meta, adam_m, adam_v, 0);
    st_close(&st);
    return rc;
}

/* the file's header read alone, then every tensor straight from the file into its block */
static int load_file(const char *path, Model *m, CkptMeta *meta, float **adam_m, float **adam_v, int want_bf16) {
    clear_outputs(m, meta, adam_m, adam_v);
    if (!host_is_little_endian()) return st_fail(path, "checkpoints need a little-endian host");
    FILE *f = fopen_regular(path);
    if (!f) return -1;
    unsigned char len_le[8];
    uint64_t hlen = 0;
    off_t size = fseeko(f, 0, SEEK_END) == 0 ? ftello(f) : -1;
    rewind(f);
    if (size < 0) {
        fclose(f);
        return st_fail(path, "cannot tell its size");
    }
    size_t got = fread(len_le, 1, 8, f);
    for (size_t i = 0; i < got; i++) hlen |= (uint64_t)len_le[i] << (8 * i);
    /* a forged length is refused before anything that size is allocated */
    size_t avail = got < 8 || hlen > ST_MAX_HEADER || hlen > (uint64_t)size - 8 ? got : 8 + (size_t)hlen;
    unsigned char *head = xmalloc(avail);
    memcpy(head, len_le, got);
    int rc = -1;
    if (avail == got || fread(head + 8, 1, avail - 8, f) == avail - 8) {
        StFile st;
        if (st_open_part(&st, head, avail, (size_t)size, path) == 0) {
            DataSrc src = {.f = f, .start = st.data_start, .name = path};
            rc = parse_opened(&st, &src, path, m, meta, adam_m, adam_v, want_bf16);
            if (rc == 0) snprintf(m->source, sizeof m->source, "%s", path);
            st_close(&st);
        }
    } else st_fail(path, "read of the header failed");
    free(head);
    fclose(f);
    return rc;
}

int checkpoint_load(const char *path, Model *m, CkptMeta *meta, float **adam_m, float **adam_v) {
    return load_file(path, m, meta, adam_m, adam_v, 0);
}

int checkpoint_load_precision(const char *path, Model *m, CkptMeta *meta, Precision precision) {
    if (load_file(path, m, meta, NULL, NULL, precision == PRECISION_BF16) != 0) return -1;
    if (model_set_precision(m, precision) != 0) {
        if (meta) meta_free(meta);
        model_free(m);
        return -1;
    }
    return 0;
}
