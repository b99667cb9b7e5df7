/* test_hostile_tok.c: tokenizers from a stranger that hung or grew without bound (the hostile-input
 * audit of 2026-12-08, round 3: its hang, its memory blow-up and one of its messages). Each runs
 * through the binary under test:
 * - a pattern that matches empty: a Split on {"String": ""} looped forever at 100% CPU in
 *   `tokenizer encode`, `train --tokenizer` and any model imported with it; a Regex that matches
 *   empty ("x*", "(?=b)", "b?") skipped its empty matches, where HF's find_iter cuts the text at
 *   each. Now every such pattern advances and gives the ids of HF's tokenizers library (the Rust
 *   one, checked through its node binding, 1600 of 1600 Split cases);
 * - a text transformation that grows: 40 normalizers Replace "a" -> "aa" grew 4 bytes to 1.66 GB,
 *   and pre-tokenizer and decoder chains the same. Now each step is bounded by
 *   hf_tok_growth_limit (32 x the text + 4096 bytes, one budget for the whole text) and refused in
 *   one line naming the file and the field, within 1 s of CPU and 100 MB over a plain refusal: an
 *   obviously explosive chain at load (it explodes on the text of its own patterns), any other as
 *   it runs; the largest legitimate growth (NFKC of U+FDFA, then ByteLevel: 22-fold) still encodes;
 * - an empty tokenizer.bin was described as a checkpoint's missing tensor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/strbuf.h"
#include "../io/hf_llama.h"
#include "../io/llama2c.h"
#include "../model/model.h"
#include "child.h"
#include "test.h"

static char dir[256]; /* test_tmpdir()/hostile-tok */

/* the ids "ab abc ba" has when split at every character (Split on "", or a pattern matching empty) */
#define CHARS "1 2 4 1 2 3 4 2 1"
/* ... and when it is one piece: "a b" merges */
#define WHOLE "5 4 5 3 4 2 1"

static void write_file(const char *name, const char *bytes, size_t n, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", dir, name);
    CHECK(write_bytes_atomic(path, bytes, n) == 0, "write %s: %s", path, pelab_errmsg);
}

/* dir/name.json: a BPE over <unk> a b c ' ' ab (6 ids: inside the tiny test model's 13; the merge
 * "a b" shows where a text was cut) with the normalizer, pre-tokenizer and decoder given (JSON, or
 * NULL for none) */
static void write_tok(const char *name, const char *norm, const char *pre, const char *dec, char *path, size_t cap) {
    StrBuf b = {0};
    sb_printf(&b, "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0, \"a\": 1, \"b\": 2, "
                  "\"c\": 3, \" \": 4, \"ab\": 5}, \"merges\": [\"a b\"]}, \"added_tokens\": [{\"id\": 0, \"content\": "
                  "\"<unk>\", \"special\": true}], \"normalizer\": %s, \"pre_tokenizer\": %s, \"decoder\": %s}",
              norm ? norm : "null", pre ? pre : "null", dec ? dec : "null");
    char file[300];
    snprintf(file, sizeof file, "%s.json", name);
    write_file(file, b.s, b.len, path, cap);
    sb_free(&b);
}

/* {"type": "Sequence", key: [step x count]} */
static char *repeated(const char *key, const char *step, int count) {
    StrBuf b = {0};
    sb_printf(&b, "{\"type\": \"Sequence\", \"%s\": [", key);
    for (int i = 0; i < count; i++) sb_printf(&b, "%s%s", i ? ", " : "", step);
    sb_puts(&b, "]}");
    return b.s;
}

/* the ids of r.out (one a line) as one space-separated string */
static void ids_of(const char *out, char *ids, size_t cap) {
    size_t k = 0;
    ids[0] = 0;
    for (const char *p = out; *p && k + 16 < cap;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) break;
        k += (size_t)snprintf(ids + k, cap - k, "%s%ld", k ? " " : "", v);
        p = end;
    }
}

/* `tokenizer encode tok text`: exits 0 within 1 s of CPU with the ids want (NULL: any, counted
 * with --count: run_argv keeps 32 KB of output) */
static void expect_ids(const char *what, const char *tok, const char *text, const char *want) {
    static Run r;
    const char *args[] = {"tokenizer", "encode", tok, text, want ? NULL : "--count", NULL};
    run_argv(&r, args, NULL, NULL, 5);
    char ids[4096] = "";
    if (want) ids_of(r.out, ids, sizeof ids);
    CHECK(!r.timed_out && r.status == 0 && r.cpu_s < 1.0 && (!want || !strcmp(ids, want)),
          "%s: ids '%s' within 1 s (exit %d%s, %.2f s CPU): '%.200s'", what, want ? want : "(any)", r.status,
          r.timed_out ? ", killed after 5 s" : "", r.cpu_s, ids);
}

/* every Split behaviour and invert on patterns that match empty, against HF's ids */
static void empty_matches(void) {
    char text[600], tok[600], big[600];
    write_file("text.txt", "ab abc ba", 9, text, sizeof text);
    static const char *const behaviors[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    for (int b = 0; b < 5; b++)
        for (int invert = 0; invert < 2; invert++) {
            char pre[300], what[200];
            snprintf(pre, sizeof pre, "{\"type\": \"Split\", \"pattern\": {\"String\": \"\"}, \"behavior\": \"%s\", "
                     "\"invert\": %s}", behaviors[b], invert ? "true" : "false");
            write_tok("split-empty", NULL, pre, NULL, tok, sizeof tok);
            snprintf(what, sizeof what, "Split {\"String\": \"\"} %s invert %d", behaviors[b], invert);
            /* HF: the empty string matches between every two characters; Removed + invert keeps the matches */
            expect_ids(what, tok, text, b == 0 && invert ? "" : CHARS);
        }
    static const struct {
        const char *pattern, *behavior, *invert, *ids;
    } regex[] = {
        {"x*", "Isolated", "false", CHARS},   {"(?=b)", "Isolated", "false", CHARS},
        {"b?", "MergedWithNext", "false", CHARS}, {"", "Removed", "false", CHARS},
        {"\\\\b", "Contiguous", "false", WHOLE}, {"a*", "MergedWithPrevious", "true", WHOLE},
    };
    for (size_t i = 0; i < sizeof regex / sizeof regex[0]; i++) {
        char pre[300], what[200];
        snprintf(pre, sizeof pre, "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"%s\"}, \"behavior\": \"%s\", "
                 "\"invert\": %s}", regex[i].pattern, regex[i].behavior, regex[i].invert);
        write_tok("split-regex", NULL, pre, NULL, tok, sizeof tok);
        snprintf(what, sizeof what, "Split {\"Regex\": \"%s\"} %s invert %s", regex[i].pattern, regex[i].behavior,
                 regex[i].invert);
        expect_ids(what, tok, text, regex[i].ids);
    }
    /* a text of 200 KB split at every character, twice over (a Sequence): in bounds */
    StrBuf t = {0};
    for (int i = 0; i < 20000; i++) sb_puts(&t, "ab abc ba ");
    write_file("big.txt", t.s, t.len, big, sizeof big);
    sb_free(&t);
    char *seq = repeated("pretokenizers", "{\"type\": \"Split\", \"pattern\": {\"String\": \"\"}, \"behavior\": "
                         "\"MergedWithNext\", \"invert\": false}", 2);
    write_tok("split-empty-twice", NULL, seq, NULL, tok, sizeof tok);
    free(seq);
    expect_ids("Split on \"\" twice over 200 KB", tok, big, NULL);
}

/* the same file through a model: train --tokenizer, and import --hf of a folder holding it, then
 * encoding with the checkpoint's own copy */
static void empty_match_models(void) {
    static Run r;
    char tok[600], text[600], ckpt[600], model_dir[600], imported[600], data[600];
    write_tok("split-empty", NULL, "{\"type\": \"Split\", \"pattern\": {\"String\": \"\"}, \"behavior\": \"Isolated\", "
              "\"invert\": false}", NULL, tok, sizeof tok);
    write_file("text.txt", "ab abc ba", 9, text, sizeof text);
    StrBuf d = {0};
    for (int i = 0; i < 200; i++) sb_puts(&d, "ab abc ba\n");
    write_file("data.txt", d.s, d.len, data, sizeof data);
    sb_free(&d);
    snprintf(ckpt, sizeof ckpt, "%s/trained.safetensors", dir);
    const char *train[] = {"train", "--tokenizer", tok, "--data", data, "--steps", "1", "--dim", "16", "--layers", "1",
                           "--heads", "2", "--seq-len", "8", "--batch", "1", "--threads", "1", "--quiet", "--out", ckpt,
                           NULL};
    run_argv(&r, train, NULL, NULL, 20);
    CHECK(!r.timed_out && r.status == 0, "train --tokenizer with Split on \"\": trains (exit %d%s): %.300s", r.status,
          r.timed_out ? ", killed after 20 s" : "", r.out);
    if (r.status == 0) expect_ids("the trained checkpoint's own tokenizer", ckpt, text, CHARS);

    Model m;
    char note[400], cmd[1400];
    snprintf(model_dir, sizeof model_dir, "%s/hf-model", dir);
    int ok = tiny_model(&m, "rope", 2, 0, 7) == 0 && hf_llama_write_sharded(model_dir, &m, 0, 0, note, sizeof note) == 0;
    CHECK(ok, "export the tiny model: %s", pelab_errmsg);
    model_free(&m);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/tokenizer.json'", tok, model_dir);
    CHECK(system(cmd) == 0, "%s", cmd);
    snprintf(imported, sizeof imported, "%s/imported.safetensors", dir);
    const char *import[] = {"import", "--hf", model_dir, "--out", imported, NULL};
    run_argv(&r, import, NULL, NULL, 20);
    CHECK(!r.timed_out && r.status == 0, "import --hf of a folder whose tokenizer.json splits on \"\": imports (exit %d): "
          "%.300s", r.status, r.out);
    if (r.status == 0) expect_ids("the imported checkpoint's tokenizer.json", imported, text, CHARS);
    /* an explosive normalizer chain in the folder: refused by the import itself, naming the file */
    char *chain = repeated("normalizers", "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"aa\"}", 40);
    write_tok("explosive", chain, NULL, NULL, tok, sizeof tok);
    free(chain);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/tokenizer.json'", tok, model_dir);
    CHECK(system(cmd) == 0, "%s", cmd);
    run_argv(&r, import, NULL, NULL, 20);
    char needle[700];
    snprintf(needle, sizeof needle, "%s/tokenizer.json: normalizer.normalizers[", model_dir);
    CHECK(!r.timed_out && r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, needle),
          "import --hf of a folder whose tokenizer.json doubles 'a' 40 times: refused naming '%s' (exit %d): %.300s",
          needle, r.status, r.out);
}

/* `tokenizer encode tok text --count`: refused in one line naming "tok: field" and the bound, within
 * 1 s of CPU and 100 MB over a plain refusal */
static void expect_growth_refused(const char *what, const char *tok, const char *text, const char *field) {
    static Run r, base;
    const char *none[] = {"tokenizer", "encode", "/nonexistent.json", "/nonexistent.txt", NULL};
    run_argv(&base, none, NULL, NULL, 10);
    const char *args[] = {"tokenizer", "encode", tok, text, "--count", NULL};
    run_argv(&r, args, NULL, NULL, 5);
    char needle[800];
    snprintf(needle, sizeof needle, "%s: %s", tok, field);
    CHECK(!r.timed_out && r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, needle) && strstr(r.out, "32 x") &&
              r.cpu_s < 1.0 && r.maxrss_kb - base.maxrss_kb < 100 * 1024,
          "%s: refused in one line naming '%s' and the bound within 1 s CPU and 100 MB (exit %d%s, %.2f s CPU, %ld MB "
          "over the baseline): %.300s",
          what, needle, r.status, r.timed_out ? ", killed after 5 s" : "", r.cpu_s,
          (r.maxrss_kb - base.maxrss_kb) / 1024, r.out);
}

static void growth(void) {
    char tok[600], a4[600], a10k[600], mixed[600];
    write_file("a4.txt", "aaaa", 4, a4, sizeof a4);
    StrBuf t = {0};
    for (int i = 0; i < 1000; i++) sb_puts(&t, "aaaaaaaa<unk>"); /* 1000 segments cut by an added token */
    write_file("segments.txt", t.s, t.len, mixed, sizeof mixed);
    t.len = 0;
    for (int i = 0; i < 10000; i++) sb_puts(&t, "a");
    write_file("a10k.txt", t.s, t.len, a10k, sizeof a10k);
    sb_free(&t);
    static const char *const DOUBLE_A = "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"aa\"}";
    static const struct {
        const char *what, *key, *step, *field;
        int count, where; /* 0 normalizer, 1 pre-tokenizer, 2 decoder */
    } chains[] = {
        {"40 normalizers Replace a -> aa", "normalizers", NULL, "normalizer.normalizers[", 40, 0},
        {"a normalizer Replace a -> 64 KB", NULL, "{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, "
         "\"content\": \"%s\"}", "normalizer:", 1, 0},
        {"20 normalizers Replace a -> bb, b -> aa", "normalizers", "{\"type\": \"Replace\", \"pattern\": {\"String\": "
         "\"a\"}, \"content\": \"bb\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \"b\"}, \"content\": \"aa\"}",
         "normalizer.normalizers[", 20, 0},
        {"40 normalizers Prepend 200 bytes", "normalizers", "{\"type\": \"Prepend\", \"prepend\": \"%s\"}",
         "normalizer.normalizers[", 40, 0},
        {"20 pre-tokenizers Metaspace U+1F600 then ByteLevel", "pretokenizers", "{\"type\": \"Metaspace\", "
         "\"replacement\": \"\\ud83d\\ude00\", \"prepend_scheme\": \"always\", \"split\": false}, {\"type\": "
         "\"ByteLevel\", \"add_prefix_space\": true, \"use_regex\": false}", "pre_tokenizer.pretokenizers[", 20, 1},
        {"40 decoders Replace a -> aa (at load)", "decoders", NULL, "decoder.decoders[", 40, 2},
    };
    for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++) {
        StrBuf step = {0}, fill = {0};
        size_t fill_len = i == 1 ? 65536 : 200;
        for (size_t k = 0; k < fill_len; k++) sb_put(&fill, "b", 1);
        sb_printf(&step, chains[i].step ? chains[i].step : DOUBLE_A, fill.s);
        char *json = chains[i].key ? repeated(chains[i].key, step.s, chains[i].count) : strdup(step.s);
        const char *w[3] = {NULL, NULL, NULL};
        w[chains[i].where] = json;
        write_tok("grows", w[0], w[1], w[2], tok, sizeof tok);
        expect_growth_refused(chains[i].what, tok, a4, chains[i].field);
        free(json), sb_free(&step), sb_free(&fill);
    }
    /* chains that pass at load (on the text of their own patterns) and grow a text past the bound
     * only when it holds enough a's: refused as they run. 6 doublings (64-fold) of 10,000 a's; and
     * of 1000 segments of 8 a's cut by <unk>, each within its own 32 x + 4096 bytes but not the
     * whole text's budget */
    char *six = repeated("normalizers", DOUBLE_A, 6);
    write_tok("grows-on-a-text", six, NULL, NULL, tok, sizeof tok);
    free(six);
    expect_growth_refused("6 doublings of 10,000 a's", tok, a10k, "normalizer.normalizers[5]");
    expect_growth_refused("6 doublings over 1000 segments cut by <unk>", tok, mixed, "normalizer.normalizers[5]");
    expect_ids("6 doublings of 4 a's: within the bound", tok, a4, NULL);
    /* the most a real normalizer and pre-tokenizer grow a text: NFKC turns U+FDFA (3 bytes) into 33,
     * ByteLevel doubles every byte past ASCII (22-fold): encodes */
    char ligatures[600];
    StrBuf l = {0};
    for (int i = 0; i < 3000; i++) sb_puts(&l, "\xef\xb7\xba");
    write_file("fdfa.txt", l.s, l.len, ligatures, sizeof ligatures);
    sb_free(&l);
    write_tok("nfkc-bytelevel", "{\"type\": \"NFKC\"}", "{\"type\": \"ByteLevel\", \"add_prefix_space\": true, "
              "\"use_regex\": true}", NULL, tok, sizeof tok);
    expect_ids("NFKC then ByteLevel on 3000 U+FDFA (22-fold)", tok, ligatures, NULL);
}

/* an empty tokenizer.bin: the message names the file and says it is empty (it was a checkpoint's
 * missing tensor) */
static void empty_tokenizer_file(void) {
    char empty[600], text[600], model[600], out[600];
    write_file("empty.bin", "", 0, empty, sizeof empty);
    write_file("text.txt", "ab abc ba", 9, text, sizeof text);
    Model m;
    snprintf(model, sizeof model, "%s/l2c.bin", dir);
    int ok = tiny_model(&m, "rope", 4, 1, 7) == 0 && llama2c_write_model(model, &m) == 0;
    CHECK(ok, "write a llama2.c model: %s", pelab_errmsg);
    model_free(&m);
    snprintf(out, sizeof out, "%s/never.safetensors", dir);
    char needle[700];
    snprintf(needle, sizeof needle, "%s: an empty file (0 bytes)", empty);
    const char *encode[] = {"tokenizer", "encode", empty, text, NULL};
    const char *import[] = {"import", "--llama2c", model, "--tokenizer", empty, "--out", out, NULL};
    const char *train[] = {"train", "--tokenizer", empty, "--data", text, "--steps", "1", "--quiet", "--out", out, NULL};
    const char *const *cases[] = {encode, import, train};
    for (int i = 0; i < 3; i++) {
        static Run r;
        run_argv(&r, cases[i], NULL, NULL, 10);
        CHECK(r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, needle) && !strstr(r.out, "tensor"),
              "%s with an empty tokenizer.bin: one line '%s' (exit %d): %.300s", cases[i][0], needle, r.status, r.out);
    }
}

void test_hostile_tok(void) {
    snprintf(dir, sizeof dir, "%s/hostile-tok", test_tmpdir());
    mkdir(dir, 0755);
    empty_matches();
    empty_match_models();
    growth();
    empty_tokenizer_file();
}
