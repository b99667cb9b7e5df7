/* interop_cmd.c: `pelab import` and `pelab export`: llama2.c's legacy model file and tokenizer.bin
 * (--llama2c; io/llama2c.h, data/llama2c_tok.h), a Hugging Face Llama directory (--hf;
 * io/hf_llama.h), or a GGUF file of llama.cpp's llama architecture (--gguf; io/gguf_llama.h) <->
 * a pelab checkpoint. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../data/hf_tok_write.h"
#include "../data/tokenizer.h"
#include "../io/checkpoint.h"
#include "../io/gguf_llama.h"
#include "../io/hf_llama.h"
#include "../io/llama2c.h"
#include "args.h"
#include "commands.h"
#include "load.h"

/* a Hugging Face Llama directory -> a pelab checkpoint, with DIR/tokenizer.json inside when there is one */
static int import_hf(const char *dir, const char *out, int apply_window) {
    Model m;
    long window;
    if (hf_llama_read(dir, &m, &window) != 0) pelab_die("import: %s", pelab_errmsg);
    CkptMeta meta = {0};
    if (apply_window && !window) pelab_die("import: --sliding-window: %s/config.json has no sliding_window", dir);
    if (apply_window && m.cfg.qkv_bias)
        pelab_die("import: --sliding-window: Qwen2 windows only its layers past max_window_layers; pelab would window "
                  "every layer");
    if (apply_window) {
        if (window > INT32_MAX) pelab_die("import: sliding_window %ld: expected at most %d", window, INT32_MAX);
        m.cfg.sliding_window = (int)window;
    } else if (window) { /* Mistral's: recorded and said, not applied */
        meta_set(&meta, "hf_sliding_window", "%ld", window);
        fprintf(stderr, "pelab: warning: %s: sliding_window %ld is not applied (import --sliding-window applies it): "
                "pelab attends to the whole context, which is this model up to %ld tokens and not past it\n", dir,
                window, window);
    }
    char spec[POS_SPEC_MAX], tok_path[1100];
    pos_spec(&m.pos, spec, sizeof spec);
    snprintf(tok_path, sizeof tok_path, "%s/tokenizer.json", dir);
    unsigned char *image = NULL;
    size_t image_len = 0;
    Tokenizer tok;
    tokenizer_init_byte(&tok);
    if (access(tok_path, F_OK) == 0) {
        if (hf_read_model_file(dir, "tokenizer.json", FILE_MAX_TOKENIZER, "a tokenizer.json", &image, &image_len) != 0 ||
            tokenizer_from_file_image(&tok, "hf", image, image_len, tok_path, m.cfg.vocab_size) != 0)
            pelab_die("import: %s", pelab_errmsg);
        meta_set(&meta, "tokenizer", "hf");
        meta.tokenizer_image = image, meta.tokenizer_len = image_len;
    }
    /* a bf16 model (every weight a bf16 value) stays bf16: nothing lost, half the file, and
     * --precision bf16 runs keep it in bf16 alone */
    int as_bf16 = model_weights_bf16_exact(&m);
    if ((as_bf16 ? checkpoint_save_bf16(out, &m, &meta) : checkpoint_save(out, &m, &meta, NULL, NULL)) != 0)
        pelab_die("import: %s", pelab_errmsg);
    printf("%s: %zu parameters, dim %d, %d layers, %d heads (%d kv), hidden %d, vocab %d (%s), seq_len %d, pos %s -> %s "
           "(weights %s) ", dir, m.n_params, m.cfg.dim, m.cfg.n_layers, m.cfg.n_heads, m.cfg.n_kv_heads, m.cfg.hidden_dim,
           m.cfg.vocab_size, m.cfg.tied ? "tied" : "untied", m.cfg.seq_len, spec, out, as_bf16 ? "bf16, as in the file" : "float32");
    if (image)
        printf("(tokenizer.json stored: %d tokens%s)\n", tok.vocab_size,
               tok.bos >= 0 ? ", texts start with its BOS" : "");
    else
        printf("(no tokenizer.json in %s: pelab's byte tokenizer is assumed; bring your own ids otherwise)\n", dir);
    tokenizer_free(&tok);
    free(image);
    model_free(&m);
    return 0;
}

/* a GGUF file (llama architecture) -> a pelab checkpoint, with the tokenizer pelab can represent;
 * under bf16 decoded into a model held in bf16 alone (half the memory) and written as bf16 */
static int import_gguf(const char *path, const char *out, Precision precision) {
    Model m;
    GgufTokImage tok;
    if (gguf_llama_read(path, precision, &m, &tok) != 0) pelab_die("import: %s", pelab_errmsg);
    CkptMeta meta = {0};
    if (tok.kind) meta_set(&meta, "tokenizer", "%s", tok.kind);
    meta.tokenizer_image = tok.image, meta.tokenizer_len = tok.len;
    int as_bf16 = model_weights_bf16_exact(&m); /* a BF16 file stays BF16, as import --hf keeps it */
    if ((as_bf16 ? checkpoint_save_bf16(out, &m, &meta) : checkpoint_save(out, &m, &meta, NULL, NULL)) != 0)
        pelab_die("import: %s", pelab_errmsg);
    char spec[POS_SPEC_MAX];
    pos_spec(&m.pos, spec, sizeof spec);
    printf("%s: %zu parameters, dim %d, %d layers, %d heads (%d kv), hidden %d, vocab %d (%s), seq_len %d, pos %s -> %s "
           "(weights %s; %s)\n", path, m.n_params, m.cfg.dim, m.cfg.n_layers, m.cfg.n_heads, m.cfg.n_kv_heads,
           m.cfg.hidden_dim, m.cfg.vocab_size, m.cfg.tied ? "tied" : "untied", m.cfg.seq_len, spec, out,
           m.bf16_only ? "bf16, rounded (--precision bf16)" : as_bf16 ? "bf16, as in the file" : "float32", tok.note);
    free(tok.image);
    model_free(&m);
    return 0;
}

int cmd_import(int argc, char **argv) {
    const char *model_path = NULL, *tok_path = NULL, *out = NULL, *hf_dir = NULL, *gguf = NULL, *precision = NULL;
    int apply_window = 0;
    const OptSpec opts[] = {
        {"--llama2c", OPT_STR, &model_path, 0, 0, "llama2.c model file (legacy format: 7-int header, float32)"},
        {"--tokenizer", OPT_STR, &tok_path, 0, 0, "its tokenizer.bin (stored inside the checkpoint)"},
        {"--hf", OPT_STR, &hf_dir, 0, 0, "or a Hugging Face Llama directory: config.json + model.safetensors (F32, BF16 or F16), and tokenizer.json when present (stored inside)"},
        {"--gguf", OPT_STR, &gguf, 0, 0, "or a GGUF file of llama.cpp's llama architecture (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K tensors, widened to float32), with its tokenizer when pelab has its form"},
        {"--precision", OPT_STR, &precision, 0, 0, "with --gguf: fp32 (default), or bf16: every weight decoded once and "
                                                   "rounded to bf16, held and written as bf16 (half the memory and the file)"},
        {"--out", OPT_OUT_FILE, &out, 0, 0, "pelab checkpoint to write"},
        {"--sliding-window", OPT_FLAG, &apply_window, 0, 0, "with --hf: apply the config's sliding_window (Mistral): each "
                                                           "query sees the keys fewer than that many positions behind it"},
    };
    args_parse("import", "--llama2c MODEL.bin --tokenizer TOK.bin --out CKPT  |  --hf DIR --out CKPT  |  --gguf FILE --out CKPT",
               argc, argv, 1, opts, sizeof opts / sizeof opts[0], NULL, 0, NULL);
    if (gguf && (hf_dir || model_path || tok_path || apply_window))
        pelab_die("import: --gguf FILE excludes --hf, --llama2c, --tokenizer and --sliding-window");
    if (gguf && !out) pelab_die("import: --gguf FILE needs --out CKPT");
    if (precision && !gguf) pelab_die("import: --precision goes with --gguf");
    if (gguf) return import_gguf(gguf, out, precision_or_die(precision));
    if (hf_dir && (model_path || tok_path)) pelab_die("import: --hf DIR and --llama2c / --tokenizer exclude each other");
    if (hf_dir && !out) pelab_die("import: --hf DIR needs --out CKPT");
    if (apply_window && !hf_dir) pelab_die("import: --sliding-window goes with --hf");
    if (hf_dir) return import_hf(hf_dir, out, apply_window);
    if (!model_path || !tok_path || !out)
        pelab_die("import: --llama2c MODEL.bin, --tokenizer TOK.bin and --out CKPT are all required");
    Model m;
    if (llama2c_read_model(model_path, &m) != 0) pelab_die("import: %s", pelab_errmsg);
    unsigned char *image;
    size_t image_len;
    if (read_file_max(tok_path, FILE_MAX_TOKENIZER, "a tokenizer.bin", &image, &image_len) != 0) pelab_die("import: %s", pelab_errmsg);
    Tokenizer tok;
    if (tokenizer_from_file_image(&tok, "llama2c", image, image_len, tok_path, m.cfg.vocab_size) != 0)
        pelab_die("import: %s", pelab_errmsg);
    if (tok.vocab_size != m.cfg.vocab_size)
        pelab_die("import: %s has %d tokens but %s has a vocabulary of %d", tok_path, tok.vocab_size, model_path,
                  m.cfg.vocab_size);
    CkptMeta meta = {0};
    meta_set(&meta, "tokenizer", "llama2c");
    /* metadata must be UTF-8; a path is any bytes: keep ASCII, '?' for the rest */
    char source[400];
    size_t k = 0;
    for (const char *c = model_path; *c && k + 1 < sizeof source; c++)
        source[k++] = (unsigned char)*c < 0x80 ? *c : '?';
    source[k] = 0;
    meta_set(&meta, "source", "llama2c:%s", source);
    meta.tokenizer_image = image, meta.tokenizer_len = image_len;
    if (checkpoint_save(out, &m, &meta, NULL, NULL) != 0) pelab_die("import: %s", pelab_errmsg);
    printf("%s: %zu parameters, dim %d, %d layers, %d heads (%d kv), hidden %d, vocab %d (%s), seq_len %d, "
           "llama2c tokenizer -> %s\n",
           model_path, m.n_params, m.cfg.dim, m.cfg.n_layers, m.cfg.n_heads, m.cfg.n_kv_heads, m.cfg.hidden_dim,
           m.cfg.vocab_size, m.cfg.tied ? "shared classifier" : "unshared classifier", m.cfg.seq_len, out);
    tokenizer_free(&tok);
    free(image);
    model_free(&m);
    return 0;
}

/* pelab's byte or BPE vocabulary as a tokenizer.bin: every piece as its bytes, a lone byte that
 * is not printable ASCII as "<0xHH>" (run.c decodes that to the raw byte); BPE scores are
 * -rank so run.c's merge-by-best-score prefers earlier merges, as BPE does */
static void vocabulary_as_llama2c(const Tokenizer *t, unsigned char **buf, size_t *len) {
    Llama2cTok v = {0};
    v.vocab_size = t->vocab_size;
    v.piece = xmalloc(sizeof(unsigned char *) * (size_t)v.vocab_size);
    v.piece_len = xmalloc(sizeof(int) * (size_t)v.vocab_size);
    v.scores = xmalloc(sizeof(float) * (size_t)v.vocab_size);
    for (int id = 0; id < v.vocab_size; id++) {
        size_t n;
        const unsigned char *p = tokenizer_decode(t, -1, id, &n);
        v.piece[id] = xmalloc(n + 8);
        if (n == 1 && !(p[0] >= 0x20 && p[0] < 0x7f)) { /* " " must stay a piece: run.c's dummy prefix */
            n = (size_t)snprintf((char *)v.piece[id], 8, "<0x%02X>", p[0]);
        } else {
            if (memchr(p, 0, n)) pelab_die("export: token %d holds a NUL byte, which llama2.c cannot represent", id);
            memcpy(v.piece[id], p, n);
        }
        v.piece_len[id] = (int)n;
        v.scores[id] = id < 256 ? 0.0f : -(float)(id - 256);
        if ((int)n > v.max_token_length) v.max_token_length = (int)n;
    }
    llama2c_tok_serialize(&v, buf, len);
    for (int id = 0; id < v.vocab_size; id++) free(v.piece[id]);
    free(v.piece), free(v.piece_len), free(v.scores);
}

/* a pelab RoPE checkpoint -> a Hugging Face Llama directory, with tokenizer.json when the checkpoint's
 * tokenizer has one: a stored tokenizer.json as it was, llama2.c's tokenizer.bin converted */
static int export_hf(const char *ckpt, const Model *m, const CkptMeta *meta, const char *dir, float shard_mb,
                     int as_bf16) {
    char note[400];
    Tokenizer tok;
    const char *kind = meta_get(meta, "tokenizer");
    tokenizer_init_byte(&tok); /* byte and pelab-BPE models export no tokenizer: only these two are read */
    if (kind && (!strcmp(kind, "hf") || !strcmp(kind, "llama2c")) &&
        tokenizer_from_image(&tok, kind, meta->tokenizer_image, meta->tokenizer_len, ckpt, m->cfg.vocab_size) != 0)
        pelab_die("export: %s", pelab_errmsg);
    StrBuf json = {0}, path = {0};
    if (tok.kind == TOK_HF) sb_put(&json, (const char *)tok.image, tok.image_len);
    if (tok.kind == TOK_LLAMA2C && hf_tok_json_from_llama2c(&tok.l2c, &json, ckpt) != 0) pelab_die("export: %s", pelab_errmsg);
    if (hf_llama_write_sharded(dir, m, (size_t)((double)shard_mb * 1e6), as_bf16, note, sizeof note) != 0)
        pelab_die("export: %s", pelab_errmsg);
    sb_printf(&path, "%s/tokenizer.json", dir);
    if (json.len && write_bytes_atomic(sb_str(&path), json.s, json.len) != 0) pelab_die("export: %s", pelab_errmsg);
    sb_printf(&path, "%s/model.safetensors.index.json", dir);
    int sharded = access(sb_str(&path), F_OK) == 0;
    path.len = 0;
    sb_printf(&path, "%s/tokenizer.json", dir);
    printf("%s -> %s/config.json + %s/%s (LlamaForCausalLM, %s%s%s)", ckpt, dir, dir,
           sharded ? "model.safetensors.index.json and its shards" : "model.safetensors", as_bf16 ? "bfloat16" : "float32",
           note[0] ? "; " : "", note);
    if (json.len)
        printf(" + %s (%s)\n", sb_str(&path), tok.kind == TOK_HF ? "as imported" : "llama2.c's tokenizer as HF's BPE");
    else
        printf("; no tokenizer written: the ids are pelab's %s tokenizer's (a byte model: id = byte value)\n",
               kind ? kind : "byte");
    sb_free(&json), sb_free(&path);
    tokenizer_free(&tok);
    return 0;
}

/* a pelab RoPE checkpoint -> a GGUF file for llama.cpp, with the checkpoint's tokenizer */
static int export_gguf(const char *ckpt, const Model *m, const CkptMeta *meta, const char *path, const char *type_name) {
    uint32_t type;
    char note[700];
    Tokenizer tok;
    if (gguf_weight_type_parse(type_name, &type) != 0 || gguf_check_exportable(m, ckpt) != 0) pelab_die("export: %s", pelab_errmsg);
    /* a model of fewer than 256 ids without a tokenizer of its own (task data, tests) has none */
    const char *kind = meta_get(meta, "tokenizer");
    int has_tok = (kind && strcmp(kind, "byte")) || m->cfg.vocab_size >= 256;
    if ((has_tok && tokenizer_from_image(&tok, kind, meta->tokenizer_image, meta->tokenizer_len, ckpt, m->cfg.vocab_size) != 0) ||
        gguf_llama_write(path, m, has_tok ? &tok : NULL, type, note, sizeof note) != 0)
        pelab_die("export: %s", pelab_errmsg);
    printf("%s -> %s (GGUF, llama architecture, matrices %s; %s)\n", ckpt, path, type_name, note);
    if (has_tok) tokenizer_free(&tok);
    return 0;
}

int cmd_export(int argc, char **argv) {
    const char *out = NULL, *tok_out = NULL, *hf_dir = NULL, *gguf = NULL, *gguf_type = NULL;
    float shard_mb = 0;
    int as_bf16 = 0;
    const OptSpec opts[] = {
        {"--llama2c", OPT_OUT_FILE, &out, 0, 0, "llama2.c model file to write (legacy format)"},
        {"--tokenizer-out", OPT_OUT_FILE, &tok_out, 0, 0, "tokenizer.bin to write beside it (default: OUT's directory/tokenizer.bin)"},
        {"--hf", OPT_OUT_DIR, &hf_dir, 0, 0, "or a Hugging Face Llama directory to write: config.json + model.safetensors (+ tokenizer.json from a llama2c or hf tokenizer)"},
        {"--shard-mb", OPT_FLOAT, &shard_mb, 0, 1e9, "with --hf: shards of at most this many MB (model-0000K-of-0000N.safetensors + index), as HF saves large models (0: one file)"},
        {"--bf16", OPT_FLAG, &as_bf16, 0, 0, "with --hf: the weights as BF16 (rounded to nearest even), as most HF checkpoints are"},
        {"--gguf", OPT_OUT_FILE, &gguf, 0, 0, "or a GGUF file to write, llama.cpp's llama architecture (+ the checkpoint's tokenizer where GGUF has its form)"},
        {"--gguf-type", OPT_STR, &gguf_type, 0, 0, "with --gguf: the matrices as f32 (default), f16, bf16 or q8_0 (ggml's blocks of 32; norms stay f32)"},
    };
    const char *pos_args[1];
    int n_pos;
    args_parse("export", "CKPT --llama2c OUT.bin [--tokenizer-out TOK.bin]  |  CKPT --hf DIR  |  CKPT --gguf OUT.gguf [--gguf-type T]",
               argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (n_pos != 1 || (!!out + !!hf_dir + !!gguf) != 1)
        pelab_die("export: expected a checkpoint and one of --llama2c OUT.bin, --hf DIR, --gguf OUT.gguf (see pelab export --help)");
    if (gguf_type && !gguf) pelab_die("export: --gguf-type goes with --gguf");
    if (gguf && (tok_out || shard_mb || as_bf16)) pelab_die("export: --gguf excludes --tokenizer-out, --shard-mb and --bf16 (use --gguf-type)");
    if (hf_dir && tok_out)
        pelab_die("export: --tokenizer-out goes with --llama2c; --hf writes DIR/tokenizer.json itself");
    Model m;
    CkptMeta meta;
    if (checkpoint_load(pos_args[0], &m, &meta, NULL, NULL) != 0) pelab_die("export: %s", pelab_errmsg);
    if (gguf || hf_dir) {
        if (gguf) export_gguf(pos_args[0], &m, &meta, gguf, gguf_type ? gguf_type : "f32");
        else export_hf(pos_args[0], &m, &meta, hf_dir, shard_mb, as_bf16);
        meta_free(&meta);
        model_free(&m);
        return 0;
    }
    if (llama2c_check_exportable(&m, pos_args[0]) != 0) pelab_die("export: %s", pelab_errmsg);
    Tokenizer tok;
    if (tokenizer_from_image(&tok, meta_get(&meta, "tokenizer"), meta.tokenizer_image, meta.tokenizer_len,
                             pos_args[0], m.cfg.vocab_size) != 0)
        pelab_die("export: %s", pelab_errmsg);
    char tok_default[1024];
    if (!tok_out) {
        const char *slash = strrchr(out, '/');
        snprintf(tok_default, sizeof tok_default, "%.*stokenizer.bin", slash ? (int)(slash - out + 1) : 0, out);
        tok_out = tok_default;
    }
    if (strcmp(out, tok_out) == 0)
        pelab_die("export: --llama2c %s: the model and the tokenizer would be the same file (give --tokenizer-out)",
                  out);
    if (tok.vocab_size != m.cfg.vocab_size)
        pelab_die("export: %s: the tokenizer has %d tokens but the model %d; llama2.c reads exactly the model's "
                  "count from tokenizer.bin", pos_args[0], tok.vocab_size, m.cfg.vocab_size);
    if (tok.kind != TOK_LLAMA2C) { /* the image written is llama2.c's format */
        unsigned char *buf;
        size_t len;
        vocabulary_as_llama2c(&tok, &buf, &len);
        free(tok.image);
        tok.image = buf, tok.image_len = len;
    }
    if (llama2c_write_model(out, &m) != 0 || write_bytes_atomic(tok_out, tok.image, tok.image_len) != 0)
        pelab_die("export: %s", pelab_errmsg);
    printf("%s -> %s + %s (%s tokenizer%s)\n", pos_args[0], out, tok_out, tokenizer_kind_name(&tok),
           tok.kind == TOK_LLAMA2C ? ", as imported"
                                   : "; llama2.c's runner starts from token 1 and encodes prompts by its own rule");
    tokenizer_free(&tok);
    meta_free(&meta);
    model_free(&m);
    return 0;
}
