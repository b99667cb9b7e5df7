/* longrope_cmd.c: `pelab longrope-search CKPT FILE --len N --out PATH`: LongRoPE long factors for
 * a loaded rotary model at length N, by the small evolutionary search of infer/longrope_search.h,
 * written as the JSON file that --scale longrope:PATH reads. */
#include <stdio.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../data/corpus.h"
#include "../data/tokenizer.h"
#include "../infer/longrope_search.h"
#include "args.h"
#include "commands.h"
#include "load.h"

int cmd_longrope_search(int argc, char **argv) {
    LongRopeSearchConfig cfg = {.len = 0, .windows = 4, .population = 8, .generations = 4, .seed = 1};
    const char *out = NULL;
    int threads = 0;
    const OptSpec opts[] = {
        {"--len", OPT_INT, &cfg.len, 0, 1 << 24, "target length, past the model's L (0: 4 x L)"},
        {"--out", OPT_OUT_FILE, &out, 0, 0, "the JSON factor file to write (for --scale longrope:PATH)"},
        {"--windows", OPT_INT, &cfg.windows, 1, 1 << 16, "rows of --len tokens scored per candidate"},
        {"--population", OPT_INT, &cfg.population, 2, 1024, "candidates kept in each generation"},
        {"--generations", OPT_INT, &cfg.generations, 0, 1 << 16, "rounds of mutation"},
        {"--seed", OPT_U64, &cfg.seed, 0, 1.8e19, "random seed of the mutations"},
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[2];
    int n_pos;
    args_parse("longrope-search", "CKPT FILE [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 2,
               &n_pos);
    if (n_pos != 2) pelab_die("longrope-search: expected a checkpoint and a text file (see --help)");
    if (!out) pelab_die("longrope-search: --out PATH: where to write the factors");
    set_threads(threads);
    Model m;
    Tokenizer tok;
    load_model_or_die("longrope-search", pos_args[0], &(LoadFlags)LOAD_FLAGS_DEFAULT, &m, &tok);
    if (cfg.len == 0) cfg.len = 4 * m.cfg.seq_len;
    unsigned char *text;
    size_t n_bytes;
    if (corpus_read_file(pos_args[1], &text, &n_bytes) != 0) pelab_die("%s", pelab_errmsg);
    size_t n;
    int *tokens = tokenizer_encode(&tok, text, n_bytes, 0, &n);
    if (!tokens) pelab_die("longrope: %s", pelab_errmsg);
    LongRopeFactors best;
    double best_loss, pi_loss;
    if (longrope_search(&m, tokens, n, &cfg, &best, &best_loss, &pi_loss) != 0)
        pelab_die("longrope-search: %s: %s", pos_args[1], pelab_errmsg);
    if (longrope_write(out, &best) != 0) pelab_die("%s", pelab_errmsg);
    printf("length %d (L %d): loss %.4f with the factors found, %.4f with PI (all %g); %d pairs -> %s\n", cfg.len,
           m.cfg.seq_len, best_loss, pi_loss, best.factor, best.n_pairs, out);
    free(tokens), free(text);
    tokenizer_free(&tok);
    model_free(&m);
    return 0;
}
