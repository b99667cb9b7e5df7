/* fuzz_llama2c_model.c: llama2.c's legacy model file (io/llama2c.c, llama2c_parse_model), then
 * the export check and a forward pass of every model that loads.
 *
 * Two input forms (every valid file is longer than 64 bytes):
 *   raw     more than 64 bytes: the file itself;
 *   header  64 bytes or fewer: the 28-byte header (zero-padded), the rest a pattern that fills the
 *           float data to exactly the size the header asks for (zeros without a pattern), when
 *           that is at most 1 MB. So mutations reach model_create with any shape the size check
 *           lets through, instead of dying at the length check. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../io/llama2c.h"
#include "fuzz_common.h"

enum { HEADER = 28, MAX_HEADER_INPUT = 64, MAX_SYNTH = 1 << 20 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

/* bytes the file must have for this header (llama2c.h's layout), 0 when out of range */
static size_t exact_size(const int32_t *h) {
    for (int i = 0; i < 7; i++) {
        long long v = i == 5 && h[i] < 0 ? -(long long)h[i] : h[i]; /* negative vocab: unshared classifier */
        if (v <= 0 || v > (1 << 20)) return 0;
    }
    if (h[0] % h[3] || (h[0] / h[3]) % 2 || h[3] % h[4] || h[4] > h[3]) return 0;
    double D = h[0], F = h[1], L = h[2], V = h[5] < 0 ? -(double)h[5] : h[5], hd = (double)h[0] / h[3];
    double kv = h[4] * hd, S = h[6];
    double floats = V * D + L * D + L * (D * D + 2 * kv * D + D * D) + L * D + 3 * L * F * D + D + S * hd +
                    (h[5] < 0 ? V * D : 0);
    double bytes = HEADER + 4 * floats;
    return bytes <= MAX_SYNTH ? (size_t)bytes : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const unsigned char *file = data;
    unsigned char *built = NULL;
    size_t len = size;
    if (size <= MAX_HEADER_INPUT) {
        int32_t h[7] = {0};
        memcpy(h, data, size < HEADER ? size : HEADER);
        size_t want = exact_size(h);
        len = want ? want : HEADER;
        built = calloc(len, 1);
        memcpy(built, h, HEADER);
        size_t plen = size > HEADER ? size - HEADER : 0, have = plen < len - HEADER ? plen : len - HEADER;
        memcpy(built + HEADER, data + HEADER, have);
        for (; have && HEADER + have < len; have *= 2) /* repeat the pattern by doubling */
            memcpy(built + HEADER + have, built + HEADER, have < len - HEADER - have ? have : len - HEADER - have);
        file = built;
    }
    Model m;
    if (llama2c_parse_model(file, len, "fuzz-llama2c", &m) == 0) {
        FUZZ_CHECK(m.cfg.vocab_size >= 1 && m.n_params * 4 < len, "a model bigger than its file");
        char spec[512];
        pos_spec(&m.pos, spec, sizeof spec);
        FUZZ_CHECK(strncmp(spec, "rope:", 5) == 0, "llama2.c models are rope, got %s", spec);
        FUZZ_CHECK(llama2c_check_exportable(&m, "fuzz-llama2c") == 0, "an imported model is not exportable: %s",
                   pelab_errmsg);
        (void)fuzz_forward(&m, (unsigned)len);
        model_free(&m);
    }
    free(built);
    return 0;
}
