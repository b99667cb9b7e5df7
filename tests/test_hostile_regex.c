/* test_hostile_regex.c: a tokenizer.json from a stranger whose Split pattern is catastrophic or
 * huge (the hostile-files review of 2026-12-06, part 1). Each is run by the binary under test
 * (`pelab tokenizer encode`, `pelab train --tokenizer`) on a text a user could have: it must be
 * refused in one line naming the file and the field, within a second of CPU and 100 MB of memory
 * over a plain refusal; patterns of the real tokenizers must still encode texts with long runs of
 * one character class. PCRE2's own limits, behind the step budget, are checked on their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/strbuf.h"
#include "../data/hf_regex.h"
#include "child.h"
#include "test.h"

/* GPT-2's and Llama 3's pre-tokenizer patterns: the control group */
#define GPT2_PATTERN "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
#define LLAMA3_PATTERN                                                                                          \
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|" \
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* dir/name.json: a BPE tokenizer over printable ASCII (<unk> for the rest) whose pre-tokenizer is a
 * Split on pattern; the path goes to path */
static void write_tokenizer(const char *dir, const char *name, const char *pattern, char *path, size_t cap) {
    StrBuf b = {0};
    sb_puts(&b, "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"merges\": [], \"vocab\": {\"<unk>\": 0");
    for (int c = ' '; c <= '~'; c++) {
        char tok[2] = {(char)c, 0};
        sb_puts(&b, ", ");
        sb_json(&b, tok);
        sb_printf(&b, ": %d", c - ' ' + 1);
    }
    sb_puts(&b, "}}, \"pre_tokenizer\": {\"type\": \"Split\", \"behavior\": \"Isolated\", \"invert\": false, "
                "\"pattern\": {\"Regex\": ");
    sb_json(&b, pattern);
    sb_puts(&b, "}}}");
    snprintf(path, cap, "%s/%s.json", dir, name);
    CHECK(write_bytes_atomic(path, b.s, b.len) == 0, "write %s: %s", path, pelab_errmsg);
    sb_free(&b);
}

/* dir/name.txt: count copies of unit, then tail */
static void write_text(const char *dir, const char *name, const char *unit, size_t count, const char *tail, char *path,
                       size_t cap) {
    StrBuf b = {0};
    for (size_t i = 0; i < count; i++) sb_puts(&b, unit);
    sb_puts(&b, tail);
    snprintf(path, cap, "%s/%s.txt", dir, name);
    CHECK(write_bytes_atomic(path, b.s, b.len) == 0, "write %s: %s", path, pelab_errmsg);
    sb_free(&b);
}

/* peak memory of a refusal that reads nothing: what a child costs anyway */
static long baseline_kb(void) {
    static Run r;
    const char *none[] = {"tokenizer", "encode", "/nonexistent.json", "/nonexistent.txt", NULL};
    run_argv(&r, none, NULL, NULL, 10);
    return r.maxrss_kb;
}

/* `pelab tokenizer encode TOK TEXT --count` must be refused naming TOK's field and why, in bounds */
static void expect_bounded_refusal(const char *what, const char *tok, const char *text, const char *why) {
    static Run r;
    const char *args[] = {"tokenizer", "encode", tok, text, "--count", NULL};
    long base = baseline_kb();
    run_argv(&r, args, NULL, NULL, 10);
    char field[600];
    snprintf(field, sizeof field, "%s: pre_tokenizer.pattern", tok);
    CHECK(!r.timed_out && r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, field) && strstr(r.out, why) &&
              r.cpu_s < 1.0 && r.maxrss_kb - base < 100 * 1024,
          "%s: refused in one line naming '%s' and '%s' within 1 s CPU and 100 MB (exit %d%s, %.2f s CPU, %ld MB over "
          "the baseline): %.300s",
          what, field, why, r.status, r.timed_out ? ", killed after 10 s" : "", r.cpu_s, (r.maxrss_kb - base) / 1024,
          r.out);
}

/* the patterns that blow up at match time, each on a text that sets it off */
static void catastrophic(const char *dir) {
    char tok[512], text[512];
    /* nested quantifiers: 2^30 ways to split 30 a's before the b fails the $ */
    write_tokenizer(dir, "nested", "(a+)+$", tok, sizeof tok);
    write_text(dir, "a30b", "a", 30, "b", text, sizeof text);
    expect_bounded_refusal("(a+)+$ on 30 a's and a b", tok, text, "steps");
    /* each match rescans to the end of the line: quadratic in a 100 KB line of ordinary words */
    write_tokenizer(dir, "rescan", "(?:.*x)?\\s", tok, sizeof tok);
    write_text(dir, "line100k", "hello world ", 8334, "", text, sizeof text);
    expect_bounded_refusal("(?:.*x)?\\s on a 100 KB line", tok, text, "steps");
    /* a possessive scan that fails at the end of every suffix of a 100 KB word */
    write_tokenizer(dir, "possessive", "\\p{L}++\\d|\\s", tok, sizeof tok);
    write_text(dir, "word100k", "abcdefghijklmnopqrstuvwxyz", 4000, "", text, sizeof text);
    expect_bounded_refusal("\\p{L}++\\d|\\s on a 100 KB word", tok, text, "steps");
    /* backtracking memory: 500 capture groups make each of 20,000 open repetitions an 8 KB frame
     * (the code before the bounds: 2.6 GB); inside the repetition, they are 1000 steps each */
    write_text(dir, "line20k", "hello world ", 1667, "", text, sizeof text);
    for (int inside = 0; inside < 2; inside++) {
        StrBuf p = {0};
        sb_puts(&p, inside ? "(?:" : "");
        for (int i = 0; i < 500; i++) sb_puts(&p, "()");
        sb_puts(&p, inside ? "[\\s\\S])*\\d" : "(?:[\\s\\S])*\\d");
        write_tokenizer(dir, inside ? "frames-inside" : "frames", p.s, tok, sizeof tok);
        sb_free(&p);
        expect_bounded_refusal(inside ? "500 groups in a repetition over 20 KB" : "500 groups, then a repetition over 20 KB",
                               tok, text, inside ? "backtracking memory" : "steps");
    }
    /* a training run reads its data through the same encoder: the same refusal, not a hang */
    static Run r;
    char out[600];
    write_tokenizer(dir, "nested", "(a+)+$", tok, sizeof tok);
    write_text(dir, "a30b-many", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n", 100, "", text, sizeof text);
    snprintf(out, sizeof out, "%s/never.st", dir);
    const char *train[] = {"train", "--tokenizer", tok, "--data", text, "--steps", "1", "--dim", "16", "--layers", "1",
                           "--heads", "2", "--seq-len", "8", "--batch", "1", "--threads", "1", "--quiet", "--out", out,
                           NULL};
    run_argv(&r, train, NULL, NULL, 10);
    CHECK(!r.timed_out && r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, "pre_tokenizer.pattern") &&
              r.cpu_s < 1.0,
          "train --tokenizer with (a+)+$: refused in one line naming the field (exit %d%s, %.2f s): %.300s", r.status,
          r.timed_out ? ", killed" : "", r.cpu_s, r.out);
}

/* `pelab tokenizer encode TOK TEXT` refused at load, naming the field and needle */
static void expect_load_refusal(const char *what, const char *tok, const char *text, const char *needle) {
    char field[600];
    snprintf(field, sizeof field, "%s: pre_tokenizer.pattern", tok);
    const char *args[] = {"tokenizer", "encode", tok, text, "--count", NULL};
    static Run r;
    run_argv(&r, args, NULL, NULL, 10);
    CHECK(!r.timed_out && r.status == 1 && count_lines(r.out) == 1 && strstr(r.out, field) && strstr(r.out, needle) &&
              r.cpu_s < 1.0,
          "%s: refused at load in one line naming '%s' and '%s' (exit %d%s, %.2f s): %.300s", what, field, needle,
          r.status, r.timed_out ? ", killed" : "", r.cpu_s, r.out);
}

/* the patterns refused when the file is read, before any text */
static void refused_at_load(const char *dir) {
    char tok[512], text[512];
    write_text(dir, "line100k", "hello world ", 8334, "", text, sizeof text);
    /* a 1 MB alternation */
    StrBuf p = {0};
    for (int i = 0; i < 200000; i++) sb_printf(&p, "%sw%d", i ? "|" : "", i % 10000);
    write_tokenizer(dir, "huge", p.s, tok, sizeof tok);
    sb_free(&p);
    expect_load_refusal("a 1 MB pattern", tok, text, "at most 4096 bytes");
    /* a lookbehind that rescans 60,000 characters at every position (a hang: 20 s and more) */
    write_tokenizer(dir, "lookbehind", "(?<=[\\s\\S]{60000})\\s|\\s", tok, sizeof tok);
    expect_load_refusal("a 60,000-character lookbehind", tok, text, "lookbehind");
    /* PCRE2's start-of-pattern options: (*NO_JIT) makes every match rescan the text's UTF-8 */
    write_tokenizer(dir, "nojit", "(*NO_JIT)" GPT2_PATTERN, tok, sizeof tok);
    expect_load_refusal("(*NO_JIT) before GPT-2's pattern", tok, text, "(*");
    write_tokenizer(dir, "limit", "(*LIMIT_HEAP=1)a", tok, sizeof tok);
    expect_load_refusal("(*LIMIT_HEAP=1)", tok, text, "(*");
}

/* the real patterns encode texts with long runs of one class at a few steps a byte: never refused */
static void real_patterns(const char *dir) {
    char text[512], tok[512];
    StrBuf b = {0};
    for (int i = 0; i < 200000; i++) sb_puts(&b, " ");
    sb_puts(&b, "x");
    for (int i = 0; i < 100000; i++) sb_puts(&b, "A");
    sb_puts(&b, " ");
    for (int i = 0; i < 100000; i++) sb_puts(&b, "7");
    for (int i = 0; i < 5000; i++) sb_puts(&b, "\n");
    for (int i = 0; i < 50000; i++) sb_puts(&b, " \n");
    for (int i = 0; i < 30000; i++) sb_puts(&b, "Hello, world! It's 2026. ");
    snprintf(text, sizeof text, "%s/runs.txt", dir);
    CHECK(write_bytes_atomic(text, b.s, b.len) == 0, "write %s", text);
    const char *patterns[][2] = {{"gpt2", GPT2_PATTERN}, {"llama3", LLAMA3_PATTERN}};
    for (int i = 0; i < 2; i++) {
        write_tokenizer(dir, patterns[i][0], patterns[i][1], tok, sizeof tok);
        const char *args[] = {"tokenizer", "encode", tok, text, "--count", NULL};
        static Run r;
        run_argv(&r, args, NULL, NULL, 20);
        CHECK(r.status == 0 && r.cpu_s < 2.0, "%s's pattern as a Split encodes %zu bytes of long runs (exit %d, %.2f s): %.300s",
              patterns[i][0], b.len, r.status, r.cpu_s, r.out);
    }
    sb_free(&b);
}

/* PCRE2's own limits behind the step budget, on patterns compiled without step counting */
static void pcre2_limits(void) {
    static const struct {
        const char *pattern, *text_unit, *why;
        int count;
    } cases[] = {
        {"(a+)+$", "a", "match limit", 30}, /* 2^30 ways at the first position */
        /* 50 captures make each open repetition a 900-byte frame: past the JIT stack, then the heap */
        {"(?:()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()()[ab])*\\d",
         "ab", "backtracking memory", 100000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char why[400];
        pcre2_code *re = hf_regex_compile(cases[i].pattern, strlen(cases[i].pattern), 0, why, sizeof why);
        StrBuf text = {0};
        for (int k = 0; k < cases[i].count; k++) sb_puts(&text, cases[i].text_unit);
        sb_puts(&text, "b");
        HfMatcher m;
        hf_matcher_init(&m);
        hf_matcher_allow(&m, (size_t)1 << 40); /* no budget: the limit itself must stop it */
        size_t ms, me;
        int rc = re ? hf_regex_find(&m, re, text.s, text.len, 0, &ms, &me, why, sizeof why) : 0;
        CHECK(rc == -1 && strstr(why, cases[i].why), "%s on %zu bytes: stopped by '%s': %s", cases[i].pattern, text.len,
              cases[i].why, rc == -1 ? why : "matched or no match");
        hf_matcher_free(&m);
        if (re) pcre2_code_free(re);
        sb_free(&text);
    }
}

void test_hostile_regex(void) {
    pcre2_limits();
    static char dir[256];
    snprintf(dir, sizeof dir, "%s/hostile-regex", test_tmpdir());
    mkdir(dir, 0755);
    refused_at_load(dir);
    catastrophic(dir);
    real_patterns(dir);
}
