/* test_task.c: the length-generalization tasks: deterministic, lengths as asked, every oracle
 * right on hand-made prompts, strict specs, and a stream whose mask is exactly the answers. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../data/dataset.h"
#include "../data/passkey.h"
#include "../data/task.h"
#include "../infer/task_eval.h"
#include "../core/json.h"
#include "../model/model.h"
#include "test.h"

static int parse_ok(TaskSpec *t, const char *spec) {
    int rc = task_parse(t, spec);
    CHECK(rc == 0, "task_parse(%s): %s", spec, pelab_errmsg);
    return rc == 0;
}

/* the oracle's answer to a hand-made prompt equals want (NULL: the prompt must be refused) */
static void expect_answer(const char *spec, const char *prompt, const char *want) {
    TaskSpec t;
    if (!parse_ok(&t, spec)) return;
    StrBuf ans = {0};
    int rc = task_solve(&t, prompt, strlen(prompt), &ans);
    if (want)
        CHECK(rc == 0 && strcmp(sb_str(&ans), want) == 0, "%s on '%s': got rc %d '%s', want '%s' (%s)", spec, prompt,
              rc, sb_str(&ans), want, pelab_errmsg);
    else CHECK(rc == -1 && strstr(pelab_errmsg, "malformed"), "%s accepted malformed '%s'", spec, prompt);
    sb_free(&ans);
}

static void test_hand_made(void) {
    expect_answer("copy", "copy: abca|", "abca\n");
    expect_answer("reverse", "reverse: abcd|", "dcba\n");
    expect_answer("sort", "sort: dbcab|", "abbcd\n");
    expect_answer("add", "add: 123+989|", "2111\n"); /* 1112, least significant digit first */
    expect_answer("add:rev=0", "add: 123+989|", "1112\n");
    expect_answer("add:rev=0", "add: 999+1|", "1000\n");
    expect_answer("add", "add: 0+0|", "0\n");
    expect_answer("add:rev=0", "add: 5+17|", "22\n");
    expect_answer("parity", "parity: 10110|", "1\n");
    expect_answer("parity", "parity: 0110|", "0\n");
    expect_answer("selective_copy", "selective_copy: .a..c.b.|", "acb\n");
    expect_answer("count", "count: a abacab|", "3\n");
    expect_answer("count", "count: z abacab|", "0\n");
    expect_answer("count", "count: a aaaaaaaaaaaa|", "12\n");
    expect_answer("flipflop", "flipflop: w1i0w0i1r|", "0\n");
    expect_answer("flipflop", "flipflop: w1i0i0r|", "1\n");
    expect_answer("mqar", "mqar: a1b7c3,cb|", "37\n");
    expect_answer("mqar", "mqar: a1B7c3,Ba|", "71\n");
    char doc[128];
    PasskeyDoc pd;
    CHECK(passkey_document(doc, 90, 0.5, 12345, &pd) == 0, "passkey_document: %s", pelab_errmsg);
    doc[pd.prompt_len] = 0;
    expect_answer("passkey", doc, " 12345\n");

    expect_answer("add", "add: 12+|", NULL);
    expect_answer("add", "add: 1a+2|", NULL);
    expect_answer("parity", "parity: 102|", NULL);
    expect_answer("flipflop", "flipflop: i1r|", NULL);
    expect_answer("flipflop", "flipflop: w1x0r|", NULL);
    expect_answer("mqar", "mqar: a1a2,a|", NULL);
    expect_answer("mqar", "mqar: a1b2,c|", NULL);
    expect_answer("count", "count: ab|", NULL);
    expect_answer("copy", "copy abcd|", NULL);
    expect_answer("copy", "copy: abcd", NULL);
    expect_answer("passkey", "Find the key.\nThe sky is blue.\nKey:", NULL);
}

static int printable(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 32 && s[i] < 127) || s[i] == '\n')) return 0;
    return 1;
}

/* every task at its shortest, default and 4x longest default lengths, several seeds: its own
 * answer passes the oracle, a corrupted or cut one fails with the right per-byte count */
static void test_oracle_accepts_own_answers(void) {
    for (int i = 0; i < task_count(); i++) {
        TaskSpec t;
        if (!parse_ok(&t, task_def(i)->name)) continue;
        const TaskOpt *lo = &t.def->opts[t.def->len_opt];
        /* the shortest length of the default options: the option's lowest, or (RULER's tasks, whose
         * minimum depends on their other options) the one its refusal names (test_ruler checks it) */
        int shortest = (int)lo->lo;
        Rng r0;
        rng_seed(&r0, 1);
        TaskExample e0;
        if (task_example(&t, &r0, shortest, &e0) == 0) task_example_free(&e0);
        else if (strstr(pelab_errmsg, "expected at least ")) shortest = atoi(strstr(pelab_errmsg, "expected at least ") + 18);
        int lens[] = {-1, shortest, (int)lo->def_hi, 4 * (int)lo->def_hi};
        int bad = 0;
        for (int seed = 1; seed <= 5; seed++)
            for (int k = 0; k < 4; k++) {
                int len = lens[k] > lo->hi ? (int)lo->hi : lens[k];
                Rng rng;
                rng_seed(&rng, (uint64_t)seed);
                TaskExample ex;
                if (task_example(&t, &rng, len, &ex) != 0) {
                    CHECK(0, "%s len %d: %s", t.def->name, len, pelab_errmsg);
                    continue;
                }
                /* the supervised bytes: the answer span, or a dense example's masked bytes in order */
                char *ans = malloc(ex.n + 1);
                size_t an = 0;
                for (size_t j = 0; j < ex.n; j++)
                    if (ex.mask ? ex.mask[j] : j >= ex.answer_start) ans[an++] = ex.text[j];
                ans[an] = 0;
                int right = -1, right2 = -1, right3 = -1;
                bad += !(ex.n == strlen(ex.text) && printable(ex.text, ex.n) && an >= (ex.mask ? 1u : 2u) &&
                         ex.text[ex.n - 1] == '\n' && an == task_answers(&ex));
                bad += !(len == -1 || ex.len == len);
                bad += task_check(&t, &ex, ans, an, &right) != 1 || right != (int)an;
                char *wrong = malloc(an + 1);
                memcpy(wrong, ans, an + 1);
                size_t at = (size_t)seed % an;
                wrong[at] = wrong[at] == '7' ? '8' : '7';
                bad += task_check(&t, &ex, wrong, an, &right2) != 0 || right2 != (int)an - 1;
                bad += task_check(&t, &ex, ans, an - 1, &right3) != 0 || right3 != (int)an - 1;
                free(wrong), free(ans);
                task_example_free(&ex);
            }
        CHECK(bad == 0, "%s: %d failures of the oracle on its own examples", t.def->name, bad);
    }
}

static void test_determinism(void) {
    for (int i = 0; i < task_count(); i++) {
        TaskSpec t;
        if (!parse_ok(&t, task_def(i)->name)) continue;
        char *a, *b, *c;
        unsigned char *ma, *mb, *mc;
        Rng r1, r2, r3;
        rng_seed(&r1, 7), rng_seed(&r2, 7), rng_seed(&r3, 8);
        if (task_stream(&t, &r1, 3000, &a, &ma, NULL) || task_stream(&t, &r2, 3000, &b, &mb, NULL) ||
            task_stream(&t, &r3, 3000, &c, &mc, NULL)) {
            CHECK(0, "%s stream: %s", t.def->name, pelab_errmsg);
            continue;
        }
        CHECK(memcmp(a, b, 3000) == 0 && memcmp(ma, mb, 3000) == 0, "%s: seed 7 twice differs", t.def->name);
        CHECK(memcmp(a, c, 3000) != 0, "%s: seeds 7 and 8 give the same stream", t.def->name);
        free(a), free(b), free(c), free(ma), free(mb), free(mc);
    }
}

/* the mask is 1 from the '|' (excluded) to the '\n' (included), for a framed task read blindly */
static void test_stream_mask(void) {
    TaskSpec t;
    if (!parse_ok(&t, "mqar:pairs=1-20")) return;
    char *text;
    unsigned char *mask;
    Rng rng;
    rng_seed(&rng, 3);
    if (task_stream(&t, &rng, 5000, &text, &mask, NULL) != 0) {
        CHECK(0, "stream: %s", pelab_errmsg);
        return;
    }
    int in_answer = 0, bad = 0, answers = 0;
    for (size_t i = 0; i < 5000; i++) {
        bad += mask[i] != in_answer;
        if (text[i] == '|') in_answer = 1, answers++;
        if (text[i] == '\n') in_answer = 0;
    }
    CHECK(bad == 0 && answers > 50 && strlen(text) == 5000, "mask off the answers at %d bytes (%d answers)", bad,
          answers);
    free(text), free(mask);

    /* passkey (no '|'): the mask agrees with the examples regenerated from the same seed */
    if (!parse_ok(&t, "passkey:len=45-100")) return;
    rng_seed(&rng, 4);
    if (task_stream(&t, &rng, 3000, &text, &mask, NULL) != 0) {
        CHECK(0, "passkey stream: %s", pelab_errmsg);
        return;
    }
    Rng again;
    rng_seed(&again, 4);
    bad = 0;
    for (size_t used = 0; used < 3000;) {
        TaskExample ex;
        if (task_example(&t, &again, -1, &ex) != 0) break;
        for (size_t k = 0; k < ex.n && used < 3000; k++, used++)
            bad += text[used] != ex.text[k] || mask[used] != (k >= ex.answer_start);
        task_example_free(&ex);
    }
    CHECK(bad == 0, "passkey stream: %d bytes disagree with the examples", bad);
    free(text), free(mask);
}

static void test_lengths(void) {
    TaskSpec t;
    const char *specs[] = {"copy:len=3-5", "add:len=2-4", "mqar:pairs=3-5,queries=2", "passkey:len=50-52",
                           "flipflop:len=3-5"};
    for (int s = 0; s < 5; s++) {
        if (!parse_ok(&t, specs[s])) continue;
        Rng rng;
        rng_seed(&rng, 11);
        int seen[3] = {0}, bad = 0;
        for (int k = 0; k < 200; k++) {
            TaskExample ex;
            if (task_example(&t, &rng, -1, &ex) != 0) {
                bad++;
                continue;
            }
            int lo = (int)t.lo[t.def->len_opt];
            if (ex.len >= lo && ex.len <= lo + 2) seen[ex.len - lo]++;
            else bad++;
            /* the length is what it says: symbols, digits, pairs, bytes, instructions */
            const char *body = strchr(ex.text, ' ') + 1;
            size_t want = s == 0 ? (size_t)ex.len + 1                  /* copy: the answer */
                          : s == 1 ? (size_t)(2 * ex.len + 1)         /* add: A+B */
                          : s == 2 ? (size_t)(2 * ex.len + 1 + 2)     /* mqar: pairs, ',', 2 queries */
                          : s == 3 ? (size_t)ex.len                   /* passkey: every byte */
                                   : (size_t)(2 * ex.len - 1);        /* flipflop: pairs and r */
            size_t got = s == 0 ? ex.answer_len : s == 3 ? ex.n : ex.answer_start - 1 - (size_t)(body - ex.text);
            bad += got != want;
            task_example_free(&ex);
        }
        CHECK(bad == 0 && seen[0] && seen[1] && seen[2], "%s: %d out of range or wrong size; seen %d %d %d", specs[s],
              bad, seen[0], seen[1], seen[2]);
    }
    /* a fixed length for evaluation, past the training range, and one the option refuses */
    if (parse_ok(&t, "copy:len=3-5")) {
        Rng rng;
        rng_seed(&rng, 1);
        TaskExample ex;
        CHECK(task_example(&t, &rng, 80, &ex) == 0 && ex.len == 80 && ex.answer_len == 81, "copy len 80");
        task_example_free(&ex);
        CHECK(task_example(&t, &rng, 0, &ex) == -1 && strstr(pelab_errmsg, "len 0"), "copy len 0: %s", pelab_errmsg);
    }
    if (parse_ok(&t, "passkey:depth=0.25")) {
        Rng rng;
        rng_seed(&rng, 1);
        TaskExample ex;
        CHECK(task_example(&t, &rng, 200, &ex) == 0 && ex.depth == 0.25 && ex.n == 200, "passkey depth 0.25");
        task_example_free(&ex);
    }
}

static void expect_parse_error(const char *spec, const char *needle) {
    TaskSpec t;
    CHECK(task_parse(&t, spec) == -1 && strstr(pelab_errmsg, needle) && !strchr(pelab_errmsg, '\n'),
          "'%s' -> one line naming '%s', got '%s'", spec, needle, pelab_errmsg);
}

static void test_parse(void) {
    expect_parse_error("nope", "unknown task 'nope'");
    expect_parse_error("copy:foo=3", "unknown option 'foo'");
    expect_parse_error("copy:len=0", "len=0: expected an integer or a range lo-hi in [1, 65536]");
    expect_parse_error("copy:len=32-8", "len=32-8: a range lo-hi needs lo <= hi");
    expect_parse_error("copy:len=4.5", "len=4.5");
    expect_parse_error("copy:vocab=53", "vocab=53");
    expect_parse_error("copy:len=8-", "len=8-");
    expect_parse_error("copy:len", "expected k=v");
    expect_parse_error("copy:", "empty option");
    expect_parse_error("copy:len=4,", "empty option");
    expect_parse_error("copy:len=4,len=5", "given twice");
    expect_parse_error("add:rev=0-1", "rev=0-1: expected an integer in [0, 1]");
    expect_parse_error("passkey:depth=1.5", "depth=1.5");
    expect_parse_error("passkey:len=44", "len=44");

    TaskSpec t, u;
    char a[256], b[256];
    if (parse_ok(&t, "mqar:pairs=4-16") && parse_ok(&t, "passkey:depth=random,len=100")) {
        task_format(&t, a, sizeof a);
        CHECK(strcmp(a, "passkey:len=100,depth=0-1") == 0, "format: %s", a);
    }
    for (int i = 0; i < task_count(); i++)
        if (parse_ok(&t, task_def(i)->name)) {
            task_format(&t, a, sizeof a);
            if (parse_ok(&u, a)) task_format(&u, b, sizeof b);
            CHECK(strcmp(a, b) == 0 && strncmp(a, task_def(i)->name, strlen(task_def(i)->name)) == 0,
                  "format round trip: %s vs %s", a, b);
        }
    CHECK(task_find("copy") && !task_find("cop") && task_def(task_count()) == NULL, "task_find / task_def bounds");
}

static void test_task_cli(void) {
    static char out[16384], again[16384];
    int rc = run_pelab("./pelab task list", out, sizeof out);
    int missing = 0;
    for (int i = 0; i < task_count(); i++) missing += !strstr(out, task_def(i)->name);
    CHECK(rc == 0 && missing == 0 && strstr(out, "default 4-16"), "task list (exit %d, %d missing): %s", rc, missing,
          out);
    rc = run_pelab("./pelab task show copy --seed 1 --n 2", out, sizeof out);
    run_pelab("./pelab task show copy --seed 1 --n 2", again, sizeof again);
    CHECK(rc == 0 && count_lines(out) == 5 && strstr(out, "|[[") && strstr(out, "\\n]]") && strcmp(out, again) == 0,
          "task show copy (exit %d): %s", rc, out);
    rc = run_pelab("./pelab task show passkey:depth=0 --len 60 --n 1", out, sizeof out);
    CHECK(rc == 0 && strstr(out, "depth 0.000") && strstr(out, "len 60"), "task show passkey (exit %d): %s", rc, out);
    expect_pelab_error("./pelab task show nope", "unknown task 'nope'");
    expect_pelab_error("./pelab task show copy:len=32-8", "lo <= hi");
    expect_pelab_error("./pelab task show copy --len 0", "len 0");
    expect_pelab_error("./pelab task frob", "unknown subcommand 'frob'");
}

/* task eval --json: well-formed, one cell per (depth, length), each with its counts */
static void check_task_json(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/pk.json", dir);
    unsigned char *buf;
    size_t n;
    JsonDoc doc;
    if (read_file(path, &buf, &n) != 0 || json_parse(&doc, (const char *)buf, n) != 0) {
        CHECK(0, "task eval --json: %s", pelab_errmsg);
        return;
    }
    const JsonNode *cells = json_get(doc.root, "cells"), *c3 = cells ? json_at(cells, 3) : NULL;
    const JsonNode *depth = c3 ? json_get(c3, "depth") : NULL, *len = c3 ? json_get(c3, "length") : NULL;
    const JsonNode *nn = c3 ? json_get(c3, "n") : NULL, *task = json_get(doc.root, "task");
    CHECK(cells && cells->n_children == 4 && depth && depth->number == 1 && len && len->number == 96 && nn && nn->number == 2 && task &&
              strcmp(task->str, "passkey:len=64-128,depth=0-1") == 0,
          "task eval --json: 4 cells, the last at depth 1, length 96, 2 examples");
    json_free(&doc);
    free(buf);
}

/* the n tokens at ids spell s (byte tokens) */
static int memcmp_tokens(const int *ids, const char *s, int n) {
    for (int i = 0; i < n; i++)
        if (ids[i] != (unsigned char)s[i]) return 0;
    return 1;
}

/* --data task:SPEC: the stream's answers are the only counted targets, in training batches and in
 * validation windows; other tokenizers are refused; training runs with --rand-pos */
static void test_task_data(void) {
    Dataset d;
    int rc = dataset_load(&d, "task:copy:len=4-8,vocab=8", 0.1, 3, 20000, 16);
    CHECK(rc == 0 && d.counted && d.n == 20000, "task data loads with a loss mask: %s", rc ? pelab_errmsg : "");
    if (rc != 0) return;
    enum { B = 64, T = 16 };
    int in[B * T], tg[B * T], counted = 0, wrong = 0;
    Rng rng;
    rng_seed(&rng, 5);
    dataset_train_batch(&d, &rng, B, T, in, tg);
    for (int i = 0; i < B * T; i++) {
        if (tg[i] < 0) continue;
        counted++;
        /* a counted target follows the '|' or an answer byte: never a prompt symbol after a space */
        wrong += !(in[i] == '|' || (in[i] >= 'a' && in[i] <= 'h'));
        wrong += !((tg[i] >= 'a' && tg[i] <= 'h') || tg[i] == '\n');
    }
    CHECK(counted > B * T / 4 && counted < B * T * 3 / 4 && wrong == 0,
          "task batches: %d of %d targets counted (the answers), %d misplaced", counted, B * T, wrong);
    int val_counted = 0;
    dataset_val_window(&d, 0, T, in, tg);
    for (int i = 0; i < T; i++) val_counted += tg[i] >= 0;
    CHECK(val_counted > 0 && val_counted < T, "task validation window: %d of %d targets counted", val_counted, T);
    dataset_free(&d);
    CHECK(dataset_load(&d, "task:frob", 0.1, 3, 20000, 16) == -1 && strstr(pelab_errmsg, "frob"),
          "an unknown task in --data is refused: %s", pelab_errmsg);

    static char out[16384];
    rc = run_pelab("./pelab train --data task:copy:len=4-8,vocab=8 --synth-bytes 40000 --dim 16 --layers 1 --heads 2 "
                   "--seq-len 32 --rand-pos 128 --batch 4 --steps 6 --eval-every 3 --threads 1 --out /dev/null/x 2>&1",
                   out, sizeof out);
    CHECK(rc != 0 && strstr(out, "/dev/null"), "task training checks its output first: %s", out);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "./pelab train --data task:copy:len=4-8,vocab=8 --synth-bytes 40000 --dim 16 --layers 1 --heads 2 "
             "--seq-len 32 --rand-pos 128 --batch 4 --steps 6 --eval-every 3 --threads 1 --out %s/task.safetensors",
             test_tmpdir());
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "val_loss") && !strstr(out, "val_loss nan"),
          "pelab train on task:copy with --rand-pos (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd,
             "./pelab task eval %s/task.safetensors --task copy:vocab=8 --n 5 --lens 4,40 --csv %s/task.csv --threads 1",
             test_tmpdir(), test_tmpdir());
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && count_lines(out) == 4 && strstr(out, "exact match") && strstr(out, "(past L)"),
          "pelab task eval: a row per length, past L marked (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "cat %s/task.csv", test_tmpdir());
    run_pelab(cmd, out, sizeof out);
    CHECK(count_lines(out) == 3 && strstr(out, "\"copy:len=4-16,vocab=8\",,40,"), "task eval CSV: %s", out);
    snprintf(cmd, sizeof cmd,
             "./pelab task eval %s/task.safetensors --task passkey --depths 0,1 --lens 48,96 --n 2 --csv %s/pk.csv "
             "--threads 1",
             test_tmpdir(), test_tmpdir());
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "depth x length") && strstr(out, "  1.00       96") && count_lines(out) == 11,
          "pelab task eval --depths: a row per cell and the depth x length grid (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "cat %s/pk.csv", test_tmpdir());
    run_pelab(cmd, out, sizeof out);
    CHECK(count_lines(out) == 5 && strstr(out, ",1.00,96,96,2,"), "task eval grid CSV: %s", out);
    snprintf(cmd, sizeof cmd,
             "PELAB_NO_GNUPLOT=1 ./pelab task eval %s/task.safetensors --task passkey --depths 0,1 --lens 48,96 --n 2 "
             "--json %s/pk.json --plots %s/pkplots --threads 1", test_tmpdir(), test_tmpdir(), test_tmpdir());
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "gnuplot not found"), "task eval --plots without gnuplot keeps data and script: %s", out);
    check_task_json(test_tmpdir());
    snprintf(cmd, sizeof cmd, "cat %s/pkplots/depth_x_length.dat %s/pkplots/accuracy_vs_length.dat; grep -c '^plot' "
             "%s/pkplots/task_plots.gp", test_tmpdir(), test_tmpdir(), test_tmpdir());
    run_pelab(cmd, out, sizeof out);
    /* the heatmap: 2 depth rows of 2 lengths; the curves: a comment and 2 lengths (length, positions,
     * then exact and bytes per depth: 6 numbers); 4 plot commands (2 plots x png, svg) */
    CHECK(count_lines(out) == 2 + 3 + 1 && strstr(out, "48 48 ") &&
              out[strlen(out) - 2] == '4',
          "task eval --plots data: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab task eval %s/task.safetensors --task copy:vocab=8 --lens 4 --n 3 --rand-pos 128 "
             "--csv %s/rp.csv --threads 1", test_tmpdir(), test_tmpdir());
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && strstr(out, "exact match"), "task eval --rand-pos 128 runs (exit %d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "./pelab task eval %s/task.safetensors --task copy:vocab=8 --lens 40 --n 1 --rand-pos 64",
             test_tmpdir());
    expect_pelab_error(cmd, "randomized positions (rand_pos 64)");
    snprintf(cmd, sizeof cmd, "./pelab task eval %s/task.safetensors --task copy --depths 0.5", test_tmpdir());
    expect_pelab_error(cmd, "no depth option");
}

/* the greedy answer by full recomputation: the reference for the KV-cache evaluator */
static int reference_exact(Model *m, const TaskSpec *t, int len, int n, unsigned long long seed, long *correct) {
    Rng rng;
    rng_seed(&rng, seed);
    int exact = 0;
    *correct = 0;
    for (int i = 0; i < n; i++) {
        TaskExample ex;
        task_example(t, &rng, len, &ex);
        int total = (int)ex.n, *tok = malloc(sizeof(int) * total), *pos = malloc(sizeof(int) * total);
        char *answer = malloc(ex.n);
        size_t asked = 0;
        for (int k = 0; k < total; k++) tok[k] = (unsigned char)ex.text[k], pos[k] = k;
        /* a dense example: greedy within each answer, the true text before it (the true earlier
         * answers), so the KV cache's one pass is checked against a full forward per byte */
        for (int T = (int)ex.answer_start; T < total; T++) {
            if (ex.mask && !ex.mask[T]) {
                tok[T] = (unsigned char)ex.text[T];
                continue;
            }
            model_alloc_train(m, 1, T);
            model_forward(m, tok, NULL, pos, 1, T);
            const float *row = m->acts.logits + (size_t)(T - 1) * 256;
            int best = 0;
            for (int v = 1; v < 256; v++) best = row[v] > row[best] ? v : best;
            answer[asked++] = (char)best, tok[T] = ex.mask ? (unsigned char)ex.text[T] : best;
        }
        int c = 0;
        exact += task_check(t, &ex, answer, asked, &c) == 1;
        *correct += c;
        free(tok), free(pos), free(answer);
        task_example_free(&ex);
    }
    return exact;
}

/* task_eval_length on an untrained byte-level model equals the same greedy answers recomputed in
 * full; its counts are consistent; a model that is not byte-level is refused */
static void test_task_eval(void) {
    ModelConfig c = {.vocab_size = 256, .dim = 16, .n_layers = 1, .n_heads = 2, .n_kv_heads = 2, .hidden_dim = 24,
                     .seq_len = 32, .norm_eps = 1e-5f, .tied = 1};
    Model m;
    if (model_create(&m, &c, "rope") != 0) {
        CHECK(0, "task eval model: %s", pelab_errmsg);
        return;
    }
    model_init_weights(&m, 4);
    TaskSpec t;
    task_parse(&t, "parity");
    TaskScore s, again;
    int rc = task_eval_length(&m, NULL, &t, 6, 24, 7, 0, &s);
    task_eval_length(&m, NULL, &t, 6, 24, 7, 0, &again);
    long ref_correct;
    int ref_exact = reference_exact(&m, &t, 6, 24, 7, &ref_correct);
    CHECK(rc == 0 && s.n == 24 && s.answer_bytes == 24 * 2 && s.max_positions == (long)strlen("parity: 101010|1\n") &&
              s.exact == ref_exact && s.correct_bytes == ref_correct && memcmp(&s, &again, sizeof s) == 0,
          "task eval = full recomputation: exact %d vs %d, bytes %ld vs %ld of %ld, positions %ld: %s", s.exact,
          ref_exact, s.correct_bytes, ref_correct, s.answer_bytes, s.max_positions, rc ? pelab_errmsg : "");
    double exact = (double)s.exact / s.n, bytes = (double)s.correct_bytes / s.answer_bytes;
    CHECK(s.exact_ci[0] <= exact && exact <= s.exact_ci[1] && s.bytes_ci[0] <= bytes && bytes <= s.bytes_ci[1] &&
              (s.exact == 0 || s.exact == s.n || s.exact_ci[0] < s.exact_ci[1]),
          "task eval's bootstrap intervals bracket its figures: exact %g in [%g, %g], bytes %g in [%g, %g]", exact,
          s.exact_ci[0], s.exact_ci[1], bytes, s.bytes_ci[0], s.bytes_ci[1]);
    /* a dense task: every value of every query scored, the same as a full forward per answer */
    TaskSpec dense;
    task_parse(&dense, "mqar_dense:queries=3,gap=0-2");
    TaskScore ds;
    rc = task_eval_length(&m, NULL, &dense, 5, 12, 3, 0, &ds);
    long dense_correct;
    int dense_exact = reference_exact(&m, &dense, 5, 12, 3, &dense_correct);
    CHECK(rc == 0 && ds.n == 12 && ds.answer_bytes == 12 * 3 && ds.exact == dense_exact &&
              ds.correct_bytes == dense_correct,
          "dense task eval = a full forward per answer: exact %d vs %d, bytes %ld vs %ld of %ld: %s", ds.exact,
          dense_exact, ds.correct_bytes, dense_correct, ds.answer_bytes, rc ? pelab_errmsg : "");
    /* randomized positions: drawn from exactly as many ids as the example has tokens, they are
     * 0..n-1 (the same scores); from more, deterministic; from fewer, refused */
    TaskScore rp, rp2;
    rc = task_eval_length(&m, NULL, &t, 6, 24, 7, 17, &rp);
    CHECK(rc == 0 && memcmp(&rp, &s, sizeof s) == 0, "rand_pos = the example's length: positions 0.., the same scores");
    rc = task_eval_length(&m, NULL, &t, 6, 24, 7, 1000, &rp);
    task_eval_length(&m, NULL, &t, 6, 24, 7, 1000, &rp2);
    CHECK(rc == 0 && rp.n == 24 && memcmp(&rp, &rp2, sizeof rp) == 0, "rand_pos 1000: deterministic: %s",
          rc ? pelab_errmsg : "");
    CHECK(task_eval_length(&m, NULL, &t, 6, 24, 7, 16, &rp) == -1 && strstr(pelab_errmsg, "17 tokens"),
          "an example longer than rand_pos is refused: %s", pelab_errmsg);
    task_parse(&t, "copy:vocab=4");
    rc = task_eval_length(&m, NULL, &t, 40, 3, 2, 0, &s);
    CHECK(rc == 0 && s.max_positions > c.seq_len && s.correct_bytes <= s.answer_bytes,
          "task eval runs past the training length (%ld positions): %s", s.max_positions, rc ? pelab_errmsg : "");
    model_free(&m);
    c.vocab_size = 300;
    model_create(&m, &c, "rope");
    CHECK(task_eval_length(&m, NULL, &t, 4, 1, 1, 0, &s) == -1 && strstr(pelab_errmsg, "byte-level"),
          "task eval refuses a model that is not byte-level: %s", pelab_errmsg);
    model_free(&m);
}

/* a dense task's loss mask covers exactly the answer tokens: read blindly from the text (after an
 * example's '|', a digit is a value and every value is one), the counted targets and the
 * example starts of task:mqar_dense data agree, and so do a training batch's targets */
static void test_dense_mask(void) {
    Dataset d;
    enum { B = 32, T = 64 };
    int rc = dataset_load(&d, "task:mqar_dense:pairs=2-12,queries=1-12,gap=0-3", 0.1, 5, 40000, T);
    CHECK(rc == 0 && d.counted && d.starts, "mqar_dense data: %s", rc ? pelab_errmsg : "");
    if (rc != 0) return;
    size_t bad_mask = 0, answers = 0, examples = 0, bad_start = 0, k = 0;
    int after_bar = 0;
    for (size_t i = 0; i < d.n; i++) {
        int c = d.tokens[i], want = after_bar && c >= '0' && c <= '9';
        answers += want;
        bad_mask += d.counted[i] != want;
        int starts_here = i == 0 || d.tokens[i - 1] == '\n';
        if (starts_here && i + T + 1 <= d.n_train) { /* the starts list stops at the last whole window */
            examples++;
            bad_start += !(k < d.n_starts && d.starts[k] == i);
            k++;
        }
        if (c == '|') after_bar = 1;
        if (c == '\n') after_bar = 0;
    }
    CHECK(bad_mask == 0 && answers > 2000, "dense mask = the values after '|': %zu of %zu bytes differ (%zu answers)",
          bad_mask, d.n, answers);
    CHECK(bad_start == 0 && k == d.n_starts && examples > 500,
          "example starts = the bytes after each '\\n' (not every answer's end): %zu wrong of %zu", bad_start,
          examples);
    int in[B * T], tg[B * T];
    Rng rng;
    rng_seed(&rng, 2);
    d.aligned = 1;
    dataset_train_batch(&d, &rng, B, T, in, tg);
    size_t bad_target = 0, counted = 0;
    for (int b = 0; b < B; b++) {
        int bar = 0;
        for (int t = 0; t < T; t++) {
            int next = t + 1 < T ? in[b * T + t + 1] : -2; /* the target: the next input, past the row's end unknown */
            if (in[b * T + t] == '|') bar = 1;
            if (in[b * T + t] == '\n') bar = 0;
            if (next == -2) continue;
            int want = bar && next >= '0' && next <= '9';
            counted += tg[b * T + t] >= 0;
            bad_target += (tg[b * T + t] >= 0) != want || (want && tg[b * T + t] != next);
        }
    }
    CHECK(bad_target == 0 && counted > (size_t)B, "a batch's targets are exactly the values: %zu wrong, %zu counted",
          bad_target, counted);
    dataset_free(&d);
}

/* train --sink-token: every training and validation window's first input is the token, and
 * nothing else changes (the same windows, the same targets); out-of-range ids refused */
static void test_sink_token(void) {
    Dataset d;
    enum { B = 8, T = 16 };
    if (dataset_load(&d, "synth:stories", 0.1, 1, 20000, T) != 0) {
        CHECK(0, "synth data: %s", pelab_errmsg);
        return;
    }
    int in[B * T], tg[B * T], in2[B * T], tg2[B * T];
    Rng r1, r2;
    rng_seed(&r1, 3), rng_seed(&r2, 3);
    dataset_train_batch(&d, &r1, B, T, in, tg);
    d.has_sink = 1, d.sink_token = 0;
    dataset_train_batch(&d, &r2, B, T, in2, tg2);
    int bad = memcmp(tg, tg2, sizeof tg) != 0;
    for (int i = 0; i < B * T; i++) bad += in2[i] != (i % T == 0 ? 0 : in[i]);
    dataset_val_window(&d, 1, T, in2, tg2);
    d.has_sink = 0;
    dataset_val_window(&d, 1, T, in, tg);
    bad += in2[0] != 0 || memcmp(in + 1, in2 + 1, sizeof(int) * (T - 1)) != 0 || memcmp(tg, tg2, sizeof(int) * T) != 0;
    CHECK(bad == 0, "--sink-token: each window's first input replaced, targets and the rest unchanged (%d bad)", bad);
    dataset_free(&d);
    expect_pelab_error("./pelab train --data synth:stories --sink-token 256 --steps 1 --threads 1",
                       "--sink-token 256: expected a token id below the vocabulary size 256");
}

/* --align-examples: the starts task_stream reports are exactly the examples' first bytes, and
 * aligned windows begin with a whole prompt, as task eval's do at position 0 */
static void test_aligned_windows(void) {
    Dataset d;
    enum { B = 64, T = 24 };
    int rc = dataset_load(&d, "task:mqar:pairs=2-6,queries=1-3", 0.1, 4, 30000, T);
    CHECK(rc == 0 && d.starts && d.n_starts > 0 && !d.aligned, "task data lists its example starts: %s",
          rc ? pelab_errmsg : "");
    if (rc != 0) return;
    size_t want = 0, bad = 0;
    for (size_t i = 0; i + T + 1 <= d.n_train; i++) want += i + 6 <= d.n && memcmp_tokens(d.tokens + i, "mqar: ", 6);
    for (size_t k = 0; k < d.n_starts; k++) bad += !memcmp_tokens(d.tokens + d.starts[k], "mqar: ", 6);
    CHECK(d.n_starts == want && bad == 0, "starts: %zu, at \"mqar: \": %zu, not there: %zu", d.n_starts, want, bad);
    int in[B * T], tg[B * T];
    Rng rng;
    rng_seed(&rng, 9);
    d.aligned = 1;
    dataset_train_batch(&d, &rng, B, T, in, tg);
    int misaligned = 0;
    for (int b = 0; b < B; b++) misaligned += !memcmp_tokens(in + b * T, "mqar: ", 6) || tg[b * T] != -1;
    CHECK(misaligned == 0, "aligned windows start at a prompt: %d of %d do not", misaligned, B);
    /* validation: one window at each example start past the last window's end, in the held-out part */
    size_t n_val = dataset_val_windows(&d, T), prev_end = d.n_train;
    misaligned = 0;
    for (size_t w = 0; w < n_val; w++) {
        size_t s = d.val_starts[w];
        misaligned += s < prev_end || s + T + 1 > d.n || !memcmp_tokens(d.tokens + s, "mqar: ", 6);
        prev_end = s + T;
        dataset_val_window(&d, w, T, in, tg);
        misaligned += !memcmp_tokens(in, "mqar: ", 6) || tg[0] != -1;
    }
    CHECK(n_val > 50 && n_val <= (d.n - d.n_train) / T && misaligned == 0,
          "aligned validation: %zu windows at prompts, none overlapping (%d bad)", n_val, misaligned);
    CHECK(dataset_val_windows(&d, T / 2) == (d.n - d.n_train - 1) / (T / 2),
          "validation at another length is not aligned (the starts were made for %d)", T);
    d.aligned = 0;
    CHECK(dataset_val_windows(&d, T) == (d.n - d.n_train - 1) / T, "unaligned validation: evenly spaced windows");
    dataset_free(&d);
    rc = dataset_load(&d, "synth:stories", 0.1, 1, 20000, 16);
    CHECK(rc == 0 && !d.starts && d.n_starts == 0, "a text corpus has no example starts");
    if (rc == 0) dataset_free(&d);
    expect_pelab_error("./pelab train --data synth:stories --align-examples --steps 1 --threads 1",
                       "--align-examples: needs --data task:SPEC");
}

/* End to end: a one-layer model trained on copy:len=4 (the answer is the body at a fixed offset
 * back, which one attention layer can learn), windows aligned to examples as task eval's prompts
 * are, copies held-out strings. Stated accuracy: >= 90% exact match at length 4 (at L = 16: one
 * example a window). When written: 100% for seeds 1, 2, 3 in 0.8 s on 1 thread; 400 steps gave
 * 85-100%; without --align-examples (L = 32) 2000 steps were needed, 800 gave 1-28%. */
static void test_copy_end_to_end(void) {
    static char out[16384];
    char cmd[2560], ckpt[512];
    snprintf(ckpt, sizeof ckpt, "%s/copy_e2e.safetensors", test_tmpdir());
    snprintf(cmd, sizeof cmd,
             "./pelab train --data task:copy:len=4,vocab=8 --align-examples --pos rope --seq-len 16 --dim 32 --layers 1 "
             "--heads 4 --steps 800 --batch 16 --lr 3e-3 --synth-bytes 100000 --seed 1 --eval-every 0 --quiet --out %s && "
             "./pelab task eval %s --task copy:len=4,vocab=8 --lens 4,8 --n 100 --seed 5 --csv %s.csv && cat %s.csv",
             ckpt, ckpt, ckpt, ckpt);
    int rc = run_pelab(cmd, out, sizeof out);
    const char *key = "\"copy:len=4,vocab=8\",,4,16,100,", *row = strstr(out, key);
    double exact = row ? atof(row + strlen(key)) : -1;
    CHECK(rc == 0 && exact >= 0.9, "a 1-layer rope model copies at length 4 after 800 steps: exact match %.2f (exit %d): %s",
          exact, rc, out);
}

void test_task(void) {
    test_dense_mask();
    test_sink_token();
    test_aligned_windows();
    test_copy_end_to_end();
    test_task_eval();
    test_task_data();
    test_hand_made();
    test_oracle_accepts_own_answers();
    test_determinism();
    test_stream_mask();
    test_lengths();
    test_parse();
    test_task_cli();
}
