/* fuzz_llama2c_tokenizer.c: llama2.c's tokenizer.bin (data/llama2c_tok.c, llama2c_tok_parse), then
 * run.c's encode and decode of a fixed text and of a slice of the input itself, through the
 * tokenizer directly and through data/tokenizer.c (corpus documents, prompts).
 * Checked: a parsed image serializes back to the same bytes; ids stay in the vocabulary and
 * decode; without byte fallback the pieces spell the text (fuzz_check_l2c_encode); a refused image
 * (an empty file included) gives one line naming the file, read as a file of its own too. */
#include <stdint.h>

#include "../../core/error.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Llama2cTok t;
    if (llama2c_tok_parse(&t, data, size, 0, "fuzz-tok") != 0) {
        FUZZ_CHECK(!strncmp(pelab_errmsg, "fuzz-tok: ", 10) && !strchr(pelab_errmsg, '\n'), "a refusal is one line "
                   "naming the file: %s", pelab_errmsg);
        Tokenizer tok;
        FUZZ_CHECK(tokenizer_from_file_image(&tok, "llama2c", data, size, "fuzz-tok", 0) != 0 &&
                       !strncmp(pelab_errmsg, "fuzz-tok: ", 10) && !strchr(pelab_errmsg, '\n'),
                   "as a file: refused in one line naming it: %s", pelab_errmsg);
        return 0;
    }
    unsigned char *img;
    size_t img_len;
    FUZZ_CHECK(llama2c_tok_serialize(&t, &img, &img_len) == 0 && img_len == size && memcmp(img, data, size) == 0,
               "serialize(parse(x)) != x (%zu vs %zu bytes)", img_len, size);
    free(img);
    /* the same image with the vocabulary size a model would demand */
    Llama2cTok again;
    FUZZ_CHECK(llama2c_tok_parse(&again, data, size, t.vocab_size, "fuzz-tok") == 0, "expect_vocab %d refused: %s",
               t.vocab_size, pelab_errmsg);
    llama2c_tok_free(&again);
    FUZZ_CHECK(llama2c_tok_parse(&again, data, size, t.vocab_size + 1, "fuzz-tok") != 0, "wrong vocab accepted");

    const unsigned char *slice = data + size / 2;
    size_t slice_len = size - size / 2 < 256 ? size - size / 2 : 256;
    fuzz_check_l2c_encode(&t, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
    fuzz_check_l2c_encode(&t, slice, slice_len);
    fuzz_check_l2c_encode(&t, slice, 0);
    llama2c_tok_free(&t);

    Tokenizer tok;
    FUZZ_CHECK(tokenizer_from_image(&tok, "llama2c", data, size, "fuzz-tok", 0) == 0, "parses alone, not as a "
               "tokenizer: %s", pelab_errmsg);
    fuzz_check_tokenizer(&tok, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
    fuzz_check_tokenizer(&tok, slice, slice_len);
    tokenizer_free(&tok);
    return 0;
}
