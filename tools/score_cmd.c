/* score_cmd.c: `pelab score CKPT FILE`: mean NLL and perplexity of a text; with --lines, of every
 * line as a text of its own, --batch of them side by side. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/sys.h"
#include "../data/corpus.h"
#include "../data/tokenizer.h"
#include "../infer/score.h"
#include "../io/results.h"
#include "args.h"
#include "commands.h"
#include "../data/lines.h"
#include "load.h"

/* --lines: every non-empty line its own text from position 0; one row per line, then the total */
static void score_lines(Model *m, const Tokenizer *tok, const char *path, const unsigned char *text, size_t n_bytes,
                        int batch, DynamicLength dynamic, FILE *csv) {
    TextLines tl;
    if (text_lines_encode(&tl, tok, text, n_bytes, 0, 0) != 0) pelab_die("score: --lines %s: %s", path, pelab_errmsg);
    int n_texts = tl.n, **texts = tl.ids, *lens = tl.len, *line_no = tl.line;
    if (n_texts == 0) pelab_die("score: --lines %s: no non-empty line", path);
    size_t total = 0;
    for (int t = 0; t < n_texts; t++) total += lens[t] > 1 ? (size_t)lens[t] - 1 : 0;
    float *lp = xmalloc(sizeof(float) * (total + 1));
    double *nll = xmalloc(sizeof(double) * n_texts), t0 = now_seconds();
    if (score_texts(m, (const int *const *)texts, lens, n_texts, batch, dynamic, lp, nll) != 0)
        pelab_die("score: %s: %s (texts count non-empty lines)", path, pelab_errmsg);
    double dt = now_seconds() - t0, sum = 0;
    size_t at = 0;
    for (int t = 0; t < n_texts; t++) {
        int n = lens[t] - 1;
        printf("line %d  tokens %d  nll %.4f nats/token  ppl %.3f\n", line_no[t], lens[t], nll[t] / n, exp(nll[t] / n));
        for (int i = 0; csv && i < n; i++) {
            ResultRow w = result_row();
            w.line = line_no[t], w.token_pos = i + 1, w.token = texts[t][i + 1], w.value = lp[at + i];
            results_csv_row(csv, &RES_LINE_TOKEN_CSV, &w);
        }
        at += (size_t)n;
        sum += nll[t];
    }
    printf("file %s  %d texts  %zu predicted tokens  nll %.4f nats/token  ppl %.3f  (batch %d)\n", path, n_texts, total,
           sum / total, exp(sum / total), batch);
    fprintf(stderr, "%.0f tokens/s\n", total / dt);
    text_lines_free(&tl);
    free(lp), free(nll);
}

int cmd_score(int argc, char **argv) {
    int len = 0, threads = 0, lines = 0, batch = 16;
    const char *per_token_path = NULL;
    const char *dynamic_arg = "window";
    LoadFlags load = LOAD_FLAGS_DEFAULT;
    const OptSpec opts[] = {
        {"--len", OPT_INT, &len, 0, 1 << 24, "window length (0: the model's training length)"},
        {"--per-token", OPT_OUT_FILE, &per_token_path, 0, 0, "write window,position,token,logprob CSV here"},
        {"--lines", OPT_FLAG, &lines, 0, 0, "score every non-empty line as a text of its own, from position 0"},
        {"--batch", OPT_INT, &batch, 1, 4096, "with --lines: texts side by side (left-padded; the same log-probs)"},
        OPT_DYNAMIC_ROW(&dynamic_arg),
        LOAD_FLAG_ROWS(&load),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[2];
    int n_pos;
    args_parse("score", "CKPT FILE [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 2, &n_pos);
    if (n_pos != 2) pelab_die("score: expected a checkpoint and a text file (see pelab score --help)");
    DynamicLength dynamic;
    if (dynamic_length_parse("--dynamic", dynamic_arg, &dynamic) != 0) pelab_die("score: %s", pelab_errmsg);
    set_threads(threads);

    Model m;
    Tokenizer tok;
    load_model_or_die("score", pos_args[0], &load, &m, &tok);
    /* flags first: a refused run leaves no --per-token file behind */
    if (lines && len) pelab_die("score: --len cuts one text into windows; --lines scores every line whole");
    int len_given = len > 0;
    if (len == 0) len = m.cfg.seq_len;
    long max_pos = pos_max_position(&m.pos);
    if (!lines && max_pos >= 0 && len > max_pos)
        pelab_die("score: --len %d exceeds the %ld positions the %s scheme accepts", len, max_pos, m.pos.scheme->name);
    unsigned char *text;
    size_t n_bytes;
    if (corpus_read_file(pos_args[1], &text, &n_bytes) != 0) pelab_die("%s", pelab_errmsg);
    FILE *csv = NULL;
    AtomicFile csv_file; /* streamed into a temporary file, renamed over the path once complete */
    if (per_token_path) {
        if (!(csv = atomic_open(&csv_file, per_token_path))) pelab_die("score: --per-token %s", pelab_errmsg);
        results_csv_header(csv, lines ? &RES_LINE_TOKEN_CSV : &RES_TOKEN_CSV);
    }
    if (lines) {
        score_lines(&m, &tok, pos_args[1], text, n_bytes, batch, dynamic, csv);
        if (csv && atomic_commit(&csv_file) != 0) pelab_die("score: --per-token %s", pelab_errmsg);
        free(text);
        tokenizer_free(&tok);
        model_free(&m);
        return 0;
    }
    size_t n;
    int *tokens = tokenizer_encode(&tok, text, n_bytes, 0, &n);
    if (!tokens) pelab_die("score: %s", pelab_errmsg);
    if (n < 2) {
        free(tokens), free(text);
        pelab_die("score: %s: need at least 2 tokens, got %zu", pos_args[1], n);
    }
    /* a window longer than the text would be scored as a shorter one under the longer one's name */
    if (len_given && (size_t)len > n - 1) {
        free(tokens), free(text);
        pelab_die("score: --len %d: %s gives %zu tokens, %zu predictions; a window of %d needs %d tokens (its inputs "
                  "and the next one)",
                  len, pos_args[1], n, n - 1, len, len + 1);
    }
    if ((size_t)len > n - 1) len = (int)(n - 1); /* the default, the training length: the text is one window */

    ScoreResult r;
    double t0 = now_seconds();
    if (score_tokens(&m, tokens, n, len, dynamic, csv, &r) != 0) pelab_die("score: %s", pelab_errmsg);
    double dt = now_seconds() - t0;
    if (csv && atomic_commit(&csv_file) != 0) pelab_die("score: --per-token %s", pelab_errmsg);
    double nll = r.nll_sum / r.n_scored;
    char spec[512], lengths[160];
    pos_spec(&m.pos, spec, sizeof spec);
    pos_lengths(&m.pos, lengths, sizeof lengths);
    printf("file %s  tokens %zu  windows %zu x len %d  nll %.4f nats/token  ppl %.3f  bits/token %.4f\n", pos_args[1],
           r.n_scored, r.n_windows, len, nll, exp(nll), nll / log(2.0));
    printf("model %s  pos %s  lengths: %s\n", pos_args[0], spec, lengths);
    fprintf(stderr, "%.0f tokens/s\n", r.n_scored / dt);
    free(text), free(tokens);
    tokenizer_free(&tok);
    model_free(&m);
    return 0;
}
