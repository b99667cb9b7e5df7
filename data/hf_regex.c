/* hf_regex.c: tokenizer.json patterns under PCRE2's limits and a step budget (see hf_regex.h). */
#include "hf_regex.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* what the callout returns when the budget is spent: pcre2_match passes it on (PCRE2's own codes
 * are -1 to -70) */
#define OVER_BUDGET (-1000)

pcre2_code *hf_regex_compile(const char *pat, size_t n, int untrusted, char *why, size_t why_len) {
    if (untrusted && n > HF_REGEX_MAX_LEN) {
        snprintf(why, why_len, "%zu bytes: at most %d bytes are read", n, HF_REGEX_MAX_LEN);
        return NULL;
    }
    if (untrusted && n >= 2 && pat[0] == '(' && pat[1] == '*') {
        snprintf(why, why_len, "starts with a PCRE2 option (*...): not a tokenizers pattern");
        return NULL;
    }
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    pcre2_set_max_pattern_length(cc, HF_REGEX_MAX_LEN); /* checked above with a clearer message: a second guard */
    uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C;
    int err;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, n, opts | (untrusted ? PCRE2_AUTO_CALLOUT : 0), &err, &at,
                                   untrusted ? cc : NULL);
    pcre2_compile_context_free(cc);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(err, msg, sizeof msg);
        snprintf(why, why_len, "%s at offset %zu", (const char *)msg, (size_t)at);
        return NULL;
    }
    uint32_t lookbehind = 0;
    pcre2_pattern_info(re, PCRE2_INFO_MAXLOOKBEHIND, &lookbehind);
    if (untrusted && lookbehind > HF_REGEX_MAX_LOOKBEHIND) {
        snprintf(why, why_len, "a lookbehind of %u characters: at most %d (each position would rescan them)",
                 (unsigned)lookbehind, HF_REGEX_MAX_LOOKBEHIND);
        pcre2_code_free(re);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* where JIT is unavailable the interpreter runs it */
    return re;
}

/* every callout of an untrusted pattern: one step plus the characters moved since the last */
static int count_steps(pcre2_callout_block *b, void *data) {
    HfMatcher *m = data;
    size_t p = b->current_position;
    m->steps += 1 + (p > m->last ? p - m->last : m->last - p);
    m->last = p;
    return m->steps > m->budget ? OVER_BUDGET : 0;
}

void hf_matcher_init(HfMatcher *m) {
    memset(m, 0, sizeof *m);
    m->md = pcre2_match_data_create(8, NULL);
    m->mctx = pcre2_match_context_create(NULL);
    m->jit = pcre2_jit_stack_create(32 << 10, 4 << 20, NULL);
    if (!m->md || !m->mctx) { /* as mem.h: running out of memory is reported and ends the program */
        fprintf(stderr, "pelab: out of memory (PCRE2 match data)\n");
        exit(1);
    }
    pcre2_set_match_limit(m->mctx, HF_REGEX_MATCH_LIMIT);
    pcre2_set_depth_limit(m->mctx, HF_REGEX_DEPTH_LIMIT);
    pcre2_set_heap_limit(m->mctx, HF_REGEX_HEAP_LIMIT_KB);
    pcre2_set_callout(m->mctx, count_steps, m);
    if (m->jit) pcre2_jit_stack_assign(m->mctx, NULL, m->jit);
    m->budget = HF_REGEX_STEPS_BASE;
}

void hf_matcher_free(HfMatcher *m) {
    pcre2_match_data_free(m->md);
    pcre2_match_context_free(m->mctx);
    if (m->jit) pcre2_jit_stack_free(m->jit);
    memset(m, 0, sizeof *m);
}

void hf_matcher_allow(HfMatcher *m, size_t n) { m->budget += HF_REGEX_STEPS_PER_BYTE * n; }

/* why a match stopped, in words */
static void limit_reason(const HfMatcher *m, int rc, size_t from, size_t n, char *why, size_t why_len) {
    char what[200];
    if (rc == OVER_BUDGET)
        snprintf(what, sizeof what, "more than %llu matching steps (%llu + %llu a byte of text): a pattern whose cost "
                 "grows faster than the text", m->budget, HF_REGEX_STEPS_BASE, HF_REGEX_STEPS_PER_BYTE);
    else if (rc == PCRE2_ERROR_MATCHLIMIT)
        snprintf(what, sizeof what, "PCRE2's match limit (%d steps at one position) reached: a pattern that "
                 "backtracks catastrophically", HF_REGEX_MATCH_LIMIT);
    else if (rc == PCRE2_ERROR_DEPTHLIMIT)
        snprintf(what, sizeof what, "PCRE2's depth limit (%d open backtracking points) reached", HF_REGEX_DEPTH_LIMIT);
    else if (rc == PCRE2_ERROR_HEAPLIMIT)
        snprintf(what, sizeof what, "needs more than %d MB of backtracking memory (PCRE2's heap limit)",
                 HF_REGEX_HEAP_LIMIT_KB >> 10);
    else {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(rc, msg, sizeof msg);
        snprintf(what, sizeof what, "PCRE2: %s", (const char *)msg);
    }
    snprintf(why, why_len, "%s (matching from byte %zu of a %zu-byte piece)", what, from, n);
}

int hf_regex_find(HfMatcher *m, const pcre2_code *re, const char *s, size_t n, size_t from, size_t *ms, size_t *me,
                  char *why, size_t why_len) {
    m->last = from;
    int rc = pcre2_match(re, (PCRE2_SPTR)s, n, from, 0, m->md, m->mctx);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
        /* the interpreter checks the UTF-8 of the rest of the text on every call: counted */
        m->steps += n - from;
        m->last = from;
        rc = m->steps > m->budget ? OVER_BUDGET : pcre2_match(re, (PCRE2_SPTR)s, n, from, PCRE2_NO_JIT, m->md, m->mctx);
    }
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc < 0) {
        limit_reason(m, rc, from, n, why, why_len);
        return -1;
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
    *ms = ov[0], *me = ov[1];
    return 1;
}
