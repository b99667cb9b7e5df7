/* test_hostile_files.c: a Hugging Face model folder or a checkpoint from a stranger (the
 * hostile-files review of 2026-12-06, parts 2 and 3). Paths: an index naming files outside the
 * folder or one shard twice, symlinks out of the folder, FIFOs, directories and devices where a
 * file is expected. Contents: safetensors headers whose lengths and offsets lie (past the file,
 * overlapping, leaving holes, past 64 bits), dtypes and shapes that do not match, NaN and Inf
 * weights. Each goes through the binary under test (`pelab import --hf`, `info`, `sample`,
 * `inspect`) and must be refused in one line naming the file and the field or tensor; the
 * layouts that are fine (a symlink inside the folder, the Hugging Face hub cache) must load. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/json.h"
#include "../core/strbuf.h"
#include "../io/checkpoint.h"
#include "../io/hf_llama.h"
#include "../io/safetensors.h"
#include "../model/model.h"
#include "child.h"
#include "test.h"

static char base[256]; /* test_tmpdir()/hostile-files */
static char shard1[64], shard2[64], shard3[64]; /* the names of the sharded export's first three shards */

/* a tiny Llama (2 KV heads, untied) exported to base/name: one file, or shards of 2000 bytes;
 * poison (when not 0) replaces the first weight of the final norm */
static void export_tiny(const char *name, int sharded, int as_bf16, float poison) {
    Model m;
    char dir[512], note[400];
    snprintf(dir, sizeof dir, "%s/%s", base, name);
    int ok = tiny_model(&m, "rope", 2, 0, 7) == 0;
    if (ok && poison != 0) m.params_mem[m.tensors[T_FINAL_NORM].offset] = poison;
    ok = ok && hf_llama_write_sharded(dir, &m, sharded ? 2000 : 0, as_bf16, note, sizeof note) == 0;
    CHECK(ok, "export %s: %s", name, pelab_errmsg);
    model_free(&m);
}

static void path_of(char *out, size_t cap, const char *dir, const char *name) {
    snprintf(out, cap, "%s/%s/%.100s", base, dir, name);
}

/* base/dst: a fresh copy of the regular files of base/src */
static void copy_model(const char *src, const char *dst) {
    char from[600], to[600], cmd[2600];
    snprintf(from, sizeof from, "%s/%s", base, src);
    snprintf(to, sizeof to, "%s/%s", base, dst);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/* '%s'/", to, to, from, to);
    CHECK(system(cmd) == 0, "copy %s to %s", from, to);
}

/* the first occurrence of from in base/dir/name replaced by to */
static void edit_text(const char *dir, const char *name, const char *from, const char *to) {
    char path[600];
    path_of(path, sizeof path, dir, name);
    unsigned char *buf;
    size_t len;
    char *at = read_file(path, &buf, &len) == 0 ? strstr((char *)buf, from) : NULL;
    CHECK(at != NULL, "test setup: '%s' in %s", from, path);
    if (!at) return;
    StrBuf s = {0};
    sb_put(&s, (char *)buf, (size_t)(at - (char *)buf));
    sb_puts(&s, to);
    sb_puts(&s, at + strlen(from));
    CHECK(write_bytes_atomic(path, s.s, s.len) == 0, "write %s", path);
    sb_free(&s);
    free(buf);
}

/* the safetensors file base/dir/name with the first occurrence of from in its header replaced by to */
static void edit_header(const char *dir, const char *name, const char *from, const char *to) {
    char path[600];
    path_of(path, sizeof path, dir, name);
    unsigned char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0 || len < 8) {
        CHECK(0, "read %s", path);
        return;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    StrBuf h = {0};
    sb_put(&h, (char *)buf + 8, (size_t)hlen);
    char *at = strstr(h.s, from);
    CHECK(at != NULL, "test setup: '%s' in the header of %s", from, path);
    StrBuf f = {0};
    sb_put(&f, "\0\0\0\0\0\0\0\0", 8);
    if (at) sb_put(&f, h.s, (size_t)(at - h.s)), sb_puts(&f, to), sb_puts(&f, at + strlen(from));
    for (int i = 0; i < 8; i++) f.s[i] = (char)((uint64_t)(f.len - 8) >> (8 * i));
    sb_put(&f, (char *)buf + 8 + hlen, len - 8 - (size_t)hlen);
    CHECK(write_bytes_atomic(path, f.s, f.len) == 0, "write %s", path);
    sb_free(&h), sb_free(&f);
    free(buf);
}

/* "data_offsets":[b,e] of tensor in base/dir/name */
static void offsets_of(const char *dir, const char *name, const char *tensor, char *out, size_t cap) {
    char path[600];
    path_of(path, sizeof path, dir, name);
    unsigned char *buf;
    size_t len;
    StFile f;
    out[0] = 0;
    if (read_file(path, &buf, &len) != 0) return;
    if (st_open(&f, buf, len, path) == 0) {
        const JsonNode *o = json_get(json_get(f.doc.root, tensor), "data_offsets");
        if (o) snprintf(out, cap, "\"data_offsets\":[%lld,%lld]", json_at(o, 0)->int_value, json_at(o, 1)->int_value);
        st_close(&f);
    }
    free(buf);
    CHECK(out[0], "test setup: offsets of %s in %s", tensor, path);
}

/* `pelab import --hf base/dir`: refused naming needle (NULL: imports) */
static void import_case(const char *what, const char *dir, const char *needle) {
    char in[600], out[600];
    snprintf(in, sizeof in, "%s/%s", base, dir);
    snprintf(out, sizeof out, "%s/%s.st", base, dir);
    const char *args[] = {"import", "--hf", in, "--out", out, NULL};
    if (needle) return expect_argv_refused(what, args, needle);
    static Run r;
    run_argv(&r, args, NULL, NULL, 20);
    CHECK(r.status == 0, "%s: imports (exit %d): %.300s", what, r.status, r.out);
}

/* a copy of a clean folder with one file edited, then imported */
typedef struct {
    const char *what, *src, *file, *from, *to, *needle; /* needle: what the refusal names */
    int header; /* from / to in the safetensors header of file, else in file's text */
} Edit;

static void edit_cases(const Edit *e, size_t n) {
    static int made;
    for (size_t i = 0; i < n; i++) {
        char dir[64];
        snprintf(dir, sizeof dir, "edited-%d", made++);
        copy_model(e[i].src, dir);
        (e[i].header ? edit_header : edit_text)(dir, e[i].file, e[i].from, e[i].to);
        import_case(e[i].what, dir, e[i].needle);
    }
}

static void link_or_fail(const char *target, const char *path, int hard) {
    remove(path);
    CHECK((hard ? link(target, path) : symlink(target, path)) == 0, "%slink %s -> %s: %s", hard ? "" : "sym", path,
          target, strerror(errno));
}

/* part 2: names and paths */
static void paths(void) {
    char a[600], b[600], c[1300];
    /* the index names a file outside the folder */
    const char *index = "model.safetensors.index.json", *norm = "\"model.norm.weight\": \"";
    const Edit names[] = {
        {"weight_map names ../", "sharded", index, norm, "\"model.norm.weight\": \"../", "weight_map['model.norm.weight']", 0},
        {"weight_map names /etc/passwd", "sharded", index, norm, "\"model.norm.weight\": \"/etc/passwd\", \"x\": \"",
         "weight_map['model.norm.weight']", 0},
    };
    edit_cases(names, sizeof names / sizeof names[0]);
    /* a shard, the weights, the config, the tokenizer: each a symlink to a copy outside the folder */
    const char *const outside[][2] = {{"sharded", shard1},
                                             {"one", "model.safetensors"},
                                             {"one", "config.json"},
                                             {"one-tok", "tokenizer.json"}};
    for (int i = 0; i < 4; i++) {
        char dir[64], what[200];
        snprintf(dir, sizeof dir, "sym-out-%d", i);
        copy_model(outside[i][0], dir);
        path_of(a, sizeof a, dir, outside[i][1]);
        snprintf(b, sizeof b, "%s/outside-%d", base, i);
        CHECK(rename(a, b) == 0, "move %s out", a);
        link_or_fail(b, a, 0);
        snprintf(what, sizeof what, "%s a symlink out of the folder", outside[i][1]);
        snprintf(c, sizeof c, "%s: a symlink to %s", outside[i][1], b);
        import_case(what, dir, c);
    }
    /* the same shard under two names (a hard link) */
    copy_model("sharded", "twice");
    path_of(a, sizeof a, "twice", shard1);
    path_of(b, sizeof b, "twice", "again.safetensors");
    link_or_fail(a, b, 1);
    snprintf(c, sizeof c, "\"model.embed_tokens.weight\": \"%s\"", shard1);
    edit_text("twice", "model.safetensors.index.json", c, "\"model.embed_tokens.weight\": \"again.safetensors\"");
    import_case("one shard under two names", "twice", "the same file as");
    import_case("one shard under two names", "twice", "(the index names one shard twice)");
    /* FIFOs, directories and devices where a file is expected */
    char fifo2[100];
    snprintf(fifo2, sizeof fifo2, "%s: is a FIFO", shard2);
    const struct {
        const char *src, *name, *kind, *needle;
    } odd[] = {
        {"one", "config.json", "fifo", "config.json: is a FIFO"},
        {"one", "config.json", "dir", "config.json: is a directory"},
        {"one", "config.json", "/dev/zero", "config.json: a symlink to /dev/zero"},
        {"one-tok", "tokenizer.json", "fifo", "tokenizer.json: is a FIFO"},
        {"one-tok", "tokenizer.json", "dir", "tokenizer.json: is a directory"},
        {"one", "model.safetensors", "fifo", "model.safetensors: is a FIFO"},
        {"one", "model.safetensors", "dir", "model.safetensors: is a directory"},
        {"sharded", shard2, "fifo", fifo2},
        {"sharded", "model.safetensors.index.json", "/dev/zero", "model.safetensors.index.json: a symlink to /dev/zero"},
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        char dir[64], what[200];
        snprintf(dir, sizeof dir, "odd-%zu", i);
        copy_model(odd[i].src, dir);
        path_of(a, sizeof a, dir, odd[i].name);
        remove(a);
        if (!strcmp(odd[i].kind, "fifo")) CHECK(mkfifo(a, 0600) == 0, "mkfifo %s", a);
        else if (!strcmp(odd[i].kind, "dir")) CHECK(mkdir(a, 0755) == 0, "mkdir %s", a);
        else link_or_fail(odd[i].kind, a, 0);
        snprintf(what, sizeof what, "%s as %s", odd[i].name, odd[i].kind);
        import_case(what, dir, odd[i].needle);
    }
    snprintf(a, sizeof a, "%s/inspect.fifo", base);
    CHECK(mkfifo(a, 0600) == 0, "mkfifo %s", a);
    const char *inspect[] = {"inspect", a, NULL};
    expect_argv_refused("inspect FIFO", inspect, "is a FIFO");
    /* what stays allowed: a symlink inside the folder, the Hugging Face hub cache's snapshot of blobs */
    copy_model("sharded", "sym-in");
    path_of(a, sizeof a, "sym-in", shard3);
    path_of(b, sizeof b, "sym-in", "store");
    mkdir(b, 0755);
    path_of(b, sizeof b, "sym-in", "store/shard3");
    CHECK(rename(a, b) == 0, "move %s", a);
    link_or_fail("store/shard3", a, 0);
    import_case("a shard symlinked inside the folder", "sym-in", NULL);
    snprintf(a, sizeof a, "%s/hub/models--x--tiny/snapshots/0123abc", base);
    snprintf(b, sizeof b, "%s/hub/models--x--tiny/blobs", base);
    CHECK(make_dirs(a) == 0 && make_dirs(b) == 0, "hub cache folders");
    static const char *const files[] = {"config.json", "model.safetensors", "tokenizer.json"};
    for (int i = 0; i < 3; i++) {
        char src[600], blob[700], rel[64], snap[700];
        path_of(src, sizeof src, "one-tok", files[i]);
        snprintf(blob, sizeof blob, "%s/blob%d", b, i);
        snprintf(rel, sizeof rel, "../../blobs/blob%d", i);
        snprintf(snap, sizeof snap, "%s/%s", a, files[i]);
        unsigned char *buf;
        size_t len;
        CHECK(read_file(src, &buf, &len) == 0 && write_bytes_atomic(blob, buf, len) == 0, "blob %s", blob);
        free(buf);
        link_or_fail(rel, snap, 0);
    }
    import_case("the hub cache layout (snapshots/REV/* -> ../../blobs/*)", "hub/models--x--tiny/snapshots/0123abc", NULL);
}

/* part 3: safetensors headers and weights in a Hugging Face folder */
static void hf_contents(void) {
    char q[120], o[120], u64[200], past[200];
    const char *qn = "model.layers.0.self_attn.q_proj.weight", *on = "model.layers.0.self_attn.o_proj.weight";
    offsets_of("one", "model.safetensors", qn, q, sizeof q);
    offsets_of("one", "model.safetensors", on, o, sizeof o);
    snprintf(u64, sizeof u64, "%.*s18446744073709551616]", (int)(strchr(o, ',') - o + 1), o);
    snprintf(past, sizeof past, "%.*s99999999]", (int)(strchr(o, ',') - o + 1), o);
    const char *st_file = "model.safetensors";
    const Edit headers[] = {
        {"o_proj's data_offsets equal to q_proj's", "one", st_file, o, q, "overlap", 1},
        {"data_offsets past 64 bits", "one", st_file, o, u64, "tensor model.layers.0.self_attn.o_proj.weight: data_offsets", 1},
        {"data_offsets past the end", "one", st_file, o, past, "o_proj.weight: data_offsets", 1},
        {"dtype I32", "one", st_file, "\"dtype\":\"F32\"", "\"dtype\":\"I32\"", "dtype I32 is not supported", 1},
        {"shape [16,17] for [16,16]", "one", st_file, "\"shape\":[16,16]", "\"shape\":[16,17]", "shape [16,17] does not match", 1},
        {"a skipped rotary_emb.inv_freq past the end", "one", st_file, "{",
         "{\"model.layers.0.self_attn.rotary_emb.inv_freq\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,99999999]},",
         "inv_freq: data_offsets", 1},
    };
    edit_cases(headers, sizeof headers / sizeof headers[0]);
    copy_model("one", "st-hole");
    char path[600];
    path_of(path, sizeof path, "st-hole", "model.safetensors");
    FILE *f = fopen(path, "ab");
    CHECK(f && fwrite("\0\0\0\0\0\0\0\0", 1, 8, f) == 8 && fclose(f) == 0, "append to %s", path);
    import_case("8 bytes no tensor covers", "st-hole", "no holes");
    copy_model("one", "st-hlen");
    path_of(path, sizeof path, "st-hlen", "model.safetensors");
    struct stat st;
    FILE *g = stat(path, &st) == 0 ? fopen(path, "r+b") : NULL;
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)((uint64_t)st.st_size >> (8 * i));
    CHECK(g && fwrite(le, 1, 8, g) == 8 && fclose(g) == 0, "rewrite the length of %s", path);
    import_case("header length past the file", "st-hlen", "exceeds the file size");
    import_case("a NaN weight", "nan", "model.norm.weight: element 0 is nan (expected a finite number)");
    import_case("an Inf weight in a BF16 shard", "inf-bf16", "model.norm.weight: element 0 is inf (expected a finite number)");
}

/* part 3: pelab checkpoints with NaN / Inf weights or moments, through info and sample */
static void checkpoint_contents(void) {
    Model m;
    char path[600];
    if (tiny_model(&m, "rope", 2, 1, 8) != 0) {
        CHECK(0, "tiny model: %s", pelab_errmsg);
        return;
    }
    float *am = calloc(m.n_params, sizeof(float)), *av = calloc(m.n_params, sizeof(float));
    static const struct {
        const char *name, *needle;
        int where; /* 0: a weight NaN, 1: a weight Inf (bf16 file), 2: a moment NaN */
    } cases[] = {
        {"nan.st", "tensor layers.wq: element 3 is nan (expected a finite number)", 0},
        {"inf-bf16.st", "tensor final_norm: element 0 is inf (expected a finite number)", 1},
        {"nan-moment.st", "tensor optim.v.tok_emb: element 5 is nan (expected a finite number)", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Model p = m;
        p.params_mem = malloc(m.n_params * sizeof(float));
        memcpy(p.params_mem, m.params_mem, m.n_params * sizeof(float));
        snprintf(path, sizeof path, "%s/%s", base, cases[i].name);
        int rc;
        if (cases[i].where == 0) p.params_mem[m.tensors[T_WQ].offset + 3] = NAN;
        if (cases[i].where == 1) p.params_mem[m.tensors[T_FINAL_NORM].offset] = INFINITY;
        if (cases[i].where == 2) av[m.tensors[T_TOK_EMB].offset + 5] = NAN;
        rc = cases[i].where == 1 ? checkpoint_save_bf16(path, &p, NULL) : checkpoint_save(path, &p, NULL, am, av);
        CHECK(rc == 0, "save %s: %s", path, pelab_errmsg);
        const char *info[] = {"info", path, NULL}, *sample[] = {"sample", path, "-n", "2", NULL};
        char what[200];
        snprintf(what, sizeof what, "info %s", cases[i].name);
        expect_argv_refused(what, info, cases[i].needle);
        snprintf(what, sizeof what, "sample %s", cases[i].name);
        if (cases[i].where != 2) expect_argv_refused(what, sample, cases[i].needle); /* sample reads no moments */
        free(p.params_mem);
    }
    free(am), free(av);
    model_free(&m);
}

void test_hostile_files(void) {
    snprintf(base, sizeof base, "%s/hostile-files", test_tmpdir());
    mkdir(base, 0755);
    export_tiny("one", 0, 0, 0);
    export_tiny("sharded", 1, 0, 0);
    int n = 0;
    for (int k = 3; k < 100 && !n; k++) { /* how many shards: the names say */
        char probe[600], name[64];
        snprintf(name, sizeof name, "model-00001-of-%05d.safetensors", k);
        path_of(probe, sizeof probe, "sharded", name);
        if (access(probe, F_OK) == 0) n = k;
    }
    CHECK(n >= 3, "the 2000-byte shards are 3 or more files");
    snprintf(shard1, sizeof shard1, "model-00001-of-%05d.safetensors", n);
    snprintf(shard2, sizeof shard2, "model-00002-of-%05d.safetensors", n);
    snprintf(shard3, sizeof shard3, "model-00003-of-%05d.safetensors", n);
    export_tiny("nan", 0, 0, NAN);
    export_tiny("inf-bf16", 1, 1, INFINITY);
    copy_model("one", "one-tok"); /* with a tokenizer.json of the model's 13 ids */
    char tok[600];
    path_of(tok, sizeof tok, "one-tok", "tokenizer.json");
    const char *json = "{\"model\": {\"type\": \"BPE\", \"merges\": [], \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3, "
                       "\"e\": 4, \"f\": 5, \"g\": 6, \"h\": 7, \"i\": 8, \"j\": 9, \"k\": 10, \"l\": 11, \" \": 12}}}";
    CHECK(write_bytes_atomic(tok, json, strlen(json)) == 0, "write %s", tok);
    import_case("the clean folder with a tokenizer.json", "one-tok", NULL);
    import_case("the clean sharded folder", "sharded", NULL);
    paths();
    hf_contents();
    checkpoint_contents();
}
