/* hf_regex.h: a tokenizer.json's regex patterns in PCRE2, bounded in time and memory.
 *
 * A pattern from a file (untrusted) is refused when compiled if it is longer than
 * HF_REGEX_MAX_LEN bytes, starts with one of PCRE2's (*...) options (such as (*NO_JIT) or
 * (*LIMIT_HEAP=...), which no tokenizers pattern has), uses \C, or has a lookbehind longer than
 * HF_REGEX_MAX_LOOKBEHIND characters. Matching is bounded four ways: PCRE2's match limit (steps at
 * one start position), its depth and heap limits (the interpreter's backtracking memory), a JIT
 * stack of at most 4 MB, and a budget of HF_REGEX_STEPS_BASE + HF_REGEX_STEPS_PER_BYTE steps per
 * byte the patterns are run over, across the whole text: an untrusted pattern is compiled with
 * PCRE2_AUTO_CALLOUT and every callout counts one step plus the characters moved since the last
 * one, so a rescan of the text at every position counts as the work it is. The real tokenizers'
 * patterns take 1 to 5 steps a byte. */
#ifndef PELAB_HF_REGEX_H
#define PELAB_HF_REGEX_H

#include <stddef.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#define HF_REGEX_MAX_LEN 4096
#define HF_REGEX_MAX_LOOKBEHIND 255
#define HF_REGEX_MATCH_LIMIT 10000000 /* PCRE2's default */
#define HF_REGEX_DEPTH_LIMIT 1000000
#define HF_REGEX_HEAP_LIMIT_KB (32 << 10) /* grown by doubling: 48 MB at the peak, old and new vector */
#define HF_REGEX_STEPS_BASE 100000ull
#define HF_REGEX_STEPS_PER_BYTE 64ull

/* pat[0..n) compiled (UTF, UCP, any bytes matched; JIT when available); untrusted: the limits above
 * and step counting. NULL with the reason in why otherwise. */
pcre2_code *hf_regex_compile(const char *pat, size_t n, int untrusted, char *why, size_t why_len);

/* the state of one text's matching: PCRE2's buffers and the step budget */
typedef struct {
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    pcre2_jit_stack *jit;
    unsigned long long steps, budget; /* counted steps, the budget so far */
    size_t last;                      /* the position of the last callout */
} HfMatcher;

void hf_matcher_init(HfMatcher *m);
void hf_matcher_free(HfMatcher *m);
/* n more bytes for the patterns to run over: the budget grows by HF_REGEX_STEPS_PER_BYTE * n */
void hf_matcher_allow(HfMatcher *m, size_t n);
/* the leftmost match of re in s[from..n] (from <= n; it may be empty, as "a*" is everywhere): 1 with
 * [*ms, *me), 0 when there is none, -1 when a limit stopped it (why says which, and where). Advancing
 * past an empty match is the caller's (hf_tok_run.c's find_matches, as HF's find_iter does). */
int hf_regex_find(HfMatcher *m, const pcre2_code *re, const char *s, size_t n, size_t from, size_t *ms, size_t *me,
                  char *why, size_t why_len);

#endif
