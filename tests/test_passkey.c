/* test_passkey.c: passkey documents (exact lengths, depth at a sentence boundary, the key twice,
 * the question last), training windows and the mix, ranking and exact match on injected
 * log-probs (an oracle that reads the key), the KV-cache scorer against a full forward, resume
 * with --passkey-frac, and `pelab passkey` end to end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../infer/generate.h"
#include "../infer/passkey.h"
#include "../io/checkpoint.h"
#include "../model/layers.h"
#include "../train/train.h"
#include "../data/tokenizer.h"
#include "test.h"

static int count_substr(const char *s, const char *sub) {
    int n = 0;
    for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) n++;
    return n;
}

static void documents(void) {
    int lengths[] = {PASSKEY_MIN_LEN, 64, 65, 128, 300, 1000};
    double depths[] = {0.0, 0.1, 0.25, 0.5, 0.77, 1.0};
    char text[1100], key_s[8];
    int ok_len = 1, ok_depth = 1, ok_key = 1, ok_end = 1;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        for (size_t j = 0; j < sizeof depths / sizeof depths[0]; j++) {
            PasskeyDoc d;
            int key = 10000 + 7919 * (int)(i * 6 + j) % 90000;
            if (passkey_document(text, lengths[i], depths[j], key, &d) != 0) {
                CHECK(0, "document %d: %s", lengths[i], pelab_errmsg);
                continue;
            }
            ok_len &= (int)strlen(text) == lengths[i] && d.total == lengths[i] &&
                      d.prompt_len == lengths[i] - PASSKEY_ANSWER_LEN && d.filler_len == lengths[i] - PASSKEY_MIN_LEN;
            /* at or before depth * filler, by less than the longest sentence ("There and back again. ") */
            double want = depths[j] * d.filler_len;
            const char *at = text + d.sentence_offset;
            ok_depth &= d.depth_offset <= want && want - d.depth_offset < 22 &&
                        d.sentence_offset == d.filler_start + d.depth_offset &&
                        (d.depth_offset == 0 ? at[-1] == '\n' : at[-1] == ' ' && at[-2] == '.');
            snprintf(key_s, sizeof key_s, "%d", key);
            char sentence[32];
            snprintf(sentence, sizeof sentence, "%.19s", at);
            char prompt[1100];
            snprintf(prompt, sizeof prompt, "%.*s", d.prompt_len, text);
            ok_key &= count_substr(sentence, key_s) == 2 && count_substr(prompt, key_s) == 2 &&
                      strncmp(text + d.key_offset, key_s, 5) == 0 && strncmp(at, "Key: ", 5) == 0;
            char answer[8];
            snprintf(answer, sizeof answer, " %d", key);
            ok_end &= strncmp(prompt + d.prompt_len - 5, "\nKey:", 5) == 0 && strcmp(text + d.prompt_len, answer) == 0;
        }
    CHECK(ok_len, "documents have exactly the asked total length (prompt = total - 6)");
    CHECK(ok_depth, "key sentence at the last sentence start at or before depth * filler length");
    CHECK(ok_key, "the key appears exactly twice, both in the key sentence");
    CHECK(ok_end, "the prompt ends with the question, the document with the answer");
    PasskeyDoc d;
    CHECK(passkey_document(text, PASSKEY_MIN_LEN - 1, 0.5, 12345, &d) == -1 && strstr(pelab_errmsg, "44"),
          "a document shorter than the minimum is refused: %s", pelab_errmsg);
    passkey_document(text, 200, 0.5, 12345, &d);
    CHECK(!strchr(text + d.filler_start, '\n') || strchr(text + d.filler_start, '\n') == text + d.prompt_len - 5,
          "one filler line between the instruction and the question");
}

static void windows_and_mix(void) {
    Rng rng;
    rng_seed(&rng, 11);
    enum { T = 64 };
    int tok[T + 1], ok = 1;
    for (int r = 0; r < 50; r++) {
        passkey_window(&rng, T + 1, tok);
        char s[T + 2];
        for (int i = 0; i <= T; i++) s[i] = (char)tok[i];
        s[T + 1] = 0;
        const char *k = strstr(s, "Key: ");
        ok &= k && s[T - 5] == ' ' && strncmp(s + T - 4, k + 5, 5) == 0 && strncmp(s + T - 10, "\nKey: ", 6) == 0;
    }
    CHECK(ok, "training windows are T+1 tokens ending with the answer (the key of the window)");

    Dataset d;
    if (dataset_load(&d, "synth:stories", 0.1, 1, 20000, T) != 0) {
        CHECK(0, "dataset: %s", pelab_errmsg);
        return;
    }
    enum { B = 8 };
    int in_a[B * T], tg_a[B * T], in_b[B * T], tg_b[B * T];
    Rng ra, rb;
    rng_seed(&ra, 5), rng_seed(&rb, 5);
    dataset_train_batch(&d, &ra, B, T, in_a, tg_a);
    passkey_mix_batch(&d, &rb, 0.0f, B, T, in_b, tg_b);
    CHECK(memcmp(in_a, in_b, sizeof in_a) == 0 && memcmp(tg_a, tg_b, sizeof tg_a) == 0 && ra.state == rb.state,
          "--passkey-frac 0: the same batches and draws as without the mix");
    passkey_mix_batch(&d, &rb, 1.0f, B, T, in_b, tg_b);
    int all = 1;
    for (int b = 0; b < B; b++) all &= in_b[b * T] == 'F' && tg_b[b * T + T - 6] == ' ' && tg_b[b * T + T - 7] == ':';
    CHECK(all, "--passkey-frac 1: every row is a passkey window whose targets end with the answer");
    int n_pk = 0;
    for (int s = 0; s < 100; s++) {
        passkey_mix_batch(&d, &rb, 0.25f, B, T, in_b, tg_b);
        for (int b = 0; b < B; b++) n_pk += in_b[b * T] == 'F' && in_b[b * T + 4] == ' ' && in_b[b * T + 8] == ' ';
    }
    CHECK(n_pk > 150 && n_pk < 250, "--passkey-frac 0.25: %d of 800 rows are passkey documents", n_pk);
    dataset_free(&d);
}

/* an oracle that reads the key off the prompt; an "blind" scorer that cannot */
static int prompt_key(const int *prompt, int n) {
    for (int i = 0; i + 10 <= n; i++)
        if (prompt[i] == 'K' && prompt[i + 1] == 'e' && prompt[i + 2] == 'y' && prompt[i + 3] == ':') {
            int k = 0;
            for (int j = 5; j < 10; j++) k = k * 10 + prompt[i + j] - '0';
            return k;
        }
    return -1;
}
static int oracle_greedy(void *ctx, const int *prompt, int n_prompt, int *out, int n_new) {
    (void)ctx;
    char buf[16];
    snprintf(buf, sizeof buf, " %d", prompt_key(prompt, n_prompt));
    for (int i = 0; i < n_new; i++) out[i] = (unsigned char)buf[i];
    return 0;
}
static int oracle_logprob(void *ctx, const int *prompt, int n_prompt, const int *answer, int n_answer, double *out) {
    (void)ctx;
    int k = 0;
    for (int i = 1; i < n_answer; i++) k = k * 10 + answer[i] - '0';
    *out = k == prompt_key(prompt, n_prompt) ? -0.1 : -12.0;
    return 0;
}
static int blind_greedy(void *ctx, const int *prompt, int n_prompt, int *out, int n_new) {
    (void)ctx, (void)prompt, (void)n_prompt;
    for (int i = 0; i < n_new; i++) out[i] = i ? '0' : ' ';
    return 0;
}
static int blind_logprob(void *ctx, const int *prompt, int n_prompt, const int *answer, int n_answer, double *out) {
    (void)ctx, (void)prompt, (void)n_prompt, (void)answer, (void)n_answer;
    *out = -5.0;
    return 0;
}

static void ranking_and_match(void) {
    double s1[] = {-1, -2, -3}, s2[] = {-3, -1, -2}, s3[] = {0, 0, 0, 0};
    CHECK(passkey_rank(s1, 3) == 1.0 && passkey_rank(s2, 3) == 3.0 && passkey_rank(s3, 4) == 2.5,
          "rank: best 1, worst n, ties share the middle");
    CHECK(passkey_match(" 12345.", 7, 12345) && passkey_match("12345", 5, 12345) && passkey_match("  12345", 7, 12345),
          "exact match: ' 12345.', '12345', '  12345'");
    CHECK(!passkey_match(" 1234", 5, 12345) && !passkey_match(" 12346", 6, 12345) &&
              !passkey_match(" 123456", 7, 12345) && !passkey_match("x12345", 6, 12345),
          "no match: ' 1234', ' 12346', ' 123456', 'x12345'");

    PasskeyScorer oracle = {oracle_greedy, oracle_logprob, NULL, NULL}, blind = {blind_greedy, blind_logprob, NULL, NULL};
    PasskeyCell c;
    CHECK(passkey_cell(&oracle, 200, 50, 20, 3, &c) == 0 && c.exact == 20 && c.rank_sum == 20.0,
          "oracle: 20/20 exact, every true key ranked 1 (%d, %.1f)", c.exact, c.rank_sum);
    CHECK(passkey_cell(&blind, 200, 50, 20, 3, &c) == 0 && c.exact == 0 && c.rank_sum == 20 * 5.5,
          "blind scorer: 0 exact, mean rank 5.5 (chance)");
    /* a wrong key offered as the answer is rejected: the prompt's key outranks it */
    char text[201];
    int prompt[200], ds[PASSKEY_CANDIDATES - 1];
    PasskeyDoc d;
    passkey_document(text, 200, 0.3, 54321, &d);
    for (int i = 0; i < d.prompt_len; i++) prompt[i] = (unsigned char)text[i];
    Rng rng;
    rng_seed(&rng, 9);
    passkey_distractors(&rng, 54321, ds, PASSKEY_CANDIDATES - 1);
    int distinct = 1;
    for (int i = 0; i < PASSKEY_CANDIDATES - 1; i++)
        for (int j = 0; j < i; j++) distinct &= ds[i] != ds[j] && ds[i] != 54321 && ds[i] >= 10000;
    CHECK(distinct, "distractors: distinct 5-digit keys, none the true one");
    double rank;
    passkey_rank_keys(&oracle, prompt, d.prompt_len, 54321, ds, PASSKEY_CANDIDATES - 1, &rank);
    CHECK(rank == 1.0, "oracle: the true key ranks 1");
    int wrong = ds[0];
    ds[0] = 54321;
    passkey_rank_keys(&oracle, prompt, d.prompt_len, wrong, ds, PASSKEY_CANDIDATES - 1, &rank);
    /* the true key is above it, the 8 other distractors tie with it: 1 + 1 + 8 / 2 */
    CHECK(rank == 6.0, "oracle: a distractor offered as the key is not ranked first (%.1f, want 6)", rank);
}

/* the KV-cache scorer equals a full forward, and its greedy answer equals generate() */
static void model_scorer(void) {
    Model m;
    ModelConfig cfg = {.vocab_size = 256, .dim = 16, .n_layers = 2, .n_heads = 2, .n_kv_heads = 2, .hidden_dim = 32,
                       .seq_len = 64, .norm_eps = 1e-5f, .tied = 1};
    if (model_create(&m, &cfg, "rope") != 0) {
        CHECK(0, "model: %s", pelab_errmsg);
        return;
    }
    model_init_weights(&m, 4);
    for (size_t i = 0; i < m.tensors[T_TOK_EMB].numel; i++) m.params.tok_emb[i] *= 40.0f; /* peaked logits */
    enum { N = 100 };
    char text[N + 1];
    PasskeyDoc d;
    passkey_document(text, N, 0.5, 31415, &d);
    int toks[N], pos[N];
    for (int i = 0; i < N; i++) toks[i] = (unsigned char)text[i], pos[i] = i;
    PasskeyModel pm;
    PasskeyScorer s;
    passkey_model_init(&pm, &m, N);
    passkey_model_scorer(&pm, &s);
    int gen[PASSKEY_ANSWER_LEN], ans_a[PASSKEY_ANSWER_LEN], ans_b[PASSKEY_ANSWER_LEN];
    double a1, b1, a2;
    s.greedy(s.ctx, toks, d.prompt_len, gen, PASSKEY_ANSWER_LEN);
    for (int i = 0; i < PASSKEY_ANSWER_LEN; i++) ans_a[i] = toks[d.prompt_len + i], ans_b[i] = " 27182"[i];
    s.logprob(s.ctx, toks, d.prompt_len, ans_a, PASSKEY_ANSWER_LEN, &a1);
    s.logprob(s.ctx, toks, d.prompt_len, ans_b, PASSKEY_ANSWER_LEN, &b1);
    s.logprob(s.ctx, toks, d.prompt_len, ans_a, PASSKEY_ANSWER_LEN, &a2);
    /* reference: one full forward over prompt + answer */
    model_alloc_train(&m, 1, N - 1);
    model_forward(&m, toks, NULL, pos, 1, N - 1);
    double ref = 0;
    float *row = xmalloc(sizeof(float) * 256);
    for (int i = 0; i < PASSKEY_ANSWER_LEN; i++) {
        log_softmax(row, m.acts.logits + (size_t)(d.prompt_len - 1 + i) * 256, 256);
        ref += row[toks[d.prompt_len + i]];
    }
    free(row);
    CHECK(fabs(a1 - ref) < 1e-3 && a1 == a2 && b1 != a1,
          "KV-cache log-prob = full forward (%.5f vs %.5f), unchanged after scoring another key", a1, ref);
    Sampler sm;
    sampler_init(&sm, 256, 0.0f, 0.0f, 0, 1);
    int ref_gen[N];
    memcpy(ref_gen, toks, sizeof(int) * d.prompt_len);
    generate(&m, &sm, ref_gen, d.prompt_len, PASSKEY_ANSWER_LEN, 1, -1, NULL, NULL);
    CHECK(memcmp(gen, ref_gen + d.prompt_len, sizeof gen) == 0, "greedy answer = generate() at temperature 0");
    sampler_free(&sm);
    passkey_model_free(&pm);
    model_free(&m);

    ModelConfig lc = cfg;
    model_create(&m, &lc, "learned");
    CHECK(passkey_length_ok(&m, 64) && passkey_length_ok(&m, 65) && !passkey_length_ok(&m, 66) &&
              !passkey_length_ok(&m, PASSKEY_MIN_LEN - 1),
          "lengths past a learned table of 64 (or below the minimum document) are not measured");
    model_free(&m);
}

static void config(TrainConfig *tc, const char *out) {
    train_config_defaults(tc);
    tc->out = out;
    tc->dim = 16;
    tc->layers = 1;
    tc->heads = 2;
    tc->seq_len = 64;
    tc->batch = 4;
    tc->steps = 16;
    tc->synth_bytes = 30000;
    tc->eval_every = 0;
    tc->eval_windows = 4;
    tc->ckpt_every = 0;
    tc->quiet = 1;
    tc->passkey_frac = 0.5f;
}

static void resume_with_mix(void) {
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/pk_full.safetensors", test_tmpdir());
    snprintf(b, sizeof b, "%s/pk_split.safetensors", test_tmpdir());
    float full[16], split[16];
    TrainConfig tc;
    TrainResult r;
    config(&tc, a);
    tc.loss_log = full;
    CHECK(train_run(&tc, &r) == 0, "train with --passkey-frac 0.5: %s", pelab_errmsg);
    config(&tc, b);
    tc.loss_log = split;
    tc.stop_after = 7;
    train_run(&tc, &r);
    tc.stop_after = 0;
    tc.resume = 1;
    CHECK(train_run(&tc, &r) == 0 && r.step == 16, "resume with --passkey-frac: %s", pelab_errmsg);
    CHECK(memcmp(full, split, sizeof full) == 0, "--passkey-frac: stopped and resumed = uninterrupted (%.7f vs %.7f)",
          full[15], split[15]);
    Model m;
    CkptMeta meta;
    if (checkpoint_load(b, &m, &meta, NULL, NULL) == 0) {
        const char *v = meta_get(&meta, "train.passkey_frac");
        CHECK(v && strcmp(v, "0.5") == 0, "train.passkey_frac stored in the checkpoint (%s)", v ? v : "missing");
        model_free(&m);
    }
    config(&tc, b);
    tc.resume = 1;
    tc.steps = 20;
    tc.passkey_frac = 0.25f;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "train.passkey_frac"),
          "resume with another --passkey-frac refused: %s", pelab_errmsg);
    config(&tc, a);
    tc.seq_len = 32;
    CHECK(train_run(&tc, &r) == -1 && strstr(pelab_errmsg, "--passkey-frac"),
          "--passkey-frac with a --seq-len too short for a document refused: %s", pelab_errmsg);
}

static void cli(void) {
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd,
             "./pelab passkey %s/pk_full.safetensors --mult 0.5,1,2 --depths 0,100 --trials 2 --csv %s/pk.csv 2>/dev/null",
             test_tmpdir(), test_tmpdir());
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "scheme rope") && strstr(out, "training 64") &&
              strstr(out, "      32 |  n/a  n/a") && strstr(out, "     128 |") && strstr(out, "mean rank"),
          "pelab passkey: grid with n/a below the minimum document: %s", out);
    snprintf(cmd, sizeof cmd, "%s/pk.csv", test_tmpdir());
    FILE *f = fopen(cmd, "r");
    int lines = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;) lines += ch == '\n';
    if (f) fclose(f);
    CHECK(lines == 1 + 3 * 2, "--csv: a header and one row per cell (%d lines)", lines);
}

/* the oracle through a tokenizer: it decodes the prompt, reads the key, and answers with the
 * tokens encoding prompt + " KEY" adds (or prefers them by log-prob) */
static void decode_into(const Tokenizer *t, const int *ids, int n, char *out, size_t cap) {
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        size_t len;
        const unsigned char *p = tokenizer_decode(t, i ? ids[i - 1] : -1, ids[i], &len);
        if (p && used + len < cap) memcpy(out + used, p, len), used += len;
    }
    out[used] = 0;
}
static int text_key(const char *text) {
    const char *k = strstr(text, "Key: ");
    return k ? atoi(k + 5) : -1;
}
static int tok_oracle_greedy(void *ctx, const int *prompt, int n_prompt, int *out, int n_new) {
    const Tokenizer *t = ctx;
    char text[4096], with[4200];
    decode_into(t, prompt, n_prompt, text, sizeof text);
    size_t np, nf;
    snprintf(with, sizeof with, "%s %d", text, text_key(text));
    int *a = tokenizer_encode_prompt(t, (const unsigned char *)text, strlen(text), 0, &np);
    int *b = tokenizer_encode_prompt(t, (const unsigned char *)with, strlen(with), 0, &nf);
    for (int i = 0; i < n_new; i++) out[i] = np + i < nf ? b[np + i] : 2; /* then </s> */
    free(a), free(b);
    return 0;
}
static int tok_oracle_logprob(void *ctx, const int *prompt, int n_prompt, const int *answer, int n_answer, double *out) {
    char text[4096], said[256];
    decode_into(ctx, prompt, n_prompt, text, sizeof text);
    decode_into(ctx, answer, n_answer, said, sizeof said);
    *out = atoi(said) == text_key(text) ? -0.1 : -12.0;
    return 0;
}

static void tokenized(void) {
    const char *shared = shared_data_dir();
    char path[512];
    Tokenizer tok;
    if (shared) snprintf(path, sizeof path, "%s/hf-tokenizers/tinyllama/tokenizer.json", shared);
    if (!shared || tokenizer_load_file(&tok, path) != 0) {
        fprintf(stderr, "test_passkey: skipped the tokenized oracle: ../shared/data/hf-tokenizers not found\n");
        return;
    }
    PasskeyScorer oracle = {tok_oracle_greedy, tok_oracle_logprob, &tok, &tok};
    PasskeyCell c;
    CHECK(passkey_cell(&oracle, 300, 40, 10, 5, &c) == 0 && c.exact == 10 && c.rank_sum == 10.0,
          "through Llama 2's tokenizer.json: an oracle answers 10/10 and ranks every true key first (%d, %.1f): %s", c.exact,
          c.rank_sum, pelab_errmsg);
    int n300 = passkey_document_tokens(&tok, 300);
    CHECK(n300 > 60 && n300 < 150, "a 300-byte document is %d Llama 2 tokens", n300);
    tokenizer_free(&tok);
}

void test_passkey(void) {
    tokenized();
    documents();
    windows_and_mix();
    ranking_and_match();
    model_scorer();
    resume_with_mix();
    cli();
}
