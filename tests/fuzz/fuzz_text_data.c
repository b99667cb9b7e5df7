/* fuzz_text_data.c: how a --data text becomes tokens and batches (data/dataset.c dataset_from_bytes,
 * the path of dataset_load_with after the file is read; data/tokenizer.c's corpus and prompt
 * encodings), with the byte tokenizer, a BPE and a llama2.c tokenizer.
 *
 * Input: byte 0 the window (1..64 tokens), byte 1 the validation fraction (/255: 0 and 1 are
 * refused), byte 2 the tokenizer (byte, bpe, llama2c), then the text. For every data set that
 * loads: tokens in the vocabulary, the split as promised, every training batch and validation
 * window inside the stream with targets = inputs shifted by one. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../data/dataset.h"
#include "../../data/synth.h"
#include "fuzz_common.h"

static Tokenizer toks[3];
static FILE *devnull;

/* a small llama2.c vocabulary: <unk>, BOS, EOS, the 256 byte tokens, printable ASCII, some merges */
static void build_l2c_image(unsigned char **img, size_t *len) {
    static const char *const merges[] = {" t", "th", "he", " the", "an", "in", " a", "nd", " and", "on", "er",
                                         "re", "ou", "ing", " was", " upon", "Once", " time", "ll", " Lily", "ed"};
    char piece[16];
    size_t cap = 8192, n = 4;
    unsigned char *b = malloc(cap);
    int32_t max_len = 16;
    memcpy(b, &max_len, 4);
    int total = 3 + 256 + 95 + (int)(sizeof merges / sizeof merges[0]);
    for (int id = 0; id < total; id++) {
        float score = -(float)id;
        if (id == 0) snprintf(piece, sizeof piece, "<unk>");
        else if (id == 1) snprintf(piece, sizeof piece, "\n<s>\n");
        else if (id == 2) snprintf(piece, sizeof piece, "\n</s>\n");
        else if (id < 259) snprintf(piece, sizeof piece, "<0x%02X>", id - 3), score = 0;
        else if (id < 259 + 95) snprintf(piece, sizeof piece, "%c", ' ' + (id - 259));
        else snprintf(piece, sizeof piece, "%s", merges[id - 259 - 95]);
        int32_t plen = (int32_t)strlen(piece);
        memcpy(b + n, &score, 4);
        memcpy(b + n + 4, &plen, 4);
        memcpy(b + n + 8, piece, (size_t)plen);
        n += 8 + (size_t)plen;
    }
    *img = b, *len = n;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    devnull = fopen("/dev/null", "w");
    tokenizer_init_byte(&toks[0]);
    char *text;
    Bpe b;
    unsigned char *img, *l2c;
    size_t img_len, l2c_len;
    build_l2c_image(&l2c, &l2c_len);
    if (!devnull || synth_generate("stories", 2, 20000, &text) != 0 ||
        bpe_train(&b, (unsigned char *)text, 20000, 400) != 0 || bpe_serialize(&b, &img, &img_len) != 0 ||
        tokenizer_from_image(&toks[1], "bpe", img, img_len, "fuzz-bpe", 0) != 0 ||
        tokenizer_from_image(&toks[2], "llama2c", l2c, l2c_len, "fuzz-l2c", 0) != 0) {
        fprintf(stderr, "fuzz_text_data: cannot build the tokenizers: %s\n", pelab_errmsg);
        exit(1);
    }
    free(text), free(img), free(l2c);
    bpe_free(&b);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    int window = 1 + data[0] % 64;
    double val_frac = data[1] / 255.0;
    const Tokenizer *tok = &toks[data[2] % 3];
    const unsigned char *text = data + 3;
    size_t n = size - 3;

    fuzz_check_tokenizer(tok, text, n);
    Dataset d;
    if (dataset_from_bytes(&d, "fuzz-text", text, n, data[2] % 3 ? tok : NULL, val_frac, window) != 0) return 0;
    FUZZ_CHECK(d.vocab_size == tok->vocab_size, "vocab %d vs %d", d.vocab_size, tok->vocab_size);
    FUZZ_CHECK(d.n <= n + 2 && d.n_train < d.n && d.n_train > (size_t)window &&
                   d.n - d.n_train > (size_t)window,
               "split %zu / %zu for windows of %d", d.n_train, d.n, window);
    for (size_t i = 0; i < d.n; i++)
        FUZZ_CHECK(d.tokens[i] >= 0 && d.tokens[i] < d.vocab_size, "token %zu = %d", i, d.tokens[i]);
    for (size_t i = 0; i < d.n && i < 64; i++) tokenizer_print(tok, i ? d.tokens[i - 1] : -1, d.tokens[i], devnull);

    enum { B = 3 };
    int in[B * 64], tg[B * 64];
    Rng rng;
    rng_seed(&rng, size);
    for (int step = 0; step < 4; step++) {
        dataset_train_batch(&d, &rng, B, window, in, tg);
        for (int i = 0; i < B * window; i++) {
            FUZZ_CHECK(in[i] >= 0 && in[i] < d.vocab_size && tg[i] >= 0 && tg[i] < d.vocab_size, "batch token");
            if (i % window) FUZZ_CHECK(in[i] == tg[i - 1], "targets are not the inputs shifted");
        }
    }
    size_t nw = dataset_val_windows(&d, window);
    FUZZ_CHECK(nw >= 1, "no validation window");
    for (size_t w = 0; w < nw; w++) {
        dataset_val_window(&d, w, window, in, tg);
        /* window w reads tokens [s, s + window] with s = n_train + w * window */
        FUZZ_CHECK(d.n_train + (w + 1) * (size_t)window < d.n, "validation window %zu past the stream", w);
        for (int t = 1; t < window; t++) FUZZ_CHECK(in[t] == tg[t - 1], "validation targets");
    }
    dataset_free(&d);
    return 0;
}
