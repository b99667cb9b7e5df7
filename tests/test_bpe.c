/* test_bpe.c: the byte-level BPE tokenizer: the chunk rule, training against a naive reference
 * (every merge, ties included), encoding against merges applied in order, exact round trips on
 * any bytes, the file format's validation, and the `pelab tokenizer` command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../data/bpe.h"
#include "../data/corpus.h"
#include "../data/synth.h"
#include "test.h"

/* ---- helpers ---- */

static unsigned char *random_bytes(uint64_t seed, size_t n) {
    Rng r;
    rng_seed(&r, seed);
    unsigned char *p = xmalloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)rng_u32(&r);
    return p;
}

static unsigned char *english(uint64_t seed, size_t n) {
    char *text;
    if (synth_generate("stories", seed, n, &text) != 0) {
        CHECK(0, "synth stories: %s", pelab_errmsg);
        return (unsigned char *)calloc(n + 1, 1);
    }
    return (unsigned char *)text;
}

/* encode, check every id, decode, compare; returns the token count (0 on failure) */
static size_t round_trip(const Bpe *b, const unsigned char *text, size_t n, const char *what) {
    int *ids = xmalloc((n ? n : 1) * sizeof *ids);
    size_t k = bpe_encode(b, text, n, ids), pos = 0, bad = 0;
    for (size_t i = 0; i < k && !bad; i++) {
        size_t len;
        const unsigned char *p = bpe_piece(b, ids[i], &len);
        if (!p || pos + len > n || memcmp(p, text + pos, len) != 0) bad = i + 1;
        else pos += len;
    }
    CHECK(k <= n, "%s: %zu tokens for %zu bytes", what, k, n);
    CHECK(!bad && pos == n, "%s: decode(encode(x)) != x (token %zu bad, %zu of %zu bytes matched)", what, bad, pos, n);
    free(ids);
    return !bad && pos == n ? k : 0;
}

/* the reference trainer: recounts every pair of every chunk occurrence before each merge */
static int naive_train(const unsigned char *text, size_t n, int vocab, int *left, int *right) {
    int *sym = xmalloc((n ? n : 1) * sizeof *sym);
    size_t *start = xmalloc((n + 1) * sizeof *start), n_chunks = 0;
    int *len = xmalloc((n ? n : 1) * sizeof *len);
    for (size_t s = 0; s < n;) {
        size_t e = bpe_chunk_end(text, n, s);
        start[n_chunks] = s, len[n_chunks++] = (int)(e - s);
        for (size_t i = s; i < e; i++) sym[i] = text[i];
        s = e;
    }
    int made = 0;
    long *count = xmalloc((size_t)vocab * vocab * sizeof *count);
    for (; made < vocab - 256; made++) {
        memset(count, 0, (size_t)vocab * vocab * sizeof *count);
        for (size_t c = 0; c < n_chunks; c++)
            for (int j = 0; j + 1 < len[c]; j++) count[(size_t)sym[start[c] + j] * vocab + sym[start[c] + j + 1]]++;
        size_t best = 0;
        for (size_t q = 1; q < (size_t)vocab * vocab; q++)
            if (count[q] > count[best]) best = q; /* strict: the first (smallest (left, right)) wins ties */
        if (count[best] < 2) break;
        int a = (int)(best / vocab), b = (int)(best % vocab), z = 256 + made;
        left[made] = a, right[made] = b;
        for (size_t c = 0; c < n_chunks; c++) {
            int *s = sym + start[c], m = 0;
            for (int j = 0; j < len[c];) {
                if (j + 1 < len[c] && s[j] == a && s[j + 1] == b) s[m++] = z, j += 2;
                else s[m++] = s[j++];
            }
            len[c] = m;
        }
    }
    free(sym), free(start), free(len), free(count);
    return made;
}

/* the reference encoder: every merge applied in order to every chunk */
static size_t naive_encode(const Bpe *b, const unsigned char *text, size_t n, int *ids) {
    size_t out = 0;
    for (size_t s = 0; s < n;) {
        size_t e = bpe_chunk_end(text, n, s);
        int *w = ids + out, k = (int)(e - s);
        for (int i = 0; i < k; i++) w[i] = text[s + i];
        for (int r = 0; r < b->n_merges; r++) {
            int m = 0;
            for (int j = 0; j < k;) {
                if (j + 1 < k && w[j] == b->merge_left[r] && w[j + 1] == b->merge_right[r]) w[m++] = 256 + r, j += 2;
                else w[m++] = w[j++];
            }
            k = m;
        }
        out += (size_t)k;
        s = e;
    }
    return out;
}

static void check_same_encoding(const Bpe *b, const unsigned char *text, size_t n, const char *what) {
    int *a = xmalloc((n ? n : 1) * sizeof *a), *r = xmalloc((n ? n : 1) * sizeof *r);
    size_t ka = bpe_encode(b, text, n, a), kr = naive_encode(b, text, n, r);
    CHECK(ka == kr && memcmp(a, r, ka * sizeof *a) == 0,
          "%s: encoding (%zu tokens) differs from the merges applied in order (%zu tokens)", what, ka, kr);
    free(a), free(r);
}

/* ---- the chunk rule ---- */

static void check_chunks(const char *text, size_t n, const char *const *want, const char *what) {
    const unsigned char *t = (const unsigned char *)text;
    size_t s = 0;
    int i = 0, ok = 1;
    for (; s < n && ok; i++) {
        size_t e = bpe_chunk_end(t, n, s);
        ok = want[i] && e > s && strlen(want[i]) == e - s && memcmp(want[i], t + s, e - s) == 0;
        CHECK(ok, "%s: chunk %d is '%.*s', expected '%s'", what, i, (int)(e - s), text + s, want[i] ? want[i] : "(end)");
        s = e;
    }
    if (ok) CHECK(!want[i], "%s: %d chunks, expected more ('%s' next)", what, i, want[i]);
}

static void test_chunk_rule(void) {
    const char *t1 = "Hello world  42x,\n\n  foo!? \t bar ";
    const char *w1[] = {"Hello", " world", " ", " 42", "x", ",", "\n\n ", " foo", "!?", " \t", " bar", " ", NULL};
    check_chunks(t1, strlen(t1), w1, "words and spaces");
    /* bytes >= 0x80 are letters (valid UTF-8 or not); NUL and control bytes are OTHER */
    const char t2[] = "caf\xc3\xa9 \xff\xfe\x01\x00\x00" "a\n";
    const char *w2[] = {"caf\xc3\xa9", " \xff\xfe", NULL};
    check_chunks(t2, 8, w2, "UTF-8 and invalid bytes");
    /* the rest holds NULs, so it cannot go through strlen: by hand */
    const unsigned char *u2 = (const unsigned char *)t2;
    size_t n2 = sizeof t2 - 1, e = bpe_chunk_end(u2, n2, 8);
    CHECK(e == 11, "\\x01\\0\\0: the OTHER run is [8, %zu), expected [8, 11)", e);
    CHECK(bpe_chunk_end(u2, n2, 11) == 12 && bpe_chunk_end(u2, n2, 12) == 13, "'a' then '\\n' are single chunks");
    /* runs are cut at BPE_MAX_CHUNK bytes, the leading space included */
    unsigned char run[200];
    memset(run, 'a', sizeof run);
    CHECK(bpe_chunk_end(run, 150, 0) == BPE_MAX_CHUNK, "a 150-letter run is cut at %d", BPE_MAX_CHUNK);
    CHECK(bpe_chunk_end(run, 150, 128) == 150, "the last piece of the run ends at the end");
    run[0] = ' ';
    CHECK(bpe_chunk_end(run, 100, 0) == BPE_MAX_CHUNK, "' ' + 99 letters is cut at %d", BPE_MAX_CHUNK);
    memset(run, ' ', sizeof run);
    CHECK(bpe_chunk_end(run, 100, 0) == BPE_MAX_CHUNK, "a 100-space run is cut at %d", BPE_MAX_CHUNK);
    CHECK(bpe_chunk_end((const unsigned char *)"   ", 3, 0) == 3, "trailing spaces are one chunk");
}

/* ---- training ---- */

static void test_known_merges(void) {
    Bpe b;
    /* the textbook example: aa (4 times) first; then ab and (aa)a tie at 2: the smaller pair, ab */
    const char *t = "aaabdaaabac";
    CHECK(bpe_train(&b, (const unsigned char *)t, strlen(t), 300) == 0, "train: %s", pelab_errmsg);
    CHECK(b.n_merges == 3 && b.vocab_size == 259, "aaabdaaabac: %d merges (vocab %d), expected 3 (259)", b.n_merges,
          b.vocab_size);
    if (b.n_merges == 3) {
        CHECK(b.merge_left[0] == 'a' && b.merge_right[0] == 'a', "first merge (%d, %d), expected (a, a)",
              b.merge_left[0], b.merge_right[0]);
        CHECK(b.merge_left[1] == 'a' && b.merge_right[1] == 'b', "second merge (%d, %d), expected (a, b)",
              b.merge_left[1], b.merge_right[1]);
        CHECK(b.merge_left[2] == 256 && b.merge_right[2] == 257, "third merge (%d, %d), expected (256, 257)",
              b.merge_left[2], b.merge_right[2]);
        size_t len;
        const unsigned char *p = bpe_piece(&b, 258, &len);
        CHECK(p && len == 4 && memcmp(p, "aaab", 4) == 0, "token 258 is not 'aaab'");
        int ids[16], want[] = {258, 'd', 258, 'a', 'c'};
        size_t k = bpe_encode(&b, (const unsigned char *)t, strlen(t), ids);
        CHECK(k == 5 && memcmp(ids, want, sizeof want) == 0, "aaabdaaabac encodes to %zu tokens, expected 5", k);
    }
    bpe_free(&b);

    /* a tie at the top: (x, y) and (b, a) both twice; the smaller pair (b, a) goes first */
    t = "xy\nxy\nba\nba\n";
    CHECK(bpe_train(&b, (const unsigned char *)t, strlen(t), 257) == 0, "train: %s", pelab_errmsg);
    CHECK(b.n_merges == 1 && b.merge_left[0] == 'b' && b.merge_right[0] == 'a', "tie: first merge (%d, %d), expected (b, a)",
          b.n_merges ? b.merge_left[0] : -1, b.n_merges ? b.merge_right[0] : -1);
    bpe_free(&b);

    /* merges never cross chunks: "a.a.a.a." has no pair inside a chunk; " x" four times has one */
    t = "a.a.a.a.";
    CHECK(bpe_train(&b, (const unsigned char *)t, strlen(t), 1000) == 0 && b.n_merges == 0 && b.vocab_size == 256,
          "a.a.a.a.: %d merges, expected none (pairs across chunks)", b.n_merges);
    bpe_free(&b);
    t = " x x x x";
    CHECK(bpe_train(&b, (const unsigned char *)t, strlen(t), 1000) == 0 && b.n_merges == 1 &&
              b.merge_left[0] == ' ' && b.merge_right[0] == 'x',
          "' x' x 4: expected the single merge (' ', x), got %d merges", b.n_merges);
    bpe_free(&b);
    /* early stop: after ab the pair (ab, ab) occurs once */
    CHECK(bpe_train(&b, (const unsigned char *)"abab", 4, 1000) == 0 && b.n_merges == 1, "abab: %d merges, expected 1",
          b.n_merges);
    bpe_free(&b);
    CHECK(bpe_train(&b, (const unsigned char *)"abab", 4, 256) == 0 && b.n_merges == 0, "vocab 256: no merges");
    bpe_free(&b);
    CHECK(bpe_train(&b, (const unsigned char *)"", 0, 1000) == 0 && b.n_merges == 0, "empty text: no merges");
    bpe_free(&b);
    CHECK(bpe_train(&b, (const unsigned char *)"abab", 4, 255) == -1 && strstr(pelab_errmsg, "255"),
          "vocab 255 accepted (%s)", pelab_errmsg);
    CHECK(bpe_train(&b, (const unsigned char *)"abab", 4, 65537) == -1 && strstr(pelab_errmsg, "65537"),
          "vocab 65537 accepted (%s)", pelab_errmsg);
}

/* the incremental trainer makes exactly the naive trainer's merges, in order */
static void test_against_naive(void) {
    struct {
        const char *what;
        unsigned char *text;
        size_t n;
        int vocab;
    } cases[] = {
        {"English", english(3, 12000), 12000, 420},
        {"random bytes", random_bytes(11, 6000), 6000, 300},
        {"few letters", NULL, 3000, 400},
    };
    /* a two-letter alphabet without spaces: 64-byte chunks (the cap), many overlapping pairs (aaa) */
    cases[2].text = random_bytes(5, 3000);
    for (size_t i = 0; i < 3000; i++) cases[2].text[i] = (unsigned char)("aab"[cases[2].text[i] % 3]);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int vocab = cases[c].vocab, *left = xmalloc((size_t)vocab * sizeof *left),
            *right = xmalloc((size_t)vocab * sizeof *right);
        int made = naive_train(cases[c].text, cases[c].n, vocab, left, right);
        Bpe b;
        CHECK(bpe_train(&b, cases[c].text, cases[c].n, vocab) == 0, "%s: %s", cases[c].what, pelab_errmsg);
        int first_diff = -1;
        for (int r = 0; r < made && r < b.n_merges && first_diff < 0; r++)
            if (b.merge_left[r] != left[r] || b.merge_right[r] != right[r]) first_diff = r;
        CHECK(b.n_merges == made && first_diff < 0, "%s: %d merges vs the naive %d; first difference at merge %d",
              cases[c].what, b.n_merges, made, first_diff);
        CHECK(made > 10, "%s: only %d merges: the case tests little", cases[c].what, made);
        check_same_encoding(&b, cases[c].text, cases[c].n, cases[c].what);
        bpe_free(&b);
        free(left), free(right), free(cases[c].text);
    }
}

/* ---- round trips and compression ---- */

static void test_round_trips(void) {
    unsigned char *eng = english(1, 200000), *held_out = english(2, 50000);
    unsigned char *rnd_train = random_bytes(1, 60000), *rnd = random_bytes(2, 10000);
    Bpe be, br;
    CHECK(bpe_train(&be, eng, 200000, 1024) == 0, "train on English: %s", pelab_errmsg);
    CHECK(bpe_train(&br, rnd_train, 60000, 1024) == 0, "train on random bytes: %s", pelab_errmsg);
    CHECK(be.vocab_size == 1024, "English: vocabulary %d, expected 1024", be.vocab_size);
    CHECK(br.n_merges > 100, "random bytes: only %d merges", br.n_merges);

    /* invalid UTF-8, NULs, lone continuation bytes, overlong forms, CR, spaces at the ends */
    static const unsigned char nasty[] = " \xff\xfe\x00\x00 abc\xc3\x28 \x00 \x80\x80\x80 end\r\n\xc0\xaf\xed\xa0\x80"
                                         "  \t\x7f\x01\x1b[0m the the the \xf4\x90\x80\x80 ";
    /* English with random bytes sprinkled in */
    unsigned char *mixed = english(4, 20000);
    Rng r;
    rng_seed(&r, 9);
    for (int i = 0; i < 2000; i++) mixed[rng_below(&r, 20000)] = (unsigned char)rng_u32(&r);
    const Bpe *toks[] = {&be, &br};
    const char *names[] = {"English vocab", "random vocab"};
    for (int t = 0; t < 2; t++) {
        char what[96];
        snprintf(what, sizeof what, "%s: 10,000 random bytes", names[t]);
        round_trip(toks[t], rnd, 10000, what);
        check_same_encoding(toks[t], rnd, 10000, what);
        snprintf(what, sizeof what, "%s: invalid UTF-8 and NULs", names[t]);
        round_trip(toks[t], nasty, sizeof nasty - 1, what);
        check_same_encoding(toks[t], nasty, sizeof nasty - 1, what);
        snprintf(what, sizeof what, "%s: English with random bytes", names[t]);
        round_trip(toks[t], mixed, 20000, what);
        check_same_encoding(toks[t], mixed, 20000, what);
        snprintf(what, sizeof what, "%s: held-out English", names[t]);
        round_trip(toks[t], held_out, 50000, what);
        int none[1];
        CHECK(bpe_encode(toks[t], nasty, 0, none) == 0, "%s: empty input gives tokens", names[t]);
        size_t len;
        CHECK(!bpe_piece(toks[t], -1, &len) && !bpe_piece(toks[t], toks[t]->vocab_size, &len) &&
                  bpe_piece(toks[t], toks[t]->vocab_size - 1, &len),
              "%s: bpe_piece range", names[t]);
    }
    /* single bytes, every value: each its own token whatever the vocabulary */
    for (int c = 0; c < 256; c++) {
        unsigned char byte = (unsigned char)c;
        int id = -1;
        if (bpe_encode(&be, &byte, 1, &id) != 1 || id != c) {
            CHECK(0, "byte %d encodes to %d", c, id);
            break;
        }
    }
    /* compression: held-out English in far fewer tokens than bytes */
    int *ids = xmalloc(50000 * sizeof *ids);
    size_t k = bpe_encode(&be, held_out, 50000, ids);
    CHECK(k > 0 && 50000.0 / (double)k > 2.5, "held-out English: %zu tokens for 50000 bytes (%.2f bytes/token)", k,
          k ? 50000.0 / (double)k : 0.0);
    k = bpe_encode(&br, held_out, 50000, ids);
    CHECK(k < 50000, "a random-byte vocabulary still compresses English a little (%zu tokens)", k);
    free(ids);
    bpe_free(&be), bpe_free(&br);
    free(eng), free(held_out), free(rnd_train), free(rnd), free(mixed);
}

/* the shipped tinyshakespeare (data/corpora): always in the tree */
static void test_shakespeare(void) {
    unsigned char *text;
    size_t n;
    int rc = corpus_read_file(CORPUS_DIR "/tinyshakespeare.txt", &text, &n);
    CHECK(rc == 0, "the shipped tinyshakespeare: %s", rc ? pelab_errmsg : "");
    if (rc != 0) return;
    Bpe b;
    CHECK(bpe_train(&b, text, n, 1024) == 0, "tinyshakespeare: %s", pelab_errmsg);
    size_t k = round_trip(&b, text, n, "tinyshakespeare");
    /* measured 2.44 bytes/token at vocabulary 1024 */
    CHECK(k && (double)n / (double)k > 2.3, "tinyshakespeare: %.3f bytes/token at vocab 1024", k ? (double)n / k : 0.0);
    bpe_free(&b);
    free(text);
}

/* ---- file format ---- */

static int parse_fails(const unsigned char *buf, size_t len, const char *needle, const char *what) {
    Bpe b;
    memset(&b, 0x5a, sizeof b); /* garbage in: parse must not read it */
    int rc = bpe_parse(&b, buf, len, "tok.bpe");
    CHECK(rc == -1 && strstr(pelab_errmsg, "tok.bpe") && strstr(pelab_errmsg, needle),
          "%s: parse gave %d, error '%s' (expected one naming tok.bpe and '%s')", what, rc, pelab_errmsg, needle);
    size_t len_out;
    CHECK(b.vocab_size == 0 && !bpe_piece(&b, 0, &len_out), "%s: a failed parse left a tokenizer behind", what);
    bpe_free(&b); /* safe after a failure */
    return rc;
}

static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void test_format(void) {
    unsigned char *text = english(6, 30000);
    Bpe a, b, c;
    CHECK(bpe_train(&a, text, 30000, 600) == 0 && bpe_train(&b, text, 30000, 600) == 0, "train: %s", pelab_errmsg);
    unsigned char *sa = NULL, *sb = NULL, *sc = NULL;
    size_t la = 0, lb = 0, lc = 0; /* defined when a serialize fails (clang -Wsometimes-uninitialized) */
    CHECK(bpe_serialize(&a, &sa, &la) == 0 && bpe_serialize(&b, &sb, &lb) == 0, "serialize: %s", pelab_errmsg);
    CHECK(la == lb && memcmp(sa, sb, la) == 0, "training twice gives different tokenizers");
    CHECK(la == 16 + 8 * (size_t)a.n_merges && memcmp(sa, "PELABBPE", 8) == 0 && sa[8] == 1 && sa[9] == 0 &&
              sa[12] == (unsigned char)a.n_merges && sa[13] == (unsigned char)(a.n_merges >> 8),
          "file image layout: %zu bytes for %d merges", la, a.n_merges);
    CHECK(sa[16] == (unsigned char)a.merge_left[0] && sa[20] == (unsigned char)a.merge_right[0],
          "first merge stored at offset 16");
    CHECK(bpe_parse(&c, sa, la, "a") == 0, "parse: %s", pelab_errmsg);
    CHECK(bpe_serialize(&c, &sc, &lc) == 0 && lc == la && memcmp(sc, sa, la) == 0,
          "serialize -> parse -> serialize differs");
    int same = c.vocab_size == a.vocab_size;
    for (int i = 0; i < a.vocab_size && same; i++)
        same = c.piece_len[i] == a.piece_len[i] && memcmp(c.piece[i], a.piece[i], (size_t)a.piece_len[i]) == 0;
    CHECK(same, "parsed pieces differ from the trained ones");
    free(sc);
    bpe_free(&c);

    /* save / load: the same bytes on disk, no temporary left behind */
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/t.bpe", test_tmpdir());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(bpe_save(&a, path) == 0, "save: %s", pelab_errmsg);
    unsigned char *disk;
    size_t ld;
    if (read_file(path, &disk, &ld) == 0) {
        CHECK(ld == la && memcmp(disk, sa, la) == 0, "saved file differs from the serialized image");
        free(disk);
    } else CHECK(0, "read back: %s", pelab_errmsg);
    FILE *f = fopen(tmp, "rb");
    CHECK(!f, "%s left behind", tmp);
    if (f) fclose(f);
    CHECK(bpe_load(&c, path) == 0 && c.n_merges == a.n_merges, "load: %s", pelab_errmsg);
    bpe_free(&c);
    CHECK(bpe_load(&c, "/nonexistent/t.bpe") == -1 && strstr(pelab_errmsg, "/nonexistent/t.bpe"),
          "load of a missing file: '%s'", pelab_errmsg);
    CHECK(bpe_save(&a, "/nonexistent/t.bpe") == -1 && strstr(pelab_errmsg, "/nonexistent/t.bpe"),
          "save into a missing directory: '%s'", pelab_errmsg);

    /* every way a file can be wrong */
    unsigned char *bad = xmalloc(la + 8);
    parse_fails(sa, 0, "truncated", "empty file");
    parse_fails(sa, 10, "truncated", "10 bytes");
    parse_fails(sa, la - 1, "truncated", "one byte short");
    parse_fails(sa, la - 8, "truncated", "one merge short");
    memcpy(bad, sa, la);
    memset(bad + la, 0, 8);
    parse_fails(bad, la + 1, "trailing", "one trailing byte");
    parse_fails(bad, la + 8, "trailing", "a trailing merge");
    bad[0] = 'X';
    parse_fails(bad, la, "magic", "bad magic");
    memcpy(bad, sa, la);
    put32(bad + 8, 2);
    parse_fails(bad, la, "version", "version 2");
    memcpy(bad, sa, la);
    put32(bad + 12, 0xffffffffu);
    parse_fails(bad, la, "merges", "n_merges 2^32-1");
    memcpy(bad, sa, la);
    put32(bad + 16 + 8 * 5, 256 + 5); /* merge 5 refers to itself */
    parse_fails(bad, la, "merge 5", "merge referring to itself");
    memcpy(bad, sa, la);
    put32(bad + 16 + 8 * 5 + 4, 256 + 100); /* ... and to a later token */
    parse_fails(bad, la, "merge 5", "merge referring to a later token");
    memcpy(bad, sa, la);
    put32(bad + 16, (uint32_t)-1);
    parse_fails(bad, la, "merge 0", "negative token");
    memcpy(bad, sa, la);
    memcpy(bad + 16 + 8 * 7, bad + 16 + 8 * 3, 8); /* merge 7 repeats merge 3 */
    parse_fails(bad, la, "same pair", "a pair merged twice");
    /* doubling a token: 256 = aa (2 bytes), 257 = 4, ..., 262 = 128 bytes: longer than a chunk */
    memcpy(bad, sa, 16);
    put32(bad + 12, 6);
    put32(bad + 16, 'a'), put32(bad + 20, 'a');
    for (int r = 1; r < 7; r++) put32(bad + 16 + 8 * r, 255 + (uint32_t)r), put32(bad + 20 + 8 * r, 255 + (uint32_t)r);
    CHECK(bpe_parse(&c, bad, 16 + 8 * 6, "ok") == 0 && c.piece_len[261] == 64, "six doublings (64 bytes) parse: %s",
          pelab_errmsg);
    bpe_free(&c);
    put32(bad + 12, 7);
    parse_fails(bad, 16 + 8 * 7, "longer than a chunk", "a 128-byte token");
    free(bad);
    free(sa), free(sb);
    bpe_free(&a), bpe_free(&b);
    free(text);
}

/* ---- the command ---- */

static void test_tokenizer_cli(void) {
    static char out[65536], cmd[2048];
    const char *d = test_tmpdir();
    char eng[512], bin[512];
    snprintf(eng, sizeof eng, "%s/bpe_eng.txt", d);
    snprintf(bin, sizeof bin, "%s/bpe_bin.dat", d);
    unsigned char *text = english(8, 60000), *rnd = random_bytes(8, 5000);
    for (int i = 0; i < 5000; i += 97) rnd[i] = 0; /* NULs for sure */
    if (write_bytes_atomic(eng, text, 60000) != 0 || write_bytes_atomic(bin, rnd, 5000) != 0) CHECK(0, "%s", pelab_errmsg);
    free(text), free(rnd);

    snprintf(cmd, sizeof cmd, "./pelab tokenizer train --vocab 500 %s --out %s/cli.bpe", eng, d);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "merges      244 (vocabulary 500)") && strstr(out, "bytes/token"),
          "tokenizer train (exit %d): %s", rc, out);
    const char *files[] = {eng, bin};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "./pelab tokenizer encode %s/cli.bpe %s > %s/ids.txt && ./pelab tokenizer decode %s/cli.bpe < "
                 "%s/ids.txt > %s/back.dat && cmp %s %s/back.dat && wc -l < %s/ids.txt",
                 d, files[i], d, d, d, d, files[i], d, d);
        rc = run_pelab(cmd, out, sizeof out);
        long lines = atol(out);
        CHECK(rc == 0 && lines > 0 && (i == 1 || lines < 30000), "CLI encode | decode round trip on %s (exit %d): %s",
              files[i], rc, out);
    }
    snprintf(cmd, sizeof cmd, "./pelab tokenizer encode %s/cli.bpe %s --count", d, eng);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "60000 bytes -> ") && count_lines(out) == 1, "encode --count: %s", out);
    /* vocabulary larger than the text allows: a warning, fewer merges, still success */
    snprintf(cmd, sizeof cmd, "./pelab tokenizer train --vocab 60000 %s --out %s/big.bpe", eng, d);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "warning") && strstr(out, "not 60000"), "over-large vocabulary (exit %d): %s", rc, out);

    snprintf(cmd, sizeof cmd, "./pelab tokenizer train %s", eng);
    expect_pelab_error(cmd, "--out");
    snprintf(cmd, sizeof cmd, "./pelab tokenizer train --vocab 100 %s --out %s/x.bpe", eng, d);
    expect_pelab_error(cmd, "--vocab");
    snprintf(cmd, sizeof cmd, "./pelab tokenizer train /nonexistent.txt --out %s/x.bpe", d);
    expect_pelab_error(cmd, "/nonexistent.txt");
    snprintf(cmd, sizeof cmd, "./pelab tokenizer encode %s %s", eng, eng);
    expect_pelab_error(cmd, "magic");
    snprintf(cmd, sizeof cmd, "./pelab tokenizer encode %s/cli.bpe /nonexistent.txt", d);
    expect_pelab_error(cmd, "/nonexistent.txt");
    snprintf(cmd, sizeof cmd, "echo 65 500 | ./pelab tokenizer decode %s/cli.bpe", d);
    expect_pelab_error(cmd, "outside");
    snprintf(cmd, sizeof cmd, "echo 65 x66 | ./pelab tokenizer decode %s/cli.bpe", d);
    expect_pelab_error(cmd, "token 2");
    snprintf(cmd, sizeof cmd, "echo 65 -1 | ./pelab tokenizer decode %s/cli.bpe", d);
    expect_pelab_error(cmd, "not a non-negative integer");
    expect_pelab_error("./pelab tokenizer frobnicate", "frobnicate");
    expect_pelab_error("./pelab tokenizer", "subcommand");
    snprintf(cmd, sizeof cmd, "printf '72 105\\n10' | ./pelab tokenizer decode %s/cli.bpe", d);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strcmp(out, "Hi\n") == 0, "decode of '72 105 10': exit %d, '%s'", rc, out);
}

void test_bpe(void) {
    test_chunk_rule();
    test_known_merges();
    test_against_naive();
    test_round_trips();
    test_shakespeare();
    test_format();
    test_tokenizer_cli();
}
