/* eval_cmd.c: `pelab eval CKPT --data FILE`: loss by length under both protocols and by position,
 * for one or more scaling rules side by side, on the same tokens. Results to stdout (and CSV /
 * JSON files), progress and tokens/s to stderr. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../data/corpus.h"
#include "../data/tokenizer.h"
#include "../infer/eval.h"
#include "../io/results.h"
#include "../train/progress.h"
#include "args.h"
#include "commands.h"
#include "eval_gen.h"
#include "load.h"

enum { MAX_RULES = 16, MAX_LENGTHS = 64 };

/* one `pelab eval`: the models (one per rule), the tokens, the results; large, so on the heap */
typedef struct {
    const char *model_path, *data_path, *seed, *tokenizer;
    LoadFlags load;              /* --scale (the rules), --precision, --kv-cache, --attn-scale */
    DynamicLength dynamic;       /* --dynamic: a dynamic rule's length, the window's or each prefix's */
    size_t n_tokens, n_file;
    int train_len, n_rules, n_lengths;
    char rule_buf[1024];         /* --scale, split in place: rules[] point into it */
    const char *rules[MAX_RULES];
    char scheme[MAX_RULES][512], lengths_str[MAX_RULES][160];
    Model models[MAX_RULES];
    CkptMeta meta;               /* the first rule's metadata: seed points into it */
    Tokenizer tok;
    int lens[MAX_LENGTHS];
    unsigned char *text;         /* the --data file */
    int *tokens;                 /* [n_file] its tokens, the first n_tokens evaluated */
    EvalLength res[MAX_RULES][MAX_LENGTHS];
    EvalGenRows gen;             /* --gen-tokens / --keyppl-tokens results, for the files */
} Run;

static const char *protocol_defs[EVAL_N_PROTOCOLS] = {
    "windows of L_eval tokens at 0, L_eval, 2 L_eval, ...; position ids 0..L_eval-1 in every window; every "
    "token after the first predicted once",
    "windows of L_eval tokens advanced by the stride S (default L_eval/2); position ids 0..L_eval-1; the first "
    "window scores all its predictions, later ones their last S, so each scored token has >= L_eval - S tokens "
    "of context (S = L_eval is nonoverlap)",
};

/* perplexity in 9 columns whatever its size */
static void fmt_ppl(char *buf, size_t n, double nll) {
    double p = exp(nll);
    if (p < 1e5) snprintf(buf, n, "%9.3f", p);
    else snprintf(buf, n, "%9.2e", p);
}

/* "  1.2345     3.437" (17 columns), the cell of one rule x protocol */
static void fmt_cell(char *buf, size_t n, double nll) {
    char p[32];
    fmt_ppl(p, sizeof p, nll);
    snprintf(buf, n, "%7.4f %s", nll, p);
}

static void print_header(const Run *run) {
    printf("pelab eval  model %s  (seed %s, training length L = %d)\n", run->model_path, run->seed, run->train_len);
    printf("data %s  %s tokens: %zu used of %zu in the file (the same tokens for every length and rule)\n",
           run->data_path, run->tokenizer, run->n_tokens, run->n_file);
    for (int r = 0; r < run->n_rules; r++)
        printf("rule %-10s scheme %s  lengths: %s\n", run->rules[r], run->scheme[r], run->lengths_str[r]);
    for (int p = 0; p < EVAL_N_PROTOCOLS; p++) printf("%-10s = %s\n", eval_protocol_names[p], protocol_defs[p]);
    printf("dynamic    = %s (a dynamic rule such as dynamic-ntk: %s)\n", dynamic_length_names[run->dynamic],
           run->dynamic == DYNAMIC_PREFIX ? "each token under its own prefix's length, as decoding"
                                          : "every position under the window's length");
    printf("loss in nats/token, ppl = exp(loss); weight products in %s\n\n",
           precision_name(run->models[0].precision));
}

static void print_table(const Run *run) {
    const int cell = 17, group = 2 * cell + 3;
    printf("%-15s", "");
    for (int r = 0; r < run->n_rules; r++) printf(" | %-*s", group - 3, run->rules[r]);
    printf("\n%-15s", "");
    for (int r = 0; r < run->n_rules; r++)
        for (int p = 0; p < EVAL_N_PROTOCOLS; p++) printf(" | %-*s", cell, eval_protocol_names[p]);
    printf("\n%6s %8s", "length", "stride");
    for (int r = 0; r < run->n_rules; r++)
        for (int p = 0; p < EVAL_N_PROTOCOLS; p++) printf(" | %7s %9s", "loss", "ppl");
    printf("\n");
    for (int l = 0; l < run->n_lengths; l++) {
        const EvalLength *e0 = &run->res[0][l];
        char len_s[32];
        snprintf(len_s, sizeof len_s, "%d%s", e0->len, e0->len == run->train_len ? "=L" : "");
        printf("%6s %8d", len_s, e0->stride);
        for (int r = 0; r < run->n_rules; r++) {
            const EvalLength *e = &run->res[r][l];
            char buf[64];
            if (e->status != EVAL_OK) { /* one note across the rule's two columns */
                eval_status_str(e, buf, sizeof buf);
                printf(" | %-*s", group - 3, buf);
                continue;
            }
            for (int p = 0; p < EVAL_N_PROTOCOLS; p++) {
                fmt_cell(buf, sizeof buf, eval_mean(&e->proto[p]));
                printf(" | %s", buf);
            }
        }
        printf("\n");
    }
}

static void print_buckets(const Run *run) {
    printf("\nloss by position (nats/token over all nonoverlap windows; a bucket holds query positions lo-hi, "
           "predicting the token after; * marks the bucket holding position %d = L, the first position "
           "not seen in training)\n",
           run->train_len);
    for (int l = 0; l < run->n_lengths; l++) {
        int ok = -1;
        for (int r = 0; r < run->n_rules && ok < 0; r++)
            if (run->res[r][l].status == EVAL_OK) ok = r;
        const EvalLength *e0 = &run->res[ok < 0 ? 0 : ok][l];
        if (ok < 0) {
            char buf[64];
            eval_status_str(e0, buf, sizeof buf);
            printf("\nlength %d: %s\n", e0->len, buf);
            continue;
        }
        printf("\nlength %d (%d buckets)\n  %-13s %9s", e0->len, e0->n_buckets, "positions", "n");
        for (int r = 0; r < run->n_rules; r++) printf(" %10s", run->rules[r]);
        printf("\n");
        int mark = run->train_len < e0->len ? eval_bucket(run->train_len, e0->len, e0->n_buckets) : -1;
        for (int b = 0; b < e0->n_buckets; b++) {
            int lo, hi;
            eval_bucket_range(b, e0->len, e0->n_buckets, &lo, &hi);
            char range[32];
            snprintf(range, sizeof range, "%d-%d", lo, hi);
            printf("%c %-13s %9zu", b == mark ? '*' : ' ', range, e0->bucket_n[b]);
            for (int r = 0; r < run->n_rules; r++) {
                const EvalLength *e = &run->res[r][l];
                if (e->status != EVAL_OK || !e->bucket_n[b]) printf(" %10s", "n/a");
                else printf(" %10.4f", e->bucket_sum[b] / e->bucket_n[b]);
            }
            printf("\n");
        }
    }
}

/* --- CSV and JSON: the same rows (io/results.h), each naming model, seed, scheme, rule, data, length --- */

/* a row of rule r with the run's columns set */
static ResultRow run_row(const Run *run, int r, const char *kind, const char *protocol, int length) {
    ResultRow w = result_row();
    w.kind = kind, w.model = run->model_path, w.seed = run->seed, w.scheme = run->scheme[r], w.rule = run->rules[r];
    w.data = run->data_path, w.tokens = (long long)run->n_tokens, w.train_len = run->train_len, w.length = length;
    w.protocol = protocol;
    return w;
}

static void put_row(FILE *f, int json, const ResultRow *w, int *first) {
    if (json) results_json_row(f, &RES_EVAL_JSON, w, first);
    else results_csv_row(f, &RES_EVAL_CSV, w);
}

/* every result row, in order: per rule and length, the protocols then the buckets */
static void write_rows(FILE *f, int json, const Run *run) {
    int first = 1;
    for (int r = 0; r < run->n_rules; r++)
        for (int l = 0; l < run->n_lengths; l++) {
            const EvalLength *e = &run->res[r][l];
            for (int p = 0; p < EVAL_N_PROTOCOLS; p++) {
                ResultRow w = run_row(run, r, "length", eval_protocol_names[p], e->len);
                w.status = eval_result_status(e), w.limit = e->limit;
                w.stride = p == EVAL_NONOVERLAP ? e->len : e->stride;
                w.windows = (long long)e->proto[p].n_windows, w.n = (long long)e->proto[p].n_scored;
                if (e->status == EVAL_OK) w.value = eval_mean(&e->proto[p]), w.ppl = exp(w.value);
                put_row(f, json, &w, &first);
            }
            if (e->status != EVAL_OK) continue; /* nothing computed, no buckets */
            for (int b = 0; b < e->n_buckets; b++) {
                ResultRow w = run_row(run, r, "bucket", eval_protocol_names[EVAL_NONOVERLAP], e->len);
                int lo, hi;
                eval_bucket_range(b, e->len, e->n_buckets, &lo, &hi);
                w.bucket = b, w.pos_lo = lo, w.pos_hi = hi, w.n = (long long)e->bucket_n[b];
                if (w.n) w.value = e->bucket_sum[b] / w.n, w.ppl = exp(w.value);
                put_row(f, json, &w, &first);
            }
        }
    for (int i = 0; i < run->gen.n; i++) { /* then the generation, jump and key-token rows */
        ResultRow w = run->gen.row[i];
        int r = 0;
        while (r + 1 < run->n_rules && strcmp(run->rules[r], w.rule) != 0) r++;
        w.model = run->model_path, w.seed = run->seed, w.scheme = run->scheme[r], w.data = run->data_path;
        w.tokens = (long long)run->n_tokens, w.train_len = run->train_len;
        put_row(f, json, &w, &first);
    }
}

static void write_file(const char *path, int json, const Run *run) {
    MemFile mf; /* written whole: a kill or a full disk leaves the old file */
    FILE *f = memfile_open(&mf);
    if (!f) pelab_die("%s: %s", path, pelab_errmsg);
    if (!json) {
        results_csv_header(f, &RES_EVAL_CSV);
        write_rows(f, 0, run);
    } else {
        json_field(f, "{\n  ", "command", "eval");
        json_field(f, ", ", "model", run->model_path);
        json_field(f, ", ", "seed", run->seed);
        json_field(f, ", ", "data", run->data_path);
        json_field(f, ", ", "dynamic", dynamic_length_names[run->dynamic]);
        fprintf(f, ", \"tokens\": %zu, \"train_len\": %d,\n  \"protocols\": {", run->n_tokens, run->train_len);
        for (int p = 0; p < EVAL_N_PROTOCOLS; p++) json_field(f, p ? ", " : "", eval_protocol_names[p], protocol_defs[p]);
        fprintf(f, "},\n  \"rules\": [");
        for (int r = 0; r < run->n_rules; r++) {
            json_field(f, r ? ",\n    {" : "\n    {", "rule", run->rules[r]);
            json_field(f, ", ", "scheme", run->scheme[r]);
            json_field(f, ", ", "lengths", run->lengths_str[r]);
            fprintf(f, "}");
        }
        fprintf(f, "\n  ],\n  \"rows\": [");
        write_rows(f, 1, run);
        fprintf(f, "\n  ]\n}\n");
    }
    if (memfile_commit(&mf, path) != 0) pelab_die("%s", pelab_errmsg);
}

/* one model per rule, loaded up front so a bad rule fails before any work; then the tokenizer */
static void load_rules(Run *run) {
    const char *scale = run->load.scale;
    snprintf(run->rule_buf, sizeof run->rule_buf, "%s", scale);
    for (char *save = NULL, *tok = strtok_r(run->rule_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (run->n_rules == MAX_RULES) pelab_die("eval: --scale %s: more than %d rules", scale, MAX_RULES);
        int r = run->n_rules++;
        run->rules[r] = tok;
        if (eval_load_rule(run->model_path, tok, precision_or_die(run->load.precision), &run->models[r],
                           r ? NULL : &run->meta) != 0)
            pelab_die("%s", pelab_errmsg);
        load_flags_apply_or_die("eval", &run->load, &run->models[r]);
        pos_spec(&run->models[r].pos, run->scheme[r], sizeof run->scheme[r]);
        pos_lengths(&run->models[r].pos, run->lengths_str[r], sizeof run->lengths_str[r]);
    }
    if (run->n_rules == 0) pelab_die("eval: --scale %s: expected rules such as none,pi:4", scale);
    run->seed = meta_get(&run->meta, "train.seed") ? meta_get(&run->meta, "train.seed") : "";
    run->train_len = run->models[0].cfg.seq_len;
    if (tokenizer_from_image(&run->tok, meta_get(&run->meta, "tokenizer"), run->meta.tokenizer_image,
                             run->meta.tokenizer_len, run->model_path, run->models[0].cfg.vocab_size) != 0)
        pelab_die("%s", pelab_errmsg);
    meta_free(&run->meta); /* the tokenizer keeps its own copy */
}

/* the --data file through the checkpoint's tokenizer, after the --bos token when one is given
 * (bos >= 0), cut at max_tokens (0: all) */
static void load_tokens(Run *run, int max_tokens, int bos) {
    if (corpus_read_file(run->data_path, &run->text, &run->n_file) != 0) pelab_die("%s", pelab_errmsg);
    run->tokenizer = tokenizer_kind_name(&run->tok);
    if (bos >= run->tok.vocab_size)
        pelab_die("eval: --bos %d: expected a token id below the vocabulary size %d", bos, run->tok.vocab_size);
    int first = bos >= 0;
    size_t n_ids;
    int *ids = tokenizer_encode(&run->tok, run->text, run->n_file, 0, &n_ids);
    if (!ids) pelab_die("eval: %s", pelab_errmsg);
    run->tokens = xmalloc(sizeof(int) * (n_ids + 1));
    memcpy(run->tokens + first, ids, sizeof(int) * n_ids);
    free(ids);
    if (first) run->tokens[0] = bos;
    run->n_file = n_ids + first;
    run->n_tokens = max_tokens > 0 && run->n_file > (size_t)max_tokens ? (size_t)max_tokens : run->n_file;
    if (run->n_tokens < 2) pelab_die("eval: %s: need at least 2 tokens, got %zu", run->data_path, run->n_tokens);
}

/* every length against the tokens it would be measured on, before any work: a window longer than
 * the data would be a shorter one reported under the longer one's name */
static void check_lengths(const Run *run, const char *flag, const char *list, int keyppl_tokens) {
    for (int l = 0; l < run->n_lengths; l++) {
        if ((size_t)run->lens[l] > run->n_tokens - 1)
            pelab_die("eval: %s %s: length %d needs %d tokens (a window of inputs and the next one); %s gives %zu%s",
                      flag, list, run->lens[l], run->lens[l] + 1, run->data_path, run->n_tokens,
                      run->n_tokens < run->n_file ? " under --max-tokens" : "");
        if (keyppl_tokens > 0 && run->lens[l] + 1 > keyppl_tokens)
            pelab_die("eval: --keyppl-tokens %d: the key-token perplexity at length %d needs %d tokens", keyppl_tokens,
                      run->lens[l], run->lens[l] + 1);
    }
}

/* eval's progress line: tokens fed, and the work they stand for, for the time left. A token of a
 * window of n tokens costs about 1 + n / (4 dim) tokens without attention: attention's 2 n d
 * multiply-adds per layer (scores and values, a decoder loop) against the projections' and MLP's
 * 12 d^2 (BLAS, several times faster per multiply-add). A rough model: on a dim-32 model here a
 * token at length 256 took 2-10 times one at 32 (a loaded machine); the time left is the rate so
 * far applied to the work left, so it corrects itself as lengths finish. */
typedef struct {
    Progress p;
    double fed, work, total_work;
    int dim;
} EvalProgress;

static double window_work(size_t nw, int dim) { return (double)nw * (1.0 + (double)nw / (4.0 * dim)); }

/* the windows one protocol feeds (eval.c's loop: windows of len advanced by stride over n tokens) */
static void windows_work(size_t n, int len, int stride, int dim, double *fed, double *work) {
    for (size_t s = 0, done = 0, last = n - 1; done < last; s += (size_t)stride) {
        size_t e = s + (size_t)len < last ? s + (size_t)len : last;
        *fed += (double)(e - s), *work += window_work(e - s, dim);
        done = e;
    }
}

static void eval_tick(void *ctx, size_t fed) {
    EvalProgress *ep = ctx;
    ep->fed += (double)fed, ep->work += window_work(fed, ep->dim);
    progress_count(&ep->p, ep->fed, ep->total_work > 0 ? ep->work / ep->total_work : 0, 0, NULL);
}

/* the stride eval_length gets at length len from --stride (0: its default, len / 2) */
static int length_stride(int stride, int len) { return stride > 0 && stride < len ? stride : stride > 0 ? len : 0; }

/* every rule x length that will be computed, counted as eval.c will feed it */
static void eval_progress_begin(EvalProgress *ep, const Run *run, int stride) {
    double fed = 0;
    ep->total_work = ep->fed = ep->work = 0;
    ep->dim = run->models[0].cfg.dim;
    for (int r = 0; r < run->n_rules; r++) {
        long table = pos_max_position(&run->models[r].pos), comp = pos_computable_position(&run->models[r].pos);
        for (int l = 0; l < run->n_lengths; l++) {
            int len = run->lens[l], s = length_stride(stride, len);
            if ((table >= 0 && len > table) || (comp >= 0 && len > comp) || run->n_tokens < 2) continue;
            s = s > 0 ? s : (len / 2 > 0 ? len / 2 : 1);
            windows_work(run->n_tokens, len, len, ep->dim, &fed, &ep->total_work);
            if (s != len) windows_work(run->n_tokens, len, s, ep->dim, &fed, &ep->total_work);
        }
    }
    progress_count_init(&ep->p, stderr, isatty(fileno(stderr)), "eval", "tok", 0, fed, 0, 10);
}

/* speed of one rule x length, its line of the progress (a milestone) */
static void report_length(const Run *run, int r, int l, EvalProgress *ep) {
    const EvalLength *e = &run->res[r][l];
    char st[64];
    eval_status_str(e, st, sizeof st);
    StrBuf b = {0};
    if (e->status != EVAL_OK) sb_printf(&b, "rule %s length %d: %s", run->rules[r], run->lens[l], st);
    else {
        const ScoreResult *a = &e->proto[EVAL_NONOVERLAP], *sl = &e->proto[EVAL_SLIDING];
        sb_printf(&b, "rule %s length %d: nonoverlap %zu tokens %.2f s (%.0f tok/s)", run->rules[r], run->lens[l],
                  a->n_scored, e->seconds[0], a->n_scored / fmax(e->seconds[0], 1e-9));
        if (e->stride == e->len) sb_printf(&b, ", sliding S=%d: the same windows", e->stride);
        else /* sliding feeds about len/S times the tokens it scores */
            sb_printf(&b, ", sliding S=%d %zu windows %.2f s (%.0f scored tok/s)", e->stride, sl->n_windows,
                      e->seconds[1], sl->n_scored / fmax(e->seconds[1], 1e-9));
    }
    progress_count(&ep->p, ep->fed, ep->total_work > 0 ? ep->work / ep->total_work : 1, 1, sb_str(&b));
    sb_free(&b);
}

/* every rule at every length, on the same tokens, with a progress line (rate, time left) */
static void evaluate_all(Run *run, int stride, int buckets) {
    double t_all = now_seconds();
    static EvalProgress ep;
    eval_progress_begin(&ep, run, stride);
    eval_set_tick(eval_tick, &ep);
    for (int r = 0; r < run->n_rules; r++)
        for (int l = 0; l < run->n_lengths; l++) {
            int len = run->lens[l];
            if (eval_length(&run->models[r], run->tokens, run->n_tokens, len, length_stride(stride, len), run->dynamic,
                            buckets, &run->res[r][l]) != 0) {
                progress_done(&ep.p);
                pelab_die("eval: rule %s, length %d: %s", run->rules[r], len, pelab_errmsg);
            }
            report_length(run, r, l, &ep);
        }
    eval_set_tick(NULL, NULL);
    progress_note(&ep.p, "eval: done in %.1f s, peak RSS %ld MB", now_seconds() - t_all, peak_rss_kb() / 1024);
}

static void run_free(Run *run) {
    for (int r = 0; r < run->n_rules; r++) {
        for (int l = 0; l < run->n_lengths; l++) eval_length_free(&run->res[r][l]);
        model_free(&run->models[r]);
    }
    free(run->text), free(run->tokens), free(run->gen.row);
    tokenizer_free(&run->tok);
    free(run);
}

int cmd_eval(int argc, char **argv) {
    const char *data = NULL, *lengths = NULL, *mult = NULL, *csv_path = NULL, *json_path = NULL,
               *dynamic_arg = "window";
    LoadFlags load = LOAD_FLAGS_DEFAULT;
    load.scale = "none";
    int stride = 0, buckets = 16, max_tokens = 65536, threads = 0, bos = -1;
    char rules[1024], methods[1024], scale_help[2200];
    rope_rule_list(rules, sizeof rules, ",", 0, 1);
    extend_list(methods, sizeof methods, ",", 0);
    snprintf(scale_help, sizeof scale_help, "scaling rules side by side: none (the stored scheme),%s and extension "
             "methods %s (see --help of score)", rules, methods);
    EvalGenOpts gen = {.gen_tokens = 0, .gen_prompts = 3, .keyppl_tokens = 0, .key_gain = 2.0f};
    const OptSpec opts[] = {
        {"--data", OPT_STR, &data, 0, 0, "held-out text file (encoded by the checkpoint's tokenizer)"},
        {"--lengths", OPT_STR, &lengths, 0, 0, "evaluation lengths, e.g. 64,128,256"},
        {"--mult", OPT_STR, &mult, 0, 0, "lengths as multiples of the training length (default 0.5,1,2,4,8)"},
        {"--stride", OPT_INT, &stride, 0, 1 << 24, "sliding-window stride (0: L_eval/2; capped at L_eval)"},
        {"--buckets", OPT_INT, &buckets, 1, 1 << 20, "position buckets per length (at most L_eval)"},
        {"--csv", OPT_OUT_FILE, &csv_path, 0, 0, "write every result row as CSV here"},
        {"--json", OPT_OUT_FILE, &json_path, 0, 0, "write every result row as JSON here"},
        {"--max-tokens", OPT_INT, &max_tokens, 0, 1 << 30, "use the first N tokens of the data (0: all)"},
        {"--bos", OPT_INT, &bos, -1, 1 << 30,
         "put this token id before the text (a model trained with train --sink-token; -1: none)"},
        {"--gen-tokens", OPT_INT, &gen.gen_tokens, -1, 1 << 24, "long generation per rule: text length (-1: 8 x L; "
                                                                "0: off), repetition and own loss by position, loss jump at L"},
        {"--gen-prompts", OPT_INT, &gen.gen_prompts, 1, 64, "texts per rule (prompts from the data)"},
        {"--keyppl-tokens", OPT_INT, &gen.keyppl_tokens, 0, 1 << 30, "key-token perplexity on the first N data tokens "
                                                                     "(0: off); the first rule picks the key tokens"},
        {"--key-gain", OPT_FLOAT, &gen.key_gain, 0, 100, "key token: log-prob gain (nats) with context L over L/4"},
        OPT_DYNAMIC_ROW(&dynamic_arg),
        LOAD_FLAG_ROWS_WITH(&load, scale_help),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[1];
    int n_pos;
    args_parse("eval", "CKPT --data FILE [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 1,
               &n_pos);
    if (n_pos != 1) pelab_die("eval: expected a checkpoint (see pelab eval --help)");
    if (!data) pelab_die("eval: --data FILE is required (held-out text)");
    if (lengths && mult) pelab_die("eval: give --lengths or --mult, not both");
    DynamicLength dynamic_length;
    if (dynamic_length_parse("--dynamic", dynamic_arg, &dynamic_length) != 0) pelab_die("eval: %s", pelab_errmsg);
    set_threads(threads);

    Run *run = xcalloc(1, sizeof *run);
    run->dynamic = dynamic_length;
    run->model_path = pos_args[0];
    run->data_path = data;
    run->load = load;
    tokenizer_init_byte(&run->tok);
    load_rules(run);
    run->n_lengths = eval_parse_lengths(lengths, mult ? mult : "0.5,1,2,4,8", run->train_len, run->lens, MAX_LENGTHS);
    if (run->n_lengths < 0) pelab_die("eval: %s", pelab_errmsg);
    load_tokens(run, max_tokens, bos);
    check_lengths(run, lengths ? "--lengths" : "--mult", lengths ? lengths : mult ? mult : "0.5,1,2,4,8",
                 gen.keyppl_tokens);
    evaluate_all(run, stride, buckets);

    print_header(run);
    print_table(run);
    print_buckets(run);
    gen.seed = strtoull(run->seed, NULL, 10);
    eval_gen_print(run->models, run->rules, run->n_rules, run->tokens, run->n_tokens, run->train_len, run->lens,
                   run->n_lengths, &gen, &run->gen);
    if (csv_path) write_file(csv_path, 0, run);
    if (json_path) write_file(json_path, 1, run);
    run_free(run);
    return 0;
}
