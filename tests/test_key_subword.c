/* test_key_subword.c: key tokens picked by an evaluator with a subword tokenizer (tokenizer.json)
 * for byte-level runs (compare --key-evaluator; infer/keyppl.h key_identify_text). The mapping from
 * key subword tokens to the text's bytes, on TinyLlama's tokenizer (Metaspace, BOS, byte fallback)
 * and SmolLM2's (byte-level BPE): every byte of a key token is key, no other byte; ids that do not
 * give the text back are refused. Then compare end to end with a constructed subword evaluator (a
 * tiny random model carrying TinyLlama's tokenizer): the key-token rows are written (a random
 * evaluator finds no key tokens: the placement is what the mapping checks test). Skipped, with
 * a message, without ../shared/data/hf-tokenizers. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../data/synth.h"
#include "../data/tokenizer.h"
#include "../infer/keyppl.h"
#include "../io/checkpoint.h"
#include "../model/model.h"
#include "test.h"

static int load_tok(Tokenizer *t, const char *family) {
    char path[1024];
    snprintf(path, sizeof path, "%s/hf-tokenizers/%s/tokenizer.json", shared_data_dir(), family);
    return tokenizer_load_file(t, path);
}

/* every third token key: the key bytes are exactly those tokens' pieces */
static void mapping(const char *family) {
    Tokenizer t;
    if (load_tok(&t, family) != 0) {
        CHECK(0, "%s: %s", family, pelab_errmsg);
        return;
    }
    const char *text = "Once upon a time, Lily found 42 red marbles \xc3\xa9t\xc3\xa9 under the old tree.\nThe end.";
    size_t n = strlen(text), n_ids, n_key, want = 0;
    int *ids = tokenizer_encode(&t, (const unsigned char *)text, n, 0, &n_ids);
    unsigned char *kid = calloc(n_ids, 1), *key = calloc(n, 1);
    for (size_t i = 0; i < n_ids; i++) {
        size_t len;
        tokenizer_decode(&t, i ? ids[i - 1] : -1, ids[i], &len);
        kid[i] = i % 3 == 1;
        want += kid[i] ? len : 0;
    }
    int rc = key_bytes_of_tokens(&t, ids, n_ids, kid, (const unsigned char *)text, n, key, &n_key);
    CHECK(rc == 0 && n_key == want && want > 0, "%s: %zu key bytes from every third of %zu tokens (want %zu): %s",
          family, n_key, n_ids, want, rc ? pelab_errmsg : "");
    /* byte by byte: key exactly where a key token's piece lies */
    size_t off = 0, wrong = 0;
    for (size_t i = 0; i < n_ids && rc == 0; i++) {
        size_t len;
        tokenizer_decode(&t, i ? ids[i - 1] : -1, ids[i], &len);
        for (size_t b = off; b < off + len; b++) wrong += key[b] != kid[i];
        off += len;
    }
    CHECK(rc == 0 && off == n && wrong == 0, "%s: each byte key iff its token is (%zu wrong)", family, wrong);
    /* the ids of another text: refused, naming the token */
    CHECK(key_bytes_of_tokens(&t, ids, n_ids, kid, (const unsigned char *)"Twice upon a time", 17, key, &n_key) != 0 &&
              strstr(pelab_errmsg, "does not give back text byte"),
          "%s: ids of another text refused: %s", family, pelab_errmsg);
    free(ids), free(kid), free(key);
    tokenizer_free(&t);
}

/* a tiny random model with TinyLlama's tokenizer as compare's --key-evaluator */
static void compare_end_to_end(void) {
    char ev[512], path[1024], cmd[2048], out[8192];
    snprintf(ev, sizeof ev, "%s/subword-evaluator.safetensors", test_tmpdir());
    snprintf(path, sizeof path, "%s/hf-tokenizers/tinyllama/tokenizer.json", shared_data_dir());
    CkptMeta meta = {0};
    Model m;
    ModelConfig cfg = {.vocab_size = 32000, .dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .hidden_dim = 32,
                       .seq_len = 32, .norm_eps = 1e-5f, .tied = 1};
    if (read_file(path, &meta.tokenizer_image, &meta.tokenizer_len) != 0 || model_create(&m, &cfg, "rope") != 0) {
        CHECK(0, "evaluator: %s", pelab_errmsg);
        return;
    }
    model_init_weights(&m, 3);
    meta_set(&meta, "tokenizer", "hf");
    CHECK(checkpoint_save(ev, &m, &meta, NULL, NULL) == 0, "evaluator saved: %s", pelab_errmsg);
    model_free(&m);
    meta_free(&meta);
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare --schemes rope --seeds 1 --steps 3 --seq-len 8 "
             "--dim 16 --layers 1 --synth-bytes 20000 --mult 1,2 --rules none --finetune-steps 0 --gen-tokens 0 "
             "--eval-tokens 256 --keyppl-tokens 2000 --threads 1 --key-evaluator %s --out %s/cmp-subword", ev,
             test_tmpdir());
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0, "compare with a subword key evaluator runs (exit %d): %s", rc, out);
    snprintf(path, sizeof path, "%s/cmp-subword/runs/rope_s1.csv", test_tmpdir());
    unsigned char *csv;
    size_t len;
    int have = read_file(path, &csv, &len) == 0;
    CHECK(have && strstr((const char *)csv, "\nkeyppl,rope,1,none,8,8,share,") &&
              strstr((const char *)csv, "\nkeyppl,rope,1,none,8,16,all,"),
          "its key-token rows are written (%s)", path);
    if (have) free(csv);
}

void test_key_subword(void) {
    if (!shared_data_dir()) {
        fprintf(stderr, "  test_key_subword: ../shared/data not found: skipped\n");
        return;
    }
    mapping("tinyllama");
    mapping("smollm2");
    compare_end_to_end();
}
