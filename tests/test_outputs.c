/* test_outputs.c: what a command prints and writes is true or it is an error (hostile inputs, round
 * 3, 2026-12-08). A requested length is checked against the data it would be measured on (a length
 * past the data used to print the shorter window's loss under the longer one's name); a non-finite
 * logit is an error naming the checkpoint and the position (a finite 3e38 weight used to print
 * `nll -nan`, and `sample` NUL bytes); a row whose sum of squares overflows is normalised, not
 * zeroed; and every file a command writes goes through the atomic writer: a failed or full-disk run
 * leaves the old file whole and no temporary file (score --per-token used to truncate it first). */
#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../infer/eval.h"
#include "../infer/keyppl.h"
#include "../io/checkpoint.h"
#include "../model/layers.h"
#include "../model/model.h"
#include "child.h"
#include "test.h"

static char dir[600];

/* a byte-vocabulary model (tied: the head is the embedding) with weight `which` [index] set to value
 * (which NULL: none), saved at path */
static int save_model(const char *path, const char *which, size_t index, float value) {
    ModelConfig c = {.vocab_size = 256, .dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2,
                     .hidden_dim = 32, .seq_len = 16, .norm_eps = 1e-5f, .tied = 1};
    Model m;
    if (model_create(&m, &c, "rope") != 0) return -1;
    model_init_weights(&m, 9);
    for (int t = 0; which && t < N_PARAM_TENSORS; t++)
        if (m.tensors[t].name && strcmp(m.tensors[t].name, which) == 0 && index < m.tensors[t].numel)
            m.params_mem[m.tensors[t].offset + index] = value;
    int rc = checkpoint_save(path, &m, NULL, NULL, NULL);
    model_free(&m);
    return rc;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

static int temps_beside(const char *path) {
    const char *slash = strrchr(path, '/');
    char d[700];
    snprintf(d, sizeof d, "%.*s", (int)(slash - path), path);
    size_t blen = strlen(slash + 1);
    int n = 0;
    DIR *dp = opendir(d);
    for (struct dirent *e; dp && (e = readdir(dp));)
        if (strncmp(e->d_name, slash + 1, blen) == 0 && strncmp(e->d_name + blen, ".tmp.", 5) == 0) n++;
    if (dp) closedir(dp);
    return n;
}

/* 4: every length against the data: refused in one line before any work, the longest that fits accepted */
static void lengths_against_data(const char *model, const char *text61) {
    static Run r;
    const char *huge[] = {"eval", model, "--data", text61, "--lengths", "1000000", NULL};
    expect_argv_refused("eval --lengths 1000000 on 61 tokens", huge, "length 1000000 needs 1000001 tokens");
    const char *one_more[] = {"eval", model, "--data", text61, "--lengths", "32,61", NULL};
    expect_argv_refused("eval --lengths 61 on 61 tokens (60 predictions)", one_more, "--lengths 32,61: length 61");
    const char *mult[] = {"eval", model, "--data", text61, NULL}; /* 0.5L .. 8L = 128 */
    expect_argv_refused("eval's default --mult past the data", mult, "--mult 0.5,1,2,4,8: length 64 needs 65");
    const char *capped[] = {"eval", model, "--data", text61, "--lengths", "40", "--max-tokens", "30", NULL};
    expect_argv_refused("eval --lengths past --max-tokens", capped, "under --max-tokens");
    const char *fits[] = {"eval", model, "--data", text61, "--lengths", "60", "--threads", "1", NULL};
    run_argv(&r, fits, NULL, NULL, 30);
    CHECK(r.status == 0 && strstr(r.out, "\n    60       30 |"), "eval --lengths 60 on 61 tokens: measured (exit %d): %.400s",
          r.status, r.out);
    const char *keyppl[] = {"eval", model, "--data", text61, "--lengths", "32", "--keyppl-tokens", "20", NULL};
    expect_argv_refused("eval --keyppl-tokens shorter than a length", keyppl,
                        "--keyppl-tokens 20: the key-token perplexity at length 32 needs 33 tokens");
    const char *score_long[] = {"score", model, text61, "--len", "61", NULL};
    expect_argv_refused("score --len 61 on 61 tokens", score_long, "--len 61: ");
    const char *score_fits[] = {"score", model, text61, "--len", "60", "--threads", "1", NULL};
    run_argv(&r, score_fits, NULL, NULL, 30);
    CHECK(r.status == 0 && strstr(r.out, "windows 1 x len 60 "), "score --len 60: one window of 60 (exit %d): %.300s",
          r.status, r.out);

    /* compare: before any training, against the held-out tail (10% of 20,000 synthetic bytes) */
    static char cmp_out[700];
    snprintf(cmp_out, sizeof cmp_out, "%s/cmp-short", dir);
    const char *cmp[] = {"compare", "--out", cmp_out, "--schemes", "rope", "--seeds", "1", "--steps", "1",
                         "--synth-bytes", "20000", "--seq-len", "32", "--mult", "1,128", "--threads", "1", NULL};
    expect_argv_refused("compare with a length past its held-out text", cmp, "length 4096 needs 4097 held-out tokens");
    struct stat st;
    CHECK(stat(cmp_out, &st) != 0, "compare refused before it made its folder or trained a run");

    /* the library refuses it too (compare's evaluation calls it directly) */
    Model m;
    CkptMeta meta;
    if (checkpoint_load(model, &m, &meta, NULL, NULL) != 0) {
        CHECK(0, "load %s: %s", model, pelab_errmsg);
        return;
    }
    meta_free(&meta);
    int tokens[61];
    for (int i = 0; i < 61; i++) tokens[i] = 'a' + i % 26;
    EvalLength e;
    int rc = eval_length(&m, tokens, 61, 61, 0, DYNAMIC_WINDOW, 4, &e);
    CHECK(rc != 0 && strstr(pelab_errmsg, "length 61 needs 62 tokens"), "eval_length past the data: refused (%d): %s",
          rc, pelab_errmsg);
    eval_length_free(&e);
    unsigned char key[61] = {0};
    KeyPpl kp;
    rc = key_ppl_at(&m, tokens, 61, 61, key, &kp);
    CHECK(rc != 0 && strstr(pelab_errmsg, "key tokens at length 61: 62 tokens needed"),
          "key_ppl_at past the text: refused (%d): %s", rc, pelab_errmsg);
    rc = eval_length(&m, tokens, 61, 60, 0, DYNAMIC_WINDOW, 4, &e);
    CHECK(rc == 0 && e.proto[EVAL_NONOVERLAP].n_scored == 60, "eval_length of the whole data: 60 scored (%d)", rc);
    eval_length_free(&e);
    model_free(&m);
}

/* 5: a weight that overflows an activation: an error naming the command, the checkpoint and the position */
static void non_finite_logits(const char *text61) {
    static char huge_emb[700], huge_wq[700];
    snprintf(huge_emb, sizeof huge_emb, "%s/huge-emb.safetensors", dir);
    snprintf(huge_wq, sizeof huge_wq, "%s/huge-wq.safetensors", dir);
    /* token 0's embedding, also its head row (tied): its logit overflows; wq: position 0's score */
    CHECK(save_model(huge_emb, "tok_emb", 0, 3e38f) == 0 && save_model(huge_wq, "layers.wq", 0, 3e38f) == 0,
          "save the models: %s", pelab_errmsg);
    const char *models[] = {huge_emb, huge_wq};
    for (int i = 0; i < 2; i++) {
        const char *score[] = {"score", models[i], text61, "--threads", "1", NULL};
        expect_argv_refused("score of a model whose activations overflow", score, "position ");
        const char *lines[] = {"score", models[i], text61, "--lines", "--threads", "1", NULL};
        expect_argv_refused("score --lines of it", lines, "an activation overflowed float32");
        const char *eval[] = {"eval", models[i], "--data", text61, "--lengths", "16", "--threads", "1", NULL};
        expect_argv_refused("eval of it", eval, "an activation overflowed float32");
    }
    /* sample's greedy pick of a row of infinities or NaNs was token 0: NUL bytes, exit 0. Token 0's
     * logit at the prompt's last position is finite and the largest (a true pick); fed back, it is not */
    const char *sample[] = {"sample", huge_emb, "--temp", "0", "-n", "5", "--prompt", "The", "--threads", "1", NULL};
    static Run r;
    run_argv(&r, sample, NULL, NULL, 30);
    for (size_t i = 0; i + 1 < sizeof r.out; i++) /* the NUL the model picks, shown (run_argv zeroes the rest) */
        if (!r.out[i] && r.out[i + 1]) r.out[i] = '@';
    const char *line = strstr(r.out, "pelab: sample: ");
    CHECK(r.status == 1 && line && strstr(line, huge_emb) && strstr(line, "position 3") &&
              strstr(line, "the logit of token 0 is inf") && strstr(line, "largest weight is 3e+38, in tok_emb") &&
              line > r.out && line[-1] == '\n',
          "sample of it: a line of its own naming the command, checkpoint, position and weight (exit %d): %.400s", r.status,
          r.out);
    const char *score[] = {"score", huge_emb, text61, "--threads", "1", NULL};
    run_argv(&r, score, NULL, NULL, 30);
    CHECK(r.status == 1 && strstr(r.out, "pelab: score: ") && strstr(r.out, huge_emb) && !strstr(r.out, "nan"),
          "score of it names the command and the checkpoint, prints no nan (exit %d): %.400s", r.status, r.out);
}

/* a row whose squares overflow float32 is normalised as the same row scaled down, not zeroed */
static void rmsnorm_overflow(void) {
    enum { D = 16 };
    float x[D], big[D], gain[D], y[D], y_big[D], r, r_big;
    for (int i = 0; i < D; i++) x[i] = (float)(i - 7) * 0.37f, big[i] = x[i] * 1e25f, gain[i] = 1.0f + 0.1f * i;
    rmsnorm_forward(y, &r, x, gain, 1, D, 0.0f);
    rmsnorm_forward(y_big, &r_big, big, gain, 1, D, 0.0f);
    CHECK(max_abs_diff(y, y_big, D) < 1e-5f && r_big > 0.0f,
          "rmsnorm of a row times 1e25 equals the row's (max diff %g, 1/rms %g)", max_abs_diff(y, y_big, D), r_big);
    big[3] = INFINITY;
    rmsnorm_forward(y_big, NULL, big, gain, 1, D, 0.0f);
    CHECK(isnan(y_big[0]), "rmsnorm of a row holding inf is NaN (the decoder's check reports it): %g", y_big[0]);
}

/* 8: a failed run leaves the old output whole and no temporary file beside it */
static void outputs_survive_failure(const char *text61) {
    static char huge[700], per_token[700], csv[700];
    snprintf(huge, sizeof huge, "%s/huge-emb.safetensors", dir);
    snprintf(per_token, sizeof per_token, "%s/old-per-token.csv", dir);
    snprintf(csv, sizeof csv, "%s/old-passkey.csv", dir);
    const char *old = "the old file\n";
    write_text(per_token, old);
    write_text(csv, old);
    const char *score[] = {"score", huge, text61, "--per-token", per_token, "--threads", "1", NULL};
    expect_argv_refused("score --per-token of a failing model", score, "position ");
    CHECK(strcmp(test_slurp(per_token) ? test_slurp(per_token) : "", old) == 0 && temps_beside(per_token) == 0,
          "score --per-token: the old file whole, no temporary file: '%s', %d", test_slurp(per_token),
          temps_beside(per_token));
    /* passkey prints its table as the cells finish: the error is its last line */
    const char *passkey[] = {"passkey", huge, "--lengths", "64", "--depths", "50", "--trials", "1",
                             "--csv", csv, "--threads", "1", NULL};
    static Run r;
    run_argv(&r, passkey, NULL, NULL, 30);
    const char *line = strstr(r.out, "pelab: passkey: ");
    CHECK(r.status == 1 && line && strstr(line, "an activation overflowed float32") && !strchr(line, '\n')[1] &&
              strcmp(test_slurp(csv) ? test_slurp(csv) : "", old) == 0 && temps_beside(csv) == 0,
          "passkey --csv: the error last, the old file whole, no temporary file (exit %d, '%s', %d temps): %.600s",
          r.status, test_slurp(csv), temps_beside(csv), r.out);
}

/* a stream (a device, a FIFO, /dev/stdout) is written in place: there is nothing to rename over, and
 * a rename over /dev/full would replace the device with a file */
static void outputs_to_streams(const char *model, const char *text61) {
    static Run r;
    struct stat st;
    const char *to_null[] = {"score", model, text61, "--per-token", "/dev/null", "--threads", "1", NULL};
    run_argv(&r, to_null, NULL, NULL, 30);
    CHECK(r.status == 0 && stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode),
          "score --per-token /dev/null: written, still a device (exit %d): %.300s", r.status, r.out);
    if (access("/dev/full", W_OK) != 0) return;
    const char *to_full[] = {"score", model, text61, "--per-token", "/dev/full", "--threads", "1", NULL};
    expect_argv_refused("score --per-token /dev/full", to_full, "/dev/full: cannot write: No space left on device");
    CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full is still a device");
}

/* 8: a full disk: the old --per-token file stays whole (it used to be truncated, then cut mid-row) */
static void per_token_full_disk(const char *model) {
    static char fs[700], out[800], filler[800], text[800];
    snprintf(fs, sizeof fs, "%s/full-fs", dir);
    mkdir(fs, 0755);
    if (mount("pelab-outputs", fs, "tmpfs", 0, "size=256k") != 0) {
        fprintf(stderr, "  skip: per-token on a full disk needs mount rights (%s)\n", strerror(errno));
        return;
    }
    snprintf(out, sizeof out, "%s/per-token.csv", fs);
    snprintf(filler, sizeof filler, "%s/filler", fs);
    snprintf(text, sizeof text, "%s/long.txt", dir); /* 20,000 tokens: about 300 KB of rows */
    FILE *f = fopen(text, "w");
    for (int i = 0; f && i < 20000; i++) fputc('a' + i % 26, f);
    if (f) fclose(f);
    const char *old = "window,position,token,logprob\n0,1,98,-5.5\n";
    write_text(out, old);
    f = fopen(filler, "w");
    static char block[4096];
    while (f && fwrite(block, 1, sizeof block, f) == sizeof block) {}
    if (f) fclose(f);
    const char *score[] = {"score", model, text, "--per-token", out, "--threads", "1", NULL};
    static Run r;
    run_argv(&r, score, NULL, NULL, 60);
    const char *s = test_slurp(out);
    CHECK(r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, "--per-token") && s && strcmp(s, old) == 0 &&
              temps_beside(out) == 0,
          "score --per-token on a full disk: one line, the old file whole, no temporary file (exit %d, %d temps): "
          "%.300s",
          r.status, temps_beside(out), r.out);
    if (umount2(fs, MNT_DETACH) != 0) CHECK(0, "umount %s: %s", fs, strerror(errno));
}

/* the class: no file in the engine or the command layer opens an output but through core/files.c's
 * atomic writers. The scan runs first on a planted line, so a scan that finds nothing cannot pass. */
static int writes_in_place(const char *text) {
    for (const char *p = text; (p = strstr(p, "fopen(")); p++) {
        const char *end = strchr(p, ';');
        const char *mode = strstr(p, ", \"");
        if (mode && end && mode < end && (mode[3] == 'w' || mode[3] == 'a' || mode[4] == '+')) return 1;
    }
    return strstr(text, "O_TRUNC") != NULL;
}

static void no_output_in_place(void) {
    CHECK(writes_in_place("    FILE *f = fopen(path, \"w\");") && writes_in_place("f = fopen(p, \"ab\");") &&
              !writes_in_place("FILE *in = fopen(cpath, \"r\");"),
          "the scan finds a planted in-place writer");
    static const char *folders[] = {"core", "model", "model/pos", "data", "io", "train", "infer", "lab", "tools"};
    /* core/files.c is the writer; gnuplot's log is gnuplot's own output, not a result */
    static const char *allowed[] = {"core/files.c", "lab/gnuplot.c"};
    char found[1024] = "";
    for (size_t d = 0; d < sizeof folders / sizeof folders[0]; d++) {
        DIR *dp = opendir(folders[d]);
        for (struct dirent *e; dp && (e = readdir(dp));) {
            size_t n = strlen(e->d_name);
            if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", folders[d], e->d_name);
            int skip = 0;
            for (size_t a = 0; a < sizeof allowed / sizeof allowed[0]; a++) skip |= strcmp(path, allowed[a]) == 0;
            unsigned char *src;
            size_t len;
            if (skip || read_file(path, &src, &len) != 0) continue;
            char *text = realloc(src, len + 1);
            text[len] = 0;
            if (writes_in_place(text) && strlen(found) + strlen(path) + 2 < sizeof found)
                strcat(strcat(found, " "), path);
            free(text);
        }
        if (dp) closedir(dp);
    }
    CHECK(!found[0], "outputs opened in place, not through core/files.c's atomic writers:%s", found);
}

void test_outputs(void) {
    snprintf(dir, sizeof dir, "%s/outputs", test_tmpdir());
    mkdir(dir, 0755);
    static char model[700], text61[700];
    snprintf(model, sizeof model, "%s/tiny.safetensors", dir);
    snprintf(text61, sizeof text61, "%s/t61.txt", dir);
    write_text(text61, "Once upon a time there was a little fox who lived in a wood.\n"); /* 61 bytes */
    if (save_model(model, NULL, 0, 0) != 0) {
        CHECK(0, "save %s: %s", model, pelab_errmsg);
        return;
    }
    lengths_against_data(model, text61);
    non_finite_logits(text61);
    rmsnorm_overflow();
    outputs_survive_failure(text61);
    outputs_to_streams(model, text61);
    per_token_full_disk(model);
    no_output_in_place();
}
