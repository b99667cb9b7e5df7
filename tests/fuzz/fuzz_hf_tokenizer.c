/* fuzz_hf_tokenizer.c: a Hugging Face tokenizer.json (data/hf_tok.c, hf_tok_parse) and its encoder
 * and decoder on fuzzed text.
 *
 * Input: a tokenizer.json, a NUL, then text (no NUL: the whole input is the file and the text is
 * fixed). A file that parses must encode the text and a fixed one, with and without the
 * post-processor's tokens, to ids inside its vocabulary that decode (HF's decode and pelab's
 * per-token decode), also through data/tokenizer.c. Two fixed tokenizers built at start must
 * round-trip the text exactly: a byte-level one (GPT-2's pipeline: every byte string, invalid
 * UTF-8 included) and a SentencePiece-style one with byte fallback (Llama 2's pipeline: every text
 * without a literal U+2581, which its decoder turns into a space as HF's does, and without <unk>,
 * <s> or </s>: the text after an added token is a segment of its own, which the Prepend normalizer
 * starts with a U+2581 as HF's does, so it decodes with one more space). Two more fixed ones run
 * every text through the steps that once hung or grew without bound: Split patterns that match
 * empty (every behaviour, inverted or not) after NFKC and a Replace, which must encode; and a
 * chain of Replace "a" -> "aaaa" that passes data/hf_tok.h's growth bound on texts with many a's,
 * which must then be refused in one line naming the field. Every encoding has at most the ids
 * that bound allows (the text's bytes, twice the bound, and the file's own special tokens). */
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/strbuf.h"
#include "../../data/hf_tok.h"
#include "fuzz_common.h"

static HfTok *byte_level, *fallback, *empty_matches, *growing;

static void put_char(StrBuf *b, int cp) { sb_printf(b, "\\u%04x", cp); }

static HfTok *build(const char *json) {
    HfTok *t;
    if (hf_tok_parse(&t, (const unsigned char *)json, strlen(json), "fixed") != 0) {
        fprintf(stderr, "fuzz_hf_tokenizer: cannot build a fixed tokenizer: %s\n", pelab_errmsg);
        exit(1);
    }
    return t;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    StrBuf b = {0};
    /* byte-level: the 256 byte characters, a few merges, GPT-2's regex, <|endoftext|> */
    sb_puts(&b, "{\"added_tokens\": [{\"id\": 262, \"content\": \"<|endoftext|>\", \"special\": true}], "
                "\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}, "
                "\"decoder\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {");
    for (int i = 0; i < 256; i++) {
        sb_puts(&b, i ? ", \"" : "\"");
        put_char(&b, hf_byte_char(i));
        sb_printf(&b, "\": %d", i);
    }
    sb_puts(&b, ", \"\\u0120t\": 256, \"he\": 257, \"\\u0120the\": 258, \"in\": 259, \"\\u0120a\": 260, \"er\": 261}, "
                "\"merges\": [\"\\u0120 t\", \"h e\", \"\\u0120t he\", \"i n\", [\"\\u0120\", \"a\"], \"e r\"]}}");
    byte_level = build(b.s);
    b.len = 0;
    /* SentencePiece-style: <unk> <s> </s>, the 256 <0xHH>, a few pieces and merges */
    sb_puts(&b, "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true}, {\"id\": 1, \"content\": "
                "\"<s>\", \"special\": true}, {\"id\": 2, \"content\": \"</s>\", \"special\": true}], "
                "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\\u2581\"}, "
                "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]}, "
                "\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", "
                "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"special_tokens\": {\"<s>\": "
                "{\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}}, "
                "\"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": "
                "\"\\u2581\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": \"Strip\", "
                "\"content\": \" \", \"start\": 1, \"stop\": 0}]}, "
                "\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"fuse_unk\": true, \"unk_token\": \"<unk>\", "
                "\"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"</s>\": 2");
    for (int i = 0; i < 256; i++) sb_printf(&b, ", \"<0x%02X>\": %d", i, 3 + i);
    sb_puts(&b, ", \"\\u2581\": 259, \"t\": 260, \"h\": 261, \"e\": 262, \"\\u2581t\": 263, \"he\": 264, \"\\u2581the\": 265, "
                "\"a\": 266, \"\\u00e9\": 267}, \"merges\": [\"\\u2581 t\", \"h e\", \"\\u2581t he\"]}}");
    fallback = build(b.s);
    b.len = 0;
    /* NFKC, Replace " " -> "__", then Splits whose patterns match empty, each behaviour once, and
     * a Metaspace; a vocabulary of a few letters (<unk> for the rest) */
    sb_puts(&b, "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFKC\"}, {\"type\": "
                "\"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"__\"}]}, \"pre_tokenizer\": "
                "{\"type\": \"Sequence\", \"pretokenizers\": [");
    static const char *const split_patterns[] = {"{\"String\": \"\"}", "{\"Regex\": \"a*\"}", "{\"Regex\": \"(?=b)|_\"}",
                                                 "{\"Regex\": \"\\\\b\"}", "{\"Regex\": \"x?\"}"};
    static const char *const behaviors[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    for (int i = 0; i < 5; i++)
        sb_printf(&b, "{\"type\": \"Split\", \"pattern\": %s, \"behavior\": \"%s\", \"invert\": %s}, ",
                  split_patterns[i], behaviors[(i + 1) % 5], i % 2 ? "true" : "false");
    sb_puts(&b, "{\"type\": \"Metaspace\", \"replacement\": \"_\", \"prepend_scheme\": \"first\"}]}, "
                "\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0, \"a\": 1, \"b\": 2, "
                "\"_\": 3, \"ab\": 4}, \"merges\": [\"a b\"]}}");
    empty_matches = build(b.s);
    b.len = 0;
    /* 3 x Replace "a" -> "aaaa": 64-fold on a run of a's, past the 32-fold bound */
    sb_puts(&b, "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [");
    for (int i = 0; i < 3; i++)
        sb_printf(&b, "%s{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"aaaa\"}", i ? ", " : "");
    sb_puts(&b, "]}, \"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0, \"a\": 1}, "
                "\"merges\": []}}");
    growing = build(b.s);
    sb_free(&b);
    return 0;
}

/* ids in the vocabulary, decodable both ways, no more than the growth bound allows (file_len: the
 * file's size, which bounds its post-processor's tokens); exact: decode(encode(text)) == text */
static void check(const HfTok *t, size_t file_len, const unsigned char *text, size_t n, int exact) {
    for (int special = 0; special < 2; special++) {
        size_t k;
        int *ids = hf_tok_encode(t, text, n, special, 3, &k);
        if (!ids) { /* a pattern of the file past its limits (data/hf_regex.h), or a text grown past its bound: one line */
            FUZZ_CHECK(!exact && pelab_errmsg[0] && !strchr(pelab_errmsg, '\n'), "encode refused: %s", pelab_errmsg);
            continue;
        }
        FUZZ_CHECK(k <= n + 2 * hf_tok_growth_limit(n) + file_len, "%zu ids for a text of %zu bytes: past the growth bound",
                   k, n);
        int vocab = hf_tok_vocab_size(t);
        for (size_t i = 0; i < k; i++) {
            size_t len;
            int sp;
            FUZZ_CHECK(ids[i] >= 0 && ids[i] < vocab && hf_tok_piece(t, ids[i], &len, &sp), "id %zu = %d outside the vocabulary %d",
                       i, ids[i], vocab);
        }
        StrBuf out = {0};
        size_t bos = special && hf_tok_bos(t) >= 0 && k > 0; /* the text's own special tokens stay */
        FUZZ_CHECK(hf_tok_decode(t, ids + bos, k - bos, 0, &out) == 0, "decode: %s", pelab_errmsg);
        if (exact)
            FUZZ_CHECK(out.len == n && (n == 0 || memcmp(out.s, text, n) == 0), "round trip: %zu bytes back for %zu",
                       out.len, n);
        sb_free(&out);
        free(ids);
    }
}

/* the text holds what the byte-fallback tokenizer cannot give back exactly (see the top) */
static int fallback_inexact(const unsigned char *s, size_t n) {
    static const char *const bad[] = {"\xe2\x96\x81", "<unk>", "<s>", "</s>"};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            size_t len = strlen(bad[k]);
            if (i + len <= n && !memcmp(s + i, bad[k], len)) return 1;
        }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const unsigned char *nul = memchr(data, 0, size);
    size_t file_len = nul ? (size_t)(nul - data) : size;
    const unsigned char *text = nul ? nul + 1 : (const unsigned char *)FUZZ_TEXT;
    size_t n = nul ? size - file_len - 1 : sizeof FUZZ_TEXT - 1;

    check(byte_level, 0, text, n, 1);
    check(fallback, 0, text, n, !fallback_inexact(text, n));
    /* the two fixed chains on the first 256 bytes (what they test shows on short texts: splitting at
     * every character is the slow part of this harness past that) */
    size_t m = n < 256 ? n : 256, k, n_a = 0;
    int *ids = hf_tok_encode(empty_matches, text, m, 0, 0, &k);
    FUZZ_CHECK(ids != NULL, "patterns that match empty: %s", pelab_errmsg);
    for (size_t i = 0; ids && i < k; i++) FUZZ_CHECK(ids[i] >= 0 && ids[i] <= 4, "id %d outside the vocabulary", ids[i]);
    FUZZ_CHECK(!ids || k <= m + 2 * hf_tok_growth_limit(m), "%zu ids for %zu bytes: past the growth bound", k, m);
    free(ids);
    for (size_t i = 0; i < m; i++) n_a += text[i] == 'a';
    size_t grown = 64 * n_a + (m - n_a); /* the chain makes each a 64 a's: past the bound when they are about half the text */
    ids = hf_tok_encode(growing, text, m, 0, 0, &k);
    FUZZ_CHECK(ids || (strstr(pelab_errmsg, "fixed: normalizer.normalizers[") && strstr(pelab_errmsg, "32 x")),
               "a growing chain: refused naming the field: %s", pelab_errmsg);
    FUZZ_CHECK(!ids == (grown > hf_tok_growth_limit(m)), "a chain growing %zu bytes to %zu: %s, the bound is %zu", m,
               grown, ids ? "encoded" : "refused", hf_tok_growth_limit(m));
    free(ids);
    HfTok *t;
    if (hf_tok_parse(&t, data, file_len, "fuzz-hf") == 0) {
        int explosive = hf_tok_check_growth(t) != 0; /* then data/tokenizer.c refuses it too */
        FUZZ_CHECK(!explosive || (strstr(pelab_errmsg, "fuzz-hf: ") && !strchr(pelab_errmsg, '\n')),
                   "an explosive chain: one line naming the file: %s", pelab_errmsg);
        check(t, file_len, text, n, 0);
        check(t, file_len, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1, 0);
        hf_tok_free(t);
        Tokenizer tok;
        FUZZ_CHECK((tokenizer_from_image(&tok, "hf", data, file_len, "fuzz-hf", 0) != 0) == explosive,
                   "parses alone and %s its growth check, but as a tokenizer: %s", explosive ? "fails" : "passes",
                   pelab_errmsg);
        if (!explosive) {
            fuzz_check_tokenizer(&tok, text, n);
            tokenizer_free(&tok);
        }
    } else {
        FUZZ_CHECK(pelab_errmsg[0] && !strchr(pelab_errmsg, '\n'), "an error is one line: %s", pelab_errmsg);
    }
    return 0;
}
