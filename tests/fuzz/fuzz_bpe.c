/* fuzz_bpe.c: pelab's BPE tokenizer file (data/bpe.c, bpe_parse), and encode/decode round trips
 * of fuzzed text, which byte-level BPE must reproduce exactly.
 *
 * Input: a BPE file, then text. The file's length comes from its own header (16 + 8 x n_merges,
 * cut at the input's end), so mutations of the merges and of the text both survive. The text is
 * encoded with the parsed tokenizer when it loads, always with a fixed tokenizer trained at start
 * on the built-in corpus, and, when short, with a tokenizer trained on the text itself (whose
 * file must parse back to the same merges). */
#include <stdint.h>

#include "../../core/error.h"
#include "../../data/synth.h"
#include "fuzz_common.h"

static Bpe fixed;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    char *text;
    if (synth_generate("stories", 1, 30000, &text) != 0 || bpe_train(&fixed, (unsigned char *)text, 30000, 600) != 0) {
        fprintf(stderr, "fuzz_bpe: cannot build the fixed tokenizer: %s\n", pelab_errmsg);
        exit(1);
    }
    free(text);
    return 0;
}

/* serialize(parse(x)) == x, and the parsed tokenizer round-trips text */
static void check_file(const Bpe *b, const unsigned char *file, size_t n) {
    unsigned char *img;
    size_t len;
    FUZZ_CHECK(bpe_serialize(b, &img, &len) == 0 && len == n && memcmp(img, file, n) == 0,
               "serialize(parse(x)) != x (%zu vs %zu bytes)", len, n);
    free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t file_len = size;
    if (size >= 16) {
        uint32_t n_merges = (uint32_t)data[12] | (uint32_t)data[13] << 8 | (uint32_t)data[14] << 16 |
                            (uint32_t)data[15] << 24;
        size_t want = 16 + 8 * (size_t)n_merges;
        if (want < size) file_len = want;
    }
    const unsigned char *text = data + file_len;
    size_t n = size - file_len;

    Bpe b;
    if (bpe_parse(&b, data, file_len, "fuzz-bpe") == 0) {
        check_file(&b, data, file_len);
        fuzz_check_bpe_roundtrip(&b, text, n);
        fuzz_check_bpe_roundtrip(&b, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
        Tokenizer tok;
        FUZZ_CHECK(tokenizer_from_image(&tok, "bpe", data, file_len, "fuzz-bpe", 0) == 0, "parses alone, not as a "
                   "tokenizer: %s", pelab_errmsg);
        fuzz_check_tokenizer(&tok, text, n);
        tokenizer_free(&tok);
        bpe_free(&b);
    }
    /* the text alone, as arbitrary bytes, whatever the file was */
    fuzz_check_bpe_roundtrip(&fixed, data, size);
    if (size <= 512) {
        for (size_t s = 0; s < size;) {
            size_t e = bpe_chunk_end(data, size, s);
            FUZZ_CHECK(e > s && e - s <= BPE_MAX_CHUNK && e <= size, "chunk [%zu, %zu) of %zu bytes", s, e, size);
            s = e;
        }
        Bpe own;
        if (bpe_train(&own, data, size, 256 + 24) == 0) {
            fuzz_check_bpe_roundtrip(&own, data, size);
            unsigned char *img;
            size_t len;
            FUZZ_CHECK(bpe_serialize(&own, &img, &len) == 0, "serialize: %s", pelab_errmsg);
            Bpe back;
            FUZZ_CHECK(bpe_parse(&back, img, len, "fuzz-bpe-trained") == 0, "a trained tokenizer does not load: %s",
                       pelab_errmsg);
            check_file(&back, img, len);
            free(img);
            bpe_free(&back);
            bpe_free(&own);
        }
    }
    return 0;
}
