/* tokenizer_cmd.c: `pelab tokenizer train|encode|decode`: byte-level BPE trained from the command line;
 * any tokenizer (pelab BPE, tokenizer.json, tokenizer.bin, or a checkpoint's own) encodes and decodes. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../data/corpus.h"
#include "../data/bpe.h"
#include "../data/tokenizer.h"
#include "../model/model.h"
#include "args.h"
#include "commands.h"
#include "load.h"

static const char USAGE[] = "usage: pelab tokenizer SUBCOMMAND ...   (pelab tokenizer SUBCOMMAND --help for its flags)\n"
                            "  train --vocab N FILE --out TOK   learn a byte-level BPE tokenizer from FILE\n"
                            "  encode TOK FILE [--count]        token ids of FILE, one per line (or a summary)\n"
                            "  decode TOK [--skip-special]      token ids on stdin -> bytes on stdout\n"
                            "TOK: a pelab BPE file, a Hugging Face tokenizer.json, a llama2.c tokenizer.bin, or a\n"
                            "checkpoint (its own tokenizer)\n";

/* TOK: a checkpoint (a safetensors file: u64 header length, then '{') or a tokenizer file */
static void load_tok_or_die(Tokenizer *t, const char *path) {
    unsigned char head[9] = {0};
    FILE *f = fopen_regular(path); /* a FIFO or device is refused, never read */
    if (!f) pelab_die("%s", pelab_errmsg);
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got == sizeof head && head[8] == '{' && head[0] != '{') {
        Model m;
        load_model_or_die("tokenizer", path, &(LoadFlags)LOAD_FLAGS_DEFAULT, &m, t);
        model_free(&m);
        return;
    }
    if (tokenizer_load_file(t, path) != 0) pelab_die("%s", pelab_errmsg);
}

static int train(int argc, char **argv) {
    int vocab = 4096;
    const char *out = NULL;
    const OptSpec opts[] = {
        {"--vocab", OPT_INT, &vocab, 256, BPE_MAX_VOCAB, "vocabulary size: 256 bytes + merges"},
        {"--out", OPT_OUT_FILE, &out, 0, 0, "where to write the tokenizer (required)"},
    };
    const char *pos[1];
    int n_pos;
    args_parse("tokenizer train", "--vocab N FILE --out TOK", argc, argv, 2, opts, sizeof opts / sizeof opts[0], pos, 1,
               &n_pos);
    if (n_pos != 1) pelab_die("tokenizer train: expected one text FILE");
    if (!out) pelab_die("tokenizer train: --out TOK is required");
    unsigned char *text;
    size_t n;
    if (corpus_read_file(pos[0], &text, &n) != 0) pelab_die("%s", pelab_errmsg);
    Bpe b;
    double t0 = now_seconds();
    if (bpe_train(&b, text, n, vocab) != 0) pelab_die("tokenizer train: %s: %s", pos[0], pelab_errmsg);
    double t_train = now_seconds() - t0;
    if (b.vocab_size < vocab)
        fprintf(stderr, "pelab: warning: %s: no pair occurs twice after %d merges: vocabulary %d, not %d\n", pos[0],
                b.n_merges, b.vocab_size, vocab);
    int *ids = xmalloc((n ? n : 1) * sizeof *ids);
    t0 = now_seconds();
    size_t n_ids = bpe_encode(&b, text, n, ids);
    double t_encode = now_seconds() - t0;
    if (bpe_save(&b, out) != 0) pelab_die("%s", pelab_errmsg);
    printf("merges      %d (vocabulary %d) in %.2f s\n", b.n_merges, b.vocab_size, t_train);
    printf("%-11s %zu bytes -> %zu tokens, %.3f bytes/token (encoded in %.2f s)\n", pos[0], n, n_ids,
           n_ids ? (double)n / (double)n_ids : 0.0, t_encode);
    printf("wrote       %s\n", out);
    free(ids);
    free(text);
    bpe_free(&b);
    return 0;
}

static int encode(int argc, char **argv) {
    int count = 0;
    const OptSpec opts[] = {{"--count", OPT_FLAG, &count, 0, 0, "print a summary instead of the ids"}};
    const char *pos[2];
    int n_pos;
    args_parse("tokenizer encode", "TOK FILE [--count]", argc, argv, 2, opts, 1, pos, 2, &n_pos);
    if (n_pos != 2) pelab_die("tokenizer encode: expected a tokenizer TOK and a text FILE");
    Tokenizer tok;
    load_tok_or_die(&tok, pos[0]);
    unsigned char *text;
    size_t n, n_ids;
    if (corpus_read_file(pos[1], &text, &n) != 0) pelab_die("%s", pelab_errmsg);
    double t0 = now_seconds();
    int *ids = tokenizer_encode(&tok, text, n, 0, &n_ids); /* as training and eval see FILE */
    if (!ids) pelab_die("%s", pelab_errmsg);
    double dt = now_seconds() - t0;
    if (count)
        printf("%s: %zu bytes -> %zu tokens, %.3f bytes/token (%s tokenizer, vocabulary %d, %.2f s)\n", pos[1], n, n_ids,
               n_ids ? (double)n / (double)n_ids : 0.0, tokenizer_kind_name(&tok), tok.vocab_size, dt);
    else
        for (size_t i = 0; i < n_ids; i++) printf("%d\n", ids[i]);
    if (fflush(stdout) != 0 || ferror(stdout)) pelab_die("tokenizer encode: write to stdout failed");
    free(ids);
    free(text);
    tokenizer_free(&tok);
    return 0;
}

/* all of a stream (stdin is not a regular file, so read_file does not apply) */
static unsigned char *read_stream(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = xmalloc(cap + 1);
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        unsigned char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) pelab_die("tokenizer decode: out of memory reading stdin");
        buf = bigger, cap *= 2;
    }
    if (ferror(f)) pelab_die("tokenizer decode: cannot read stdin: %s", strerror(errno));
    buf[n] = 0;
    *len = n;
    return buf;
}

static int decode(int argc, char **argv) {
    int skip_special = 0;
    const OptSpec opts[] = {{"--skip-special", OPT_FLAG, &skip_special, 0, 0,
                             "tokenizer.json: leave out special tokens (HF's skip_special_tokens)"}};
    const char *pos[1];
    int n_pos;
    args_parse("tokenizer decode", "TOK [--skip-special]  (token ids on stdin, separated by white space)", argc, argv, 2,
               opts, 1, pos, 1, &n_pos);
    if (n_pos != 1) pelab_die("tokenizer decode: expected a tokenizer TOK");
    Tokenizer tok;
    load_tok_or_die(&tok, pos[0]);
    size_t len;
    unsigned char *in = read_stream(stdin, &len);
    /* every id is checked before the first byte is written: a bad input writes nothing */
    int *ids = xmalloc((len / 2 + 1) * sizeof *ids); /* an id and its separator: 2 bytes at least */
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        if (isspace(in[i])) {
            i++;
            continue;
        }
        size_t j = i;
        long id = 0;
        for (; j < len && in[j] >= '0' && in[j] <= '9'; j++)
            if (id <= tok.vocab_size) id = id * 10 + (in[j] - '0'); /* larger is out of range anyway */
        if (j == i || (j < len && !isspace(in[j]))) {
            size_t e = j;
            while (e < len && !isspace(in[e]) && e - i < 20) e++;
            pelab_die("tokenizer decode: stdin: token %zu ('%.*s') is not a non-negative integer", k + 1, (int)(e - i),
                      (const char *)in + i);
        }
        size_t plen;
        if (id >= tok.vocab_size || !tokenizer_decode(&tok, -1, (int)id, &plen))
            pelab_die("tokenizer decode: stdin: token %zu is %.*s, outside the vocabulary [0, %d) of %s", k + 1,
                      (int)(j - i < 20 ? j - i : 20), (const char *)in + i, tok.vocab_size, pos[0]);
        ids[k++] = (int)id;
        i = j;
    }
    StrBuf out = {0};
    if (tok.kind == TOK_HF) { /* HF's decode(ids): the decoder sees the whole sequence */
        if (hf_tok_decode(tok.hf, ids, k, skip_special, &out) != 0) pelab_die("tokenizer decode: stdin: %s", pelab_errmsg);
    } else
        for (size_t t = 0; t < k; t++) {
            size_t plen;
            const unsigned char *piece = tokenizer_decode(&tok, t ? ids[t - 1] : -1, ids[t], &plen);
            sb_put(&out, (const char *)piece, plen);
        }
    if (fwrite(out.s ? out.s : "", 1, out.len, stdout) != out.len || fflush(stdout) != 0)
        pelab_die("tokenizer decode: write to stdout failed");
    sb_free(&out);
    free(ids);
    free(in);
    tokenizer_free(&tok);
    return 0;
}

int cmd_tokenizer(int argc, char **argv) {
    if (argc < 2) pelab_die("tokenizer: expected a subcommand: train, encode or decode (see pelab tokenizer --help)");
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (strcmp(sub, "train") == 0) return train(argc, argv);
    if (strcmp(sub, "encode") == 0) return encode(argc, argv);
    if (strcmp(sub, "decode") == 0) return decode(argc, argv);
    pelab_die("tokenizer: unknown subcommand '%s' (train, encode, decode)", sub);
}
