/* fuzz_checkpoint.c: safetensors checkpoints (io/checkpoint.c, checkpoint_parse), the tokenizer
 * stored inside them, and a forward pass of every model that loads.
 *
 * Two input forms, so that mutations are not wasted on float data:
 *   raw     bytes 4..7 are zero (a header length below 4 GB: every real checkpoint): the file itself;
 *   header  anything else: JSON header text, optionally a NUL and a tail. The harness builds the file:
 *           the 8-byte length, the header, and a data section of zeros as long as the largest
 *           data_offsets end in the header (at most 1 MB), with the tail copied to its end (where
 *           pelab writes the tokenizer tensor).
 * The same file is also written to disk and loaded the way the commands load it (the header read
 * alone, then each tensor straight from the file; and bf16-only under --precision bf16): the file
 * path must accept exactly what the in-memory parser accepts. A file that loads also has its training
 * state read as `train --resume` reads it (checkpoint_train_state). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../core/error.h"
#include "../../io/checkpoint.h"
#include "../../core/json.h"
#include "fuzz_common.h"

enum { MAX_SYNTH_DATA = 1 << 20 };

static char disk_path[64]; /* where each input is written for the file loaders */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    snprintf(disk_path, sizeof disk_path, "/tmp/fuzz_checkpoint_%ld.safetensors", (long)getpid());
    return 0;
}

/* the file loaders on the same bytes: they agree with checkpoint_parse (parsed_ok) */
static void load_from_disk(const unsigned char *file, size_t len, int parsed_ok) {
    FILE *f = fopen(disk_path, "wb");
    if (!f) return;
    size_t put = fwrite(file, 1, len, f);
    if (fclose(f) != 0 || put != len) return;
    Model m;
    CkptMeta meta;
    float *adam_m, *adam_v;
    int ok = checkpoint_load(disk_path, &m, &meta, &adam_m, &adam_v) == 0;
    FUZZ_CHECK(ok == parsed_ok, "checkpoint_load %s what checkpoint_parse %s: %s", ok ? "accepts" : "refuses",
               parsed_ok ? "accepts" : "refuses", pelab_errmsg);
    if (ok) {
        free(adam_m), free(adam_v);
        meta_free(&meta);
        model_free(&m);
    }
    if (checkpoint_load_precision(disk_path, &m, NULL, PRECISION_BF16) == 0) {
        (void)fuzz_forward(&m, 3);
        model_free(&m);
    }
    remove(disk_path);
}

/* the data section length a header asks for: the largest data_offsets end, 0 if none or absurd */
static size_t wanted_data_len(const unsigned char *hdr, size_t n) {
    JsonDoc doc;
    if (json_parse(&doc, (const char *)hdr, n) != 0) return 0;
    long long end = 0;
    if (doc.root->type == JSON_OBJECT)
        for (const JsonNode *c = doc.root->child; c; c = c->next) {
            const JsonNode *offs = json_get(c, "data_offsets"), *e = json_at(offs, 1);
            if (offs && offs->type == JSON_ARRAY && e && e->type == JSON_NUMBER && e->is_int && e->int_value > end)
                end = e->int_value;
        }
    json_free(&doc);
    return end <= MAX_SYNTH_DATA ? (size_t)end : 0;
}

/* the training state `train --resume` reads: in range when it reads, else one line */
static void check_train_state(const CkptMeta *meta) {
    CkptTrainState st;
    if (checkpoint_train_state(meta, "fuzz-checkpoint", &st) == 0) {
        FUZZ_CHECK(st.step >= 1 && st.data_rng != 0 && st.curve_loss_n >= 0 && st.curve_loss_n <= st.step &&
                       st.curve_loss_sum >= 0 && (st.cooldown_start < 0 || (st.cooldown_start <= st.step &&
                                                                            st.cooldown_end >= st.cooldown_start)),
                   "training state out of range: step %ld, curve_loss_n %ld, cooldown %ld..%ld", st.step,
                   st.curve_loss_n, st.cooldown_start, st.cooldown_end);
    } else
        FUZZ_CHECK(!strchr(pelab_errmsg, '\n') && strstr(pelab_errmsg, "fuzz-checkpoint: metadata "),
                   "a refused training state: one line naming the file and the entry: %s", pelab_errmsg);
}

static void use_model(Model *m, CkptMeta *meta) {
    check_train_state(meta);
    Tokenizer tok;
    if (tokenizer_from_image(&tok, meta_get(meta, "tokenizer"), meta->tokenizer_image, meta->tokenizer_len,
                             "fuzz-checkpoint", m->cfg.vocab_size) == 0) {
        FUZZ_CHECK(tok.vocab_size <= m->cfg.vocab_size, "tokenizer vocabulary %d > model %d", tok.vocab_size,
                   m->cfg.vocab_size);
        fuzz_check_tokenizer(&tok, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
        if (tok.kind == TOK_BPE) fuzz_check_bpe_roundtrip(&tok.bpe, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
        if (tok.kind == TOK_LLAMA2C) fuzz_check_l2c_encode(&tok.l2c, (const unsigned char *)FUZZ_TEXT, sizeof FUZZ_TEXT - 1);
        tokenizer_free(&tok);
    }
    char spec[1024], lengths[256];
    pos_spec(&m->pos, spec, sizeof spec);
    pos_lengths(&m->pos, lengths, sizeof lengths);
    (void)fuzz_forward(m, (unsigned)m->n_params);
    /* what --scale does to a loaded model: re-create its scheme from the stored spec plus a rule */
    if (pos_set_scale(&m->pos, "yarn:4") == 0) (void)fuzz_forward(m, 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const unsigned char *file = data;
    unsigned char *built = NULL;
    size_t len = size;
    int raw = size >= 8 && !data[4] && !data[5] && !data[6] && !data[7];
    if (!raw) {
        const unsigned char *nul = memchr(data, 0, size);
        size_t hlen = nul ? (size_t)(nul - data) : size, tail_len = nul ? size - hlen - 1 : 0;
        size_t dlen = wanted_data_len(data, hlen);
        len = 8 + hlen + dlen;
        built = calloc(len, 1);
        for (int i = 0; i < 8; i++) built[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
        memcpy(built + 8, data, hlen);
        size_t t = tail_len < dlen ? tail_len : dlen;
        if (t) memcpy(built + len - t, nul + 1, t);
        file = built;
    }
    Model m;
    CkptMeta meta;
    float *adam_m, *adam_v;
    int parsed_ok = checkpoint_parse(file, len, "fuzz-checkpoint", &m, &meta, &adam_m, &adam_v) == 0;
    if (parsed_ok) {
        FUZZ_CHECK((adam_m == NULL) == (adam_v == NULL), "one optimizer moment without the other");
        use_model(&m, &meta);
        free(adam_m), free(adam_v);
        meta_free(&meta);
        model_free(&m);
        /* the callers that want neither metadata nor moments (no leak of what is skipped) */
        FUZZ_CHECK(checkpoint_parse(file, len, "fuzz-checkpoint", &m, NULL, NULL, NULL) == 0,
                   "loads with metadata, fails without: %s", pelab_errmsg);
        model_free(&m);
    }
    load_from_disk(file, len, parsed_ok);
    free(built);
    return 0;
}
