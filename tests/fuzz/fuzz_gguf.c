/* fuzz_gguf.c: GGUF files (io/gguf.c's gguf_parse, io/gguf_llama.c's gguf_llama_parse): the input
 * is the file. Beyond "no sanitizer report":
 *   a file that parses keeps every tensor inside the image and its byte count consistent with its
 *   type and shape; every typed read of every key answers 1, 0 or -1 with one line; every string
 *   array's strings lie inside the image; every tensor decodes to float32;
 *   a model that loads is one its file can hold, is exportable again (what pelab computes is what
 *   llama.cpp reads), runs a forward pass, and its tokenizer builds and encodes and decodes a text;
 *   a refusal is one line naming the file. */
#include <stddef.h>
#include <stdint.h>

#include "../../core/error.h"
#include "../../io/gguf.h"
#include "../../io/gguf_llama.h"
#include "../../io/gguf_quant.h"
#include "fuzz_common.h"

#define NAME "fuzz.gguf"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

static void one_line_naming_the_file(void) {
    FUZZ_CHECK(strstr(pelab_errmsg, NAME) && !strchr(pelab_errmsg, '\n'), "a refusal: %s", pelab_errmsg);
}

static void check_format(const uint8_t *data, size_t size) {
    GgufFile g;
    if (gguf_parse(&g, data, size, NAME) != 0) {
        one_line_naming_the_file();
        return;
    }
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const GgufTensor *t = &g.tensors[i];
        FUZZ_CHECK(t->data >= data && t->n_bytes <= size && t->data - data <= (ptrdiff_t)(size - t->n_bytes),
                   "tensor %s outside the image", t->name);
        FUZZ_CHECK(t->n_bytes == t->numel / (uint64_t)ggml_block_size(t->type) * (uint64_t)ggml_block_bytes(t->type),
                   "tensor %s: %llu bytes for %llu elements of %s", t->name, (unsigned long long)t->n_bytes,
                   (unsigned long long)t->numel, ggml_type_name(t->type));
        if (t->numel <= 4096) { /* decodes (bounded: the harness's own memory) */
            float out[4096];
            ggml_decode(t->type, t->data, (size_t)t->numel, out);
        }
    }
    for (uint64_t i = 0; i < g.n_kv; i++) {
        const GgufKv *kv = &g.kv[i];
        uint32_t u;
        float f;
        int b;
        const unsigned char *s;
        size_t n;
        int rc[4] = {gguf_get_u32(&g, kv->key, &u), gguf_get_f32(&g, kv->key, &f), gguf_get_bool(&g, kv->key, &b),
                     gguf_get_str(&g, kv->key, &s, &n)};
        for (int k = 0; k < 4; k++) {
            FUZZ_CHECK(rc[k] >= -1 && rc[k] <= 1, "typed read %d of %s: %d", k, kv->key, rc[k]);
            if (rc[k] < 0) one_line_naming_the_file();
        }
        if (kv->type == GGUF_ARRAY && kv->elem_type == GGUF_STRING && kv->count <= 65536) {
            const unsigned char **p = malloc(sizeof *p * (size_t)(kv->count + 1));
            size_t *len = malloc(sizeof *len * (size_t)(kv->count + 1));
            gguf_array_strings(kv, p, len);
            for (uint64_t j = 0; j < kv->count; j++)
                FUZZ_CHECK(p[j] >= data && len[j] <= size && p[j] - data <= (ptrdiff_t)(size - len[j]),
                           "%s[%llu] outside the image", kv->key, (unsigned long long)j);
            free(p), free(len);
        }
    }
    gguf_free(&g);
}

/* the same image read into a model held in bf16 alone: read too, every weight the float32 one rounded */
static void same_in_bf16(const uint8_t *data, size_t size, const Model *m) {
    Model b;
    GgufTokImage tok;
    FUZZ_CHECK(gguf_llama_parse(data, size, NAME, PRECISION_BF16, &b, &tok) == 0, "read as float32 but not as bf16: %s",
               pelab_errmsg);
    FUZZ_CHECK(b.bf16_only && b.n_params == m->n_params, "a bf16 read is not a bf16-only model of the same size");
    for (size_t i = 0; i < m->n_params; i++)
        FUZZ_CHECK(b.params_bf16[i] == bf16_from_float(m->params_mem[i]), "parameter %zu: bf16 %#x, float32 %g", i,
                   (unsigned)b.params_bf16[i], m->params_mem[i]);
    free(tok.image);
    model_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_format(data, size);
    Model m;
    GgufTokImage tok;
    if (gguf_llama_parse(data, size, NAME, PRECISION_FP32, &m, &tok) != 0) {
        one_line_naming_the_file();
        return 0;
    }
    same_in_bf16(data, size, &m);
    FUZZ_CHECK((double)m.n_params * ggml_min_bytes_per_weight() <= (double)size, "%zu parameters from %zu bytes",
               m.n_params, size);
    FUZZ_CHECK(gguf_check_exportable(&m, NAME) == 0, "an imported model is not exportable: %s", pelab_errmsg);
    Tokenizer t;
    FUZZ_CHECK(tokenizer_from_image(&t, tok.kind, tok.image, tok.len, NAME, m.cfg.vocab_size) == 0 || !tok.kind,
               "the imported tokenizer does not load: %s", pelab_errmsg);
    if (tok.kind) {
        fuzz_check_tokenizer(&t, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
        tokenizer_free(&t);
    }
    (void)fuzz_forward(&m, (unsigned)size);
    free(tok.image);
    model_free(&m);
    return 0;
}
