/* hf_tok_write.h: a llama2.c tokenizer.bin written as the Hugging Face tokenizer.json that encodes
 * and decodes the same (`pelab export --hf` of a llama2c checkpoint).
 *
 * The file is Llama 2's own pipeline: normalizer Prepend "▁" + Replace " " -> "▁", BPE with
 * byte_fallback and unk <unk>, TemplateProcessing with <s>, decoder Replace "▁" -> " ",
 * ByteFallback, Fuse, Strip one leading space. Ids 0, 1, 2 are <unk>, <s>, </s> (llama2.c's
 * export writes them as "<unk>", "\n<s>\n", "\n</s>\n"); every other piece has its spaces written
 * as "▁". run.c merges the adjacent pair whose joined piece has the highest score: the merges are
 * every split (a, b) of every piece with a score above -1e10 whose halves are pieces, ordered by
 * the joined piece's score (highest first), then its id, then a's id. That gives HF's lowest-rank
 * merge the piece run.c picks, as long as no two different pieces that can both be formed share a
 * score (run.c would take the leftmost; llama2.c's SentencePiece scores are distinct). */
#ifndef PELAB_HF_TOK_WRITE_H
#define PELAB_HF_TOK_WRITE_H

#include "../core/strbuf.h"
#include "llama2c_tok.h"

/* appends the tokenizer.json to out; -1 naming name and the piece that JSON cannot hold (a piece
 * that is not UTF-8, or two ids with the same piece) */
int hf_tok_json_from_llama2c(const Llama2cTok *t, StrBuf *out, const char *name);

#endif
