/* test_hostile_loaders.c: every loader checks a file's header and declared sizes before it reads
 * the body (the hostile-inputs review of round 3). Sparse files of 3 GB and 30 GB (truncate: no disk, no
 * memory) with an invalid header and with a valid-looking one go through the binary under test
 * (`import --gguf`, `import --llama2c`, its --tokenizer, `import --hf`): each is refused in one
 * line (or, a valid model with trailing bytes, imported) within 1 s of CPU and 100 MB of memory
 * over a baseline refusal. Then the messages: a llama2.c NaN weight names its tensor and layer, a
 * GGUF hyperparameter of 0 is refused rather than taken as absent, and a tensor range past 64 bits
 * prints the declared values, never a wrapped sum. Last, a forged config of 7e9 weights over a 30 GB
 * file whose header covers the data with a few huge tensors (a pelab checkpoint under `info` and
 * `sample --precision bf16`, an HF folder under `import --hf`): refused by the first tensor's name
 * or shape before the model is allocated (it was "out of memory" after a 27 GB request). */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../io/gguf.h"
#include "../io/gguf_llama.h"
#include "../io/gguf_quant.h"
#include "../io/hf_llama.h"
#include "../io/llama2c.h"
#include "../model/model.h"
#include "child.h"
#include "test.h"

static char base[256]; /* test_tmpdir()/hostile-loaders */
static long baseline_kb; /* peak memory of a refusal of a 4-byte file */

#define GB (1ull << 30)

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", base, name); }

/* base/name: bytes head (n of them), then holes up to size bytes */
static void sparse_file(const char *name, const void *head, size_t n, unsigned long long size) {
    char p[600];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    int ok = f && (n == 0 || fwrite(head, 1, n, f) == n);
    if (f) ok = fclose(f) == 0 && ok;
    CHECK(ok && truncate(p, (off_t)size) == 0, "make sparse file %s", p);
}

/* the command refused (needle in its one line) or, want_ok, done; within the bounds either way */
static void expect_bounded(const char *what, const char *const *args, const char *needle, int want_ok) {
    Run r;
    run_argv(&r, args, NULL, NULL, 20);
    int lines = 0;
    for (const char *c = r.out; *c; c++) lines += *c == '\n';
    if (want_ok) CHECK(r.status == 0, "%s: exit %d, expected 0: %.300s", what, r.status, r.out);
    else
        CHECK(r.status == 1 && lines == 1 && !strncmp(r.out, "pelab: ", 7) && strstr(r.out, needle),
              "%s: exit %d, expected 1 with one line containing '%s': %.300s", what, r.status, needle, r.out);
    CHECK(!r.timed_out && r.cpu_s < 1.0, "%s: %.2f s of CPU, expected under 1 s", what, r.cpu_s);
    CHECK(r.maxrss_kb < baseline_kb + 100 * 1024, "%s: peak %ld KB, expected under the baseline %ld KB + 100 MB", what,
          r.maxrss_kb, baseline_kb);
}

static void import_gguf(const char *what, const char *name, const char *needle, int want_ok) {
    char p[600], out[600];
    path_of(p, sizeof p, name);
    path_of(out, sizeof out, "out.ckpt");
    const char *args[] = {"import", "--gguf", p, "--out", out, NULL};
    expect_bounded(what, args, needle, want_ok);
}

static void import_llama2c(const char *what, const char *model, const char *tok, const char *needle) {
    char p[600], t[600], out[600];
    path_of(p, sizeof p, model);
    path_of(t, sizeof t, tok);
    path_of(out, sizeof out, "out.ckpt");
    const char *args[] = {"import", "--llama2c", p, "--tokenizer", t, "--out", out, NULL};
    expect_bounded(what, args, needle, 0);
}

static void measure_baseline(void) {
    sparse_file("tiny.bad", "GGUF", 4, 4);
    char p[600], out[600];
    path_of(p, sizeof p, "tiny.bad");
    path_of(out, sizeof out, "out.ckpt");
    const char *args[] = {"import", "--gguf", p, "--out", out, NULL};
    Run r;
    run_argv(&r, args, NULL, NULL, 20);
    CHECK(r.status == 1, "baseline refusal: exit %d: %.200s", r.status, r.out);
    baseline_kb = r.maxrss_kb;
}

/* ---- GGUF ---- */

/* "GGUF", version 3, the two counts */
static size_t gguf_head(unsigned char *h, uint64_t n_tensors, uint64_t n_kv) {
    memcpy(h, "GGUF", 4);
    uint32_t v = 3;
    memcpy(h + 4, &v, 4), memcpy(h + 8, &n_tensors, 8), memcpy(h + 16, &n_kv, 8);
    return 24;
}

/* a tiny llama model exported to base/name */
static void export_gguf(const char *name) {
    Model m;
    char p[600], note[400];
    path_of(p, sizeof p, name);
    int ok = tiny_model(&m, "rope", 2, 0, 5) == 0 && gguf_llama_write(p, &m, NULL, GGML_TYPE_F32, note, sizeof note) == 0;
    CHECK(ok, "export %s: %s", p, pelab_errmsg);
    if (ok) model_free(&m);
}

/* a copy of base/src as base/dst with the value after key (its n bytes) replaced by val */
static void patch_gguf(const char *src, const char *dst, const char *key, size_t skip, const void *val, size_t n) {
    char a[600], b[600];
    path_of(a, sizeof a, src);
    path_of(b, sizeof b, dst);
    unsigned char *buf;
    size_t len;
    if (read_file(a, &buf, &len) != 0) {
        CHECK(0, "%s", pelab_errmsg);
        return;
    }
    size_t k = strlen(key);
    unsigned char *at = memmem(buf, len, key, k);
    CHECK(at && at + k + skip + n <= buf + len, "%s: no key %s", a, key);
    if (at) memcpy(at + k + skip, val, n);
    CHECK(write_bytes_atomic(b, buf, len) == 0, "%s", pelab_errmsg);
    free(buf);
}

static void sparse_gguf(void) {
    static unsigned char zeros[64];
    sparse_file("zeros3.gguf", zeros, 0, 3 * GB);
    sparse_file("zeros30.gguf", zeros, 0, 30 * GB);
    import_gguf("GGUF, 3 GB of zeros", "zeros3.gguf", "not a GGUF file", 0);
    import_gguf("GGUF, 30 GB of zeros", "zeros30.gguf", "not a GGUF file", 0);

    /* counts a 30 GB file could hold, at 13 and 29 bytes each */
    unsigned char h[256] = {0};
    size_t n = gguf_head(h, 1ull << 36, 1ull << 30);
    sparse_file("counts30.gguf", h, n, 30 * GB);
    import_gguf("GGUF, 30 GB, 2^36 tensors and 2^30 keys", "counts30.gguf", "more than", 0);

    /* one key: an array of 2^40 strings, every one empty (the holes): stopped at GGUF_MAX_HEADER */
    n = gguf_head(h, 1, 1);
    uint64_t klen = 20, count = 1ull << 40;
    uint32_t arr = GGUF_ARRAY, str = GGUF_STRING;
    memcpy(h + n, &klen, 8), memcpy(h + n + 8, "general.architecture", 20), n += 28;
    memcpy(h + n, &arr, 4), memcpy(h + n + 4, &str, 4), memcpy(h + n + 8, &count, 8), n += 16;
    sparse_file("array3.gguf", h, n, 3 * GB);
    import_gguf("GGUF, 3 GB, an array of 2^40 strings", "array3.gguf", "past the first 64 MB", 0);

    /* a valid model followed by holes: imported, its trailing bytes never read */
    export_gguf("tiny.gguf"); /* kept as it is for gguf_messages */
    export_gguf("tiny3.gguf");
    char a[600];
    path_of(a, sizeof a, "tiny3.gguf");
    CHECK(truncate(a, (off_t)(3 * GB)) == 0, "truncate %s", a);
    import_gguf("GGUF, a tiny model in a 3 GB file", "tiny3.gguf", NULL, 1);

    /* metadata of a 31e9-weight model (what a 30 GB Q4 file holds), a tensor table of a tiny one:
     * refused from the table before anything the config's size is allocated */
    GgufWriter w = {0};
    gguf_w_str(&w, "general.architecture", "llama");
    gguf_w_u32(&w, "llama.context_length", 4096);
    gguf_w_u32(&w, "llama.embedding_length", 8192);
    gguf_w_u32(&w, "llama.block_count", 32);
    gguf_w_u32(&w, "llama.feed_forward_length", 28672);
    gguf_w_u32(&w, "llama.attention.head_count", 64);
    gguf_w_f32(&w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    float emb[8 * 256] = {0};
    uint64_t ne[2] = {8, 256};
    gguf_w_tensor(&w, "token_embd.weight", 2, ne, GGML_TYPE_F32, emb);
    path_of(a, sizeof a, "big-config.gguf");
    CHECK(gguf_write(a, &w) == 0, "%s", pelab_errmsg);
    gguf_w_free(&w);
    CHECK(truncate(a, (off_t)(30 * GB)) == 0, "truncate %s", a);
    import_gguf("GGUF, 30 GB, a 31e9-weight config over a tiny tensor table", "big-config.gguf",
                "tensor token_embd.weight: 2 dims {8, 256, ...}, expected {8192, 256}", 0);
}

static void gguf_messages(void) {
    /* a hyperparameter of 0 is not an absent key */
    uint32_t zero = 0;
    float fzero = 0;
    static const struct {
        const char *key, *needle;
    } keys[] = {
        {"llama.rope.dimension_count", "llama.rope.dimension_count 0"},
        {"llama.attention.head_count_kv", "llama.attention.head_count_kv: 0"},
        {"llama.vocab_size", "llama.vocab_size: 0"},
        {"llama.attention.layer_norm_rms_epsilon", "llama.attention.layer_norm_rms_epsilon: 0"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int is_f = strstr(keys[i].key, "epsilon") != NULL;
        patch_gguf("tiny.gguf", "zero-key.gguf", keys[i].key, 4, is_f ? (const void *)&fzero : (const void *)&zero, 4);
        char what[200];
        snprintf(what, sizeof what, "GGUF, %s = 0", keys[i].key);
        import_gguf(what, "zero-key.gguf", keys[i].needle, 0);
    }
    /* a tensor offset near 2^64: the declared offset and size, not their wrapped sum */
    uint64_t off = UINT64_MAX - 31;
    patch_gguf("tiny.gguf", "offset.gguf", "token_embd.weight", 4 + 16 + 4, &off, 8);
    import_gguf("GGUF, tensor offset 2^64 - 32", "offset.gguf", "bytes at offset 18446744073709551584 of the data section", 0);
}

/* ---- llama2.c ---- */

static void export_llama2c(const char *name, Model *m) {
    char p[600];
    path_of(p, sizeof p, name);
    CHECK(llama2c_write_model(p, m) == 0, "export %s: %s", p, pelab_errmsg);
}

static void sparse_llama2c(void) {
    sparse_file("zeros3.bin", NULL, 0, 3 * GB);
    sparse_file("zeros30.bin", NULL, 0, 30 * GB);
    import_llama2c("llama2.c, 3 GB of zeros", "zeros3.bin", "none.bin", "header field dim = 0");
    import_llama2c("llama2.c, 30 GB of zeros", "zeros30.bin", "none.bin", "header field dim = 0");

    /* a valid header (a tiny model) in front of 3 GB and 30 GB: the exact size it needs, refused */
    Model m;
    if (tiny_model(&m, "rope", 2, 1, 3) != 0) {
        CHECK(0, "tiny model: %s", pelab_errmsg);
        return;
    }
    export_llama2c("tiny.bin", &m);
    char a[600], b[600];
    path_of(a, sizeof a, "tiny.bin");
    path_of(b, sizeof b, "tiny30.bin");
    unsigned char head[28];
    FILE *f = fopen(a, "rb");
    CHECK(f && fread(head, 1, 28, f) == 28, "read %s", a);
    if (f) fclose(f);
    sparse_file("tiny3.bin", head, 28, 3 * GB);
    sparse_file("tiny30.bin", head, 28, 30 * GB);
    import_llama2c("llama2.c, a valid header in 3 GB", "tiny3.bin", "none.bin", "needs exactly");
    import_llama2c("llama2.c, a valid header in 30 GB", "tiny30.bin", "none.bin", "needs exactly");

    /* its tokenizer.bin: 30 GB of holes, refused before it is read */
    sparse_file("tok30.bin", NULL, 0, 30 * GB);
    import_llama2c("llama2.c, a 30 GB tokenizer.bin", "tiny.bin", "tok30.bin", "more than a tokenizer.bin can be");

    /* a NaN weight names its llama2.c tensor and layer (was "tensor (null)") */
    int last = m.cfg.n_layers - 1;
    m.params_mem[m.tensors[T_WQ].offset + m.tensors[T_WQ].numel / (size_t)m.cfg.n_layers * (size_t)last + 3] = NAN;
    export_llama2c("nan.bin", &m);
    char needle[200];
    snprintf(needle, sizeof needle, "tensor wq (pelab's layers.wq), layer %d, element 3 is nan", last);
    import_llama2c("llama2.c, a NaN in wq", "nan.bin", "none.bin", needle);
    model_free(&m);
}

/* ---- Hugging Face folders ---- */

static void sparse_hf(void) {
    Model m;
    char dir[600], p[700], out[600], note[400];
    path_of(dir, sizeof dir, "hf");
    path_of(out, sizeof out, "out.ckpt");
    int ok = tiny_model(&m, "rope", 2, 0, 7) == 0 && hf_llama_write_sharded(dir, &m, 0, 0, note, sizeof note) == 0;
    CHECK(ok, "export %s: %s", dir, pelab_errmsg);
    if (!ok) return;
    model_free(&m);
    const char *args[] = {"import", "--hf", dir, "--out", out, NULL};
    /* the weights: 30 GB of holes after a valid config (mapped: the 8-byte length says no) */
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    CHECK(unlink(p) == 0, "remove %s", p);
    sparse_file("hf/model.safetensors", NULL, 0, 30 * GB);
    expect_bounded("--hf, a 30 GB model.safetensors of zeros", args, "header length 0 is too small", 0);
    /* a 30 GB config.json */
    snprintf(p, sizeof p, "%s/config.json", dir);
    CHECK(truncate(p, (off_t)(30 * GB)) == 0, "truncate %s", p);
    expect_bounded("--hf, a 30 GB config.json", args, "more than a config.json can be", 0);
}

/* ---- forged configs over a few huge tensors: matched before the model is allocated ---- */

/* base/name: a safetensors file of size bytes whose header (metadata md, a JSON object's members or
 * "") declares n_blobs tensors called names[i] of dtype dtype ("F32" or "BF16"), [n] each, that
 * together cover the data section: holes, every byte */
static void forged_safetensors(const char *name, const char *md, const char *const *names, int n_blobs,
                               const char *dtype, unsigned long long size) {
    enum { HEAD = 2048 }; /* the header padded with spaces to this length: the data start at 8 + HEAD */
    unsigned long long data = size - 8 - HEAD, elem = dtype[0] == 'F' ? 4 : 2, at = 0;
    unsigned long long per = data / (unsigned long long)n_blobs / elem * elem;
    char h[8 + HEAD + 1];
    int used = snprintf(h + 8, HEAD + 1, "{\"__metadata__\":{%s}", md);
    for (int i = 0; i < n_blobs; i++) {
        unsigned long long bytes = i == n_blobs - 1 ? data - at : per;
        used += snprintf(h + 8 + used, (size_t)(HEAD + 1 - used), ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%llu],"
                         "\"data_offsets\":[%llu,%llu]}", names[i], dtype, bytes / elem, at, at + bytes);
        at += bytes;
    }
    used += snprintf(h + 8 + used, (size_t)(HEAD + 1 - used), "}");
    CHECK(used < HEAD && data % elem == 0, "%s: header of %d bytes", name, used);
    memset(h + 8 + used, ' ', (size_t)(HEAD - used));
    uint64_t hlen = HEAD;
    for (int i = 0; i < 8; i++) h[i] = (char)(hlen >> (8 * i));
    sparse_file(name, h, 8 + HEAD, size);
}

/* a Llama-7B shape (6.7e9 weights: 27 GB in float32) */
#define CKPT_7B_META                                                                                            \
    "\"format\":\"pelab\",\"format_version\":\"1\",\"vocab_size\":\"32000\",\"dim\":\"4096\","                     \
    "\"n_layers\":\"32\",\"n_heads\":\"32\",\"n_kv_heads\":\"32\",\"hidden_dim\":\"11008\",\"seq_len\":\"2048\","    \
    "\"norm_eps\":\"1e-05\",\"tied\":\"0\",\"pos\":\"rope\""

static void forged_checkpoint(void) {
    char p[600];
    static const char *const blobs[] = {"blob.0", "blob.1", "blob.2"};
    forged_safetensors("7b-blobs.ckpt", CKPT_7B_META, blobs, 3, "F32", 30 * GB);
    path_of(p, sizeof p, "7b-blobs.ckpt");
    const char *info[] = {"info", p, NULL};
    expect_bounded("checkpoint, 30 GB, a 7e9-weight config over three huge tensors", info,
                   "7b-blobs.ckpt: unknown tensor 'blob.0'", 0);
    /* BF16: the data hold twice the weights, and --precision bf16 reserves a bf16-only model */
    forged_safetensors("7b-blobs16.ckpt", CKPT_7B_META, blobs, 3, "BF16", 30 * GB);
    path_of(p, sizeof p, "7b-blobs16.ckpt");
    const char *sample[] = {"sample", p, "--precision", "bf16", "-n", "1", NULL};
    expect_bounded("checkpoint, 30 GB, a 7e9-weight BF16 config under --precision bf16", sample,
                   "7b-blobs16.ckpt: unknown tensor 'blob.0'", 0);
    /* the model's own names, shapes that cover the data instead of the config's */
    static const char *const named[] = {"tok_emb", "layers.wq"};
    forged_safetensors("7b-named.ckpt", CKPT_7B_META, named, 2, "F32", 30 * GB);
    path_of(p, sizeof p, "7b-named.ckpt");
    expect_bounded("checkpoint, 30 GB, the model's names over huge shapes", info,
                   "7b-named.ckpt: tensor tok_emb: shape [", 0);
}

static void forged_hf(void) {
    char dir[600], p[700], out[600];
    path_of(dir, sizeof dir, "hf7b");
    path_of(out, sizeof out, "out.ckpt");
    mkdir(dir, 0755);
    snprintf(p, sizeof p, "%s/config.json", dir);
    static const char config[] =
        "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": 4096,\n"
        " \"intermediate_size\": 11008, \"num_attention_heads\": 32, \"num_key_value_heads\": 32,\n"
        " \"num_hidden_layers\": 32, \"vocab_size\": 32000, \"max_position_embeddings\": 2048,\n"
        " \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"hidden_act\": \"silu\", \"tie_word_embeddings\": false}\n";
    CHECK(write_bytes_atomic(p, config, sizeof config - 1) == 0, "%s", pelab_errmsg);
    const char *args[] = {"import", "--hf", dir, "--out", out, NULL};
    static const char *const blobs[] = {"blob.0", "blob.1", "blob.2"};
    forged_safetensors("hf7b/model.safetensors", "\"format\":\"pt\"", blobs, 3, "BF16", 30 * GB);
    expect_bounded("--hf, 30 GB, a 7e9-weight config.json over three huge tensors", args,
                   "model.safetensors: tensor blob.0: not a weight of this model", 0);
    static const char *const named[] = {"model.embed_tokens.weight", "lm_head.weight"};
    forged_safetensors("hf7b/model.safetensors", "\"format\":\"pt\"", named, 2, "BF16", 30 * GB);
    expect_bounded("--hf, 30 GB, the model's names over huge shapes", args,
                   "model.safetensors: tensor model.embed_tokens.weight: shape [", 0);
}

void test_hostile_loaders(void) {
    snprintf(base, sizeof base, "%s/hostile-loaders", test_tmpdir());
    mkdir(base, 0755);
    measure_baseline();
    sparse_gguf();
    gguf_messages();
    sparse_llama2c();
    sparse_hf();
    forged_checkpoint();
    forged_hf();
}
