/* test_hf_llama.c: pelab <-> Hugging Face Llama directories (io/hf_llama.h). Round trips bit-exact
 * in parameters and logits (interleaved and half layouts, GQA, tied and untied, every rule HF has);
 * models HF's Llama cannot compute refused in one line; a file in Python's safetensors conventions
 * (other key order, no __metadata__) loads; unknown or missing tensors are refused. Without torch,
 * HF's side in C: each rule's exported rope fields against literal values, the q/k row order
 * against HF's rotate_half written out here; logits compared past seq_len too. With python3 and
 * torch: tools/hf_llama_check.py, HF's forward in plain PyTorch, agrees with `pelab score` to 1e-4. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/json.h"
#include "../io/checkpoint.h"
#include "../io/hf_llama.h"
#include "../io/safetensors.h"
#include "../model/model.h"
#include "../core/strbuf.h"
#include "test.h"

/* logits of positions 0..T-1, T <= LOGIT_T: past the tiny models' seq_len 8, where the dynamic
 * rules and LongRoPE's long factors take over (fixed_logits) */
enum { LOGIT_T = 20 };

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
    if (hf_llama_read(dir, &b, NULL) != 0) {
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
    static float la[LOGIT_T * 13], lb[LOGIT_T * 13];
    for (int T = 8; T <= LOGIT_T; T += LOGIT_T - 8) { /* at seq_len and past it */
        fixed_logits(&a, la, T), fixed_logits(&b, lb, T);
        CHECK(memcmp(la, lb, sizeof(float) * (size_t)T * 13) == 0, "%s kv %d tied %d: logits bit-exact at T %d (max "
              "diff %g)", spec, n_kv, tied, T, max_abs_diff(la, lb, T * 13));
    }
    model_free(&a), model_free(&b);
}

static int hf_write(const char *dir, const Model *m) {
    char note[400];
    return hf_llama_write(dir, m, note, sizeof note);
}

static void refusals(void) {
    static const SpecNeedle no[] = {{"rope:scale=dynatan", "DynaTan"}};
    check_export_refusals(ROPE_TARGET_REFUSED, N_ROPE_TARGET_REFUSED, "hf", hf_write);
    check_export_refusals(no, sizeof no / sizeof no[0], "hf", hf_write);
    /* the command: one line, exit 1 */
    Model m;
    char ckpt[600], cmd[1400];
    const char *dir = test_tmpdir();
    tiny_model(&m, "alibi", 4, 1, 1);
    snprintf(ckpt, sizeof ckpt, "%s/refused-alibi.safetensors", dir);
    CHECK(checkpoint_save(ckpt, &m, NULL, NULL, NULL) == 0, "save %s", ckpt);
    model_free(&m);
    snprintf(cmd, sizeof cmd, "./pelab export %s --hf %s/refused-hf", ckpt, dir);
    expect_pelab_error(cmd, "HF's LlamaForCausalLM computes RoPE only");
    snprintf(cmd, sizeof cmd, "./pelab export %s --hf %s/refused-hf --tokenizer-out %s/tok.bin", ckpt, dir, dir);
    expect_pelab_error(cmd, "--tokenizer-out goes with --llama2c");
    snprintf(cmd, sizeof cmd, "./pelab import --hf %s/none --out %s/x.safetensors", dir, dir);
    expect_pelab_error(cmd, "none/config.json");
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

/* a tiny model (2 KV heads, untied, seed 3) exported to test_tmpdir()/name; 0 when both worked */
static int tiny_exported(Model *a, const char *spec, const char *name, char *dir, size_t dir_len) {
    char note[400];
    snprintf(dir, dir_len, "%s/%s", test_tmpdir(), name);
    if (tiny_model(a, spec, 2, 0, 3) == 0 && hf_llama_write(dir, a, note, sizeof note) == 0) return 0;
    CHECK(0, "%s: export: %s", name, pelab_errmsg);
    return -1;
}

static void python_conventions(void) {
    char dir[512], path[600], note[400];
    Model a, b;
    if (tiny_exported(&a, "rope:layout=half", "hf-py", dir, sizeof dir) != 0) return;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(rewrite_reversed(path, NULL) == 0 && hf_llama_read(dir, &b, NULL) == 0 &&
          memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params) == 0,
          "reversed key order, no __metadata__: loads the same parameters (%s)", pelab_errmsg);
    model_free(&b);
    CHECK(rewrite_reversed(path, "model.layers.0.self_attn.q_proj.bias") == 0 && hf_llama_read(dir, &b, NULL) != 0 &&
          strstr(pelab_errmsg, "q_proj.bias: not a weight"), "an unknown tensor is refused: %s", pelab_errmsg);
    hf_llama_write(dir, &a, note, sizeof note);
    CHECK(rewrite_reversed(path, "model.layers.1.self_attn.rotary_emb.inv_freq") == 0 && hf_llama_read(dir, &b, NULL) == 0,
          "a rotary_emb.inv_freq table is skipped: %s", pelab_errmsg);
    model_free(&b);
    /* config fields HF's Llama has and pelab does not */
    snprintf(path, sizeof path, "%s/config.json", dir);
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"{\"model_type\": \"gpt_neox\", \"hidden_size\": 16, \"num_attention_heads\": 4}",
         "LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM checkpoints only"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 16, \"num_attention_heads\": 4, \"sliding_window\": 8}",
         "sliding_window 8"},
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
        int rc = write_text(path, bad[i].json) == 0 ? hf_llama_read(dir, &b, NULL) : 0;
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


/* the factors of a LongRoPE rule for the tiny models (head 4: 2 pairs; L 8, max 32: s 4) */
static const char *longrope_file(void) {
    static char path[512];
    snprintf(path, sizeof path, "%s/hf-lr-tiny.json", test_tmpdir());
    CHECK(write_text(path, "{\"short_factor\": [1, 1.2], \"long_factor\": [1, 2.5], "
                           "\"original_max_position_embeddings\": 8, \"max_position_embeddings\": 32}") == 0,
          "write %s", path);
    return path;
}

/* LongRoPE: pelab -> HF -> pelab into a directory whose config.json path is as long as a LongRoPE
 * path may be (255): the imported spec names that file whole, interleaved, and the logits agree
 * bit for bit at L and past it (the long factors) */
static void longrope_round_trip(void) {
    char spec[600], dir[600], note[400];
    snprintf(spec, sizeof spec, "rope:scale=longrope:%s", longrope_file());
    int n = snprintf(dir, sizeof dir, "%s/hf-lr-", test_tmpdir());
    while (n < 255 - (int)strlen("/config.json")) dir[n++] = 'd';
    dir[n] = 0;
    Model a, b;
    if (tiny_model(&a, spec, 2, 1, 9) != 0 || hf_llama_write(dir, &a, note, sizeof note) != 0) {
        CHECK(0, "longrope export: %s", pelab_errmsg);
        return;
    }
    if (hf_llama_read(dir, &b, NULL) != 0) {
        CHECK(0, "longrope import: %s", pelab_errmsg);
        model_free(&a);
        return;
    }
    char sa[POS_SPEC_MAX], sb[POS_SPEC_MAX], want[POS_SPEC_MAX + 600];
    pos_spec(&a.pos, sa, sizeof sa), pos_spec(&b.pos, sb, sizeof sb);
    /* a's spec with the factor file replaced by the exported config.json */
    const char *at = strstr(sa, longrope_file());
    snprintf(want, sizeof want, "%.*s%s/config.json%s", at ? (int)(at - sa) : 0, sa, dir,
             at ? at + strlen(longrope_file()) : "");
    CHECK(at && strcmp(sb, want) == 0, "longrope: the imported spec whole: %s, want %s", sb, want);
    CHECK(a.n_params == b.n_params && memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params) == 0,
          "longrope: parameters bit-exact");
    static float la[LOGIT_T * 13], lb[LOGIT_T * 13];
    for (int T = 8; T <= LOGIT_T; T += LOGIT_T - 8) {
        fixed_logits(&a, la, T), fixed_logits(&b, lb, T);
        CHECK(memcmp(la, lb, sizeof(float) * (size_t)T * 13) == 0, "longrope: logits bit-exact at T %d (max diff %g)",
              T, max_abs_diff(la, lb, T * 13));
    }
    model_free(&a), model_free(&b);
}

/* the exported config.json's rope fields, against values written out here from HF's semantics (the
 * tiny models: head_dim 4, seq_len 8): what HF reads, not what pelab reads back */
static void exported_fields(void) {
    static const struct {
        const char *spec, *type; /* type NULL: rope_scaling null */
        double factor, theta;
        long max_pos, orig; /* orig: rope_scaling.original_max_position_embeddings, 0 absent */
    } want[] = {
        {"rope:scale=pi:2", "linear", 2, 10000, 8, 0},
        /* HF's dynamic and yarn take L from max_position_embeddings */
        {"rope:scale=dynamic-ntk:2", "dynamic", 2, 10000, 8, 0},
        {"rope:base=500000,scale=yarn:4", "yarn", 4, 500000, 8, 0},
        {"rope:scale=llama3:8", "llama3", 8, 10000, 8, 8},
        /* static NTK is plain RoPE at base 10000 x 4^(4/(4-2)) = 160000 */
        {"rope:scale=ntk:4", NULL, 0, 160000, 8, 0},
        {"rope", NULL, 0, 10000, 8, 0},
        {"rope:scale=longrope:%s", "longrope", 4, 10000, 8, 8},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char spec[600], dir[512], path[600], note[400];
        snprintf(spec, sizeof spec, want[i].spec, longrope_file());
        snprintf(dir, sizeof dir, "%s/hf-fields-%zu", test_tmpdir(), i);
        snprintf(path, sizeof path, "%s/config.json", dir);
        Model m;
        unsigned char *buf = NULL;
        size_t len;
        JsonDoc doc;
        if (tiny_model(&m, spec, 2, 1, 4) != 0 || hf_llama_write(dir, &m, note, sizeof note) != 0 ||
            read_file(path, &buf, &len) != 0 || json_parse(&doc, (const char *)buf, len) != 0) {
            CHECK(0, "%s: export and read: %s", want[i].spec, pelab_errmsg);
            free(buf);
            continue;
        }
        model_free(&m);
        const JsonNode *r = doc.root, *rs = json_get(r, "rope_scaling"), *theta = json_get(r, "rope_theta"),
                       *mp = json_get(r, "max_position_embeddings");
        CHECK(theta && theta->type == JSON_NUMBER && theta->number == want[i].theta, "%s: rope_theta %g, want %g",
              want[i].spec, theta ? theta->number : -1, want[i].theta);
        CHECK(mp && mp->type == JSON_NUMBER && mp->number == want[i].max_pos, "%s: max_position_embeddings %g, want %ld",
              want[i].spec, mp ? mp->number : -1, want[i].max_pos);
        if (!want[i].type) {
            CHECK(rs && rs->type == JSON_NULL, "%s: rope_scaling null", want[i].spec);
        } else {
            const JsonNode *t = rs ? json_get(rs, "rope_type") : NULL, *f = rs ? json_get(rs, "factor") : NULL,
                           *o = rs ? json_get(rs, "original_max_position_embeddings") : NULL;
            CHECK(t && t->type == JSON_STRING && !strcmp(t->str, want[i].type), "%s: rope_type %s, want %s",
                  want[i].spec, t && t->type == JSON_STRING ? t->str : "-", want[i].type);
            CHECK(f && f->type == JSON_NUMBER && f->number == want[i].factor, "%s: factor %g, want %g", want[i].spec,
                  f ? f->number : -1, want[i].factor);
            CHECK(want[i].orig ? o && o->type == JSON_NUMBER && o->number == want[i].orig : !o,
                  "%s: original_max_position_embeddings %g, want %ld", want[i].spec, o ? o->number : -1, want[i].orig);
        }
        if (want[i].type && !strcmp(want[i].type, "llama3")) {
            const JsonNode *lo = json_get(rs, "low_freq_factor"), *hi = json_get(rs, "high_freq_factor");
            CHECK(lo && hi && lo->number == 1 && hi->number == 4, "llama3: low / high_freq_factor 1 and 4");
        }
        if (want[i].type && !strcmp(want[i].type, "longrope")) {
            const JsonNode *af = json_get(rs, "attention_factor"), *sf = json_get(rs, "short_factor"),
                           *lf = json_get(rs, "long_factor"), *top = json_get(r, "original_max_position_embeddings");
            double a = sqrt(1 + log(4.0) / log(8.0));
            CHECK(af && fabs(af->number - a) < 1e-15, "longrope: attention_factor %.17g, want sqrt(1 + ln 4 / ln 8) %.17g",
                  af ? af->number : -1, a);
            CHECK(sf && lf && sf->n_children == 2 && lf->n_children == 2 && json_at(sf, 1)->number == 1.2 &&
                  json_at(lf, 1)->number == 2.5 && json_at(sf, 0)->number == 1 && json_at(lf, 0)->number == 1,
                  "longrope: short [1, 1.2] and long [1, 2.5] factors");
            CHECK(top && top->number == 8, "longrope: top-level original_max_position_embeddings 8");
        }
        json_free(&doc);
        free(buf);
    }
}

/* The q/k row order, checked against HF's rotate_half written out here: an exported q_proj head
 * rotated as HF's apply_rotary_pos_emb does (q cos + rotate_half(q) sin, cos and sin of cat(freqs,
 * freqs), rotate_half(q) = cat(-q2, q1)) equals pelab's interleaved RoPE of the unpermuted rows,
 * dim k of pair j at HF row j + k d/2 and pelab row 2j + k. */
static void rotate_half_semantics(void) {
    enum { H = 2, HD = 8, D = 16 };
    char dir[512], path[600], note[400];
    snprintf(dir, sizeof dir, "%s/hf-rothalf", test_tmpdir());
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    Model m;
    if (tiny_model_shaped(&m, "rope:base=100", H, H, 1, 1, 21) != 0 || hf_llama_write(dir, &m, note, sizeof note) != 0) {
        CHECK(0, "rotate_half: export: %s", pelab_errmsg);
        return;
    }
    unsigned char *buf = NULL;
    size_t len;
    StFile f;
    static float w_hf[H * HD * D];
    TensorInfo info = {.ndim = 2, .shape = {H * HD, D}, .numel = H * HD * D};
    if (read_file(path, &buf, &len) != 0 || st_open(&f, buf, len, path) != 0) {
        CHECK(0, "rotate_half: read %s: %s", path, pelab_errmsg);
        free(buf), model_free(&m);
        return;
    }
    int rc = st_read_f32(&f, "model.layers.0.self_attn.q_proj.weight", &info, w_hf, path);
    st_close(&f), free(buf);
    CHECK(rc == 0, "rotate_half: q_proj read: %s", pelab_errmsg);
    float x[D];
    for (int i = 0; i < D; i++) x[i] = (float)((i * 7) % 5) - 1.5f;
    static const int positions[] = {0, 1, 5, 13};
    double worst = 0;
    for (size_t pi = 0; pi < sizeof positions / sizeof positions[0]; pi++) {
        int p = positions[pi];
        float q_pl[H * HD];
        double q_hf[H * HD], out_hf[H * HD];
        for (int r = 0; r < H * HD; r++) { /* q = W x, both orders */
            double a = 0, b = 0;
            for (int i = 0; i < D; i++) a += (double)m.params.wq[(size_t)r * D + i] * x[i], b += (double)w_hf[r * D + i] * x[i];
            q_pl[r] = (float)a, q_hf[r] = b;
        }
        CHECK(pos_check_positions(&m.pos, &p, 1) == 0, "rotate_half: position %d: %s", p, pelab_errmsg); /* grows the table */
        m.pos.scheme->qk_forward(&m.pos, q_pl, &p, 1, H, 0, 0);
        for (int h = 0; h < H; h++) {
            const double *q = q_hf + h * HD;
            for (int i = 0; i < HD; i++) { /* HF: emb = cat(freqs, freqs), inv_freq_j = base^(-2j/d) */
                int j = i % (HD / 2);
                double ang = p * pow(100.0, -2.0 * j / HD);
                double rot = i < HD / 2 ? -q[i + HD / 2] : q[i - HD / 2];
                out_hf[h * HD + i] = q[i] * cos(ang) + rot * sin(ang);
            }
            for (int j = 0; j < HD / 2; j++)
                for (int k = 0; k < 2; k++) {
                    double d = fabs(out_hf[h * HD + j + k * HD / 2] - q_pl[h * HD + 2 * j + k]);
                    if (d > worst) worst = d;
                }
        }
    }
    CHECK(worst < 1e-4, "HF's rotate_half on the exported q_proj equals pelab's interleaved RoPE (max diff %g)", worst);
    model_free(&m);
}

/* a Mistral directory: Llama's tensors, model_type mistral, a sliding window reported, not applied */
static void mistral_layout(void) {
    char dir[512], path[600];
    Model a, b;
    if (tiny_exported(&a, "rope:layout=half,base=1000000", "mistral", dir, sizeof dir) != 0) return;
    snprintf(path, sizeof path, "%s/config.json", dir);
    unsigned char *cfg;
    size_t len;
    CHECK(read_file(path, &cfg, &len) == 0, "read %s", path);
    StrBuf s = {0};
    const char *p = (const char *)cfg, *llama = strstr(p, "\"LlamaForCausalLM\"");
    sb_put(&s, p, (size_t)(llama - p));
    sb_puts(&s, "\"MistralForCausalLM\"], \"sliding_window\": 8, \"model_type\": \"mistral\"");
    p = strstr(llama, "\"model_type\": \"llama\"") + strlen("\"model_type\": \"llama\"");
    sb_puts(&s, p);
    free(cfg);
    long window = 0;
    CHECK(write_text(path, sb_str(&s)) == 0 && hf_llama_read(dir, &b, &window) == 0, "mistral config read: %s", pelab_errmsg);
    CHECK(window == 8 && a.n_params == b.n_params && !memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params),
          "MistralForCausalLM: Llama's weights bit for bit, sliding_window 8 reported (%ld)", window);
    char cmd[1400], out[2048];
    snprintf(cmd, sizeof cmd, "./pelab import --hf %s --out %s/mistral.st && ./pelab info %s/mistral.st", dir, test_tmpdir(),
             test_tmpdir());
    CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, "sliding_window 8 is not applied") && strstr(out, "hf_sliding_window 8"),
          "import says the window is not applied, info shows it: %s", out);
    sb_free(&s);
    model_free(&a), model_free(&b);
}

/* HF's sharded form: shards + model.safetensors.index.json, written and read back bit for bit */
static int same_file(const char *a, const char *b) {
    unsigned char *x, *y;
    size_t nx, ny;
    if (read_file(a, &x, &nx) != 0) return 0;
    if (read_file(b, &y, &ny) != 0) {
        free(x);
        return 0;
    }
    int same = nx == ny && memcmp(x, y, nx) == 0;
    free(x), free(y);
    return same;
}

static void sharded(void) {
    char dir[512], dir2[512], path[700], path2[700], note[400];
    snprintf(dir, sizeof dir, "%s/sharded", test_tmpdir());
    snprintf(dir2, sizeof dir2, "%s/sharded2", test_tmpdir());
    Model a, b;
    tiny_qkv_bias = 1; /* a Qwen2 model: its biases travel in the shards too */
    int made = tiny_model(&a, "rope", 2, 0, 5);
    tiny_qkv_bias = 0;
    if (made != 0 || hf_llama_write_sharded(dir, &a, 2000, 0, note, sizeof note) != 0) {
        CHECK(0, "sharded export: %s", pelab_errmsg);
        return;
    }
    int n_shards = 0;
    for (int k = 1; k < 100; k++) {
        snprintf(path, sizeof path, "%s/model-%05d-of-", dir, k);
        char probe[800];
        for (int n = 1; n < 100; n++) {
            snprintf(probe, sizeof probe, "%s%05d.safetensors", path, n);
            if (access(probe, F_OK) == 0) n_shards++;
        }
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(n_shards > 2 && access(path, F_OK) != 0, "2000-byte shards: %d files and no model.safetensors", n_shards);
    CHECK(hf_llama_read(dir, &b, NULL) == 0, "sharded import: %s", pelab_errmsg);
    CHECK(a.n_params == b.n_params && !memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params),
          "sharded Qwen2 (biases): parameters bit for bit after pelab -> HF shards -> pelab");
    /* the imported model written again: the same files, byte for byte */
    CHECK(hf_llama_write_sharded(dir2, &b, 2000, 0, note, sizeof note) == 0, "re-export: %s", pelab_errmsg);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    snprintf(path2, sizeof path2, "%s/model.safetensors.index.json", dir2);
    int same = same_file(path, path2);
    for (int k = 1; k <= n_shards; k++) {
        snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", dir, k, n_shards);
        snprintf(path2, sizeof path2, "%s/model-%05d-of-%05d.safetensors", dir2, k, n_shards);
        same &= same_file(path, path2);
    }
    CHECK(same, "the sharded re-export equals the first export byte for byte (index and %d shards)", n_shards);
    model_free(&b);
    /* one file over an earlier sharded export: the index goes, so import reads the new file */
    CHECK(hf_llama_write(dir2, &a, note, sizeof note) == 0 && hf_llama_read(dir2, &b, NULL) == 0 &&
              !memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params),
          "a one-file export over a sharded one reads back: %s", pelab_errmsg);
    snprintf(path2, sizeof path2, "%s/model.safetensors.index.json", dir2);
    CHECK(access(path2, F_OK) != 0, "the earlier index is removed");
    model_free(&b);
    /* hostile or inconsistent indexes: one line each */
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    unsigned char *orig;
    size_t len;
    CHECK(read_file(path, &orig, &len) == 0, "read the index");
    static const struct {
        const char *from, *to, *needle;
    } bad[] = {
        {"\"model.norm.weight\": \"model-", "\"model.norm.weight\": \"../model-", "no '/'"},
        {"\"metadata\"", "\"extra\": 1, \"metadata\"", "unexpected field 'extra'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        StrBuf s = {0};
        const char *at = strstr((const char *)orig, bad[i].from);
        if (!at) continue;
        sb_put(&s, (const char *)orig, (size_t)(at - (const char *)orig));
        sb_puts(&s, bad[i].to);
        sb_puts(&s, at + strlen(bad[i].from));
        int rc = write_text(path, sb_str(&s)) == 0 ? hf_llama_read(dir, &b, NULL) : 0;
        CHECK(rc != 0 && strstr(pelab_errmsg, bad[i].needle) && !strchr(pelab_errmsg, '\n'), "index refused naming '%s': %s",
              bad[i].needle, rc ? pelab_errmsg : "loaded");
        if (rc == 0) model_free(&b);
        sb_free(&s);
    }
    /* a tensor the index places in another shard than the one holding it */
    StrBuf s = {0};
    const char *at = strstr((const char *)orig, "\"model.norm.weight\": \"model-");
    sb_put(&s, (const char *)orig, (size_t)(at - (const char *)orig));
    sb_printf(&s, "\"model.norm.weight\": \"model-%05d-of-%05d.safetensors\"", 1, n_shards);
    sb_puts(&s, strchr(at + strlen("\"model.norm.weight\": \""), '"') + 1);
    int rc = write_text(path, sb_str(&s)) == 0 ? hf_llama_read(dir, &b, NULL) : 0;
    CHECK(rc != 0 && strstr(pelab_errmsg, "model.norm.weight") && !strchr(pelab_errmsg, '\n'),
          "a tensor in the wrong shard is refused: %s", rc ? pelab_errmsg : "loaded");
    if (rc == 0) model_free(&b);
    sb_free(&s);
    free(orig);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "./pelab import --hf %s/nothing-here --out %s/x.st", test_tmpdir(), test_tmpdir());
    snprintf(path, sizeof path, "%s/nothing-here", test_tmpdir());
    make_dirs(path);
    snprintf(path, sizeof path, "%s/nothing-here/config.json", test_tmpdir());
    snprintf(path2, sizeof path2, "%s/config.json", dir);
    unsigned char *cfg;
    if (read_file(path2, &cfg, &len) == 0) {
        write_bytes_atomic(path, cfg, len);
        free(cfg);
    }
    expect_pelab_error(cmd, "neither model.safetensors nor model.safetensors.index.json");
    model_free(&a);
}

/* Qwen2: Llama's decoder with q/k/v biases, exported as Qwen2ForCausalLM and read back bit for bit
 * (interleaved rows and their biases reordered both ways); a pelab checkpoint keeps them too */
static void qwen2_layout(void) {
    tiny_qkv_bias = 1;
    round_trip("rope", 2, 0);
    round_trip("rope:layout=half,base=1000000", 2, 1);
    Model a, b;
    char dir[512], path[600], note[400];
    snprintf(dir, sizeof dir, "%s/qwen2", test_tmpdir());
    int ok = tiny_model(&a, "rope", 2, 1, 12) == 0 && hf_llama_write(dir, &a, note, sizeof note) == 0;
    tiny_qkv_bias = 0;
    CHECK(ok, "qwen2 export: %s", pelab_errmsg);
    if (!ok) return;
    snprintf(path, sizeof path, "%s/config.json", dir);
    unsigned char *cfg;
    size_t len;
    CHECK(read_file(path, &cfg, &len) == 0 && strstr((char *)cfg, "\"Qwen2ForCausalLM\"") &&
              strstr((char *)cfg, "\"model_type\": \"qwen2\"") && !strstr((char *)cfg, "attention_bias"),
          "a biased model is written as Qwen2ForCausalLM");
    free(cfg);
    snprintf(path, sizeof path, "%s/qwen2.safetensors", test_tmpdir());
    CHECK(checkpoint_save(path, &a, NULL, NULL, NULL) == 0 && checkpoint_load(path, &b, NULL, NULL, NULL) == 0 &&
              b.cfg.qkv_bias == 1 && a.n_params == b.n_params && !memcmp(a.params_mem, b.params_mem, sizeof(float) * a.n_params),
          "a pelab checkpoint keeps the biases (qkv_bias 1, bit for bit): %s", pelab_errmsg);
    model_free(&b);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "./pelab export %s --llama2c %s/qwen2.bin", path, test_tmpdir());
    expect_pelab_error(cmd, "q/k/v biases");
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
    longrope_round_trip();
    exported_fields();
    rotate_half_semantics();
    refusals();
    mistral_layout();
    qwen2_layout();
    sharded();
    half_written();
    python_conventions();
    half_precision();
    torch_check();
}
