/* hf_unicode.h: Unicode normalization (NFC, NFD, NFKC, NFKD) for tokenizer.json normalizers, by ICU
 * (libicu-dev). Used by hf_tok_run.c only. */
#ifndef PELAB_HF_UNICODE_H
#define PELAB_HF_UNICODE_H

#include <stddef.h>

#include "../core/strbuf.h"

/* s[0..n) in normal form form (0 NFC, 1 NFD, 2 NFKC, 3 NFKD) appended to out; bytes that are not
 * valid UTF-8 are copied as they are (each run of valid text is normalized on its own) */
void hf_unicode_normalize(int form, const char *s, size_t n, StrBuf *out);

#endif
