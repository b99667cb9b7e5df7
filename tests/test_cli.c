/* test_cli.c: the command line as a user meets it: ./pelab end to end on a tiny model, and
 * every bad input answered by one line on stderr and a non-zero exit (never a crash). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../infer/score.h"
#include "../io/checkpoint.h"
#include "test.h"

/* runs a shell command; returns its exit status, stdout+stderr in out */
int run_pelab(const char *cmd, char *out, size_t cap) {
    /* "./pelab " stands for the binary under test (PELAB_BIN: the sanitizer build has its own) */
    const char *bin = getenv("PELAB_BIN") ? getenv("PELAB_BIN") : "./pelab";
    char full[4096] = "( ";
    for (const char *c = cmd; *c;) {
        size_t used = strlen(full);
        if (strncmp(c, "./pelab ", 8) == 0) {
            snprintf(full + used, sizeof full - used, "%s ", bin);
            c += 8;
        } else if (used + 1 < sizeof full) {
            full[used] = *c++;
            full[used + 1] = 0;
        } else break;
    }
    strncat(full, " ) 2>&1", sizeof full - strlen(full) - 1);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

void expect_pelab_error(const char *cmd, const char *needle) {
    static char out[8192];
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 1 && strstr(out, needle) && count_lines(out) == 1 && strncmp(out, "pelab: ", 7) == 0,
          "'%s' -> exit 1 with one line naming '%s' (exit %d, got: %s)", cmd, needle, rc, out);
}

/* the line of flag in a --help text ("" if absent), into line */
static void help_line(const char *help, const char *flag, char *line, size_t n) {
    char key[64];
    snprintf(key, sizeof key, "\n  %s ", flag);
    const char *at = strstr(help, key);
    line[0] = 0;
    if (at) snprintf(line, n, "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
}

/* The flag groups: the loading flags mean the same in every command that runs a checkpoint (one
 * help line each, one check of --kv-cache, applied by all), the training flags in every command
 * that trains (one range: --dim 1 refused alike); compare's old --train-len still works, with a
 * notice. model: a trained checkpoint, text: a text file. */
static void flag_groups(const char *dir, const char *model, const char *text) {
    static char out[65536], help[32768], first[4][1024], line[1024], cmd[2048];
    static const char *loaders[] = {"sample", "score", "passkey", "probe", "task eval", "show", "eval"};
    static const char *group[] = {"--scale", "--precision", "--kv-cache", "--attn-scale"};
    for (size_t c = 0; c < sizeof loaders / sizeof loaders[0]; c++) {
        snprintf(cmd, sizeof cmd, "./pelab %s --help", loaders[c]);
        run_pelab(cmd, help, sizeof help);
        for (int g = 0; g < 4; g++) {
            help_line(help, group[g], line, sizeof line);
            if (c == 0) snprintf(first[g], sizeof first[g], "%s", line);
            int eval_scale = g == 0 && !strcmp(loaders[c], "eval"); /* a list of rules, side by side */
            CHECK(line[0] && (eval_scale || !strcmp(line, first[g])), "%s --help: %s as sample's (%s)", loaders[c],
                  group[g], line);
        }
    }
    static const char *runs[] = {"sample %s -n 8 --seed 1 --threads 1", "score %s %s --threads 1",
                                 "passkey %s --lengths 64 --depths 50 --trials 1 --threads 1",
                                 "probe %s distance --distances 4 --trials 1 --threads 1",
                                 "task eval %s --task copy:len=2-3 --lens 3 --n 1 --threads 1",
                                 "show attention --ckpt %s --n 8 --out %s/show",
                                 "eval %s --data %s --lengths 32 --max-tokens 200 --threads 1"};
    for (size_t c = 0; c < sizeof runs / sizeof runs[0]; c++) {
        char args[1024];
        snprintf(args, sizeof args, runs[c], model, strstr(runs[c], "show") ? dir : text);
        snprintf(cmd, sizeof cmd, "./pelab %s --kv-cache fp16", args);
        expect_pelab_error(cmd, "--kv-cache fp16: expected fp32 or bf16");
        snprintf(cmd, sizeof cmd, "./pelab %s --kv-cache bf16 --attn-scale logn --precision fp32 2>&1", args);
        int rc = run_pelab(cmd, out, sizeof out);
        CHECK(rc == 0, "%s takes --kv-cache bf16 --attn-scale logn --precision fp32 (exit %d): %.300s", loaders[c], rc,
              out);
    }
    snprintf(cmd, sizeof cmd, "./pelab show decay --scale pi:2 --out %s/show", dir);
    expect_pelab_error(cmd, "apply to the --ckpt model");
    /* one range for the training flags */
    static const char *trainers[] = {"train", "compare --out /nonexistent/x", "demo"};
    for (int t = 0; t < 3; t++) {
        snprintf(cmd, sizeof cmd, "./pelab %s --dim 1", trainers[t]);
        expect_pelab_error(cmd, "--dim 1: expected an integer in [2, 65536]");
        snprintf(cmd, sizeof cmd, "./pelab %s --seq-len 0", trainers[t]);
        expect_pelab_error(cmd, "--seq-len 0: expected an integer in [1, 1.04858e+06]");
    }
    /* what the ranges accept but no model has is refused before the first run, not by it */
    snprintf(cmd, sizeof cmd, "./pelab compare --out %s/shape --schemes rope --seeds 1 --dim 6 --heads 4", dir);
    expect_pelab_error(cmd, "heads 4: expected a positive divisor of dim 6");
    snprintf(cmd, sizeof cmd, "./pelab demo --out %s/shape --seq-len 1 2>&1 >/dev/null", dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "--seq-len 1: the evaluation needs a training length of at least 2") &&
              count_lines(out) == 1,
          "demo --seq-len 1: refused before training (exit %d): %s", rc, out);
    /* compare's old spelling of the training length: the same run, one line of notice */
    snprintf(cmd, sizeof cmd, "./pelab compare --out %s/renamed --schemes rope --seeds 1 --train-len 24 --jobs %s/j1 "
             "2>&1 >/dev/null", dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && count_lines(out) == 1 && strstr(out, "--train-len is spelled --seq-len now"),
          "compare --train-len: accepted with one line of notice (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab compare --out %s/renamed --schemes rope --seeds 1 --seq-len 24 --jobs %s/j2 "
             "2>&1 >/dev/null && grep -c -- '--train-len 24' %s/j1 && grep -c -- '--seq-len 24' %s/j2", dir, dir, dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && !strcmp(out, "1\n1\n"), "compare --seq-len 24 plans the run --train-len 24 plans: %s", out);
    run_pelab("./pelab compare --help", help, sizeof help);
    help_line(help, "--train-len", line, sizeof line);
    CHECK(!line[0] && strstr(help, "--seq-len N        training length L"), "compare --help: --seq-len, not --train-len");
}

void test_cli(void) {
    static char out[65536], cmd[2048];
    const char *dir = test_tmpdir();
    snprintf(cmd, sizeof cmd,
             "./pelab train --steps 30 --dim 32 --layers 2 --heads 2 --seq-len 32 --batch 4 --synth-bytes 30000 "
             "--quiet --out %s/cli.safetensors",
             dir);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "val_loss"), "pelab train runs (exit %d): %s", rc, out);

    snprintf(cmd, sizeof cmd, "./pelab info %s/cli.safetensors", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "rope:base=10000,layout=interleaved") && strstr(out, "training 32") &&
              strstr(out, "unbounded"),
          "pelab info shows scheme and lengths: %s", out);

    char a[4096], b[4096];
    snprintf(cmd, sizeof cmd, "./pelab sample %s/cli.safetensors --prompt 'The ' -n 60 --seed 5 2>/dev/null", dir);
    run_pelab(cmd, a, sizeof a);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/cli.safetensors --prompt 'The ' -n 60 --seed 5 --no-cache 2>/dev/null",
             dir);
    run_pelab(cmd, b, sizeof b);
    CHECK(strlen(a) == 4 + 60 + 1 && strcmp(a, b) == 0, "sample: --no-cache gives identical text (%zu bytes)",
          strlen(a));
    /* --prompts: the texts of a file in batches; the same texts whatever the batch size, and the
     * text of a line is what --prompt LINE prints with the same seed */
    snprintf(cmd, sizeof cmd, "printf 'The \\nOnce upon a time\\n\\nA \\n' > %s/prompts.txt", dir);
    run_pelab(cmd, out, sizeof out);
    char c[4096];
    snprintf(cmd, sizeof cmd, "./pelab sample %s/cli.safetensors --prompts %s/prompts.txt -n 60 --seed 5 2>/dev/null", dir,
             dir);
    run_pelab(cmd, b, sizeof b);
    snprintf(cmd, sizeof cmd,
             "./pelab sample %s/cli.safetensors --prompts %s/prompts.txt -n 60 --seed 5 --batch 2 2>/dev/null", dir, dir);
    run_pelab(cmd, c, sizeof c);
    CHECK(strcmp(b, c) == 0 && strstr(b, "--- line 4 (3/3) ---") && strstr(b, a),
          "sample --prompts: batches of 2 print what one batch prints, and line 1 is --prompt's text: %s", b);

    snprintf(cmd, sizeof cmd, "./pelab synth stories --bytes 20000 --seed 4 > %s/text.txt", dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "pelab synth writes a corpus");
    snprintf(cmd, sizeof cmd, "./pelab score %s/cli.safetensors %s/text.txt --per-token %s/pt.csv", dir, dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "nll ") && strstr(out, "tokens 19999"), "pelab score: %s", out);
    /* --dynamic names the length a dynamic rule follows; anything but window or prefix is refused */
    snprintf(cmd, sizeof cmd, "./pelab score %s/cli.safetensors %s/text.txt --dynamic foo", dir, dir);
    expect_pelab_error(cmd, "--dynamic foo: expected window or prefix");
    snprintf(cmd, sizeof cmd, "./pelab eval %s/cli.safetensors --data %s/text.txt --dynamic foo", dir, dir);
    expect_pelab_error(cmd, "--dynamic foo: expected window or prefix");
    /* --bos puts one token before the text (a sink-token model's streams); past the vocabulary refused */
    snprintf(cmd, sizeof cmd, "./pelab eval %s/cli.safetensors --data %s/text.txt --bos 256", dir, dir);
    expect_pelab_error(cmd, "--bos 256: expected a token id below the vocabulary size 256");
    snprintf(cmd, sizeof cmd,
             "./pelab eval %s/cli.safetensors --data %s/text.txt --bos 0 --max-tokens 0 --lengths 32 --threads 1", dir,
             dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "20001 used of 20001"), "eval --bos 0: the text's 20000 bytes after one token: %s", out);

    /* the diagnosis checklist passes on a trained model; probes refuse an unknown name */
    snprintf(cmd, sizeof cmd, "./pelab probe %s/cli.safetensors cache --threads 1", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "0 checks failed"), "pelab probe cache (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab probe %s/cli.safetensors spin", dir);
    expect_pelab_error(cmd, "spin");
    /* comma-separated number flags share one parser: a bad item, a trailing comma, out of range */
    snprintf(cmd, sizeof cmd, "./pelab probe %s/cli.safetensors distance --distances 4,abc", dir);
    expect_pelab_error(cmd, "--distances 4,abc: expected up to 32 comma-separated numbers in [1, 16777216]");
    snprintf(cmd, sizeof cmd, "./pelab passkey %s/cli.safetensors --depths 0,50,", dir);
    expect_pelab_error(cmd, "--depths 0,50,: trailing comma");
    snprintf(cmd, sizeof cmd, "./pelab task eval %s/cli.safetensors --task passkey --depths 0,2", dir);
    expect_pelab_error(cmd, "--depths 0,2: expected up to 32 comma-separated numbers in [0, 1]");
    /* the attention probe's files: one causal row per token (CSV) and a PNG with its signature */
    snprintf(cmd, sizeof cmd, "./pelab probe %s/cli.safetensors attention --text %s/text.txt --len 16 --csv %s/att.csv "
             "--png %s/att.png --threads 1", dir, dir, dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    char att_csv[512], att_png[512];
    snprintf(att_csv, sizeof att_csv, "%s/att.csv", dir);
    snprintf(att_png, sizeof att_png, "%s/att.png", dir);
    unsigned char *csv_text = NULL, *png_bytes = NULL;
    size_t csv_len = 0, png_len = 0;
    int files_ok = read_file(att_csv, &csv_text, &csv_len) == 0 && read_file(att_png, &png_bytes, &png_len) == 0;
    int csv_rows = 0;
    for (size_t i = 0; files_ok && i < csv_len; i++) csv_rows += csv_text[i] == '\n';
    CHECK(rc == 0 && strstr(out, "mean attended distance") && files_ok && csv_rows == 16 && png_len > 8 &&
              memcmp(png_bytes, "\x89PNG", 4) == 0,
          "pelab probe attention writes 16 CSV rows and a PNG (exit %d, %d rows): %s", rc, csv_rows, out);
    free(csv_text), free(png_bytes);

    /* Ctrl-C writes a checkpoint, exits 130, and --resume carries on from it */
    snprintf(cmd, sizeof cmd,
             "./pelab train --steps 1000000 --dim 32 --layers 1 --heads 2 --seq-len 32 --batch 4 --synth-bytes 30000 "
             "--quiet --out %s/int.safetensors & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo \"exit=$?\"",
             dir);
    run_pelab(cmd, out, sizeof out);
    CHECK(strstr(out, "exit=130") != NULL, "Ctrl-C: exit status 130 (%s)", out);
    snprintf(cmd, sizeof cmd, "./pelab info %s/int.safetensors", dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "present (resumable)"), "Ctrl-C: the checkpoint it wrote is resumable: %s", out);

    /* bad input: one line, exit 1 */
    expect_pelab_error("./pelab train --lr abc", "--lr");
    expect_pelab_error("./pelab train --dim", "--dim");
    expect_pelab_error("./pelab train --bogus 3", "--bogus");
    expect_pelab_error("./pelab train --wd nan", "--wd");
    expect_pelab_error("./pelab sample x.safetensors --temp nan", "--temp");
    expect_pelab_error("./pelab train --seed -3", "--seed");
    expect_pelab_error("./pelab info /tmp", "not a regular file");
    expect_pelab_error("./pelab train --data /tmp --quiet", "not a regular file");
    expect_pelab_error("./pelab demo --schemes ,", "--schemes");
    expect_pelab_error("./pelab train --pos spiral --steps 1 --quiet --out /tmp/x.safetensors", "spiral");
    expect_pelab_error("./pelab train --data /nonexistent/file.txt --quiet", "/nonexistent/file.txt");
    expect_pelab_error("./pelab train --dim 30 --heads 4 --quiet --steps 1 --out /tmp/x.safetensors", "heads");
    expect_pelab_error("./pelab sample /nonexistent.safetensors", "/nonexistent.safetensors");
    expect_pelab_error("./pelab info a.safetensors b.safetensors", "info");
    expect_pelab_error("./pelab synth novels", "novels");
    expect_pelab_error("./pelab frobnicate", "frobnicate");
    snprintf(cmd, sizeof cmd, "./pelab score %s/cli.safetensors /nonexistent.txt", dir);
    expect_pelab_error(cmd, "/nonexistent.txt");
    snprintf(cmd, sizeof cmd, "./pelab score %s/text.txt %s/text.txt", dir, dir);
    expect_pelab_error(cmd, "text.txt");

    /* the learned table refuses positions past its end, in every command */
    snprintf(cmd, sizeof cmd,
             "./pelab train --pos learned --steps 5 --dim 32 --layers 1 --heads 2 --seq-len 32 --batch 2 "
             "--synth-bytes 20000 --quiet --out %s/learned.safetensors",
             dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "train learned: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab sample %s/learned.safetensors -n 40 --seed 1", dir);
    expect_pelab_error(cmd, "32 positions");
    snprintf(cmd, sizeof cmd, "./pelab score %s/learned.safetensors %s/text.txt --len 64", dir, dir);
    expect_pelab_error(cmd, "--len 64");

    /* the newer schemes through every command: train, sample, score, eval past L (CoPE, FIRE, SSMax, HoPE) */
    static const char *newer[][2] = {{"cope", ""}, {"fire:width=8", ""}, {"rope+ssmax", "--pos-layers nope@1"},
                                     {"rope:max_period=8", ""}};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd,
                 "./pelab train --pos %s %s --steps 3 --dim 32 --layers 2 --heads 2 --seq-len 16 --batch 2 "
                 "--synth-bytes 20000 --quiet --out %s/newer%d.safetensors && "
                 "./pelab sample %s/newer%d.safetensors -n 40 --seed 1 > /dev/null && "
                 "./pelab score %s/newer%d.safetensors %s/text.txt --len 48 && "
                 "./pelab eval %s/newer%d.safetensors --data %s/text.txt --mult 1,4 --max-tokens 512",
                 newer[i][0], newer[i][1], dir, i, dir, i, dir, i, dir, dir, i, dir);
        CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, "nats"), "%s %s: train, sample, score, eval: %s",
              newer[i][0], newer[i][1], out);
    }

    /* --scale reaches a rotary scheme's rule, never sinusoidal's own scale= (its amplitude) */
    snprintf(cmd, sizeof cmd,
             "./pelab train --pos sinusoidal --steps 2 --dim 32 --layers 1 --heads 2 --seq-len 32 --batch 2 "
             "--synth-bytes 20000 --quiet --out %s/sin.safetensors",
             dir);
    CHECK(run_pelab(cmd, out, sizeof out) == 0, "train sinusoidal: %s", out);
    const char *not_rules[] = {"1", "pi:2"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "./pelab score %s/sin.safetensors %s/text.txt --scale %s", dir, dir, not_rules[i]);
        expect_pelab_error(cmd, "rotary");
        snprintf(cmd, sizeof cmd, "./pelab sample %s/sin.safetensors -n 4 --scale %s", dir, not_rules[i]);
        expect_pelab_error(cmd, "rotary");
    }
    char cli_model[512], cli_text[512];
    snprintf(cli_model, sizeof cli_model, "%s/cli.safetensors", dir);
    snprintf(cli_text, sizeof cli_text, "%s/text.txt", dir);
    flag_groups(dir, cli_model, cli_text);
    snprintf(cmd, sizeof cmd, "./pelab score %s/cli.safetensors %s/text.txt --len 64 --scale pi:2", dir, dir);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, ",scale=pi:2,orig_len=32"), "score --scale pi:2 on rope sets its rule: %s", out);

    /* score agrees with the training forward's mean loss on the same windows */
    char path[512];
    snprintf(path, sizeof path, "%s/cli.safetensors", dir);
    Model m;
    if (checkpoint_load(path, &m, NULL, NULL, NULL) == 0) {
        enum { T = 32, W = 3 };
        int toks[W * T + 1], in[W * T], tg[W * T], pos[W * T];
        for (int i = 0; i < W * T + 1; i++) toks[i] = "The fox ran far away, then back again. "[i % 39];
        for (int w = 0; w < W; w++)
            for (int t = 0; t < T; t++)
                in[w * T + t] = toks[w * T + t], tg[w * T + t] = toks[w * T + t + 1], pos[w * T + t] = t;
        ScoreResult r;
        score_tokens(&m, toks, W * T + 1, T, DYNAMIC_WINDOW, NULL, &r);
        model_alloc_train(&m, W, T);
        model_forward(&m, in, tg, pos, W, T);
        double nll = r.nll_sum / r.n_scored;
        CHECK(r.n_scored == W * T && fabs(nll - m.mean_loss) < 1e-4,
              "score (KV-cache path) = training forward loss: %.6f vs %.6f", nll, m.mean_loss);
        model_free(&m);
    } else CHECK(0, "reload %s: %s", path, pelab_errmsg);
}
