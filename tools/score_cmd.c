/* score_cmd.c: `pelab score CKPT FILE`: mean NLL and perplexity of a text. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/sys.h"
#include "../data/tokenizer.h"
#include "../infer/score.h"
#include "args.h"
#include "commands.h"
#include "load.h"

int cmd_score(int argc, char **argv) {
    int len = 0, threads = 0;
    const char *per_token_path = NULL;
    const char *scale = NULL, *precision = NULL;
    const OptSpec opts[] = {
        {"--len", OPT_INT, &len, 0, 1 << 24, "window length (0: the model's training length)"},
        {"--per-token", OPT_OUT_FILE, &per_token_path, 0, 0, "write window,position,token,logprob CSV here"},
        {"--scale", OPT_STR, &scale, 0, 0, SCALE_RULE_HELP},
        OPT_PRECISION_ROW(&precision),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[2];
    int n_pos;
    args_parse("score", "CKPT FILE [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 2, &n_pos);
    if (n_pos != 2) pelab_die("score: expected a checkpoint and a text file (see pelab score --help)");
    set_threads(threads);

    Model m;
    Tokenizer tok;
    load_model_or_die(pos_args[0], scale, precision, &m, &tok);
    unsigned char *text;
    size_t n_bytes;
    if (read_file(pos_args[1], &text, &n_bytes) != 0) pelab_die("%s", pelab_errmsg);
    int *tokens = xmalloc(sizeof(int) * tokenizer_max_ids(n_bytes));
    size_t n = tokenizer_encode(&tok, text, n_bytes, tokens);
    if (n < 2) pelab_die("score: %s: need at least 2 tokens, got %zu", pos_args[1], n);
    if (len == 0) len = m.cfg.seq_len;
    long max_pos = pos_max_position(&m.pos);
    if (max_pos >= 0 && len > max_pos)
        pelab_die("score: --len %d exceeds the %ld positions the %s scheme accepts", len, max_pos, m.pos.scheme->name);

    FILE *csv = NULL;
    if (per_token_path) {
        csv = fopen(per_token_path, "w");
        if (!csv) pelab_die("%s: cannot open for writing: %s", per_token_path, strerror(errno));
        fprintf(csv, "window,position,token,logprob\n");
    }
    ScoreResult r;
    double t0 = now_seconds();
    if (score_tokens(&m, tokens, n, len, csv, &r) != 0) pelab_die("%s", pelab_errmsg);
    double dt = now_seconds() - t0;
    if (csv && fclose(csv) != 0) pelab_die("%s: write failed: %s", per_token_path, strerror(errno));
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
