#include "tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"

void tokenizer_init_byte(Tokenizer *t) {
    memset(t, 0, sizeof *t);
    t->kind = TOK_BYTE;
    t->vocab_size = 256;
    t->bos = -1;
}

const char *tokenizer_kind_name(const Tokenizer *t) {
    return t->kind == TOK_BPE ? "bpe" : t->kind == TOK_LLAMA2C ? "llama2c" : "byte";
}

int tokenizer_from_image(Tokenizer *t, const char *kind, const unsigned char *image, size_t len, const char *name,
                         int model_vocab) {
    tokenizer_init_byte(t);
    if (!kind || strcmp(kind, "byte") == 0) {
        if (model_vocab < 256)
            return pelab_fail("%s: byte tokenizer needs a vocabulary of 256, the model has %d", name, model_vocab);
        return 0;
    }
    if ((strcmp(kind, "bpe") == 0 || strcmp(kind, "llama2c") == 0) && (!image || len == 0))
        return pelab_fail("%s: metadata says tokenizer '%s' but there is no tokenizer file (tensor 'tokenizer')", name,
                          kind);
    if (strcmp(kind, "bpe") == 0) {
        if (bpe_parse(&t->bpe, image, len, name) != 0) return -1;
        t->kind = TOK_BPE;
        t->vocab_size = t->bpe.vocab_size;
    } else if (strcmp(kind, "llama2c") == 0) {
        if (llama2c_tok_parse(&t->l2c, image, len, 0, name) != 0) return -1;
        t->kind = TOK_LLAMA2C;
        t->vocab_size = t->l2c.vocab_size;
        t->bos = LLAMA2C_BOS;
    } else {
        return pelab_fail("%s: tokenizer '%.64s': unknown (expected byte, bpe or llama2c)", name, kind);
    }
    if (model_vocab > 0 && t->vocab_size > model_vocab) {
        int v = t->vocab_size;
        tokenizer_free(t);
        return pelab_fail("%s: the tokenizer has %d tokens, more than the model's vocabulary of %d", name, v,
                          model_vocab);
    }
    t->image = xmalloc(len ? len : 1);
    memcpy(t->image, image, len);
    t->image_len = len;
    return 0;
}

int tokenizer_load_file(Tokenizer *t, const char *path) {
    unsigned char *buf;
    size_t len;
    tokenizer_init_byte(t);
    if (read_file(path, &buf, &len) != 0) return -1;
    int is_bpe = len >= 8 && memcmp(buf, "PELABBPE", 8) == 0;
    int rc = tokenizer_from_image(t, is_bpe ? "bpe" : "llama2c", buf, len, path, 0);
    free(buf);
    return rc;
}

void tokenizer_free(Tokenizer *t) {
    if (t->kind == TOK_BPE) bpe_free(&t->bpe);
    if (t->kind == TOK_LLAMA2C) llama2c_tok_free(&t->l2c);
    free(t->image);
    tokenizer_init_byte(t);
}

size_t tokenizer_max_ids(size_t n) { return n + 2; }

static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* llama2c corpora: every blank-line-separated document, stripped, as BOS + run.c's encode */
static size_t encode_documents(const Llama2cTok *t, const unsigned char *text, size_t n, int *ids) {
    size_t count = 0, i = 0;
    while (i < n) {
        size_t end = i;
        while (end < n && !(text[end] == '\n' && end + 1 < n && text[end + 1] == '\n')) end++;
        size_t a = i, b = end;
        while (a < b && is_space(text[a])) a++;
        while (b > a && is_space(text[b - 1])) b--;
        if (b > a) count += llama2c_tok_encode(t, text + a, b - a, ids + count);
        i = end + 2;
    }
    return count;
}

size_t tokenizer_encode(const Tokenizer *t, const unsigned char *text, size_t n, int *ids) {
    switch (t->kind) {
    case TOK_BPE: return bpe_encode(&t->bpe, text, n, ids);
    case TOK_LLAMA2C: return encode_documents(&t->l2c, text, n, ids);
    default:
        for (size_t i = 0; i < n; i++) ids[i] = text[i];
        return n;
    }
}

size_t tokenizer_encode_prompt(const Tokenizer *t, const unsigned char *text, size_t n, int *ids) {
    if (t->kind == TOK_LLAMA2C) return llama2c_tok_encode(&t->l2c, text, n, ids);
    if (n == 0) {
        ids[0] = '\n'; /* byte-level texts have no BOS: a newline starts one */
        return 1;
    }
    return tokenizer_encode(t, text, n, ids);
}

const unsigned char *tokenizer_decode(const Tokenizer *t, int prev, int id, size_t *len) {
    static unsigned char bytes[256];
    switch (t->kind) {
    case TOK_BPE: return bpe_piece(&t->bpe, id, len);
    case TOK_LLAMA2C: return llama2c_tok_decode(&t->l2c, prev, id, len);
    default:
        if (id < 0 || id > 255) {
            *len = 0;
            return NULL;
        }
        bytes[id] = (unsigned char)id;
        *len = 1;
        return bytes + id;
    }
}

void tokenizer_print(const Tokenizer *t, int prev, int id, FILE *f) {
    size_t len;
    const unsigned char *p = tokenizer_decode(t, prev, id, &len);
    if (!p || (t->kind == TOK_LLAMA2C && !llama2c_tok_printable(p, len))) return;
    fwrite(p, 1, len, f);
}
