/* test_eval.c: the evaluation protocols on tiny models: eval at L is score's number; stride = L is
 * the non-overlapping protocol exactly; position buckets add back up to the overall loss; the
 * sliding protocol scores every token once and equals a full forward over each token's window;
 * lengths past a learned table are reported, not computed; a sink token opens every window
 * (eval_length_sink); `pelab eval` end to end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/rng.h"
#include "../core/stats.h"
#include "../infer/eval.h"
#include "../infer/score.h"
#include "../io/checkpoint.h"
#include "../core/json.h"
#include "test.h"

/* a deterministic stream over the tiny vocabulary (13) with some structure */
static void make_tokens(int *t, size_t n, int vocab) {
    Rng rng;
    rng_seed(&rng, 7);
    for (size_t i = 0; i < n; i++) t[i] = i % 5 == 4 ? t[i - 3] : (int)rng_below(&rng, vocab);
}

static void agrees_with_score(void) {
    Model m;
    if (tiny_model(&m, "rope", 2, 1, 11) != 0) {
        CHECK(0, "tiny rope model: %s", pelab_errmsg);
        return;
    }
    enum { N = 203 };
    int tok[N];
    make_tokens(tok, N, m.cfg.vocab_size);
    int L = m.cfg.seq_len;
    ScoreResult s, w;
    score_tokens(&m, tok, N, L, DYNAMIC_WINDOW, NULL, &s);
    EvalLength e;
    int rc = eval_length(&m, tok, N, L, 0, DYNAMIC_WINDOW, 4, &e);
    CHECK(rc == 0 && e.status == EVAL_OK && e.proto[EVAL_NONOVERLAP].nll_sum == s.nll_sum &&
              e.proto[EVAL_NONOVERLAP].n_scored == s.n_scored && e.proto[EVAL_NONOVERLAP].n_windows == s.n_windows,
          "eval at L = score_tokens: %.9f vs %.9f (%zu vs %zu tokens)", eval_mean(&e.proto[EVAL_NONOVERLAP]),
          s.nll_sum / s.n_scored, e.proto[EVAL_NONOVERLAP].n_scored, s.n_scored);
    /* the interval: a bootstrap over the windows (blocks of L scored targets), recomputed here from
     * the per-token trace; it brackets the mean */
    {
        float lp[N];
        EvalTrace tr = {lp, NULL};
        ScoreResult r;
        eval_windows(&m, tok, N, L, L, DYNAMIC_WINDOW, 0, NULL, NULL, &tr, &r);
        double nll[N] = {0}, cnt[N] = {0}, lo = NAN, hi = NAN;
        size_t nb = (N - 2) / L + 1;
        for (int t = 1; t < N; t++) nll[(t - 1) / L] -= lp[t], cnt[(t - 1) / L] += 1;
        stats_bootstrap_ratio(nll, cnt, nb, STATS_BOOTSTRAP_REPS, 1, 0.95, &lo, &hi);
        double mean = eval_mean(&e.proto[EVAL_NONOVERLAP]);
        CHECK(e.ci_lo[EVAL_NONOVERLAP] == lo && e.ci_hi[EVAL_NONOVERLAP] == hi && lo < mean && mean < hi,
              "eval's interval is the bootstrap over its windows: [%g, %g] vs [%g, %g], mean %g",
              e.ci_lo[EVAL_NONOVERLAP], e.ci_hi[EVAL_NONOVERLAP], lo, hi, mean);
    }
    eval_length_free(&e);
    rc = eval_length(&m, tok, L + 1, L, 0, DYNAMIC_WINDOW, 4, &e); /* one window: no interval */
    CHECK(rc == 0 && isnan(e.ci_lo[EVAL_NONOVERLAP]) && isnan(e.ci_hi[EVAL_NONOVERLAP]),
          "one window has no interval: [%g, %g]", e.ci_lo[EVAL_NONOVERLAP], e.ci_hi[EVAL_NONOVERLAP]);
    eval_length_free(&e);

    /* stride = length through the sliding code path: the non-overlapping numbers, bit for bit */
    for (int len = 3; len <= 24; len += 7) {
        score_tokens(&m, tok, N, len, DYNAMIC_WINDOW, NULL, &s);
        eval_windows(&m, tok, N, len, len, DYNAMIC_WINDOW, 0, NULL, NULL, NULL, &w);
        CHECK(w.nll_sum == s.nll_sum && w.n_scored == N - 1 && w.n_windows == s.n_windows,
              "len %d: stride = len reproduces non-overlapping exactly (%.12g vs %.12g)", len, w.nll_sum, s.nll_sum);
    }

    /* buckets weighted by their counts average back to the overall loss, at several bucketings */
    int shapes[][2] = {{8, 16}, {16, 16}, {24, 5}, {10, 3}, {4, 9}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        eval_length(&m, tok, N, shapes[k][0], 0, DYNAMIC_WINDOW, shapes[k][1], &e);
        double sum = 0.0;
        size_t cnt = 0;
        int contiguous = 1, prev_hi = -1;
        for (int b = 0; b < e.n_buckets; b++) {
            int lo, hi;
            eval_bucket_range(b, e.len, e.n_buckets, &lo, &hi);
            contiguous &= lo == prev_hi + 1 && hi >= lo && eval_bucket(lo, e.len, e.n_buckets) == b &&
                          eval_bucket(hi, e.len, e.n_buckets) == b;
            prev_hi = hi;
            sum += (e.bucket_sum[b] / e.bucket_n[b]) * e.bucket_n[b];
            cnt += e.bucket_n[b];
        }
        double all = eval_mean(&e.proto[EVAL_NONOVERLAP]);
        CHECK(contiguous && prev_hi == e.len - 1 && e.n_buckets == (shapes[k][1] < e.len ? shapes[k][1] : e.len),
              "len %d, %d buckets tile 0..len-1", e.len, shapes[k][1]);
        CHECK(cnt == e.proto[EVAL_NONOVERLAP].n_scored && fabs(sum / cnt - all) < 1e-9,
              "len %d, %d buckets: weighted mean %.12f = overall %.12f", e.len, shapes[k][1], sum / cnt, all);
        eval_length_free(&e);
    }
    model_free(&m);
}

/* the window that scores target t under the protocol's definition: the first window holds
 * targets 1..len, window w >= 1 (start w*S) the last S targets w*S+len-S+1 .. w*S+len */
static size_t window_start(size_t t, int len, int stride) {
    if (t <= (size_t)len) return 0;
    return (t - len + stride - 1) / stride * stride;
}

static void sliding_brute_force(void) {
    Model m;
    if (tiny_model(&m, "alibi", 4, 1, 5) != 0) {
        CHECK(0, "tiny alibi model: %s", pelab_errmsg);
        return;
    }
    enum { LEN = 8, S = 3, N = LEN + 10 * S + 1 }; /* windows end exactly at the stream's end */
    int tok[N + 40];
    make_tokens(tok, N + 40, m.cfg.vocab_size);
    float lp[N];
    int count[N] = {0};
    EvalTrace tr = {lp, count};
    ScoreResult r;
    CHECK(eval_windows(&m, tok, N, LEN, S, DYNAMIC_WINDOW, 0, NULL, NULL, &tr, &r) == 0, "sliding eval runs: %s",
          pelab_errmsg);
    int once = count[0] == 0;
    for (int t = 1; t < N; t++) once &= count[t] == 1;
    CHECK(once && r.n_scored == N - 1 && r.n_windows == 11, "sliding: every token after the first scored once (%zu "
          "scored, %zu windows)", r.n_scored, r.n_windows);

    /* brute force: a full training forward over each target's window, its log-prob at that row */
    model_alloc_train(&m, 1, LEN);
    int in[LEN], tg[LEN], pos[LEN];
    for (int i = 0; i < LEN; i++) pos[i] = i;
    float worst = 0.0f;
    int min_ctx = LEN;
    double brute_sum = 0.0;
    for (size_t t = 1; t < N; t++) {
        size_t s = window_start(t, LEN, S);
        for (int i = 0; i < LEN; i++) in[i] = tok[s + i], tg[i] = tok[s + i + 1];
        model_forward(&m, in, tg, pos, 1, LEN);
        int row = (int)(t - 1 - s);
        float d = fabsf(-m.acts.losses[row] - lp[t]);
        worst = d > worst ? d : worst;
        if (s > 0 && row + 1 < min_ctx) min_ctx = row + 1;
        brute_sum += m.acts.losses[row];
    }
    CHECK(worst < 1e-4f && fabs(brute_sum - r.nll_sum) < 1e-3, "sliding = brute-force forward per token (max diff "
          "%.2e, sums %.6f vs %.6f)", worst, brute_sum, r.nll_sum);
    CHECK(min_ctx >= LEN - S, "sliding: every token past the first window sees >= L - S = %d tokens (min %d)",
          LEN - S, min_ctx);

    /* a ragged end still scores each token once */
    int count2[N + 40];
    memset(count2, 0, sizeof count2);
    EvalTrace tr2 = {NULL, count2};
    eval_windows(&m, tok, N + 17, LEN, 5, DYNAMIC_WINDOW, 0, NULL, NULL, &tr2, &r);
    once = count2[0] == 0;
    for (int t = 1; t < N + 17; t++) once &= count2[t] == 1;
    CHECK(once && r.n_scored == N + 16, "sliding, ragged end: each token scored once");
    model_free(&m);
}

static void learned_past_table(void) {
    Model m;
    if (tiny_model(&m, "learned", 4, 1, 3) != 0) {
        CHECK(0, "tiny learned model: %s", pelab_errmsg);
        return;
    }
    int tok[100];
    make_tokens(tok, 100, m.cfg.vocab_size);
    EvalLength e;
    int rc = eval_length(&m, tok, 100, 16, 0, DYNAMIC_WINDOW, 4, &e);
    char st[64];
    eval_status_str(&e, st, sizeof st);
    CHECK(rc == 0 && e.status == EVAL_PAST_TABLE && e.proto[0].n_scored == 0 && e.proto[1].n_scored == 0 &&
              strcmp(st, "n/a (past table of 8)") == 0,
          "learned: length 16 past the table of 8 is reported, not computed: rc %d, '%s'", rc, st);
    eval_length_free(&e);
    rc = eval_length(&m, tok, 100, 8, 0, DYNAMIC_WINDOW, 4, &e);
    CHECK(rc == 0 && e.status == EVAL_OK && e.proto[0].n_scored == 99, "learned: length 8 computed");
    eval_length_free(&e);
    model_free(&m);

    int lens[8];
    int n = eval_parse_lengths(NULL, "0.5,1,2,16", 64, lens, 8);
    CHECK(n == 4 && lens[0] == 32 && lens[1] == 64 && lens[2] == 128 && lens[3] == 1024, "--mult parses");
    CHECK(eval_parse_lengths("64,x", NULL, 64, lens, 8) == -1 && strstr(pelab_errmsg, "--lengths"),
          "--lengths 64,x refused: %s", pelab_errmsg);
}

/* --- the command line --- */

/* args after "pelab " */
static int run(const char *args, char *out, size_t cap) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "./pelab %s", args);
    return run_pelab(cmd, out, cap);
}

static void expect_error(const char *args, const char *needle) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "./pelab %s", args);
    expect_pelab_error(cmd, needle);
}

static int save_tiny(const char *path, const char *spec) {
    ModelConfig c = {.vocab_size = 256, .dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2,
                     .hidden_dim = 32, .seq_len = 16, .norm_eps = 1e-5f, .tied = 1};
    Model m;
    if (model_create(&m, &c, spec) != 0) return -1;
    model_init_weights(&m, 9);
    int rc = checkpoint_save(path, &m, NULL, NULL, NULL);
    model_free(&m);
    return rc;
}


/* the rows of an eval --json file whose kind is one of kinds (NULL: all; every row must name its
 * scheme, protocol and nll); -1 if the file does not read or parse */
static int json_rows(const char *path, const char *const *kinds) {
    unsigned char *buf;
    size_t n;
    JsonDoc doc;
    if (read_file(path, &buf, &n) != 0) return -1;
    if (json_parse(&doc, (char *)buf, n) != 0) {
        free(buf);
        return -1;
    }
    const JsonNode *rows = json_get(doc.root, "rows");
    int count = rows ? 0 : -1;
    for (size_t i = 0; rows && i < rows->n_children; i++) {
        const JsonNode *r = json_at(rows, i), *k = json_get(r, "kind");
        if (!json_get(r, "scheme") || !json_get(r, "protocol") || !json_get(r, "nll")) count = -1;
        int match = !kinds;
        for (int q = 0; kinds && kinds[q] && k; q++) match |= strcmp(k->str, kinds[q]) == 0;
        if (count >= 0) count += match;
    }
    json_free(&doc);
    free(buf);
    return count;
}

static void cli(void) {
    static char out[1 << 16], args[4096], rope[512], learned[512], text[512], csv[512], json[512];
    const char *dir = test_tmpdir();
    snprintf(rope, sizeof rope, "%s/eval_rope.safetensors", dir);
    snprintf(learned, sizeof learned, "%s/eval_learned.safetensors", dir);
    snprintf(text, sizeof text, "%s/eval_text.txt", dir);
    snprintf(csv, sizeof csv, "%s/eval.csv", dir);
    snprintf(json, sizeof json, "%s/eval.json", dir);
    CHECK(save_tiny(rope, "rope") == 0 && save_tiny(learned, "learned") == 0, "tiny checkpoints: %s", pelab_errmsg);
    FILE *f = fopen(text, "w");
    for (int i = 0; f && i < 60; i++) fprintf(f, "Tom found the red key by the old door on day %d. ", i);
    if (f) fclose(f);

    /* 2 rules x 3 lengths: 6 x 2 protocol rows + 6 x 4 bucket rows */
    snprintf(args, sizeof args, "eval %s --data %s --mult 0.5,1,2 --scale none,pi:2 --buckets 4 --csv %s --json %s",
             rope, text, csv, json);
    int rc = run(args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "nonoverlap") && strstr(out, "sliding") && strstr(out, "scale=pi:2") &&
              strstr(out, "training 16; accepted unbounded") && strstr(out, "16=L") && strstr(out, "* 16-23"),
          "pelab eval prints the table, schemes, lengths and the L marker (exit %d): %s", rc, out);
    unsigned char *buf;
    size_t n;
    if (read_file(csv, &buf, &n) == 0) {
        buf[n - 1] = 0;
        CHECK(strncmp((char *)buf, "kind,model,seed,scheme,rule,data,tokens,train_len,length,protocol,", 66) == 0 &&
                  count_lines((char *)buf) == 1 + 12 + 6 * 4 - 1 && strstr((char *)buf, "\"rope:base="),
              "CSV: header and %d rows", count_lines((char *)buf));
        free(buf);
    } else CHECK(0, "CSV written: %s", pelab_errmsg);
    CHECK(json_rows(json, NULL) == 12 + 24, "JSON parses with 36 rows naming scheme, protocol and nll: %s",
          pelab_errmsg);

    /* the long-generation, loss-jump and key-token sections, for each rule */
    snprintf(args, sizeof args, "eval %s --data %s --mult 1,2 --scale none,pi:2 --gen-tokens -1 --keyppl-tokens 500 "
             "--key-gain 0 --csv %s --json %s 2>/dev/null", rope, text, csv, json);
    rc = run(args, out, sizeof out);
    /* ... and the same figures as rows of the files: per rule 8 buckets x 3 generation metrics, a
     * jump, key and all per length, one share */
    if (read_file(csv, &buf, &n) == 0) {
        buf[n - 1] = 0;
        const char *b = (const char *)buf;
        int gen = 0, jump = 0, key = 0;
        for (const char *l = b; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            gen += strncmp(l, "gen,", 4) == 0, jump += strncmp(l, "jump,", 5) == 0, key += strncmp(l, "keyppl,", 7) == 0;
        }
        CHECK(gen == 2 * 8 * 3 && jump == 2 && key == 2 * 2 * 2 + 1 && strstr(b, ",rep4,,7,112,127,") &&
                  !strstr(b, "nan"),
              "CSV: the generation, jump and key-token rows (%d, %d, %d)", gen, jump, key);
        free(buf);
    } else CHECK(0, "CSV written: %s", pelab_errmsg);
    static const char *const new_kinds[] = {"gen", "jump", "keyppl", NULL};
    int extra = json_rows(json, new_kinds);
    CHECK(extra == 48 + 2 + 9, "JSON parses with the new rows too (%d): %s", extra, pelab_errmsg);
    CHECK(rc == 0 && strstr(out, "long generation: 3 prompts of 4 tokens") && strstr(out, "  pi:2       112-127*") &&
              strstr(out, "loss jump at L: windows of 2L = 32") && strstr(out, "key-token perplexity") &&
              strstr(out, "  pi:2             32 ") && !strstr(out, "nan"),
          "pelab eval --gen-tokens --keyppl-tokens prints its sections (exit %d): %s", rc, out);
    snprintf(args, sizeof args, "eval %s --data %s --lengths 8,16,32 --gen-tokens 40 2>/dev/null", learned, text);
    rc = run(args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "  none       16-31*") && !strstr(out, "32-47") && strstr(out, "n/a (past the table)"),
          "learned: generation stops at the table, no loss jump (exit %d): %s", rc, out);

    /* a learned table: lengths past it are n/a rows, the run succeeds */
    snprintf(args, sizeof args, "eval %s --data %s --lengths 8,16,32 2>/dev/null", learned, text);
    rc = run(args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "n/a (past table of 16)") && strstr(out, "length 32: n/a"),
          "learned: length 32 reported as n/a (exit %d): %s", rc, out);

    snprintf(args, sizeof args, "eval %s --data %s --scale pi:4", learned, text);
    expect_error(args, "pi:4");
    snprintf(args, sizeof args, "eval %s --data %s --lengths 16,abc", rope, text);
    expect_error(args, "--lengths");
    snprintf(args, sizeof args, "eval %s --data %s --lengths 16 --mult 2", rope, text);
    expect_error(args, "--mult");
    snprintf(args, sizeof args, "eval %s --data %s --buckets 0", rope, text);
    expect_error(args, "--buckets");
    snprintf(args, sizeof args, "eval %s --data /nonexistent/held.txt", rope);
    expect_error(args, "/nonexistent/held.txt");
    snprintf(args, sizeof args, "eval %s", rope);
    expect_error(args, "--data");
    expect_error("eval /nonexistent.safetensors --data x", "/nonexistent.safetensors");
    snprintf(args, sizeof args, "eval %s --data %s --scale none,bogus:2", rope, text);
    expect_error(args, "bogus");

    /* LongRoPE's factor file through eval, score and sample (head_dim 8: 4 pairs); 3 factors refused
     * in one line naming the file */
    static char lr[512], lr3[512];
    snprintf(lr, sizeof lr, "%s/eval_lr.json", dir);
    snprintf(lr3, sizeof lr3, "%s/eval_lr3.json", dir);
    FILE *lf = fopen(lr, "w"), *lf3 = fopen(lr3, "w");
    if (lf) fputs("{\"short_factor\": [1, 1, 1.5, 2], \"long_factor\": [1, 2, 4, 8], "
                  "\"original_max_position_embeddings\": 16, \"max_position_embeddings\": 64}", lf), fclose(lf);
    if (lf3) fputs("{\"short_factor\": [1, 1, 1.5], \"long_factor\": [1, 2, 4]}", lf3), fclose(lf3);
    snprintf(args, sizeof args, "eval %s --data %s --mult 1,2 --scale none,longrope:%s", rope, text, lr);
    rc = run(args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "scale=longrope:"), "eval --scale none,longrope:PATH (exit %d): %s", rc, out);
    snprintf(args, sizeof args, "score %s %s --len 32 --scale longrope:%s", rope, text, lr);
    rc = run(args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "scale=longrope:"), "score --scale longrope:PATH (exit %d): %s", rc, out);
    snprintf(args, sizeof args, "sample %s -n 24 --seed 1 --scale longrope:%s", rope, lr);
    rc = run(args, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "scale=longrope:"), "sample past L with --scale longrope:PATH (exit %d): %s", rc, out);
    snprintf(args, sizeof args, "score %s %s --scale longrope:%s", rope, text, lr3);
    expect_error(args, "eval_lr3.json");
}

/* eval_length_sink: every window's first input is the sink token, its targets the text's own. On a
 * text whose every window start past the first already holds the sink, that is the text with its
 * first token replaced (both protocols, to the bit); elsewhere it differs from plain eval_length */
static void sink_windows(void) {
    Model m;
    if (tiny_model(&m, "rope", 2, 1, 11) != 0) {
        CHECK(0, "tiny rope model: %s", pelab_errmsg);
        return;
    }
    enum { N = 97, LEN = 16, SINK = 0 };
    int tok[N], opened[N];
    make_tokens(tok, N, m.cfg.vocab_size);
    for (int i = 0; i < N; i++) tok[i] = tok[i] == SINK ? 1 : tok[i];
    for (int i = LEN / 2; i < N; i += LEN / 2) tok[i] = SINK; /* every window start of both protocols */
    memcpy(opened, tok, sizeof tok);
    opened[0] = SINK;
    EvalLength a, b, plain;
    int rc = eval_length_sink(&m, tok, N, LEN, 0, DYNAMIC_WINDOW, 4, SINK, &a);
    rc |= eval_length(&m, opened, N, LEN, 0, DYNAMIC_WINDOW, 4, &b);
    rc |= eval_length(&m, tok, N, LEN, 0, DYNAMIC_WINDOW, 4, &plain);
    for (int p = 0; p < EVAL_N_PROTOCOLS; p++)
        CHECK(rc == 0 && a.proto[p].nll_sum == b.proto[p].nll_sum && a.proto[p].n_scored == b.proto[p].n_scored &&
                  a.proto[p].nll_sum != plain.proto[p].nll_sum,
              "%s: the sink opens every window (%.9g, opened text %.9g, plain %.9g)", eval_protocol_names[p],
              a.proto[p].nll_sum, b.proto[p].nll_sum, plain.proto[p].nll_sum);
    eval_length_free(&a), eval_length_free(&b), eval_length_free(&plain);
    tok[LEN] = 3; /* a window start that is not the sink: replaced as an input, still scored as a target */
    memcpy(opened, tok, sizeof tok);
    opened[0] = SINK;
    eval_length_sink(&m, tok, N, LEN, LEN, DYNAMIC_WINDOW, 4, SINK, &a);
    eval_length(&m, opened, N, LEN, LEN, DYNAMIC_WINDOW, 4, &b);
    CHECK(a.proto[EVAL_NONOVERLAP].nll_sum != b.proto[EVAL_NONOVERLAP].nll_sum &&
              a.proto[EVAL_NONOVERLAP].n_scored == N - 1,
          "a window start replaced as input only: every target still scored once (%zu)", a.proto[EVAL_NONOVERLAP].n_scored);
    eval_length_free(&a), eval_length_free(&b);
    rc = eval_length_sink(&m, tok, N, LEN, 0, DYNAMIC_WINDOW, 4, m.cfg.vocab_size, &a);
    CHECK(rc == -1 && strstr(pelab_errmsg, "sink token") && strstr(pelab_errmsg, "vocabulary size"),
          "a sink past the vocabulary refused: %s", pelab_errmsg);
    eval_length_free(&a);
    model_free(&m);
}

void test_eval(void) {
    agrees_with_score();
    sink_windows();
    sliding_brute_force();
    learned_past_table();
    cli();
}
