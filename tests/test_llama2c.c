/* test_llama2c.c: llama2.c interop. Without shared data: run.c's encode rules on a hand-made
 * vocabulary (dummy space, code points, byte fallback, merge by best score, leftmost on ties),
 * its decode rules, the tokenizer stored inside checkpoints, import rejecting damaged files,
 * export -> import bit-exact, export refusing models llama2.c cannot run.
 * With ../shared/data: tok512.bin encodes known strings to run.c's ids (the cases below, computed
 * by a literal transcription of run.c's encode), and the imported stories260K reproduces the
 * three published outputs of llama2.c's runner byte for byte. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/rng.h"
#include "../data/tokenizer.h"
#include "../infer/generate.h"
#include "../io/checkpoint.h"
#include "../io/llama2c.h"
#include "../model/model.h"
#include "test.h"

/* ---- a hand-made tokenizer.bin image ---- */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} Buf;

static void put(Buf *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_token(Buf *b, const char *piece, float score) {
    int32_t n = (int32_t)strlen(piece);
    put(b, &score, 4);
    put(b, &n, 4);
    put(b, piece, (size_t)n);
}

/* <unk> <s> </s>, the 256 byte tokens, then " ", "a", "b", "c", "ab", "bc", " a", " ab", "é" */
enum { ID_SPACE = 259, ID_A, ID_B, ID_C, ID_AB, ID_BC, ID_SP_A, ID_SP_AB, ID_E_ACUTE, SMALL_VOCAB };
static Buf small_vocab_image(float score_ab, float score_bc) {
    Buf b = {0};
    int32_t max_len = 6;
    put(&b, &max_len, 4);
    put_token(&b, "<unk>", 0), put_token(&b, "\n<s>\n", 0), put_token(&b, "\n</s>\n", 0);
    for (int i = 0; i < 256; i++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", i);
        put_token(&b, piece, 0);
    }
    put_token(&b, " ", -1), put_token(&b, "a", -2), put_token(&b, "b", -3), put_token(&b, "c", -4);
    put_token(&b, "ab", score_ab), put_token(&b, "bc", score_bc), put_token(&b, " a", -5), put_token(&b, " ab", -6);
    put_token(&b, "\xc3\xa9", -7);
    return b;
}

static int ids_equal(const int *got, size_t n, const int *want, size_t m) {
    return n == m && memcmp(got, want, n * sizeof(int)) == 0;
}

static void encode_case(const Llama2cTok *t, const char *text, const int *want, size_t n_want, const char *what) {
    int ids[256];
    size_t n = llama2c_tok_encode(t, (const unsigned char *)text, strlen(text), ids);
    char got[512] = "";
    for (size_t i = 0; i < n && strlen(got) < 480; i++) snprintf(got + strlen(got), 16, "%d ", ids[i]);
    CHECK(ids_equal(ids, n, want, n_want), "encode %s: got %s", what, got);
}

/* run.c's encode transcribed literally (a rescan of every pair per merge): the reference the
 * heap-based encoder must equal on random texts */
static size_t reference_encode(const Llama2cTok *t, const unsigned char *text, size_t n, int *ids) {
    size_t m = 0;
    ids[m++] = 1;
    if (n == 0) return m;
    int sp = llama2c_tok_lookup(t, (const unsigned char *)" ", 1);
    ids[m++] = sp >= 0 ? sp : ' ' + 3;
    for (size_t i = 0; i < n;) {
        size_t k = 1;
        while (i + k < n && (text[i + k] & 0xC0) == 0x80 && k < 4) k++;
        int id = llama2c_tok_lookup(t, text + i, k);
        if (id >= 0) ids[m++] = id;
        else
            for (size_t j = 0; j < k; j++) ids[m++] = text[i + j] + 3 < t->vocab_size ? text[i + j] + 3 : 0;
        i += k;
    }
    unsigned char buf[256];
    for (;;) {
        float best = -1e10f;
        long at = -1;
        int best_id = -1;
        for (size_t i = 1; i + 1 < m; i++) {
            size_t la = (size_t)t->piece_len[ids[i]], lb = (size_t)t->piece_len[ids[i + 1]];
            if (la + lb > sizeof buf) continue;
            memcpy(buf, t->piece[ids[i]], la), memcpy(buf + la, t->piece[ids[i + 1]], lb);
            int id = llama2c_tok_lookup(t, buf, la + lb);
            if (id >= 0 && t->scores[id] > best) best = t->scores[id], at = (long)i, best_id = id;
        }
        if (at < 0) break;
        ids[at] = best_id;
        memmove(ids + at + 1, ids + at + 2, sizeof(int) * (m - (size_t)at - 2));
        m--;
    }
    return m;
}

/* random texts from an alphabet of fragments: the fast encoder equals the literal loop */
static void encode_equivalence(const Llama2cTok *t, const char *const *frags, int n_frags, const char *what) {
    Rng rng;
    rng_seed(&rng, 77);
    int mismatches = 0, cases = 200;
    static unsigned char text[2048];
    static int a[4096], b[4096];
    for (int c = 0; c < cases; c++) {
        size_t n = 0, want = 1 + rng_below(&rng, 600);
        while (n < want) {
            const char *f = frags[rng_below(&rng, (uint64_t)n_frags)];
            size_t l = strlen(f);
            if (n + l >= sizeof text) break;
            memcpy(text + n, f, l), n += l;
        }
        size_t na = llama2c_tok_encode(t, text, n, a), nb = reference_encode(t, text, n, b);
        mismatches += !(na == nb && memcmp(a, b, na * sizeof(int)) == 0);
    }
    CHECK(mismatches == 0, "%s: the heap encoder equals run.c's literal merge loop on %d random texts (%d differ)", what,
          cases, mismatches);
}

static void test_small_vocab_rules(void) {
    Buf img = small_vocab_image(-0.5f, -0.25f);
    Llama2cTok t;
    CHECK(llama2c_tok_parse(&t, img.p, img.len, 0, "small") == 0, "parse a hand-made tokenizer: %s", pelab_errmsg);
    CHECK(t.vocab_size == SMALL_VOCAB, "vocab size counted to the end of the file (%d)", t.vocab_size);
    /* "abc" -> " " a b c; "bc" (-0.25) beats "ab" (-0.5) and " a" (-5): " " a bc, then " a" bc */
    encode_case(&t, "", (int[]){1}, 1, "empty text = BOS");
    encode_case(&t, "abc", (int[]){1, ID_SP_A, ID_BC}, 3, "abc (best score first: bc before ab)");
    Llama2cTok t2;
    Buf img2 = small_vocab_image(-0.25f, -0.5f);
    llama2c_tok_parse(&t2, img2.p, img2.len, 0, "small2");
    /* ab first, then " " + "ab" is the piece " ab": merges build on merges */
    encode_case(&t2, "abc", (int[]){1, ID_SP_AB, ID_C}, 3, "abc with ab scored higher");
    encode_case(&t2, "ab ab", (int[]){1, ID_SP_AB, ID_SP_AB}, 3, "ab ab");
    /* equal scores: the leftmost pair merges first (rightmost would give " a" "bc") */
    Llama2cTok t3;
    Buf img3 = small_vocab_image(-0.5f, -0.5f);
    llama2c_tok_parse(&t3, img3.p, img3.len, 0, "small3");
    encode_case(&t3, "abc", (int[]){1, ID_SP_AB, ID_C}, 3, "ties go to the leftmost pair");
    static const char *const small_frags[] = {"a", "b", "c", " ", "ab", "x", "\xc3\xa9", "\xc3", "\x80", "bc"};
    encode_equivalence(&t3, small_frags, 10, "tied scores");
    encode_equivalence(&t2, small_frags, 10, "distinct scores");
    llama2c_tok_free(&t3);
    free(img3.p);
    /* byte fallback: 'x' is not a piece -> 'x' + 3; the 2-byte code point é is one piece; an
     * unknown 3-byte code point falls back to three byte ids */
    encode_case(&t2, "x\xc3\xa9\xe2\x98\x83", (int[]){1, ID_SPACE, 'x' + 3, ID_E_ACUTE, 0xe2 + 3, 0x98 + 3, 0x83 + 3}, 7,
                "byte fallback and code points");
    /* decode: the leading space of the piece after BOS is dropped; <0xHH> is the raw byte */
    size_t n;
    const unsigned char *p = llama2c_tok_decode(&t2, 1, ID_SP_A, &n);
    CHECK(n == 1 && p[0] == 'a', "decode ' a' after BOS drops the space");
    p = llama2c_tok_decode(&t2, ID_A, ID_SP_A, &n);
    CHECK(n == 2 && memcmp(p, " a", 2) == 0, "decode ' a' elsewhere keeps it");
    p = llama2c_tok_decode(&t2, ID_A, 'A' + 3, &n);
    CHECK(n == 1 && p[0] == 'A', "decode <0x41> = 'A'");
    CHECK(llama2c_tok_decode(&t2, 1, SMALL_VOCAB, &n) == NULL, "decode of an id past the vocabulary");
    CHECK(llama2c_tok_printable((const unsigned char *)"\n", 1) && !llama2c_tok_printable((const unsigned char *)"\x01", 1) &&
              !llama2c_tok_printable((const unsigned char *)"\xc3", 1) && llama2c_tok_printable((const unsigned char *)"\xc3\xa9", 2),
          "run.c's safe_printf rule: lone control or high bytes are not printed, whole pieces are");
    /* corpora: blank-line separated documents, each BOS + encode of its stripped text */
    Tokenizer tok;
    CHECK(tokenizer_from_image(&tok, "llama2c", img2.p, img2.len, "small2", SMALL_VOCAB) == 0, "tokenizer_from_image");
    const char *corpus = "  ab\n\n\nab c \n\n";
    size_t m;
    int *ids = tokenizer_encode(&tok, (const unsigned char *)corpus, strlen(corpus), 0, &m);
    CHECK(ids_equal(ids, m, (int[]){1, ID_SP_AB, 1, ID_SP_AB, ID_SPACE, ID_C}, 6), "corpus: two documents, each with BOS (got %zu ids)", m);
    free(ids);
    tokenizer_free(&tok);
    llama2c_tok_free(&t), llama2c_tok_free(&t2);

    /* a vocabulary too small for byte fallback at id + 3 never yields an id past its end */
    Buf tiny = {0};
    int32_t ml = 6;
    put(&tiny, &ml, 4);
    put_token(&tiny, "<unk>", 0), put_token(&tiny, "\n<s>\n", 0), put_token(&tiny, "\n</s>\n", 0);
    put_token(&tiny, " ", 0), put_token(&tiny, "a", 0), put_token(&tiny, "\x01", 0);
    Llama2cTok tt;
    CHECK(llama2c_tok_parse(&tt, tiny.p, tiny.len, 0, "tiny") == 0, "parse a 6-token vocabulary: %s", pelab_errmsg);
    encode_case(&tt, "ab\x01\xc3\xa9", (int[]){1, 3, 4, 0, 5, 0, 0}, 7,
                "fallback past the vocabulary: the byte's own token, else <unk> (never an id past the end)");
    llama2c_tok_free(&tt);
    free(tiny.p);

    /* damaged tokenizer files */
    Llama2cTok bad;
    CHECK(llama2c_tok_parse(&bad, img.p, img.len - 1, 0, "cut") == -1 && strstr(pelab_errmsg, "past the end"),
          "truncated tokenizer refused: %s", pelab_errmsg);
    CHECK(llama2c_tok_parse(&bad, img.p, img.len, 300, "short") == -1 && strstr(pelab_errmsg, "300"),
          "token count must equal the model's vocabulary: %s", pelab_errmsg);
    int32_t huge = 1 << 30;
    memcpy(img.p, &huge, 4);
    CHECK(llama2c_tok_parse(&bad, img.p, img.len, 0, "maxlen") == -1 && strstr(pelab_errmsg, "max_token_length"),
          "absurd max_token_length refused: %s", pelab_errmsg);
    free(img.p), free(img2.p);
}

/* ---- tok512.bin against run.c's ids ---- */
static void test_tok512_ids(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/stories260K/tok512.bin", dir);
    Tokenizer tok;
    if (tokenizer_load_file(&tok, path) != 0) {
        CHECK(0, "load %s: %s", path, pelab_errmsg);
        return;
    }
    CHECK(tok.kind == TOK_LLAMA2C && tok.vocab_size == 512, "tok512.bin: llama2c kind, 512 tokens");
    encode_case(&tok.l2c, "Once upon a time", (int[]){1, 403, 407, 261, 378}, 5, "'Once upon a time'");
    encode_case(&tok.l2c, "Hello, world!\n", (int[]){1, 346, 306, 414, 432, 263, 304, 341, 443, 13}, 10,
                "'Hello, world!\\n'");
    encode_case(&tok.l2c, "Lily's mom said, \"Lily, let's go.\"",
                (int[]){1, 317, 439, 419, 357, 336, 432, 313, 438, 310, 432, 278, 316, 439, 419, 298, 414, 426, 436},
                19, "a line with quotes");
    encode_case(&tok.l2c, "h\xc3\xa9llo \xe2\x98\x83 \xe6\x97\xa5\xe6\x9c\xac",
                (int[]){1, 270, 485, 306, 414, 410, 229, 155, 134, 410, 233, 154, 168, 233, 159, 175}, 16,
                "UTF-8 with byte fallback");
    encode_case(&tok.l2c, "a  b\tc", (int[]){1, 261, 410, 268, 12, 429}, 6, "'a  b\\tc'");
    static const char *const words[] = {"Once", " upon", " a", " time", ",", " there", " was", " little", " girl",
                                        " named", " Lily", ".", "\n", " She", " loved", "!", "\"", "'s", " ",
                                        "  ", "\xc3\xa9", "\xe2\x98\x83", "\xff", "q", "zz", "1", "23"};
    encode_equivalence(&tok.l2c, words, (int)(sizeof words / sizeof words[0]), "tok512.bin");
    tokenizer_free(&tok);
}

/* ---- stories260K: the three published outputs ---- */
static void test_stories260k(const char *dir) {
    static char out[1 << 15], cmd[2048], want[1 << 14];
    char ckpt[512];
    snprintf(ckpt, sizeof ckpt, "%s/s260.safetensors", test_tmpdir());
    snprintf(cmd, sizeof cmd, "./pelab import --llama2c %s/stories260K/stories260K.bin --tokenizer %s/stories260K/tok512.bin --out %s",
             dir, dir, ckpt);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "import stories260K: %s", out);
    static const struct {
        const char *flags, *file;
    } cases[] = {
        {"--temp 0 -n 256", "greedy_default_256.txt"},
        {"--temp 1.0 --top-p 0.9 --seed 133742 -n 256", "t1.0_p0.9_s133742.txt"},
        {"--temp 0 --steps 200 --prompt 'Once upon a time'", "greedy_n200_prompt_once_upon_a_time.txt"},
    };
    for (int i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/stories260K/outputs/%s", dir, cases[i].file);
        FILE *f = fopen(path, "rb");
        size_t n_want = f ? fread(want, 1, sizeof want - 1, f) : 0;
        if (f) fclose(f);
        want[n_want] = 0;
        snprintf(cmd, sizeof cmd, "./pelab sample %s %s 2>/dev/null", ckpt, cases[i].flags);
        int rc = run_pelab(cmd, out, sizeof out);
        CHECK(rc == 0 && n_want > 0 && strcmp(out, want) == 0, "stories260K %s reproduces %s byte for byte", cases[i].flags,
              cases[i].file);
    }
    /* pelab's -n counts generated tokens: llama2.c's -n 200 text (without its final newline) is a prefix */
    snprintf(cmd, sizeof cmd, "./pelab sample %s --temp 0 -n 200 --prompt 'Once upon a time' 2>/dev/null", ckpt);
    run_pelab(cmd, out, sizeof out);
    size_t n_want = strlen(want);
    CHECK(n_want > 1 && strncmp(out, want, n_want - 1) == 0 && strlen(out) > n_want,
          "-n 200 (generated tokens) continues llama2.c's -n 200 text");
    snprintf(cmd, sizeof cmd, "./pelab sample %s --temp 0 -n 256 --no-cache 2>/dev/null", ckpt);
    run_pelab(cmd, out, sizeof out);
    char path[512];
    snprintf(path, sizeof path, "%s/stories260K/outputs/greedy_default_256.txt", dir);
    FILE *f = fopen(path, "rb");
    n_want = f ? fread(want, 1, sizeof want - 1, f) : 0;
    if (f) fclose(f);
    want[n_want] = 0;
    CHECK(strcmp(out, want) == 0, "full recomputation (--no-cache) gives the same greedy text");
    snprintf(cmd, sizeof cmd, "./pelab info %s", ckpt);
    run_pelab(cmd, out, sizeof out);
    CHECK(strstr(out, "kv_heads 4") && strstr(out, "llama2c") && strstr(out, "260032"), "info of the imported model");
    /* export gives back llama2.c's own files: the header and every weight byte for byte (only the
     * legacy freq_cis tables, which no runner reads, may differ in last bits), the tokenizer exactly */
    snprintf(cmd, sizeof cmd, "./pelab export %s --llama2c %s/s260_back.bin --tokenizer-out %s/tok_back.bin", ckpt,
             test_tmpdir(), test_tmpdir());
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "export the imported model: %s", out);
    unsigned char *a, *b, *ta, *tb;
    size_t la, lb, lta, ltb;
    char pa[512], pb[512], pta[512], ptb[512];
    snprintf(pa, sizeof pa, "%s/stories260K/stories260K.bin", dir);
    snprintf(pb, sizeof pb, "%s/s260_back.bin", test_tmpdir());
    snprintf(pta, sizeof pta, "%s/stories260K/tok512.bin", dir);
    snprintf(ptb, sizeof ptb, "%s/tok_back.bin", test_tmpdir());
    if (read_file(pa, &a, &la) == 0 && read_file(pb, &b, &lb) == 0 && read_file(pta, &ta, &lta) == 0 &&
        read_file(ptb, &tb, &ltb) == 0) {
        size_t weights = 28 + 260032 * sizeof(float);
        CHECK(la == lb && memcmp(a, b, weights) == 0, "export: same size, header and weights byte for byte");
        CHECK(lta == ltb && memcmp(ta, tb, lta) == 0, "export: tok512.bin byte for byte");
        free(a), free(b), free(ta), free(tb);
    } else {
        CHECK(0, "read the exported files: %s", pelab_errmsg);
    }
}

/* ---- import refuses damaged files; export -> import is bit-exact ---- */
static void test_import_errors_and_round_trip(void) {
    const char *dir = test_tmpdir();
    char bin[512], bin2[512], ck[512];
    snprintf(bin, sizeof bin, "%s/l2c.bin", dir);
    snprintf(bin2, sizeof bin2, "%s/l2c_bad.bin", dir);
    snprintf(ck, sizeof ck, "%s/l2c.safetensors", dir);
    for (int tied = 0; tied < 2; tied++) {
        Model m, back;
        tiny_model(&m, "rope", 2, tied, 7 + tied);
        m.cfg.norm_eps = 1e-5f;
        CHECK(llama2c_write_model(bin, &m) == 0, "export tied=%d: %s", tied, pelab_errmsg);
        CHECK(llama2c_read_model(bin, &back) == 0, "import tied=%d: %s", tied, pelab_errmsg);
        int same = back.n_params == m.n_params && back.cfg.tied == m.cfg.tied && back.cfg.n_kv_heads == 2 &&
                   memcmp(back.params_mem, m.params_mem, m.n_params * sizeof(float)) == 0;
        CHECK(same, "export -> import is bit-exact (tied=%d, GQA)", tied);
        model_free(&back);

        unsigned char *img;
        size_t len;
        read_file(bin, &img, &len);
        write_bytes_atomic(bin2, img, len - 4);
        CHECK(llama2c_read_model(bin2, &back) == -1 && strstr(pelab_errmsg, "needs exactly"),
              "truncated model refused: %s", pelab_errmsg);
        write_bytes_atomic(bin2, img, 20);
        CHECK(llama2c_read_model(bin2, &back) == -1 && strstr(pelab_errmsg, "28-byte"), "header cut short: %s",
              pelab_errmsg);
        unsigned char *longer = malloc(len + 8);
        memcpy(longer, img, len), memset(longer + len, 0, 8);
        write_bytes_atomic(bin2, longer, len + 8);
        CHECK(llama2c_read_model(bin2, &back) == -1 && strstr(pelab_errmsg, "needs exactly"),
              "trailing bytes refused: %s", pelab_errmsg);
        int32_t h[7];
        memcpy(h, img, sizeof h);
        struct {
            int field, value;
            const char *needle;
        } bad[] = {{3, 3, "multiple of n_heads"}, {4, 3, "n_kv_heads"}, {0, -16, "dim"}, {6, 0, "seq_len"},
                   {2, 1 << 24, "n_layers"}};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            int32_t hb[7];
            memcpy(hb, h, sizeof hb);
            hb[bad[k].field] = bad[k].value;
            memcpy(longer, img, len);
            memcpy(longer, hb, sizeof hb);
            write_bytes_atomic(bin2, longer, len);
            CHECK(llama2c_read_model(bin2, &back) == -1 && strstr(pelab_errmsg, bad[k].needle),
                  "inconsistent header (field %d = %d) refused: %s", bad[k].field, bad[k].value, pelab_errmsg);
        }
        int32_t hbig[7];
        memcpy(hbig, h, sizeof hbig);
        hbig[0] = 131072, hbig[3] = 1, hbig[4] = 1; /* dim past config_validate's limit */
        memcpy(longer, img, len);
        memcpy(longer, hbig, sizeof hbig);
        write_bytes_atomic(bin2, longer, len);
        const char *first = NULL;
        int refused = llama2c_read_model(bin2, &back) == -1;
        if (refused) first = strstr(pelab_errmsg, "header:");
        CHECK(refused && first && !strstr(first + 1, "header:") && strstr(pelab_errmsg, "expected"),
              "a header refused by the config check says so once, legibly: %s", pelab_errmsg);
        free(longer), free(img);
        model_free(&m);
    }
    /* a plain RoPE model fine-tuned at another length (orig_len stays the first) still exports */
    {
        Model m;
        tiny_model(&m, "rope", 4, 1, 3);
        m.cfg.norm_eps = 1e-5f;
        m.cfg.seq_len = 16;
        CHECK(llama2c_write_model(bin2, &m) == 0, "export after a change of training length: %s", pelab_errmsg);
        model_free(&m);
    }
    /* models llama2.c's runner would compute differently are refused, naming the reason */
    static const char *const refused[] = {"alibi", "rope:layout=half", "rope:base=500", "rope:scale=pi:2", "learned",
                                          "learned:max_len=16", "rope+nope@1", "rope+temp", "rope+ssmax", "rope+sinks"};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        Model m;
        tiny_model(&m, refused[k], 4, 1, 3);
        m.cfg.norm_eps = 1e-5f;
        CHECK(llama2c_write_model(bin2, &m) == -1 && strstr(pelab_errmsg, "llama2.c"), "export of %s refused: %s",
              refused[k], pelab_errmsg);
        model_free(&m);
    }
    Model m;
    tiny_model(&m, "rope", 4, 1, 3);
    m.cfg.norm_eps = 1e-6f;
    CHECK(llama2c_write_model(bin2, &m) == -1 && strstr(pelab_errmsg, "norm_eps"), "norm_eps other than 1e-5 refused");
    model_free(&m);

    /* through the CLI: a tokenizer whose size does not match the model is refused */
    static char out[4096], cmd[2048];
    Buf img = small_vocab_image(-0.5f, -0.25f);
    char tokp[512];
    snprintf(tokp, sizeof tokp, "%s/small_tok.bin", dir);
    write_bytes_atomic(tokp, img.p, img.len);
    free(img.p);
    snprintf(cmd, sizeof cmd, "./pelab import --llama2c %s --tokenizer %s --out %s", bin, tokp, ck);
    expect_pelab_error(cmd, "more than the model's vocabulary");
    snprintf(cmd, sizeof cmd, "./pelab import --llama2c %s --out %s", bin, ck);
    expect_pelab_error(cmd, "--tokenizer");
    (void)out;
}

/* ---- the tokenizer travels inside checkpoints ---- */
static void test_checkpoint_tokenizer(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/with_tok.safetensors", test_tmpdir());
    Buf img = small_vocab_image(-0.5f, -0.25f);
    Model m, l;
    tiny_model(&m, "rope", 4, 1, 5);
    CkptMeta meta = {0}, got;
    meta_set(&meta, "tokenizer", "llama2c");
    meta.tokenizer_image = img.p, meta.tokenizer_len = img.len;
    CHECK(checkpoint_save(path, &m, &meta, NULL, NULL) == 0, "save with a tokenizer: %s", pelab_errmsg);
    CHECK(checkpoint_load(path, &l, &got, NULL, NULL) == 0, "load: %s", pelab_errmsg);
    CHECK(got.tokenizer_len == img.len && memcmp(got.tokenizer_image, img.p, img.len) == 0,
          "the tokenizer file round-trips byte for byte");
    CHECK(memcmp(l.params_mem, m.params_mem, m.n_params * sizeof(float)) == 0, "parameters unchanged beside it");
    /* the loaded metadata saves again with the tokenizer (resume, fine-tune) */
    CHECK(checkpoint_save(path, &l, &got, NULL, NULL) == 0, "re-save");
    meta_free(&got);
    model_free(&l);
    CHECK(checkpoint_load(path, &l, &got, NULL, NULL) == 0 && got.tokenizer_len == img.len, "re-saved keeps it");
    meta_free(&got);
    model_free(&l);
    /* a tokenizer tensor of the wrong dtype is refused */
    unsigned char *buf;
    size_t len;
    read_file(path, &buf, &len);
    char *u8 = memmem(buf, len, "\"U8\"", 4);
    if (u8) memcpy(u8, "\"I8\"", 4);
    CHECK(u8 && checkpoint_parse(buf, len, "ck", &l, NULL, NULL, NULL) == -1 && strstr(pelab_errmsg, "U8"),
          "tokenizer tensor with another dtype refused: %s", pelab_errmsg);
    free(buf);
    model_free(&m);
    free(img.p);
}

/* drawing the stop id (llama2.c's BOS) ends generation without emitting it */
static void test_generate_stop(void) {
    Model m;
    tiny_model(&m, "rope", 4, 1, 11);
    int tokens[32] = {3, 5};
    Sampler s;
    sampler_init(&s, m.cfg.vocab_size, 0.0f, 0.0f, 0, 1);
    int n = generate(&m, &s, tokens, 2, 20, 1, -1, NULL, NULL);
    int first = tokens[2];
    int tokens2[32] = {3, 5};
    int n2 = generate(&m, &s, tokens2, 2, 20, 1, first, NULL, NULL);
    CHECK(n == 20 && n2 == 0, "greedy text stops at once when its first token is the stop id (%d, %d)", n, n2);
    sampler_free(&s);
    model_free(&m);
}

/* --tokenizer: the data is encoded with it, the checkpoint carries it, --init keeps it, resume
 * refuses another vocabulary */
static void test_train_with_tokenizer(void) {
    static char out[1 << 14], cmd[4096];
    const char *dir = test_tmpdir();
    snprintf(cmd, sizeof cmd,
             "./pelab synth stories --bytes 60000 --seed 3 > %s/tt.txt && ./pelab tokenizer train --vocab 400 %s/tt.txt "
             "--out %s/tt.bpe && ./pelab tokenizer train --vocab 300 %s/tt.txt --out %s/tt300.bpe",
             dir, dir, dir, dir, dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "train two BPE tokenizers: %s", out);
    const char *tiny = "--dim 16 --layers 1 --heads 2 --seq-len 16 --batch 4 --steps 6 --quiet --threads 1";
    snprintf(cmd, sizeof cmd, "./pelab train --data %s/tt.txt --tokenizer %s/tt.bpe %s --out %s/tt.safetensors", dir,
             dir, tiny, dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "train with --tokenizer: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab info %s/tt.safetensors", dir);
    run_pelab(cmd, out, sizeof out);
    CHECK(strstr(out, "vocab 400") && strstr(out, "bpe"), "the model's vocabulary is the tokenizer's, kind bpe");
    snprintf(cmd, sizeof cmd, "./pelab sample %s/tt.safetensors --prompt 'Once upon' -n 20 --seed 2 2>/dev/null", dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0 && strncmp(out, "Once upon", 9) == 0, "sample decodes through the BPE");
    snprintf(cmd, sizeof cmd, "./pelab train --data %s/tt.txt --tokenizer %s/tt300.bpe %s --steps 8 --resume --out %s/tt.safetensors",
             dir, dir, tiny, dir);
    expect_pelab_error(cmd, "tokenizer");
    /* fine-tuning from it keeps the tokenizer without --tokenizer */
    snprintf(cmd, sizeof cmd, "./pelab train --data %s/tt.txt --init %s/tt.safetensors %s --out %s/tt_ft.safetensors && "
             "./pelab info %s/tt_ft.safetensors", dir, dir, tiny, dir, dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, "bpe") && strstr(out, "vocab 400"),
          "--init keeps the initial checkpoint's tokenizer: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab train --data %s/tt.txt --tokenizer %s/tt.bpe --passkey-frac 0.5 %s --out %s/x.safetensors",
             dir, dir, tiny, dir);
    expect_pelab_error(cmd, "byte-level");
    /* refused once the tokenizer is read, before the data (which here does not exist), naming its kind */
    snprintf(cmd, sizeof cmd, "./pelab train --data %s/missing.txt --tokenizer %s/tt.bpe --passkey-frac 0.5 %s --out %s/x.safetensors",
             dir, dir, tiny, dir);
    expect_pelab_error(cmd, "this run uses the bpe tokenizer");
    /* passkey reads its documents through the model's tokenizer (the lengths stay bytes of text) */
    snprintf(cmd, sizeof cmd, "./pelab passkey %s/tt.safetensors --lengths 64 --depths 50 --trials 1 2>/dev/null", dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, "tokens: the bpe tokenizer") && strstr(out, "      64 |"),
          "passkey on a BPE model: documents through its tokenizer: %s", out);
    /* export of a BPE model: its vocabulary as tokenizer.bin pieces, " " among them (run.c's
     * dummy prefix), every token's bytes kept; model and tokenizer never the same file */
    snprintf(cmd, sizeof cmd, "./pelab export %s/tt.safetensors --llama2c %s/tokenizer.bin", dir, dir);
    expect_pelab_error(cmd, "same file");
    snprintf(cmd, sizeof cmd, "./pelab export %s/tt.safetensors --llama2c %s/tt.bin --tokenizer-out %s/tt_tok.bin",
             dir, dir, dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "export a BPE model: %s", out);
    char path[512];
    snprintf(path, sizeof path, "%s/tt_tok.bin", dir);
    unsigned char *img;
    size_t len;
    Llama2cTok t;
    if (read_file(path, &img, &len) == 0 && llama2c_tok_parse(&t, img, len, 400, path) == 0) {
        CHECK(llama2c_tok_lookup(&t, (const unsigned char *)" ", 1) == ' ', "the space is the piece \" \" (id 32)");
        size_t n;
        const unsigned char *p = llama2c_tok_decode(&t, 'a', 10, &n);
        CHECK(n == 1 && p[0] == '\n', "a non-printable byte is written <0x0A> and decodes to the raw byte");
        llama2c_tok_free(&t);
        free(img);
    } else {
        CHECK(0, "the exported tokenizer.bin parses with 400 tokens: %s", pelab_errmsg);
    }
}

void test_llama2c(void) {
    test_train_with_tokenizer();
    test_small_vocab_rules();
    test_import_errors_and_round_trip();
    test_checkpoint_tokenizer();
    test_generate_stop();
    const char *dir = shared_data_dir();
    if (!dir) {
        fprintf(stderr, "test_llama2c: ../shared/data absent: skipping tok512 ids and the stories260K outputs\n");
        return;
    }
    test_tok512_ids(dir);
    test_stories260k(dir);
}
