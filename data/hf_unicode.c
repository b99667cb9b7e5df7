/* hf_unicode.c: Unicode normalization through ICU (see hf_unicode.h). */
#include "hf_unicode.h"

#include <stdio.h>
#include <stdlib.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "../core/mem.h"
#include "hf_bpe.h"

static const UNormalizer2 *instance(int form) {
    UErrorCode err = U_ZERO_ERROR;
    const UNormalizer2 *n = form == 0 ? unorm2_getNFCInstance(&err) : form == 1 ? unorm2_getNFDInstance(&err)
                            : form == 2 ? unorm2_getNFKCInstance(&err) : unorm2_getNFKDInstance(&err);
    if (U_FAILURE(err)) { /* ICU's data is built into the library: only a broken install lands here */
        fprintf(stderr, "pelab: ICU normalizer unavailable: %s\n", u_errorName(err));
        exit(1);
    }
    return n;
}

/* one run of valid UTF-8 (no ASCII-only fast path needed by callers: ASCII is every form's fixed point) */
static void normalize_run(const UNormalizer2 *norm, const char *s, size_t n, StrBuf *out) {
    int ascii = 1;
    for (size_t i = 0; i < n && ascii; i++) ascii = (unsigned char)s[i] < 0x80;
    if (ascii || n > (size_t)INT32_MAX / 4) { /* ASCII is every form's fixed point */
        sb_put(out, s, n);
        return;
    }
    UErrorCode err = U_ZERO_ERROR;
    int32_t u16_len = 0;
    UChar *in = xmalloc((n + 1) * sizeof(UChar)); /* UTF-16 never needs more units than UTF-8 has bytes */
    u_strFromUTF8(in, (int32_t)n + 1, &u16_len, s, (int32_t)n, &err);
    int32_t cap = u16_len * 4 + 16, got = 0;
    UChar *res = NULL;
    for (int tries = 0; tries < 2; tries++) {
        err = U_ZERO_ERROR;
        res = xrealloc(res, (size_t)cap * sizeof(UChar));
        got = unorm2_normalize(norm, in, u16_len, res, cap, &err);
        if (err != U_BUFFER_OVERFLOW_ERROR) break;
        cap = got + 16;
    }
    int32_t u8_len = 0;
    if (U_SUCCESS(err)) {
        err = U_ZERO_ERROR;
        u_strToUTF8(NULL, 0, &u8_len, res, got, &err);
        char *u8 = xmalloc((size_t)u8_len + 1);
        err = U_ZERO_ERROR;
        u_strToUTF8(u8, u8_len + 1, &u8_len, res, got, &err);
        if (U_SUCCESS(err)) sb_put(out, u8, (size_t)u8_len);
        else sb_put(out, s, n);
        free(u8);
    } else sb_put(out, s, n);
    free(in), free(res);
}

void hf_unicode_normalize(int form, const char *s, size_t n, StrBuf *out) {
    const UNormalizer2 *norm = instance(form);
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        int cp;
        size_t cl = hf_utf8_char((const unsigned char *)s + i, n - i, &cp);
        if (cl == 1 && (unsigned char)s[i] >= 0x80) { /* an invalid byte: the run so far, then the byte */
            normalize_run(norm, s + run, i - run, out);
            sb_put(out, s + i, 1);
            run = i + 1;
        }
        i += cl;
    }
    normalize_run(norm, s + run, n - run, out);
}
