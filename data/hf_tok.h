/* hf_tok.h: a Hugging Face tokenizer.json, encoded and decoded as HF's tokenizers library runs it.
 *
 * Read: model type "BPE" (vocab as {token: id}; merges as "a b" strings or ["a", "b"] arrays, rank =
 * index; unk_token, fuse_unk, byte_fallback, ignore_merges; dropout null or 0; no subword prefix or
 * suffix). Other model types (Unigram, WordLevel, WordPiece) are refused in one line naming them.
 * Normalizers: Sequence, Prepend, Replace (String pattern), NFC / NFD / NFKC / NFKD (ICU).
 * Pre-tokenizers: Sequence, ByteLevel (GPT-2's regex, add_prefix_space, use_regex), Digits,
 * Split (Regex or String pattern, every behavior, invert), Metaspace (replacement,
 * prepend_scheme always / first / never, split). Regexes run in PCRE2 with UTF and UCP (\p{L},
 * \p{N}, \s as Unicode), a file's own patterns within data/hf_regex.h's bounds of length, time and
 * memory. Post-processors: TemplateProcessing (its "single" template), ByteLevel
 * (adds nothing), RobertaProcessing / BertProcessing (cls ... sep), Sequence of these. Decoders:
 * ByteLevel, Metaspace, Replace (String), ByteFallback, Fuse, Strip, Sequence. Anything else is
 * refused in one line naming the field and the type.
 *
 * Encoding (HF's order): added tokens (leftmost-longest, lstrip / rstrip / single_word) are cut out
 * of the raw text first (those with normalized=false), every other segment is normalized, the
 * normalized=true added tokens are cut out of it, the rest is pre-tokenized into words and each
 * word is BPE-merged (lowest rank first, leftmost on ties, through a heap: O(n log n) per word);
 * with add_special, the post-processor's tokens go around the result.
 * Where HF's Rust library needs valid UTF-8 (a Python str), pelab takes any bytes: an invalid byte
 * is a character of its own that no regex class matches, and byte fallback or ByteLevel keep it, so
 * decode(encode(x)) == x still holds for those families. Decoding writes the raw bytes of
 * <0xHH> tokens where HF writes U+FFFD for a sequence that is not valid UTF-8. */
#ifndef PELAB_HF_TOK_H
#define PELAB_HF_TOK_H

#include <stddef.h>

#include "../core/strbuf.h"
#include "hf_bpe.h"

typedef struct HfTok HfTok;

/* tokenizer.json values are counted like any JSON (core/json.h), with this larger cap: Llama 3's
 * file holds ~10^6 */
#define HF_TOK_MAX_VALUES (1 << 21)

/* parse a tokenizer.json image; -1 with one line naming name and the field otherwise */
int hf_tok_parse(HfTok **out, const unsigned char *buf, size_t len, const char *name);
void hf_tok_free(HfTok *t);
/* 1 + the largest id of the vocabulary and the added tokens */
int hf_tok_vocab_size(const HfTok *t);
/* the first token the post-processor puts before a text (Llama's <s>), -1 if none */
int hf_tok_bos(const HfTok *t);
/* the first added token marked special (GPT-2's <|endoftext|>), -1 if none */
int hf_tok_first_special(const HfTok *t);
/* Every text transformation of a file (each normalizer, each pre-tokenizer, the decoders over the
 * vocabulary) gives at most HF_TOK_GROWTH x its input + HF_TOK_GROWTH_FLOOR bytes, counted from the
 * text before the first step (a chain compounds: 40 Replace "a" -> "aa" would double it 40 times).
 * The most a real tokenizer lengthens a text: NFKC turns U+FDFA (3 bytes) into 33, and ByteLevel
 * then doubles every byte past ASCII: 22-fold; Llama 2's Prepend + Replace " " -> U+2581 makes a run
 * of spaces 3-fold; ordinary text grows 1.0 to 1.3-fold. */
#define HF_TOK_GROWTH 32
#define HF_TOK_GROWTH_FLOOR 4096
/* HF_TOK_GROWTH x n + HF_TOK_GROWTH_FLOOR, saturating */
size_t hf_tok_growth_limit(size_t n);

/* an obviously explosive chain, refused when a file is loaded (data/tokenizer.c does): the file's
 * steps run on a text of their own patterns and contents (and a few characters: a space, a letter,
 * a digit, an accent, U+FDFA, an invalid byte); -1 with one line naming the field when that passes
 * hf_tok_growth_limit. A regex past its limits there is left to the texts it meets. */
int hf_tok_check_growth(const HfTok *t);

/* text[0..n) as ids in a malloc'd array with room for extra more; add_special: the post-processor's
 * tokens around it. *count gets the number. NULL with one line naming the file, the field and the
 * limit when a regex of the file runs past data/hf_regex.h's bounds (a catastrophic pattern) or a
 * step lengthens the text past hf_tok_growth_limit. */
int *hf_tok_encode(const HfTok *t, const unsigned char *text, size_t n, int add_special, size_t extra, size_t *count);
/* the decoded bytes of id as a token of its own (every per-token decoder step applied), NULL if no
 * token has this id; *special: an added token marked special */
const unsigned char *hf_tok_piece(const HfTok *t, int id, size_t *len, int *special);
/* how many leading spaces the decoder strips from the start of a decoded text (Llama 2's Strip,
 * Metaspace's prefix): a streaming decoder drops them from the first piece it prints */
int hf_tok_strip_start(const HfTok *t);
/* decode ids as HF's tokenizer.decode(ids, skip_special_tokens) does, appended to out; -1 naming
 * the first id outside the vocabulary */
int hf_tok_decode(const HfTok *t, const int *ids, size_t n, int skip_special, StrBuf *out);
/* ByteLevel's byte -> character map (GPT-2's bytes_to_unicode): the code point that stands for byte b */
int hf_byte_char(int b);
/* the vocabulary as the model knows it: the token string of id (before decoding), NULL if none */
const char *hf_tok_token(const HfTok *t, int id, size_t *len);

#endif
