/* passkey_cmd.c: `pelab passkey CKPT`: passkey retrieval by length and key depth (docs/position-encodings.md section 10.3). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/sys.h"
#include "../infer/passkey.h"
#include "../io/results.h"
#include "args.h"
#include "commands.h"
#include "load.h"

enum { MAX_LIST = 64 };

int cmd_passkey(int argc, char **argv) {
    const char *lengths_s = NULL, *mult_s = NULL, *depths_s = "0,10,20,30,40,50,60,70,80,90,100";
    LoadFlags load = LOAD_FLAGS_DEFAULT;
    const char *csv_path = NULL;
    int trials = 10, threads = 0;
    unsigned long long seed = 1;
    const OptSpec opts[] = {
        {"--lengths", OPT_STR, &lengths_s, 0, 0, "document lengths in bytes, answer included (e.g. 64,128,256)"},
        {"--mult", OPT_STR, &mult_s, 0, 0, "lengths as multiples of the training length (default 0.5,1,2,4,8)"},
        {"--depths", OPT_STR, &depths_s, 0, 0, "key depths in % of the filler"},
        {"--trials", OPT_INT, &trials, 1, 1 << 20, "random keys per (length, depth)"},
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "seed of the keys"},
        {"--csv", OPT_OUT_FILE, &csv_path, 0, 0, "also write model,pos,length,depth,trials,exact,accuracy,mean_rank rows here"},
        LOAD_FLAG_ROWS(&load),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[1];
    int n_pos;
    args_parse("passkey", "CKPT [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (n_pos != 1) pelab_die("passkey: expected one checkpoint path (see pelab passkey --help)");
    if (lengths_s && mult_s) pelab_die("passkey: --lengths and --mult: give one of them");
    double lv[MAX_LIST], dv[MAX_LIST];
    int n_depths = args_numbers("passkey", "--depths", depths_s, 0, 100, dv, MAX_LIST);
    set_threads(threads);

    Model m;
    Tokenizer tok;
    load_model_or_die("passkey", pos_args[0], &load, &m, &tok);
    /* a subword tokenizer: lengths stay bytes of text (--mult: the training length in tokens times the
     * tokenizer's bytes per token on a passkey document), each length's tokens counted */
    int sub = tok.kind != TOK_BYTE, n_len, lengths[MAX_LIST], n_tokens[MAX_LIST], ok_len[MAX_LIST], max_len = PASSKEY_MIN_LEN;
    int doc_tokens = sub ? passkey_document_tokens(&tok, 4096) : 4096;
    if (doc_tokens < 0) pelab_die("passkey: %s", pelab_errmsg);
    double bytes_per_token = 4096.0 / doc_tokens;
    if (lengths_s) n_len = args_numbers("passkey", "--lengths", lengths_s, 1, 1 << 24, lv, MAX_LIST);
    else n_len = args_numbers("passkey", "--mult", mult_s ? mult_s : "0.5,1,2,4,8", 1e-3, 1 << 16, lv, MAX_LIST);
    for (int i = 0; i < n_len; i++) {
        lengths[i] = lengths_s ? (int)lv[i] : (int)lrint(lv[i] * m.cfg.seq_len * bytes_per_token);
        n_tokens[i] = sub && lengths[i] >= PASSKEY_MIN_LEN ? passkey_document_tokens(&tok, lengths[i]) : lengths[i];
        if (n_tokens[i] < 0) pelab_die("passkey: %s", pelab_errmsg);
        ok_len[i] = sub ? lengths[i] >= PASSKEY_MIN_LEN && passkey_tokens_ok(&m, n_tokens[i]) : passkey_length_ok(&m, lengths[i]);
        int need = sub ? n_tokens[i] + 2 * PASSKEY_GEN_TOKENS : lengths[i];
        if (ok_len[i] && need > max_len) max_len = need;
    }
    FILE *csv = NULL;
    AtomicFile csv_file; /* streamed into a temporary file, renamed over the path once complete */
    if (csv_path) {
        if (!(csv = atomic_open(&csv_file, csv_path))) pelab_die("passkey: --csv %s", pelab_errmsg);
        results_csv_header(csv, &RES_PASSKEY_CSV);
    }

    char spec[512], lens[160], rule[64];
    pos_spec(&m.pos, spec, sizeof spec);
    pos_lengths(&m.pos, lens, sizeof lens);
    pos_rule_describe(&m.pos, rule, sizeof rule);
    printf("passkey  model %s  scheme %s  rule %s  pos %s  lengths: %s\n", pos_args[0], m.pos.scheme->name, rule,
           spec, lens);
    if (sub) {
        printf("tokens: the %s tokenizer, %.2f bytes per token on a passkey document; lengths are bytes of text (tokens:",
               tokenizer_kind_name(&tok), bytes_per_token);
        for (int i = 0; i < n_len; i++) printf(" %d", n_tokens[i]);
        printf("); the greedy answer is %d tokens, decoded\n", PASSKEY_GEN_TOKENS);
    }
    printf("protocol: short passkey documents (min %d bytes, answer included), %d trials per cell, seed %llu; "
           "acc = greedy answer is the key (exact match), rank = log-prob rank of the key among %d (1 best, 5.5 "
           "chance)\n",
           PASSKEY_MIN_LEN, trials, seed, PASSKEY_CANDIDATES);
    printf("exact-match accuracy %% by length (rows) and key depth %% (columns)\n%8s |", "length");
    for (int j = 0; j < n_depths; j++) printf(" %4d", (int)dv[j]);
    printf(" | %6s %9s\n", "acc %", "mean rank");

    PasskeyModel pm;
    PasskeyScorer scorer;
    passkey_model_init(&pm, &m, max_len);
    passkey_model_scorer(&pm, &scorer);
    if (sub) scorer.tok = &tok;
    double t0 = now_seconds();
    for (int i = 0; i < n_len; i++) {
        int len = lengths[i], ok = ok_len[i], exact = 0, n = 0;
        double rank_sum = 0;
        printf("%8d |", len);
        for (int j = 0; j < n_depths; j++) {
            PasskeyCell c = {0};
            if (ok && passkey_cell(&scorer, len, (int)dv[j], trials, seed, &c) != 0) pelab_die("passkey: %s", pelab_errmsg);
            if (!ok) printf("  n/a");
            else printf(" %4.0f", 100.0 * c.exact / c.trials);
            exact += c.exact, n += c.trials, rank_sum += c.rank_sum;
            if (csv) { /* a refused cell: no trials, nothing else */
                ResultRow w = result_row();
                w.model = pos_args[0], w.scheme = spec, w.length = len, w.depth = (int)dv[j], w.n = ok ? c.trials : 0;
                if (ok) w.exact = c.exact, w.value = (double)c.exact / c.trials, w.value2 = c.rank_sum / c.trials;
                results_csv_row(csv, &RES_PASSKEY_CSV, &w);
            }
        }
        if (ok) printf(" | %6.1f %9.2f\n", 100.0 * exact / n, rank_sum / n);
        else
            printf(" | %6s %9s  (%s)\n", "n/a", "n/a",
                   len < PASSKEY_MIN_LEN ? "shorter than the shortest document" : "past the scheme's positions");
        fflush(stdout);
        fprintf(stderr, "length %d done (%.1f s)\n", len, now_seconds() - t0);
    }
    if (csv && atomic_commit(&csv_file) != 0) pelab_die("passkey: --csv %s", pelab_errmsg);
    passkey_model_free(&pm);
    model_free(&m);
    tokenizer_free(&tok);
    return 0;
}
