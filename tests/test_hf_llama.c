/* test_hf_llama.c: pelab <-> Hugging Face Llama directories (io/hf_llama.h). Round trips bit-exact
 * in parameters and logits (interleaved and half layouts, GQA, tied and untied, every rule HF has);
 * models HF's Llama cannot compute refused in one line; a file in Python's safetensors conventions
 * (other key order, no __metadata__) loads; unknown or missing tensors are refused. With python3 and
 * torch: tools/hf_llama_check.py, HF's forward in plain PyTorch, agrees with `pelab score` to 1e-4. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../io/checkpoint.h"
#include "../io/hf_llama.h"
#include "../io/safetensors.h"
#include "../model/model.h"
#include "test.h"

/* logits [T, V] of positions 0..T-1 */
static void logits_of(Model *m, float *out, int T) {
    int in[8], pos[8];
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 3) % m->cfg.vocab_size, pos[t] = t;
    model_alloc_train(m, 1, T);
    model_forward(m, in, NULL, pos, 1, T);
    memcpy(out, m->acts.logits, sizeof(float) * (size_t)T * m->cfg.vocab_size);
}

static void round_trip(const char *spec, int n_kv, int tied) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/hf-%d-%d-%.40s", test_tmpdir(), n_kv, tied, spec);
    for (char *c = dir + strlen(test_tmpdir()) + 1; *c; c++)
        if (*c == ':' || *c == ',' || *c == '=' || *c == '+') *c = '_';
    Model a, b;
    char note[400];
    if (tiny_model(&a, spec, n_kv, tied, 7) != 0 || hf_llama_write(dir, &a, note, sizeof note) != 0) {
        CHECK(0, "%s: export: %s", spec, pelab_errmsg);
        return;
    }
    if (hf_llama_read(dir, &b) != 0) {
        CHECK(0, "%s: import: %s", spec, pelab_errmsg);
        model_free(&a);
        return;
    }
    CHECK(a.n_params == b.n_params && memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params) == 0,
          "%s kv %d tied %d: parameters bit-exact after pelab -> HF -> pelab", spec, n_kv, tied);
    char sa[POS_SPEC_MAX], sb[POS_SPEC_MAX];
    pos_spec(&a.pos, sa, sizeof sa), pos_spec(&b.pos, sb, sizeof sb);
    if (!strstr(spec, "ntk:") && !strstr(spec, "longrope")) /* ntk comes back as its base; longrope names the new file */
        CHECK(strcmp(sa, sb) == 0 && a.cfg.seq_len == b.cfg.seq_len && a.cfg.tied == b.cfg.tied &&
              a.cfg.norm_eps == b.cfg.norm_eps, "%s: spec and config back: %s vs %s", spec, sa, sb);
    static float la[8 * 13], lb[8 * 13];
    logits_of(&a, la, 8), logits_of(&b, lb, 8);
    CHECK(memcmp(la, lb, sizeof la) == 0, "%s kv %d tied %d: logits bit-exact (max diff %g)", spec, n_kv, tied,
          max_abs_diff(la, lb, 8 * 13));
    model_free(&a), model_free(&b);
}

static void refusals(void) {
    static const struct {
        const char *spec, *needle;
    } no[] = {
        {"alibi", "RoPE only"},
        {"xpos", "RoPE only"},
        {"rope:fraction=0.5", "partial rotary"},
        {"rope:keep=0.5", "p-RoPE"},
        {"rope:max_period=4", "HoPE"},
        {"rope+logn", "length-scaled attention"},
        {"rope+nope@1", "NoPE layers"},
        {"rope:scale=dynatan", "DynaTan"},
    };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        Model m;
        if (tiny_model(&m, no[i].spec, 4, 1, 1) != 0) {
            CHECK(0, "%s: %s", no[i].spec, pelab_errmsg);
            continue;
        }
        char dir[512], note[400];
        snprintf(dir, sizeof dir, "%s/refused-%zu", test_tmpdir(), i);
        int rc = hf_llama_write(dir, &m, note, sizeof note);
        CHECK(rc != 0 && strstr(pelab_errmsg, no[i].needle) && !strchr(pelab_errmsg, '\n'),
              "%s: refused naming '%s' (got %s)", no[i].spec, no[i].needle, rc ? pelab_errmsg : "written");
        if (i == 0) { /* the command: one line, exit 1 */
            char ckpt[600], cmd[1400];
            snprintf(ckpt, sizeof ckpt, "%s.safetensors", dir);
            snprintf(cmd, sizeof cmd, "./pelab export %s --hf %s", ckpt, dir);
            CHECK(checkpoint_save(ckpt, &m, NULL, NULL, NULL) == 0, "save %s", ckpt);
            expect_pelab_error(cmd, "HF's LlamaForCausalLM computes RoPE only");
            snprintf(cmd, sizeof cmd, "./pelab export %s --hf %s --tokenizer-out %s/tok.bin", ckpt, dir, test_tmpdir());
            expect_pelab_error(cmd, "--tokenizer-out goes with --llama2c");
            snprintf(cmd, sizeof cmd, "./pelab import --hf %s/none --out %s/x.safetensors", test_tmpdir(), test_tmpdir());
            expect_pelab_error(cmd, "none/config.json");
        }
        model_free(&m);
    }
}

static int write_text(const char *path, const char *text) {
    return write_bytes_atomic(path, text, strlen(text));
}

/* model.safetensors rewritten as Python's library might: tensors in reverse order, no __metadata__,
 * plus an extra entry when extra is set */
static int rewrite_reversed(const char *path, const char *extra) {
    unsigned char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0) return -1;
    StFile f;
    if (st_open(&f, buf, len, path) != 0) return free(buf), -1;
    const JsonNode *e[512];
    int n = 0;
    for (const JsonNode *c = f.doc.root->child; c && n < 512; c = c->next)
        if (strcmp(c->key, "__metadata__")) e[n++] = c;
    StTensor *t = calloc((size_t)n + 1, sizeof *t);
    for (int i = 0; i < n; i++) {
        const JsonNode *c = e[n - 1 - i], *shape = json_get(c, "shape"), *off = json_get(c, "data_offsets");
        snprintf(t[i].name, sizeof t[i].name, "%s", c->key);
        t[i].info.ndim = (int)shape->n_children;
        t[i].info.numel = 1;
        for (int d = 0; d < t[i].info.ndim; d++)
            t[i].info.shape[d] = (int)json_at(shape, (size_t)d)->int_value, t[i].info.numel *= (size_t)t[i].info.shape[d];
        t[i].data = (const float *)(f.data + json_at(off, 0)->int_value);
    }
    if (extra) t[n] = t[0], snprintf(t[n].name, sizeof t[n].name, "%s", extra), n++;
    int rc = st_write_f32(path, t, n, "pt");
    free(t);
    st_close(&f);
    free(buf);
    if (rc != 0) return -1;
    /* drop the __metadata__ member: rewrite the header with spaces over it (still valid JSON) */
    if (read_file(path, &buf, &len) != 0) return -1;
    char *md = strstr((char *)buf + 8, "\"__metadata__\":{\"format\":\"pt\"},");
    if (md) memset(md, ' ', strlen("\"__metadata__\":{\"format\":\"pt\"},"));
    rc = write_bytes_atomic(path, buf, len);
    free(buf);
    return rc;
}

static void python_conventions(void) {
    char dir[512], path[600], note[400];
    snprintf(dir, sizeof dir, "%s/hf-py", test_tmpdir());
    Model a, b;
    if (tiny_model(&a, "rope:layout=half", 2, 0, 3) != 0 || hf_llama_write(dir, &a, note, sizeof note) != 0) {
        CHECK(0, "export: %s", pelab_errmsg);
        return;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(rewrite_reversed(path, NULL) == 0 && hf_llama_read(dir, &b) == 0 &&
          memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params) == 0,
          "reversed key order, no __metadata__: loads the same parameters (%s)", pelab_errmsg);
    model_free(&b);
    CHECK(rewrite_reversed(path, "model.layers.0.self_attn.q_proj.bias") == 0 && hf_llama_read(dir, &b) != 0 &&
          strstr(pelab_errmsg, "q_proj.bias: not a weight"), "an unknown tensor is refused: %s", pelab_errmsg);
    hf_llama_write(dir, &a, note, sizeof note);
    CHECK(rewrite_reversed(path, "model.layers.1.self_attn.rotary_emb.inv_freq") == 0 && hf_llama_read(dir, &b) == 0,
          "a rotary_emb.inv_freq table is skipped: %s", pelab_errmsg);
    model_free(&b);
    /* config fields HF's Llama has and pelab does not */
    snprintf(path, sizeof path, "%s/config.json", dir);
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"{\"model_type\": \"mistral\", \"hidden_size\": 16, \"num_attention_heads\": 4}", "LlamaForCausalLM checkpoints only"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 16, \"num_attention_heads\": 4, \"attention_bias\": true}",
         "no bias"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 16, \"num_attention_heads\": 4, \"hidden_act\": \"gelu\"}", "silu"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 16, \"num_attention_heads\": 4, \"head_dim\": 8}", "head_dim 8"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 16, \"num_attention_heads\": 4, \"rope_theta\": \"x\"}",
         "rope_theta: expected a number"},
        /* Llama-2-7B's shape over this tiny file: refused before anything is allocated */
        {"{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_attention_heads\": 32, \"num_hidden_layers\": 32, "
         "\"intermediate_size\": 11008, \"vocab_size\": 32000, \"max_position_embeddings\": 4096}", "too small"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = write_text(path, bad[i].json) == 0 ? hf_llama_read(dir, &b) : 0;
        CHECK(rc != 0 && strstr(pelab_errmsg, bad[i].needle) && !strchr(pelab_errmsg, '\n'), "config %zu refused "
              "naming '%s' (got %s)", i, bad[i].needle, rc ? pelab_errmsg : "loaded");
        if (rc == 0) model_free(&b);
    }
    model_free(&a);
}

/* BF16 and F16 tensors (most HF checkpoints) read as the floats they hold */
static void half_precision(void) {
    /* 1.0, -2.5, 65504 (largest F16), 2^-24 (smallest F16 subnormal) */
    static const unsigned char bf[8] = {0x80, 0x3f, 0x20, 0xc0, 0x80, 0x47, 0x80, 0x33};
    static const unsigned char hf[8] = {0x00, 0x3c, 0x00, 0xc1, 0xff, 0x7b, 0x01, 0x00};
    const char *json = "{\"b\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]},"
                       "\"h\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[8,16]}}";
    unsigned char buf[256] = {0};
    size_t n = strlen(json);
    buf[0] = (unsigned char)n;
    memcpy(buf + 8, json, n), memcpy(buf + 8 + n, bf, 8), memcpy(buf + 16 + n, hf, 8);
    StFile f;
    TensorInfo t = {.ndim = 1, .shape = {4}, .numel = 4};
    float b[4], h[4];
    int rc = st_open(&f, buf, 24 + n, "half") == 0 ? 0 : -1;
    CHECK(rc == 0 && st_read_f32(&f, "b", &t, b, "half") == 0 && b[0] == 1.0f && b[1] == -2.5f && b[2] == 65536.0f &&
          b[3] == 0x1p-24f, "BF16 widened: %g %g %g %g (%s)", b[0], b[1], b[2], b[3], pelab_errmsg);
    CHECK(rc == 0 && st_read_f32(&f, "h", &t, h, "half") == 0 && h[0] == 1.0f && h[1] == -2.5f && h[2] == 65504.0f &&
          h[3] == 0x1p-24f, "F16 widened: %g %g %g %g (%s)", h[0], h[1], h[2], h[3], pelab_errmsg);
    if (rc == 0) st_close(&f);
}

/* a python3 that has torch (found, not imported: that takes seconds): $PELAB_PYTHON, python3,
 * /usr/bin/python3; NULL if none */
static const char *python_with_torch(void) {
    static const char *const candidates[] = {"python3", "/usr/bin/python3"};
    const char *env = getenv("PELAB_PYTHON");
    char cmd[512];
    for (size_t i = 0; i < (env ? 1 : sizeof candidates / sizeof candidates[0]); i++) {
        snprintf(cmd, sizeof cmd, "%s -c 'import importlib.util as u, sys; sys.exit(u.find_spec(\"torch\") is None)' "
                 ">/dev/null 2>&1", env ? env : candidates[i]);
        if (system(cmd) == 0) return env ? env : candidates[i];
    }
    return NULL;
}

/* pelab score's per-token log-probs against HF's forward in torch, windows past L (dynamic rules) */
static void torch_check(void) {
    const char *py = python_with_torch();
    if (!py) {
        fprintf(stderr, "  test_hf_llama: no python3 with torch: the PyTorch cross-check is skipped\n");
        return;
    }
    static const struct {
        const char *pos;
        int kv;
        const char *tied;
    } runs[] = {
        {"rope:scale=yarn:2", 2, ""},
        {"rope:layout=half,scale=llama3:4", 1, "--untied "},
        {"rope:scale=dynamic-ntk:2", 4, ""},
        {"rope:layout=half,scale=pi:2", 2, "--untied "},
        {"rope:scale=ntk:3", 2, ""},
        {"rope:layout=half,scale=longrope:%s/hf-lr.json", 2, ""}, /* %s: the test directory */
    };
    const char *dir = test_tmpdir();
    static char out[16384], cmd[2048], check[2048];
    snprintf(cmd, sizeof cmd, "./pelab synth stories --bytes 2000 > %s/hf-text.txt", dir);
    if (run_pelab(cmd, out, sizeof out) != 0) {
        CHECK(0, "synth: %s", out);
        return;
    }
    /* LongRoPE factors for head 8 (4 pairs), L 16, s 4: the windows of 40 take the long set */
    snprintf(cmd, sizeof cmd, "%s/hf-lr.json", dir);
    CHECK(write_text(cmd, "{\"short_factor\": [1, 1.1, 1.3, 1.6], \"long_factor\": [1, 1.5, 2.5, 4], "
                          "\"original_max_position_embeddings\": 16, \"max_position_embeddings\": 64}") == 0,
          "write %s", cmd);
    int used = snprintf(check, sizeof check, "%s tools/hf_llama_check.py", py);
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char pos[512];
        snprintf(pos, sizeof pos, runs[i].pos, dir);
        snprintf(cmd, sizeof cmd,
                 "./pelab train --pos %s --kv-heads %d %s--dim 32 --layers 2 --heads 4 --seq-len 16 --steps 8 "
                 "--batch 4 --synth-bytes 20000 --quiet --out %s/hf-t%zu.safetensors && "
                 "./pelab export %s/hf-t%zu.safetensors --hf %s/hf-t%zu >/dev/null && "
                 "./pelab score %s/hf-t%zu.safetensors %s/hf-text.txt --len 40 --per-token %s/hf-t%zu.csv",
                 pos, runs[i].kv, runs[i].tied, dir, i, dir, i, dir, i, dir, i, dir, dir, i);
        int rc = run_pelab(cmd, out, sizeof out);
        CHECK(rc == 0, "%s: train, export, score: %s", pos, out);
        used += snprintf(check + used, sizeof check - (size_t)used, " %s/hf-t%zu %s/hf-text.txt 40 %s/hf-t%zu.csv", dir,
                         i, dir, dir, i);
    }
    snprintf(check + used, sizeof check - (size_t)used, " 1>&2");
    int rc = system(check) == 0 ? 0 : 1; /* its lines go to the log (stderr) as they come */
    CHECK(rc == 0, "HF's Llama forward in torch agrees with pelab score to 1e-4 (%s)", check);
}

/* a failed tensor write leaves no config.json behind (it names a model.safetensors that is not there) */
static void half_written(void) {
    char dir[512], path[600], note[400];
    snprintf(dir, sizeof dir, "%s/hf-blocked", test_tmpdir());
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    Model a;
    if (tiny_model(&a, "rope", 4, 1, 5) != 0 || make_dirs(path) != 0) { /* a directory where the file goes */
        CHECK(0, "setup: %s", pelab_errmsg);
        return;
    }
    int rc = hf_llama_write(dir, &a, note, sizeof note);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "r");
    CHECK(rc != 0 && !f, "model.safetensors unwritable: export fails (rc %d) and writes no config.json (%s)", rc,
          f ? "written" : "absent");
    if (f) fclose(f);
    model_free(&a);
}

void test_hf_llama(void) {
    /* the permutation and its inverse */
    float w[2 * 4 * 3], v[2 * 4 * 3];
    for (int i = 0; i < 24; i++) w[i] = v[i] = (float)i;
    rotary_rows_permute(v, 2, 4, 3, 1);
    CHECK(v[3] == w[6] && v[6] == w[3] && v[12 + 3] == w[12 + 6], "interleaved row 2 (pair 1, dim 0) becomes half row 1");
    rotary_rows_permute(v, 2, 4, 3, 0);
    CHECK(memcmp(v, w, sizeof w) == 0, "half -> interleaved undoes it");

    round_trip("rope", 4, 1);
    round_trip("rope", 2, 0);
    round_trip("rope:layout=half", 2, 1);
    round_trip("rope:layout=half", 1, 0);
    round_trip("rope:base=500000,scale=yarn:4", 2, 1);
    round_trip("rope:layout=half,scale=llama3:8", 2, 0);
    round_trip("rope:scale=pi:2", 4, 1);
    round_trip("rope:layout=half,scale=dynamic-ntk:2", 2, 1);
    round_trip("rope:scale=ntk:4", 2, 0);
    refusals();
    half_written();
    python_conventions();
    half_precision();
    torch_check();
}
