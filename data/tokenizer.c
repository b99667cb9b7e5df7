#include "tokenizer.h"

#include <stdio.h>
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
    return t->kind == TOK_BPE ? "bpe" : t->kind == TOK_LLAMA2C ? "llama2c" : t->kind == TOK_HF ? "hf" : "byte";
}

int tokenizer_from_image(Tokenizer *t, const char *kind, const unsigned char *image, size_t len, const char *name,
                         int model_vocab) {
    tokenizer_init_byte(t);
    if (!kind || strcmp(kind, "byte") == 0) {
        if (model_vocab < 256)
            return pelab_fail("%s: byte tokenizer needs a vocabulary of 256, the model has %d", name, model_vocab);
        return 0;
    }
    if ((strcmp(kind, "bpe") == 0 || strcmp(kind, "llama2c") == 0 || strcmp(kind, "hf") == 0) && (!image || len == 0))
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
    } else if (strcmp(kind, "hf") == 0) {
        if (hf_tok_parse(&t->hf, image, len, name) != 0) return -1;
        if (hf_tok_check_growth(t->hf) != 0) {
            hf_tok_free(t->hf), t->hf = NULL;
            return -1;
        }
        t->kind = TOK_HF;
        t->vocab_size = hf_tok_vocab_size(t->hf);
        t->bos = hf_tok_bos(t->hf);
    } else {
        return pelab_fail("%s: tokenizer '%.64s': unknown (expected byte, bpe, llama2c or hf)", name, kind);
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

int tokenizer_from_file_image(Tokenizer *t, const char *kind, const unsigned char *image, size_t len, const char *path,
                              int model_vocab) {
    if (len > 0) return tokenizer_from_image(t, kind, image, len, path, model_vocab);
    tokenizer_init_byte(t); /* (tokenizer_from_image's own message is about a checkpoint's missing tensor) */
    const char *what = !kind ? "a pelab BPE file, a tokenizer.json or a llama2.c tokenizer.bin"
                       : !strcmp(kind, "hf") ? "a tokenizer.json" : !strcmp(kind, "llama2c") ? "a llama2.c tokenizer.bin"
                                                                                           : "a pelab BPE file";
    return pelab_fail("%s: an empty file (0 bytes): expected %s", path, what);
}

int tokenizer_load_file(Tokenizer *t, const char *path) {
    unsigned char *buf;
    size_t len;
    tokenizer_init_byte(t);
    if (read_file_max(path, FILE_MAX_TOKENIZER, "a tokenizer file", &buf, &len) != 0) return -1;
    if (len == 0) {
        free(buf);
        return tokenizer_from_file_image(t, NULL, NULL, 0, path, 0);
    }
    int is_bpe = len >= 8 && memcmp(buf, "PELABBPE", 8) == 0;
    size_t i = 0; /* a JSON object: a tokenizer.json (a tokenizer.bin starts with a small int32) */
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')) i++;
    int is_json = i < len && buf[i] == '{';
    int rc = tokenizer_from_image(t, is_bpe ? "bpe" : is_json ? "hf" : "llama2c", buf, len, path, 0);
    if (rc != 0 && !is_bpe && !is_json) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        pelab_fail("%s: not a tokenizer: no PELABBPE magic, not a tokenizer.json (no '{'), and as a llama2.c "
                   "tokenizer.bin: %s", path, why);
    }
    free(buf);
    return rc;
}

void tokenizer_free(Tokenizer *t) {
    if (t->kind == TOK_BPE) bpe_free(&t->bpe);
    if (t->kind == TOK_LLAMA2C) llama2c_tok_free(&t->l2c);
    if (t->kind == TOK_HF) hf_tok_free(t->hf);
    free(t->image);
    tokenizer_init_byte(t);
}

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

int *tokenizer_encode(const Tokenizer *t, const unsigned char *text, size_t n, size_t extra, size_t *n_ids) {
    if (t->kind == TOK_HF) return hf_tok_encode(t->hf, text, n, 1, extra, n_ids);
    int *ids = xmalloc(sizeof(int) * (n + 2 + extra)); /* a token is a byte at least; llama2c adds BOS and a space */
    switch (t->kind) {
    case TOK_BPE: *n_ids = bpe_encode(&t->bpe, text, n, ids); break;
    case TOK_LLAMA2C: *n_ids = encode_documents(&t->l2c, text, n, ids); break;
    default:
        for (size_t i = 0; i < n; i++) ids[i] = text[i];
        *n_ids = n;
    }
    return ids;
}

int *tokenizer_encode_prompt(const Tokenizer *t, const unsigned char *text, size_t n, size_t extra, size_t *n_ids) {
    if (t->kind == TOK_LLAMA2C) {
        int *ids = xmalloc(sizeof(int) * (n + 2 + extra));
        *n_ids = llama2c_tok_encode(&t->l2c, text, n, ids);
        return ids;
    }
    int start = t->kind == TOK_HF ? (t->bos >= 0 ? -1 : hf_tok_first_special(t->hf)) : '\n';
    if (n == 0 && start >= 0) { /* byte-level texts have no BOS: a newline starts one; GPT-2's <|endoftext|> */
        int *ids = xmalloc(sizeof(int) * (1 + extra));
        ids[0] = start;
        *n_ids = 1;
        return ids;
    }
    return tokenizer_encode(t, text, n, extra, n_ids);
}

const unsigned char *tokenizer_decode(const Tokenizer *t, int prev, int id, size_t *len) {
    static unsigned char bytes[256];
    switch (t->kind) {
    case TOK_BPE: return bpe_piece(&t->bpe, id, len);
    case TOK_LLAMA2C: return llama2c_tok_decode(&t->l2c, prev, id, len);
    case TOK_HF: {
        int special;
        const unsigned char *p = hf_tok_piece(t->hf, id, len, &special);
        if (p && special) *len = 0;
        for (int k = 0; p && (prev < 0 || prev == t->bos) && k < hf_tok_strip_start(t->hf) && *len && *p == ' '; k++)
            p++, (*len)--;
        return p;
    }
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
