/* test_checkpoint.c: safetensors checkpoints round-trip bit-exactly (parameters, config, position
 * scheme, metadata, AdamW moments), writes are atomic, and every kind of damaged file is refused
 * with one line naming the problem, never a crash. Also the JSON parser on its own. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../io/checkpoint.h"
#include "../core/json.h"
#include "test.h"

#define CK_NAME "ck.safetensors"

typedef struct {
    unsigned char *p;
    size_t len;
} Buf;

static void ckpt_tiny_model(Model *m, const char *pos, int tied, unsigned long long seed) {
    ModelConfig cfg = {.vocab_size = 16, .dim = 8, .n_layers = 2, .n_heads = 2, .n_kv_heads = 1,
                       .hidden_dim = 12, .seq_len = 8, .norm_eps = 1e-5f, .tied = tied};
    int rc = model_create(m, &cfg, pos);
    CHECK(rc == 0, "model_create(%s): %s", pos, pelab_errmsg);
    if (rc == 0) model_init_weights(m, seed);
}

static void tmp_path(char *buf, size_t n, const char *file) { snprintf(buf, n, "%s/%s", test_tmpdir(), file); }

static float *random_block(size_t n, unsigned long long seed) {
    Rng r;
    rng_seed(&r, seed);
    float *p = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = rng_normal(&r);
    return p;
}

static void test_meta(void) {
    CkptMeta meta = {0};
    CHECK(meta_set(&meta, "step", "%d", 10) == 0 && meta_set(&meta, "step", "%d", 20) == 0, "meta_set");
    CHECK(meta.n == 1 && strcmp(meta_get(&meta, "step"), "20") == 0, "meta_set replaces an existing key");
    CHECK(meta_get(&meta, "absent") == NULL, "meta_get of an absent key");
    char longval[600];
    memset(longval, 'x', sizeof longval - 1);
    longval[sizeof longval - 1] = 0;
    CHECK(meta_set(&meta, "big", "%s", longval) == -1 && strstr(pelab_errmsg, "too long"), "overlong value");
    longval[447] = 0;
    CHECK(meta_set(&meta, "big", "%s", longval) == 0, "447-byte value fits: %s", pelab_errmsg);
    CHECK(meta_set(&meta, "", "x") == -1, "empty key refused");
    CkptMeta full = {0};
    char key[16];
    for (int i = 0; i < CKPT_META_MAX; i++) {
        snprintf(key, sizeof key, "k%d", i);
        meta_set(&full, key, "%d", i);
    }
    CHECK(full.n == CKPT_META_MAX && meta_set(&full, "one_more", "1") == -1, "a full table refuses a new key");
}

/* save m with extra metadata and (optionally) moments, load it back, compare everything */
static void roundtrip(const char *pos, int tied, int with_adam) {
    Model m, l;
    ckpt_tiny_model(&m, pos, tied, 7);
    if (!m.params_mem) return;
    char path[512], fname[128], tmp[520], spec_a[512], spec_b[512];
    snprintf(fname, sizeof fname, "ck_%.60s_%d_%d.safetensors", pos, tied, with_adam);
    for (char *c = fname; *c; c++)
        if (*c == ':' || *c == ',' || *c == '=') *c = '_';
    tmp_path(path, sizeof path, fname);
    CkptMeta extra = {0}, got;
    meta_set(&extra, "step", "%d", 123);
    meta_set(&extra, "tokenizer", "byte");
    meta_set(&extra, "train_args", "h\xc3\xa9llo \"quoted\" back\\slash\nnewline\ttab \xe2\x98\x83");
    meta_set(&extra, "dim", "%d", m.cfg.dim); /* a config key with the same value is accepted */
    float *am = with_adam ? random_block(m.n_params, 1) : NULL, *av = with_adam ? random_block(m.n_params, 2) : NULL;
    for (size_t i = 0; av && i < m.n_params; i++) av[i] = fabsf(av[i]); /* second moments: means of squares */
    int rc = checkpoint_save(path, &m, &extra, am, av);
    CHECK(rc == 0, "save %s: %s", path, pelab_errmsg);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0, "no temporary file left after saving %s", path);

    float *lm = NULL, *lv = NULL;
    rc = checkpoint_load(path, &l, &got, &lm, &lv);
    CHECK(rc == 0, "load %s: %s", path, pelab_errmsg);
    if (rc != 0) goto out;
    CHECK(l.n_params == m.n_params && memcmp(l.params_mem, m.params_mem, m.n_params * sizeof(float)) == 0,
          "%s tied=%d: parameters bit-exact", pos, tied);
    CHECK(l.cfg.vocab_size == m.cfg.vocab_size && l.cfg.dim == m.cfg.dim && l.cfg.n_layers == m.cfg.n_layers &&
              l.cfg.n_heads == m.cfg.n_heads && l.cfg.n_kv_heads == m.cfg.n_kv_heads &&
              l.cfg.hidden_dim == m.cfg.hidden_dim && l.cfg.seq_len == m.cfg.seq_len &&
              l.cfg.norm_eps == m.cfg.norm_eps && l.cfg.tied == m.cfg.tied,
          "%s tied=%d: config equal", pos, tied);
    pos_spec(&m.pos, spec_a, sizeof spec_a);
    pos_spec(&l.pos, spec_b, sizeof spec_b);
    CHECK(strcmp(spec_a, spec_b) == 0, "pos spec %s vs %s", spec_a, spec_b);
    CHECK(meta_get(&got, "pos") && strcmp(meta_get(&got, "pos"), spec_a) == 0, "metadata pos = spec");
    for (int i = 0; i < extra.n; i++) {
        const char *v = meta_get(&got, extra.e[i].key);
        CHECK(v && strcmp(v, extra.e[i].val) == 0, "metadata %s round-trips", extra.e[i].key);
    }
    CHECK(meta_get(&got, "format") && strcmp(meta_get(&got, "format"), "pelab") == 0, "format key");
    if (with_adam) {
        CHECK(lm && lv && memcmp(lm, am, m.n_params * 4) == 0 && memcmp(lv, av, m.n_params * 4) == 0,
              "adam moments round-trip");
    } else {
        CHECK(!lm && !lv, "no moments in the file: NULL returned");
    }
    /* the loaded metadata passed back as extra (same config values) saves again */
    CHECK(checkpoint_save(path, &l, &got, lm, lv) == 0, "re-save with loaded metadata: %s", pelab_errmsg);
    unsigned char *file;
    size_t len;
    if (read_file(path, &file, &len) == 0) {
        uint64_t hlen = 0;
        for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | file[i];
        CHECK((8 + hlen) % 8 == 0, "data section 8-byte aligned (header %llu)", (unsigned long long)hlen);
        CHECK(len == 8 + hlen + m.n_params * 4 * (with_adam ? 3 : 1), "file size: header + data");
        free(file);
    }
    model_free(&l);
    free(lm);
    free(lv);
out:
    free(am);
    free(av);
    model_free(&m);
}

static void test_save_errors(void) {
    Model m;
    ckpt_tiny_model(&m, "rope", 1, 3);
    char path[512];
    tmp_path(path, sizeof path, "no_such_dir/ck.safetensors");
    CHECK(checkpoint_save(path, &m, NULL, NULL, NULL) == -1 && strstr(pelab_errmsg, "cannot create") &&
              strstr(pelab_errmsg, path),
          "save into a missing directory: %s", pelab_errmsg);
    tmp_path(path, sizeof path, "ck_override.safetensors");
    CkptMeta extra = {0};
    meta_set(&extra, "dim", "64");
    CHECK(checkpoint_save(path, &m, &extra, NULL, NULL) == -1 && strstr(pelab_errmsg, "dim"),
          "a caller key may not override the config: %s", pelab_errmsg);
    CHECK(access(path, F_OK) != 0, "nothing written after a refused save");
    CkptMeta many = {0};
    char key[16];
    for (int i = 0; i < CKPT_META_MAX - 5; i++) snprintf(key, sizeof key, "k%d", i), meta_set(&many, key, "%d", i);
    CHECK(checkpoint_save(path, &m, &many, NULL, NULL) == -1 && strstr(pelab_errmsg, "too many"),
          "more metadata than a loader can hold is refused: %s", pelab_errmsg);
    float *one = random_block(m.n_params, 5);
    CHECK(checkpoint_save(path, &m, NULL, one, NULL) == -1, "adam_m without adam_v refused");
    free(one);
    /* the final rename fails when a directory sits at the path: the temporary file is removed */
    char tmp[600];
    tmp_path(path, sizeof path, "ck_is_a_dir");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
    CHECK(checkpoint_save(path, &m, NULL, NULL, NULL) == -1 && strstr(pelab_errmsg, "cannot rename"),
          "rename over a directory refused: %s", pelab_errmsg);
    CHECK(access(tmp, F_OK) != 0, "temporary file removed after a failed save");
    rmdir(path);
    Model l;
    CHECK(checkpoint_load(path, &l, NULL, NULL, NULL) == -1 && strstr(pelab_errmsg, "cannot open"),
          "load of a missing file: %s", pelab_errmsg);
    model_free(&m);
}

/* ---- damaged files, edited in memory ---- */

static uint64_t header_len(const Buf *b) {
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--) h = (h << 8) | b->p[i];
    return h;
}

/* new file: header text replaced, data section unchanged */
static Buf with_header(const Buf *src, const char *hdr, size_t hlen) {
    size_t data = src->len - 8 - header_len(src);
    Buf b = {xmalloc(8 + hlen + data), 8 + hlen + data};
    for (int i = 0; i < 8; i++) b.p[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(b.p + 8, hdr, hlen);
    memcpy(b.p + 8 + hlen, src->p + 8 + header_len(src), data);
    return b;
}

static char *header_text(const Buf *src) {
    size_t h = header_len(src);
    char *s = xmalloc(h + 1);
    memcpy(s, src->p + 8, h);
    s[h] = 0;
    return s;
}

/* first occurrence of from -> to; b.p == NULL if absent */
static Buf edit_header(const Buf *src, const char *from, const char *to) {
    char *h = header_text(src);
    char *at = strstr(h, from);
    Buf b = {0};
    CHECK(at != NULL, "test setup: '%s' not in the header", from);
    if (at) {
        size_t pre = (size_t)(at - h), nf = strlen(from), nt = strlen(to), n = strlen(h) - nf + nt;
        char *e = xmalloc(n + 1);
        memcpy(e, h, pre);
        memcpy(e + pre, to, nt);
        strcpy(e + pre + nt, at + nf);
        b = with_header(src, e, n);
        free(e);
    }
    free(h);
    return b;
}

/* the header without the entry ,"key":{...} */
static Buf drop_entry(const Buf *src, const char *key) {
    char *h = header_text(src), pat[128];
    snprintf(pat, sizeof pat, ",\"%s\":{", key);
    char *at = strstr(h, pat), *end = at ? strchr(at, '}') : NULL;
    Buf b = {0};
    CHECK(end != NULL, "test setup: entry %s not found", key);
    if (end) {
        memmove(at, end + 1, strlen(end + 1) + 1);
        b = with_header(src, h, strlen(h));
    }
    free(h);
    return b;
}

/* parse must fail with a one-line message that starts with the name and contains want */
static void expect_fail(Buf b, const char *want, const char *what) {
    if (!b.p) return;
    Model m;
    float *am = NULL, *av = NULL;
    CkptMeta meta;
    int rc = checkpoint_parse(b.p, b.len, CK_NAME, &m, &meta, &am, &av);
    CHECK(rc == -1, "%s: expected a failure, loaded", what);
    CHECK(strncmp(pelab_errmsg, CK_NAME ": ", strlen(CK_NAME) + 2) == 0 && !strchr(pelab_errmsg, '\n'),
          "%s: message is one line naming the file: '%s'", what, pelab_errmsg);
    CHECK(strstr(pelab_errmsg, want) != NULL, "%s: message '%s' lacks '%s'", what, pelab_errmsg, want);
    CHECK(m.params_mem == NULL && am == NULL && av == NULL, "%s: nothing left allocated", what);
    if (rc == 0) model_free(&m), free(am), free(av);
    free(b.p);
}

static Buf copy_prefix(const Buf *src, size_t len) {
    Buf b = {xmalloc(len ? len : 1), len};
    memcpy(b.p, src->p, len);
    return b;
}

static void test_rejections(void) {
    Model m;
    ckpt_tiny_model(&m, "rope", 1, 11);
    char path[512], from[200], to[200];
    tmp_path(path, sizeof path, "ck_reject.safetensors");
    float *am = random_block(m.n_params, 1), *av = random_block(m.n_params, 2);
    CHECK(checkpoint_save(path, &m, NULL, am, av) == 0, "save: %s", pelab_errmsg);
    Buf f;
    if (read_file(path, &f.p, &f.len) != 0) {
        CHECK(0, "read back %s: %s", path, pelab_errmsg);
        return;
    }
    size_t hlen = header_len(&f), data_len = f.len - 8 - hlen;
    const TensorInfo *emb = &m.tensors[T_TOK_EMB], *an = &m.tensors[T_ATTN_NORM];

    expect_fail(copy_prefix(&f, 0), "too short", "empty file");
    expect_fail(copy_prefix(&f, 5), "too short", "5-byte file");
    expect_fail(copy_prefix(&f, 8 + hlen / 2), "exceeds the file size", "cut in the header");
    expect_fail(copy_prefix(&f, f.len - 4), "out of range", "cut 4 bytes from the data");
    expect_fail(copy_prefix(&f, 8 + hlen + 64), "truncated", "cut early in the data");
    Buf big = copy_prefix(&f, f.len);
    big.p[0] = 0xff, big.p[1] = 0xff, big.p[2] = 0xff, big.p[5] = 0x01;
    expect_fail(big, "exceeds the file size", "header length larger than the file");
    Buf small = copy_prefix(&f, f.len);
    memset(small.p, 0, 8), small.p[0] = 1;
    expect_fail(small, "too small", "header length 1");

    char *h = header_text(&f);
    h[hlen - 1] = 0; /* drop a padding space or the closing brace */
    char *last = strrchr(h, '}');
    *last = ']';
    expect_fail(with_header(&f, h, strlen(h)), "not valid JSON: byte", "closing brace flipped");
    free(h);
    expect_fail(edit_header(&f, "{\"__metadata__\"", "[\"__metadata__\""), "not valid JSON", "opening brace flipped");
    expect_fail(edit_header(&f, "\"tok_emb\":{", "\"tok_emb\":{{"), "not valid JSON", "extra brace");
    expect_fail(edit_header(&f, "\"dtype\":\"F32\"", "\"dtype\":\"F16\""), "dtype F16 is not supported", "dtype F16");
    snprintf(from, sizeof from, "\"shape\":[%d,%d]", emb->shape[0], emb->shape[1]);
    snprintf(to, sizeof to, "\"shape\":[%d,%d]", emb->shape[0], emb->shape[1] + 1);
    expect_fail(edit_header(&f, from, to), "tensor tok_emb: shape [16,9] does not match the model's [16,8]", "shape");
    snprintf(to, sizeof to, "\"shape\":[%d,%d,1]", emb->shape[0], emb->shape[1]);
    expect_fail(edit_header(&f, from, to), "shape [16,8,1] does not match", "extra dimension");
    snprintf(to, sizeof to, "\"shape\":[%d,-8]", emb->shape[0]);
    expect_fail(edit_header(&f, from, to), "non-negative integers", "negative dimension");

    snprintf(from, sizeof from, "\"data_offsets\":[0,%zu]", emb->numel * 4);
    snprintf(to, sizeof to, "\"data_offsets\":[0,%zu]", data_len + 4);
    expect_fail(edit_header(&f, from, to), "out of range", "data_offsets past the end");
    snprintf(to, sizeof to, "\"data_offsets\":[0,99999999999999999999999]");
    expect_fail(edit_header(&f, from, to), "data_offsets must be", "data_offsets beyond 64 bits");
    snprintf(to, sizeof to, "\"data_offsets\":[4,%zu]", emb->numel * 4 + 4);
    expect_fail(edit_header(&f, from, to), "overlap", "tok_emb shifted onto the next tensor");
    snprintf(to, sizeof to, "\"data_offsets\":[0,%zu]", emb->numel * 4 - 4);
    expect_fail(edit_header(&f, from, to), "expected 512", "span shorter than the shape");
    snprintf(from, sizeof from, "\"data_offsets\":[%zu,%zu]", an->offset * 4, (an->offset + an->numel) * 4);
    snprintf(to, sizeof to, "\"data_offsets\":[0,%zu]", an->numel * 4);
    expect_fail(edit_header(&f, from, to), "overlap", "overlapping offsets");

    expect_fail(drop_entry(&f, "layers.w3"), "missing tensor layers.w3", "missing tensor");
    expect_fail(drop_entry(&f, "optim.v.final_norm"), "optimizer state incomplete", "missing optim tensor");
    expect_fail(edit_header(&f, "\"final_norm\":", "\"final_nrm\":"), "unknown tensor 'final_nrm'", "unknown tensor");
    expect_fail(edit_header(&f, "\"layers.wk\":", "\"layers.wq\":"), "duplicate object key", "duplicate tensor");
    expect_fail(edit_header(&f, "\"layers.wk\":{", "\"lm_head\":{"), "unknown tensor 'lm_head'",
                "lm_head in a tied model");
    expect_fail(edit_header(&f, "\"dtype\":\"F32\",", "\"dtype\":\"F32\",\"extra\":1,"), "unexpected field",
                "extra field");
    expect_fail(edit_header(&f, "\"n_heads\":", "\"n_headz\":"), "metadata key n_heads is missing", "missing meta key");
    expect_fail(edit_header(&f, "\"dim\":\"8\"", "\"dim\":\"8x\""), "dim='8x'", "non-integer dim");
    expect_fail(edit_header(&f, "\"dim\":\"8\"", "\"dim\":8"), "metadata dim is a number, expected a string",
                "numeric meta");
    expect_fail(edit_header(&f, "\"n_heads\":\"2\"", "\"n_heads\":\"3\""), "heads 3", "heads not dividing dim");
    expect_fail(edit_header(&f, "\"vocab_size\":\"16\"", "\"vocab_size\":\"17\""), "does not match the model's [17,8]",
                "config inconsistent with the tensors");
    expect_fail(edit_header(&f, "\"vocab_size\":\"16\"", "\"vocab_size\":\"16000000\""), "too small",
                "allocation bomb");
    expect_fail(edit_header(&f, "\"pos\":\"rope:", "\"pos\":\"ropey:"), "unknown position scheme", "bad pos scheme");
    expect_fail(edit_header(&f, "layout=interleaved", "layout=diagonal"), "layout=diagonal", "bad pos option");
    expect_fail(edit_header(&f, "\"format\":\"pelab\"", "\"format\":\"other\""), "not a pelab checkpoint", "format");
    expect_fail(edit_header(&f, "\"format_version\":\"1\"", "\"format_version\":\"3\""), "not supported", "version");
    /* version 2 is a file with a per-layer attention pattern: never without one */
    expect_fail(edit_header(&f, "\"format_version\":\"1\"", "\"format_version\":\"2\""), "without its attn_pattern",
                "version 2");
    expect_fail(edit_header(&f, "\"__metadata__\":", "\"__metadatum__\":"), "header has no __metadata__",
                "no metadata");
    expect_fail(with_header(&f, "[1,2] ", 6), "expected an object", "header is an array");
    expect_fail(with_header(&f, "{}      ", 8), "no __metadata__", "empty header object");
    expect_fail(with_header(&f, "{} x", 4), "byte 3: end of file expected", "trailing garbage in the header");

    Buf longer = {xmalloc(f.len + 4), f.len + 4};
    memcpy(longer.p, f.p, f.len);
    memset(longer.p + f.len, 0, 4);
    expect_fail(longer, "no holes", "trailing bytes after the data");

    Rng r;
    rng_seed(&r, 99);
    Buf junk = {xmalloc(300), 300};
    for (int i = 0; i < 300; i++) junk.p[i] = (unsigned char)rng_u32(&r);
    expect_fail(junk, "header length", "garbage bytes");
    junk = (Buf){xmalloc(300), 300};
    for (int i = 0; i < 300; i++) junk.p[i] = (unsigned char)rng_u32(&r);
    memset(junk.p, 0, 8), junk.p[0] = 200;
    expect_fail(junk, "not valid JSON", "garbage header");

    /* requesting no moments from a file that has them is fine */
    Model l;
    CHECK(checkpoint_parse(f.p, f.len, CK_NAME, &l, NULL, NULL, NULL) == 0, "load without moments: %s", pelab_errmsg);
    model_free(&l);

    /* fuzz: single-byte mutations, mostly in the header, must load or fail cleanly */
    Buf mut = copy_prefix(&f, f.len);
    int loaded = 0, refused = 0;
    for (int it = 0; it < 2000; it++) {
        size_t at = it % 4 ? 8 + rng_below(&r, hlen) : rng_below(&r, f.len);
        unsigned char old = mut.p[at];
        mut.p[at] = it % 3 ? (unsigned char)rng_u32(&r) : (unsigned char)"{}[]\",:0123456789-e. \\u"[rng_below(&r, 23)];
        float *fm = NULL, *fv = NULL;
        if (checkpoint_parse(mut.p, mut.len, CK_NAME, &l, NULL, &fm, &fv) == 0) {
            loaded++;
            model_free(&l);
            free(fm);
            free(fv);
        } else {
            refused++;
            if (strncmp(pelab_errmsg, CK_NAME ": ", strlen(CK_NAME) + 2) != 0 || l.params_mem || fm || fv)
                CHECK(0, "mutation at %zu: unclean failure '%s'", at, pelab_errmsg);
        }
        mut.p[at] = old;
    }
    CHECK(loaded + refused == 2000 && refused > 500, "fuzz: %d loaded, %d refused", loaded, refused);
    if (getenv("CK_VERBOSE")) fprintf(stderr, "fuzz: %d loaded, %d refused\n", loaded, refused);
    /* every prefix of the file is refused */
    int prefix_ok = 1;
    for (size_t n = 0; n < f.len; n += n < 8 + hlen ? 1 : 13)
        if (checkpoint_parse(f.p, n, CK_NAME, &l, NULL, NULL, NULL) == 0) {
            prefix_ok = 0;
            model_free(&l);
        }
    CHECK(prefix_ok, "every truncation of the file is refused");
    free(mut.p);
    free(f.p);
    free(am);
    free(av);
    model_free(&m);
}

/* ---- the JSON parser ---- */

static int json_ok(const char *s) {
    JsonDoc d;
    int rc = json_parse(&d, s, strlen(s));
    json_free(&d);
    return rc == 0;
}

static void test_json(void) {
    JsonDoc d;
    const char *s = " {\"a\": [1, -2.5e3, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\\\"\", \"o\": {}} ";
    CHECK(json_parse(&d, s, strlen(s)) == 0, "json valid: %s", pelab_errmsg);
    if (d.root) {
        const JsonNode *a = json_get(d.root, "a"), *str = json_get(d.root, "s");
        CHECK(a && a->n_children == 5 && json_at(a, 0)->is_int && json_at(a, 0)->int_value == 1, "json array");
        CHECK(json_at(a, 1)->number == -2500.0 && !json_at(a, 1)->is_int, "json float");
        CHECK(json_at(a, 2)->type == JSON_TRUE && json_at(a, 4)->type == JSON_NULL && !json_at(a, 5), "json literals");
        CHECK(str && strcmp(str->str, "x\xc3\xa9\xf0\x9f\x98\x80\n\"") == 0 && str->str_len == 9, "json escapes");
        CHECK(json_get(d.root, "o")->type == JSON_OBJECT && !json_get(d.root, "zz"), "json lookup");
        /* jansson keeps no positions: json.c finds them, and the number literals, in the input */
        CHECK(a && a->offset == 7 && json_at(a, 1)->offset == 11 && str->offset == 44 && json_get(d.root, "o")->offset == 76,
              "json offsets");
        CHECK(a && strcmp(json_at(a, 1)->str, "-2.5e3") == 0 && json_at(a, 1)->str_len == 6, "json number literal");
    }
    json_free(&d);
    /* not NUL-terminated: only len bytes are read */
    char nonterm[4] = {'1', '2', '3', '4'};
    CHECK(json_parse(&d, nonterm, 3) == 0 && d.root->int_value == 123, "json honours the length");
    json_free(&d);
    CHECK(json_parse(&d, "[1,]", 4) == -1 && strstr(pelab_errmsg, "byte 3"), "json error offset: %s", pelab_errmsg);
    /* valid snowman; overlong '/', encoded surrogate, truncated sequence */
    CHECK(json_ok("\"\xe2\x98\x83\"") && !json_ok("\"\xc0\xaf\"") && !json_ok("\"\xed\xa0\x80\"") &&
              !json_ok("\"\xe2\x98\""),
          "json UTF-8 validation");
    const char *bad[] = {"", "{", "[1 2]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", "-", "1e", "tru", "nul",
                         "\"abc", "\"\\x\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\\u12\"", "\"\\u0000\"", "\"a\tb\"",
                         "1e999", "-1e999", "NaN", "Infinity", "{} {}", "[1]x", "'a'", "{1:2}", "\"\\",
                         "{\"a\": 1, \"a\": 2}", "{\"k\": {\"x\": 1, \"x\": 1}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(!json_ok(bad[i]), "json rejects '%s'", bad[i]);
    CHECK(json_ok("123456789012345678901234") && json_ok("-0") && json_ok("[[],{}]") && json_ok("\"\\/\""),
          "json accepts edge cases");
    CHECK(json_parse(&d, "-9223372036854775809", 20) == 0 && !d.root->is_int && d.root->number == -9223372036854775808.0,
          "json: an integer past long long is a number");
    json_free(&d);
    CHECK(json_parse(&d, "[9223372036854775807]", 21) == 0 && d.root->child->is_int &&
              d.root->child->int_value == 9223372036854775807LL,
          "json: the largest long long is exact");
    json_free(&d);
    char deep[300];
    for (int depth = 60; depth <= 70; depth += 10) {
        memset(deep, '[', depth);
        memset(deep + depth, ']', depth);
        deep[2 * depth] = 0;
        CHECK(json_ok(deep) == (depth <= JSON_MAX_DEPTH), "json nesting %d", depth);
    }
}

void test_checkpoint(void) {
    test_json();
    test_meta();
    roundtrip("rope", 1, 0);
    roundtrip("rope", 0, 1);
    roundtrip("learned", 0, 1);
    roundtrip("learned", 1, 1);
    roundtrip("learned:max_len=16", 0, 1); /* a table past L: its rows and size come back */
    roundtrip("rope:base=500000,layout=half", 1, 1);
    roundtrip("nope", 0, 0);
    /* the newer schemes: learned tables and MLPs in pos.weight, SSMax's s, a NoPE layer, HoPE's cut */
    roundtrip("cope:heads=separate", 1, 1);
    roundtrip("fire:layers=shared", 0, 1);
    roundtrip("rope:max_period=6+ssmax+nope@1", 1, 1);
    roundtrip("rope+sinks:init=0.3", 0, 1);
    roundtrip("fox:bias=1.5", 1, 1);
    roundtrip("pope:base=500", 0, 1);
    test_save_errors();
    test_rejections();
}
