/* test_hf_tok.c: tokenizer.json (data/hf_tok.h): the 39 cases of ../shared/data/hf-tokenizers with
 * the ids HF's own library gives, both directions; small hand-made files for every step the real
 * ones do not use (Split behaviors, Metaspace, String merges vs arrays, added-token flags,
 * normalizers, post-processors); refusals in one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/json.h"
#include "../data/hf_tok.h"
#include "../data/hf_tok_write.h"
#include "../data/llama2c_tok.h"
#include "../data/tokenizer.h"
#include "test.h"

static int ids_equal(const int *a, size_t na, const JsonNode *want) {
    if (!want || want->type != JSON_ARRAY || want->n_children != na) return 0;
    size_t i = 0;
    for (const JsonNode *v = want->child; v; v = v->next, i++)
        if (!v->is_int || v->int_value != a[i]) return 0;
    return 1;
}

static void format_ids(char *out, size_t cap, const int *ids, size_t n) {
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < n && used + 12 < cap; i++) used += (size_t)snprintf(out + used, cap - used, "%d ", ids[i]);
}

static HfTok *load_json(const char *path) {
    unsigned char *buf;
    size_t len;
    HfTok *t = NULL;
    if (read_file(path, &buf, &len) != 0) return NULL;
    if (hf_tok_parse(&t, buf, len, path) != 0) fprintf(stderr, "%s\n", pelab_errmsg);
    free(buf);
    return t;
}

static void test_shared_cases(void) {
    const char *shared = shared_data_dir();
    char path[512];
    if (shared) snprintf(path, sizeof path, "%s/hf-tokenizers/cases.jsonl", shared);
    unsigned char *text;
    size_t len;
    if (!shared || read_file(path, &text, &len) != 0) {
        fprintf(stderr, "test_hf_tok: skipped the 39 HF cases: ../shared/data/hf-tokenizers/cases.jsonl not found\n");
        return;
    }
    const char *names[3] = {"gpt2", "smollm2", "tinyllama"};
    HfTok *toks[3] = {0};
    int cases = 0, equal_plain = 0, equal_special = 0, equal_decode = 0;
    for (size_t at = 0; at < len;) {
        size_t end = at;
        while (end < len && text[end] != '\n') end++;
        JsonDoc doc;
        if (end > at && json_parse(&doc, (const char *)text + at, end - at) == 0) {
            const JsonNode *name = json_get(doc.root, "tokenizer"), *s = json_get(doc.root, "text");
            int k = 0;
            while (k < 3 && strcmp(names[k], name->str)) k++;
            CHECK(k < 3, "case tokenizer %s is one of the three", name->str);
            if (k < 3 && !toks[k]) {
                snprintf(path, sizeof path, "%s/hf-tokenizers/%s/tokenizer.json", shared, names[k]);
                toks[k] = load_json(path);
                CHECK(toks[k] != NULL, "%s parses", path);
            }
            if (k < 3 && toks[k]) {
                cases++;
                size_t n_plain, n_special;
                int *plain = hf_tok_encode(toks[k], (const unsigned char *)s->str, s->str_len, 0, 0, &n_plain);
                int *special = hf_tok_encode(toks[k], (const unsigned char *)s->str, s->str_len, 1, 0, &n_special);
                char got[1024];
                int ok = ids_equal(plain, n_plain, json_get(doc.root, "ids"));
                format_ids(got, sizeof got, plain, n_plain);
                CHECK(ok, "%s '%s': ids %s", names[k], s->str, got);
                equal_plain += ok;
                ok = ids_equal(special, n_special, json_get(doc.root, "ids_with_special_tokens"));
                format_ids(got, sizeof got, special, n_special);
                CHECK(ok, "%s '%s': ids with special tokens %s", names[k], s->str, got);
                equal_special += ok;
                StrBuf out = {0};
                const JsonNode *want = json_get(doc.root, "decoded");
                ok = hf_tok_decode(toks[k], plain, n_plain, 0, &out) == 0 && out.len == want->str_len &&
                     memcmp(out.s, want->str, out.len) == 0;
                CHECK(ok, "%s '%s': decoded '%s'", names[k], s->str, sb_str(&out));
                equal_decode += ok;
                sb_free(&out);
                free(plain), free(special);
            }
            json_free(&doc);
        }
        at = end + 1;
    }
    fprintf(stderr, "test_hf_tok: %d cases: %d/%d ids equal, %d/%d with special tokens, %d/%d decoded equal\n", cases,
            equal_plain, cases, equal_special, cases, equal_decode, cases);
    CHECK(cases == 39, "39 cases read (got %d)", cases);
    /* a long word without merges to stop it: the heap keeps this fast */
    if (toks[1]) {
        size_t n = 200000, count;
        unsigned char *word = malloc(n);
        for (size_t i = 0; i < n; i++) word[i] = (unsigned char)("abcdefghij"[i % 7]);
        int *ids = hf_tok_encode(toks[1], word, n, 0, 0, &count);
        StrBuf out = {0};
        CHECK(count > 0 && count < n / 2 && hf_tok_decode(toks[1], ids, count, 0, &out) == 0 && out.len == n &&
                  memcmp(out.s, word, n) == 0,
              "a 200 KB word round-trips (%zu ids)", count);
        sb_free(&out), free(ids), free(word);
    }
    for (int k = 0; k < 3; k++) hf_tok_free(toks[k]);
    free(text);
}

/* a tiny tokenizer.json: vocab, merges and the rest spliced in */
static HfTok *tiny(const char *model_extra, const char *rest) {
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"ab\": 3, \"abc\": 4, \"bc\": 5, "
             "\"\\u2581\": 6, \"\\u2581a\": 7, \"<unk>\": 8, \"<0x20>\": 9, \"<0x21>\": 10, \" \": 11, \"1\": 12, "
             "\"2\": 13}%s}%s%s}",
             model_extra, *rest ? ", " : "", rest);
    HfTok *t = NULL;
    if (hf_tok_parse(&t, (const unsigned char *)buf, strlen(buf), "tiny.json") != 0) return NULL;
    return t;
}

static int encodes_to(HfTok *t, const char *text, int special, const int *want, size_t n_want) {
    size_t n;
    int *ids = hf_tok_encode(t, (const unsigned char *)text, strlen(text), special, 0, &n);
    int ok = n == n_want && memcmp(ids, want, n * sizeof *ids) == 0;
    if (!ok) {
        char got[256];
        format_ids(got, sizeof got, ids, n);
        fprintf(stderr, "  '%s' -> %s\n", text, got);
    }
    free(ids);
    return ok;
}

static void test_steps(void) {
    /* merges as strings and as arrays give the same tokenizer; lower rank first */
    HfTok *s = tiny(", \"merges\": [\"b c\", \"a b\", \"ab c\"]", ""), *a = tiny(", \"merges\": [[\"b\", \"c\"], [\"a\", \"b\"], [\"ab\", \"c\"]]", "");
    CHECK(s && a, "tiny tokenizers parse: %s", pelab_errmsg);
    if (s && a) {
        CHECK(encodes_to(s, "abc", 0, (int[]){0, 5}, 2) && encodes_to(a, "abc", 0, (int[]){0, 5}, 2),
              "'b c' has rank 0: a + bc, never abc");
        CHECK(encodes_to(s, "abab", 0, (int[]){3, 3}, 2), "every occurrence merges");
    }
    hf_tok_free(s), hf_tok_free(a);
    s = tiny(", \"merges\": [\"a b\", \"ab c\", \"b c\"]", "");
    CHECK(s && encodes_to(s, "abc", 0, (int[]){4}, 1) && encodes_to(s, "xabc", 0, (int[]){4}, 1),
          "a b, then ab c; a character outside the vocabulary without unk is dropped (as HF does)");
    hf_tok_free(s);
    /* unk, fuse_unk, byte fallback */
    s = tiny(", \"merges\": [], \"unk_token\": \"<unk>\", \"fuse_unk\": true", "");
    CHECK(s && encodes_to(s, "axyb", 0, (int[]){0, 8, 1}, 3), "fused unk");
    hf_tok_free(s);
    s = tiny(", \"merges\": [], \"unk_token\": \"<unk>\"", "");
    CHECK(s && encodes_to(s, "axyb", 0, (int[]){0, 8, 8, 1}, 4), "unk per character");
    hf_tok_free(s);
    s = tiny(", \"merges\": [], \"unk_token\": \"<unk>\", \"byte_fallback\": true", "");
    CHECK(s && encodes_to(s, "a!x", 0, (int[]){0, 10, 8}, 3), "byte fallback, unk where a byte token is missing");
    hf_tok_free(s);
    /* Split behaviors with a String pattern " " (Rust's SplitDelimiterBehavior) */
    static const struct {
        const char *behavior;
        int want[8];
        size_t n;
    } split[] = {
        {"Removed", {0, 1, 2}, 3},          {"Isolated", {0, 11, 1, 11, 11, 2}, 6},
        {"MergedWithPrevious", {0, 11, 1, 11, 11, 2}, 6}, {"Contiguous", {0, 11, 1, 11, 11, 2}, 6},
    };
    for (size_t i = 0; i < sizeof split / sizeof *split; i++) {
        char rest[256];
        snprintf(rest, sizeof rest, "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, \"behavior\": \"%s\", \"invert\": false}",
                 split[i].behavior);
        s = tiny(", \"merges\": []", rest);
        CHECK(s && encodes_to(s, "a b  c", 0, split[i].want, split[i].n), "Split %s", split[i].behavior);
        hf_tok_free(s);
    }
    /* Contiguous and MergedWithPrevious differ once merges can see the pieces: " " + " " joined */
    s = tiny(", \"merges\": [\"a b\"]", "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"MergedWithNext\", \"invert\": false}");
    CHECK(s && encodes_to(s, "abab", 0, (int[]){3, 3}, 2) && encodes_to(s, "bab", 0, (int[]){1, 3}, 2), "MergedWithNext: a joins what follows");
    hf_tok_free(s);
    s = tiny(", \"merges\": [\"a b\"]", "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Isolated\", \"invert\": true}");
    CHECK(s && encodes_to(s, "abab", 0, (int[]){0, 1, 0, 1}, 4), "invert: the gaps are the delimiters");
    hf_tok_free(s);
    s = tiny(", \"merges\": []", "\"pre_tokenizer\": {\"type\": \"Digits\", \"individual_digits\": false}");
    CHECK(s && encodes_to(s, "a12b", 0, (int[]){0, 12, 13, 1}, 4), "Digits");
    hf_tok_free(s);
    /* Metaspace: spaces become U+2581, prepended to the first piece only under "first" */
    s = tiny(", \"merges\": [\"\\u2581 a\"]", "\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", "
             "\"prepend_scheme\": \"first\", \"split\": true}, \"added_tokens\": [{\"id\": 2, \"content\": \"c\", \"special\": true}], "
             "\"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\\u2581\", \"prepend_scheme\": \"first\", \"split\": true}");
    CHECK(s && encodes_to(s, "a a", 0, (int[]){7, 7}, 2) && encodes_to(s, "ca", 0, (int[]){2, 0}, 2),
          "Metaspace first: a prefix at the start, none after an added token");
    if (s) {
        StrBuf out = {0};
        CHECK(hf_tok_decode(s, (int[]){7, 7}, 2, 0, &out) == 0 && !strcmp(sb_str(&out), "a a"), "Metaspace decode: '%s'", sb_str(&out));
        sb_free(&out);
    }
    hf_tok_free(s);
    /* added tokens: leftmost-longest, lstrip / rstrip, special ones skipped on request */
    s = tiny(", \"merges\": [\"a b\"]", "\"added_tokens\": [{\"id\": 20, \"content\": \"ab\", \"special\": true}, "
             "{\"id\": 21, \"content\": \"abc\", \"special\": false, \"normalized\": false, \"rstrip\": true}, "
             "{\"id\": 22, \"content\": \"c\", \"special\": false, \"normalized\": false, \"lstrip\": true, \"single_word\": true}], "
             "\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, "
             "{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"</s>\", \"type_id\": 0}}], "
             "\"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [8], \"tokens\": [\"<s>\"]}, \"</s>\": {\"id\": \"</s>\", \"ids\": [9], \"tokens\": [\"</s>\"]}}}");
    CHECK(s && encodes_to(s, "abcab", 0, (int[]){21, 20}, 2), "the longest added token at the leftmost place");
    CHECK(s && encodes_to(s, "abc  b", 0, (int[]){21, 1}, 2), "rstrip takes the spaces after it");
    CHECK(s && encodes_to(s, "b  c", 0, (int[]){1, 22}, 2) && encodes_to(s, "bc", 0, (int[]){1, 2}, 2),
          "lstrip takes the spaces before it; single_word needs a word boundary");
    CHECK(s && encodes_to(s, "b", 1, (int[]){8, 1, 9}, 3) && hf_tok_bos(s) == 8, "TemplateProcessing: <s> A </s>");
    if (s) {
        StrBuf out = {0};
        CHECK(hf_tok_decode(s, (int[]){8, 20, 1}, 3, 1, &out) == 0 && !strcmp(sb_str(&out), "<unk>b"),
              "skip_special_tokens drops the special added token only: '%s'", sb_str(&out));
        out.len = 0;
        CHECK(hf_tok_decode(s, (int[]){1, 99}, 2, 0, &out) != 0 && strstr(pelab_errmsg, "token 2: id 99"), "decode of an id past the vocabulary: %s", pelab_errmsg);
        sb_free(&out);
    }
    hf_tok_free(s);
    /* normalizers: NFC composes (ICU), Prepend + Replace as Llama 2 */
    s = tiny(", \"merges\": []", "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFKC\"}, "
             "{\"type\": \"Prepend\", \"prepend\": \"\\u2581\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]}");
    CHECK(s && encodes_to(s, "a b", 0, (int[]){6, 0, 6, 1}, 4) && encodes_to(s, "\xef\xbd\x81", 0, (int[]){6, 0}, 2),
          "Prepend + Replace; NFKC folds a fullwidth a");
    hf_tok_free(s);
}

static void expect_refused(const char *json, const char *needle) {
    HfTok *t = NULL;
    int rc = hf_tok_parse(&t, (const unsigned char *)json, strlen(json), "bad.json");
    CHECK(rc != 0 && strstr(pelab_errmsg, needle) && !strchr(pelab_errmsg, '\n'), "refused with '%s': %s", needle,
          rc ? pelab_errmsg : "(parsed)");
    hf_tok_free(t);
}

static void test_refusals(void) {
    expect_refused("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0.0]]}}", "model.type 'Unigram'");
    expect_refused("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}", "model.type 'WordPiece'");
    expect_refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\"]}}", "merges[0]: 'b' is not in the vocabulary");
    expect_refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 0}}}", "id 0 is given to both");
    expect_refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}, \"normalizer\": {\"type\": \"Lowercase\"}}",
                   "normalizer: normalizer type 'Lowercase' is not read");
    expect_refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}, \"pre_tokenizer\": {\"type\": \"Split\", "
                   "\"pattern\": {\"Regex\": \"(\"}, \"behavior\": \"Isolated\"}}", "pre_tokenizer.pattern: regex '('");
    expect_refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}, \"pre_tokenizer\": {\"type\": \"Sequence\", "
                   "\"pretokenizers\": [{\"type\": \"Whitespace\"}]}}", "pre_tokenizer.pretokenizers[0]: pre-tokenizer type 'Whitespace'");
    expect_refused("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"dropout\": 0.1}}", "model.dropout");
    expect_refused("[1, 2]", "expected a JSON object");
    expect_refused("{\"model\": ", "not valid JSON");
}

/* a checkpoint-less path: `pelab tokenizer encode/decode` on a tokenizer.json */
static void test_cli(void) {
    const char *shared = shared_data_dir();
    if (!shared) {
        fprintf(stderr, "test_hf_tok: skipped the CLI checks: ../shared/data not found\n");
        return;
    }
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "printf 'Hello, my dog is cute' > %s/hello.txt && ./pelab tokenizer encode %s/hf-tokenizers/tinyllama/tokenizer.json %s/hello.txt | tr '\\n' ' '",
             test_tmpdir(), shared, test_tmpdir());
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "1 15043 29892 590 11203 338 274 1082") == out, "tokenizer encode (with <s>): %s", out);
    snprintf(cmd, sizeof cmd, "echo 1 15043 29892 590 11203 338 274 1082 | ./pelab tokenizer decode %s/hf-tokenizers/tinyllama/tokenizer.json", shared);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strcmp(out, "<s> Hello, my dog is cute"), "tokenizer decode (special tokens kept, as HF's decode): '%s'", out);
    snprintf(cmd, sizeof cmd, "echo 1 15043 | ./pelab tokenizer decode --skip-special %s/hf-tokenizers/tinyllama/tokenizer.json", shared);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strcmp(out, "Hello"), "tokenizer decode --skip-special: '%s'", out);
}

/* stories260K's tok512.bin as a tokenizer.json: every TinyStories document gets llama2.c's ids (run.c's
 * rule, BOS in front) and decodes back; then the model through export --hf / import --hf scores a
 * text to the same per-token log-probs and samples the same text as the llama2.c import */
static void test_stories260K(void) {
    const char *shared = shared_data_dir();
    char path[512], cmd[2048], out[8192];
    unsigned char *img, *text;
    size_t img_len, text_len;
    if (shared) snprintf(path, sizeof path, "%s/stories260K/tok512.bin", shared);
    if (!shared || read_file(path, &img, &img_len) != 0) {
        fprintf(stderr, "test_hf_tok: skipped the stories260K checks: ../shared/data/stories260K not found\n");
        return;
    }
    Llama2cTok l2c;
    StrBuf json = {0};
    HfTok *hf = NULL;
    CHECK(llama2c_tok_parse(&l2c, img, img_len, 512, path) == 0 && hf_tok_json_from_llama2c(&l2c, &json, path) == 0 &&
              hf_tok_parse(&hf, (const unsigned char *)json.s, json.len, "tok512.json") == 0,
          "tok512.bin as a tokenizer.json: %s", pelab_errmsg);
    snprintf(path, sizeof path, "%s/tinystories/valid_prefix.txt", shared);
    if (hf && read_file(path, &text, &text_len) == 0) {
        int docs = 0, same_ids = 0, same_text = 0;
        int *want = malloc(sizeof(int) * (text_len + 2));
        for (size_t at = 0; at < text_len;) { /* documents: lines between blank lines */
            size_t end = at;
            while (end < text_len && !(text[end] == '\n' && end + 1 < text_len && text[end + 1] == '\n')) end++;
            size_t a = at, b = end;
            while (a < b && (text[a] == '\n' || text[a] == ' ')) a++;
            while (b > a && (text[b - 1] == '\n' || text[b - 1] == ' ')) b--;
            if (b > a) {
                docs++;
                size_t n_want = llama2c_tok_encode(&l2c, text + a, b - a, want), n_got;
                int *got = hf_tok_encode(hf, text + a, b - a, 1, 0, &n_got);
                same_ids += n_got == n_want && !memcmp(got, want, n_got * sizeof(int));
                StrBuf back = {0};
                same_text += hf_tok_decode(hf, got, n_got, 1, &back) == 0 && back.len == b - a && !memcmp(back.s, text + a, b - a);
                sb_free(&back);
                free(got);
            }
            at = end + 2;
        }
        fprintf(stderr, "test_hf_tok: tok512 as tokenizer.json: %d/%d TinyStories documents with llama2.c's ids, %d/%d decode back\n",
                same_ids, docs, same_text, docs);
        CHECK(docs > 10 && same_ids == docs && same_text == docs, "every document: same ids %d/%d, decoded %d/%d", same_ids,
              docs, same_text, docs);
        free(want), free(text);
    }
    hf_tok_free(hf);
    sb_free(&json);
    llama2c_tok_free(&l2c);
    free(img);

    const char *tmp = test_tmpdir();
    snprintf(cmd, sizeof cmd,
             "./pelab import --llama2c %s/stories260K/stories260K.bin --tokenizer %s/stories260K/tok512.bin --out %s/s260.st && "
             "./pelab export %s/s260.st --hf %s/s260hf && ./pelab import --hf %s/s260hf --out %s/s260hf.st",
             shared, shared, tmp, tmp, tmp, tmp, tmp);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "tokenizer.json (llama2.c's tokenizer as HF's BPE)") && strstr(out, "tokenizer.json stored: 512 tokens"),
          "import --llama2c, export --hf (tokenizer.json written), import --hf (stored): %s", out);
    snprintf(cmd, sizeof cmd,
             "printf 'Once upon a time, there was a little girl named Lily. She loved to play outside.\\nOne day she saw a "
             "big red ball.' > %s/s260.txt && ./pelab score %s/s260.st %s/s260.txt --per-token %s/l2c.csv >/dev/null && "
             "./pelab score %s/s260hf.st %s/s260.txt --per-token %s/hf.csv >/dev/null && cmp %s/l2c.csv %s/hf.csv && wc -l < %s/hf.csv",
             tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && atoi(out) > 30, "score --per-token: the HF import's log-probs equal the llama2.c import's, byte for byte (%s)", out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/s260.st --temp 0 -n 80 --prompt 'Once upon a time' 2>/dev/null > %s/l2c.out && "
             "./pelab sample %s/s260hf.st --temp 0 -n 80 --prompt 'Once upon a time' 2>/dev/null > %s/hf.out && cmp %s/l2c.out %s/hf.out && "
             "./pelab info %s/s260hf.st", tmp, tmp, tmp, tmp, tmp, tmp, tmp);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "hf"), "greedy sample: the same text from both imports; info names the hf tokenizer (%s)", out);
}

void test_hf_tok(void) {
    test_shared_cases();
    test_stories260K();
    test_steps();
    test_refusals();
    test_cli();
}
