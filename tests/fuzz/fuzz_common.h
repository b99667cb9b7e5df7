/* fuzz_common.h: helpers shared by the libFuzzer harnesses (tests/fuzz/README.md).
 * Header-only so that each harness stays one C file plus the library objects. */
#ifndef PELAB_FUZZ_COMMON_H
#define PELAB_FUZZ_COMMON_H

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/blas.h"
#include "../../data/tokenizer.h"
#include "../../model/model.h"

/* A property the harness checks failed: print what and abort, so libFuzzer records a crash. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* One thread everywhere: deterministic, cheap to start, and one core per fuzzer in CI. */
static inline void fuzz_single_thread(void) {
    omp_set_num_threads(1);
    blas_set_threads(1); /* -1 only with Accelerate, whose threads cannot be set */
}

/* A loaded model must be usable: one forward pass with targets over the first few positions
 * (tokens and positions derived from seed). Returns model_forward's status; the model keeps its
 * training buffers until model_free. */
static inline int fuzz_forward(Model *m, unsigned seed) {
    enum { MAX_T = 6 };
    int T = m->cfg.seq_len < MAX_T ? m->cfg.seq_len : MAX_T;
    int in[MAX_T], tg[MAX_T], pos[MAX_T];
    for (int t = 0; t < T; t++) {
        in[t] = (int)((seed + 7u * (unsigned)t) % (unsigned)m->cfg.vocab_size);
        tg[t] = (int)((seed + 7u * (unsigned)t + 1u) % (unsigned)m->cfg.vocab_size);
        pos[t] = t;
    }
    model_alloc_train(m, 1, T);
    return model_forward(m, in, tg, pos, 1, T);
}

static inline unsigned fuzz_hash(const unsigned char *p, size_t n) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

/* A text with ASCII words, blank-line separated documents, digits, punctuation and UTF-8 (2-, 3-
 * and 4-byte code points), for encode/decode round trips. */
static const char FUZZ_TEXT[] = "Once upon a time, there was a little girl named Lily.\n\nShe liked to play "
                                "outside  in the sun!\t123 + 4.5 = x\n caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 end\n";

/* pelab's BPE promises decode(encode(x)) == x for every byte string: check it, and that every id
 * is in the vocabulary and no more ids than bytes come out. */
static inline void fuzz_check_bpe_roundtrip(const Bpe *b, const unsigned char *text, size_t n) {
    int *ids = malloc(sizeof(int) * (n ? n : 1));
    size_t k = bpe_encode(b, text, n, ids), at = 0;
    FUZZ_CHECK(k <= n, "%zu ids for %zu bytes", k, n);
    for (size_t i = 0; i < k; i++) {
        size_t len;
        const unsigned char *p = bpe_piece(b, ids[i], &len);
        FUZZ_CHECK(p != NULL, "id %d outside the vocabulary %d", ids[i], b->vocab_size);
        FUZZ_CHECK(len >= 1 && len <= BPE_MAX_CHUNK && at + len <= n && memcmp(p, text + at, len) == 0,
                   "id %zu (%d) does not decode to bytes %zu.. of the text", i, ids[i], at);
        at += len;
    }
    FUZZ_CHECK(at == n, "decoded %zu of %zu bytes", at, n);
    free(ids);
}

/* llama2.c's encode (run.c): BOS first, ids in range, every id decodes. When the dummy space and
 * every code point are pieces, no byte fallback happens and merges only concatenate pieces, so
 * the raw pieces after BOS must spell " " + text exactly. */
static inline void fuzz_check_l2c_encode(const Llama2cTok *t, const unsigned char *text, size_t n) {
    int *ids = malloc(sizeof(int) * (n + 2));
    size_t k = llama2c_tok_encode(t, text, n, ids);
    FUZZ_CHECK(k >= 1 && k <= n + 2 && ids[0] == LLAMA2C_BOS, "%zu ids for %zu bytes, first %d", k, n, ids[0]);
    int prev = -1;
    for (size_t i = 0; i < k; i++) {
        size_t len;
        FUZZ_CHECK(ids[i] >= 0 && ids[i] < t->vocab_size, "id %d outside the vocabulary %d", ids[i], t->vocab_size);
        const unsigned char *p = llama2c_tok_decode(t, prev, ids[i], &len);
        FUZZ_CHECK(p != NULL && len <= (size_t)t->max_token_length, "id %d does not decode", ids[i]);
        (void)llama2c_tok_printable(p, len);
        prev = ids[i];
    }
    int exact = n > 0 && llama2c_tok_lookup(t, (const unsigned char *)" ", 1) >= 0;
    for (size_t i = 0; exact && i < n;) { /* run.c's code-point grouping */
        size_t c = 1;
        while (i + c < n && (text[i + c] & 0xC0) == 0x80 && c < 4) c++;
        exact = llama2c_tok_lookup(t, text + i, c) >= 0;
        i += c;
    }
    if (exact) {
        size_t at = 0;
        for (size_t i = 1; i < k; i++) {
            size_t len = (size_t)t->piece_len[ids[i]];
            FUZZ_CHECK(at + len <= n + 1, "pieces run past the text");
            for (size_t j = 0; j < len; j++) { /* byte 0 of " " + text is the dummy space */
                unsigned char w = at + j == 0 ? ' ' : text[at + j - 1];
                FUZZ_CHECK(t->piece[ids[i]][j] == w, "id %zu (%d) differs from the text at byte %zu", i, ids[i],
                           at + j);
            }
            at += len;
        }
        FUZZ_CHECK(at == n + 1, "pieces spell %zu of %zu bytes", at, n + 1);
    }
    free(ids);
}

/* Any tokenizer through the generic interface: corpus and prompt encodings stay in the
 * vocabulary and decode; byte and bpe round-trip exactly. */
static inline void fuzz_check_tokenizer(const Tokenizer *t, const unsigned char *text, size_t n) {
    for (int prompt = 0; prompt < 2; prompt++) {
        size_t k;
        int *ids = prompt ? tokenizer_encode_prompt(t, text, n, 0, &k) : tokenizer_encode(t, text, n, 0, &k);
        if (!ids) { /* only an hf tokenizer's regex past its limits, in one line */
            FUZZ_CHECK(t->kind == TOK_HF && pelab_errmsg[0] && !strchr(pelab_errmsg, '\n'), "encode refused: %s",
                       pelab_errmsg);
            continue;
        }
        FUZZ_CHECK(t->kind == TOK_HF || k <= n + 2, "%zu ids for %zu bytes", k, n);
        size_t at = 0;
        int prev = -1, exact = t->kind != TOK_LLAMA2C && t->kind != TOK_HF && !(prompt && n == 0);
        for (size_t i = 0; i < k; i++) {
            size_t len;
            FUZZ_CHECK(ids[i] >= 0 && ids[i] < t->vocab_size, "id %d outside the vocabulary %d", ids[i],
                       t->vocab_size);
            const unsigned char *p = tokenizer_decode(t, prev, ids[i], &len);
            FUZZ_CHECK(p != NULL, "id %d does not decode", ids[i]);
            if (exact) {
                FUZZ_CHECK(at + len <= n && memcmp(p, text + at, len) == 0, "%s: id %zu breaks the round trip",
                           tokenizer_kind_name(t), i);
                at += len;
            }
            prev = ids[i];
        }
        if (exact) FUZZ_CHECK(at == n, "%s: decoded %zu of %zu bytes", tokenizer_kind_name(t), at, n);
        free(ids);
    }
}

#endif
