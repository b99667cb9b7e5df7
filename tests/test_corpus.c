/* test_corpus.c: the corpora shipped in data/corpora. SHA-256 against FIPS 180-2's examples (one
 * block, the two-block padding, a million bytes); the shipped tinyshakespeare reads and checks; a
 * copy with one byte changed or cut short is a one-line error naming the file and the expected
 * checksum, from the library and from `pelab train` and `pelab suite` (before anything trains);
 * only a path ending in corpora/FILE is checked; `suite` names its corpus in suite.md's headline,
 * in the claims' table and in claims.csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/hash.h"
#include "../data/corpus.h"
#include "../data/dataset.h"
#include "test.h"

static void sha256_vectors(void) {
    char hex[65];
    sha256_hex("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, "SHA-256 of '': %s", hex);
    sha256_hex("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "SHA-256 of 'abc': %s", hex);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56 bytes: the length spills */
    sha256_hex(two, strlen(two), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0, "SHA-256 of 56 bytes: %s",
          hex);
    enum { MILLION = 1000000 };
    char *a = malloc(MILLION);
    CHECK(a != NULL, "malloc");
    if (!a) return;
    memset(a, 'a', MILLION);
    sha256_hex(a, MILLION, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
          "SHA-256 of a million 'a': %s", hex);
    free(a);
}

/* DIR/corpora/tinyshakespeare.txt: the shipped text, one byte changed (flip >= 0) or cut to keep bytes */
static int write_copy(const char *dir, const unsigned char *text, size_t n, long flip, size_t keep, char *path,
                      size_t cap) {
    snprintf(path, cap, "%s/corpora", dir);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, cap, "%s/corpora/tinyshakespeare.txt", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t len = keep < n ? keep : n;
    for (size_t i = 0; i < len; i++) fputc(i == (size_t)flip ? text[i] ^ 0x20 : text[i], f);
    return fclose(f);
}

static void shipped_checks(void) {
    const ShippedCorpus *c = corpus_shipped(CORPUS_DIR "/tinyshakespeare.txt");
    CHECK(c && strcmp(c->name, "tinyshakespeare") == 0 && c == &shipped_corpora[0], "the shipped path is recognised");
    CHECK(corpus_shipped("/abs/clone/data/corpora/tinyshakespeare.txt") == c && corpus_shipped("corpora/tinyshakespeare.txt") == c,
          "from any directory");
    CHECK(!corpus_shipped("tinyshakespeare.txt") && !corpus_shipped("x/mycorpora/tinyshakespeare.txt") &&
              !corpus_shipped("data/corpora/other.txt") && !corpus_shipped("../shared/data/tinyshakespeare/input.txt"),
          "other paths are not checked");
    unsigned char *text;
    size_t n;
    int rc = corpus_read_file(CORPUS_DIR "/tinyshakespeare.txt", &text, &n);
    CHECK(rc == 0 && n == 1115394, "the shipped tinyshakespeare reads and matches its checksum (%zu bytes): %s", n,
          rc ? pelab_errmsg : "");
    if (rc != 0) return;
    CHECK(memcmp(text, "First Citizen:", 14) == 0, "it is tinyshakespeare");
    const char *dir = test_tmpdir();
    char good[512], bad[512], cut[512], cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/corpus-good", dir);
    CHECK(write_copy(cmd, text, n, -1, n, good, sizeof good) == 0, "write %s", good);
    snprintf(cmd, sizeof cmd, "%s/corpus-flip", dir);
    CHECK(write_copy(cmd, text, n, 500000, n, bad, sizeof bad) == 0, "write %s", bad);
    snprintf(cmd, sizeof cmd, "%s/corpus-cut", dir);
    CHECK(write_copy(cmd, text, n, -1, n / 2, cut, sizeof cut) == 0, "write %s", cut);
    free(text);
    text = NULL;
    CHECK(corpus_read_file(good, &text, &n) == 0, "an exact copy elsewhere passes: %s", pelab_errmsg);
    free(text);
    text = NULL;
    CHECK(corpus_read_file(bad, &text, &n) == -1 && !text && strstr(pelab_errmsg, bad) &&
              strstr(pelab_errmsg, c->sha256) && strstr(pelab_errmsg, "damaged or truncated") && !strchr(pelab_errmsg, '\n'),
          "one byte changed: one line naming the file and the expected SHA-256: %s", pelab_errmsg);
    CHECK(corpus_read_file(cut, &text, &n) == -1 && strstr(pelab_errmsg, cut) && strstr(pelab_errmsg, "557697 bytes") &&
              strstr(pelab_errmsg, "expected 1115394 bytes"),
          "truncated: the sizes said: %s", pelab_errmsg);
    Dataset d;
    CHECK(dataset_load(&d, bad, 0.1, 1, 0, 16) == -1 && strstr(pelab_errmsg, c->sha256), "dataset_load checks it: %s",
          pelab_errmsg);
    /* the commands: one line, nothing trained */
    snprintf(cmd, sizeof cmd, "./pelab train --data %s --steps 1 --dim 16 --layers 1 --heads 2 --seq-len 8 --out %s/x.safetensors",
             bad, dir);
    expect_pelab_error(cmd, c->sha256);
    snprintf(cmd, sizeof cmd, "./pelab suite quick --protocols lm --seeds 2 --steps 1 --data %s --dir %s/suite-bad", cut, dir);
    expect_pelab_error(cmd, "expected 1115394 bytes");
    snprintf(cmd, sizeof cmd, "%s/suite-bad", dir);
    struct stat st;
    CHECK(stat(cmd, &st) != 0, "suite refused the corpus before making its directory");
}

/* a file's text (read_file ends it with a NUL), the previous one freed; NULL when it does not read
 * (and for path NULL) */
static const char *text_of(const char *path) {
    static unsigned char *buf;
    size_t n;
    free(buf);
    if (!path || read_file(path, &buf, &n) != 0) buf = NULL;
    return (const char *)buf;
}

/* suite --collect over no runs still writes its report: which corpus it names, default and --data */
static void suite_names_corpus(void) {
    const char *dir = test_tmpdir();
    static char out[1 << 15];
    char cmd[2048], path[600];
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab suite quick --protocols lm --collect --seeds 2 --dir %s/suite-corpus",
             dir);
    int rc = run_pelab(cmd, out, sizeof out);
    snprintf(path, sizeof path, "%s/suite-corpus/suite.md", dir);
    const char *rep = text_of(path);
    CHECK(rc == 0 && rep && strstr(rep, "Corpus of the language-modelling protocols (lm, sinks, patterns): `" CORPUS_DIR
                                        "/tinyshakespeare.txt`: tinyshakespeare, shipped in " CORPUS_DIR),
          "suite.md's headline names the shipped corpus (exit %d): %.600s", rc, rep ? rep : out);
    CHECK(rep && strstr(rep, "| claim | paper | statement | test | data | verdict | figures |") &&
              strstr(rep, "| lm at 4L: rope degrades:0.5 | tinyshakespeare (shipped) | **inconclusive** |") &&
              strstr(rep, "| synthetic task examples |"),
          "the claims' table names each claim's data");
    CHECK(rep && strstr(rep, "\nData: `" CORPUS_DIR "/tinyshakespeare.txt`"), "the lm section names it");
    snprintf(path, sizeof path, "%s/suite-corpus/claims.csv", dir);
    const char *csv = text_of(path);
    CHECK(csv && strstr(csv, ",figures,data\n") && strstr(csv, ",tinyshakespeare (shipped)\n"),
          "claims.csv has the data column");
    snprintf(cmd, sizeof cmd,
             "PELAB_NO_GNUPLOT=1 ./pelab suite quick --protocols lm --collect --seeds 2 --data synth:stories --dir %s/suite-corpus",
             dir);
    rc = run_pelab(cmd, out, sizeof out);
    snprintf(path, sizeof path, "%s/suite-corpus/suite.md", dir);
    rep = text_of(path);
    CHECK(rc == 0 && rep && strstr(rep, "`synth:stories`, by --data (**not the shipped tinyshakespeare") &&
              strstr(rep, "| synth:stories (--data) |"),
          "another corpus is named as not the shipped one: %.600s", rep ? rep : out);
    text_of(NULL); /* frees the last */
}

void test_corpus(void) {
    sha256_vectors();
    shipped_checks();
    suite_names_corpus();
}
