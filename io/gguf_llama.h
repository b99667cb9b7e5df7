/* gguf_llama.h: a pelab RoPE model <-> a GGUF file of llama.cpp's llama architecture.
 *
 * Tensors (ggml's ne order, innermost first; the bytes are pelab's [out, in] rows as they are):
 *   token_embd.weight {D, V}, output_norm.weight {D}, output.weight {D, V} (absent when tied:
 *   llama.cpp then reads token_embd), rope_freqs.weight {hd/2} (a rule written as divisors,
 *   io/gguf_rope.h), and per layer N: blk.N.attn_norm {D}, attn_q {D, H hd}, attn_k and attn_v
 *   {D, KVH hd}, attn_output {H hd, D}, ffn_norm {D}, ffn_gate and ffn_up {D, F}, ffn_down {F, D},
 *   and with q/k/v biases (Qwen2's, which llama.cpp's llama reads too) attn_q.bias, attn_k.bias,
 *   attn_v.bias. llama.cpp rotates interleaved pairs: the q and k rows (and biases) of a
 *   layout=half model are reordered on the way out and back (rotary_rows_permute).
 * Metadata: general.architecture "llama", llama.context_length (the training length),
 * embedding_length, block_count, feed_forward_length, attention.head_count, head_count_kv,
 * layer_norm_rms_epsilon, vocab_size, the rope keys (io/gguf_rope.h), the tokenizer
 * (io/gguf_tok.h), and pelab.pos, the canonical spec, which a re-import takes back (after checking
 * that it computes what the llama keys say).
 * Weights: 1-D tensors (norms, biases, divisors) always F32; matrices F32, F16, BF16 or Q8_0 (a
 * matrix whose rows are not a multiple of 32 stays F16 under Q8_0, as llama.cpp's quantizer does).
 * Reading takes F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (io/gguf_quant.h),
 * widened to float32 (or rounded on to bf16: --precision bf16). A model held in bf16 alone is not
 * written (load it as float32). */
#ifndef PELAB_GGUF_LLAMA_H
#define PELAB_GGUF_LLAMA_H

#include <stddef.h>
#include <stdint.h>

#include "../data/tokenizer.h"
#include "../model/model.h"
#include "gguf_tok.h"

/* "f32", "f16", "bf16", "q8_0" -> the ggml type of the matrices; -1 with one line otherwise */
int gguf_weight_type_parse(const char *s, uint32_t *type);

/* -1 (nothing written) with one line when llama.cpp's llama architecture does not compute m as
 * pelab does: another scheme than RoPE, a rule it has no form for, a sliding window, a per-layer
 * pattern */
int gguf_check_exportable(const Model *m, const char *name);
/* writes path atomically; tok may be NULL (no tokenizer: ids only). note: one line on what was
 * mapped or changed form (tokenizer, a folded base, matrices kept F16 under Q8_0) */
int gguf_llama_write(const char *path, const Model *m, const Tokenizer *tok, uint32_t weight_type, char *note,
                     size_t note_len);

/* builds *m from a GGUF image (hostile-input safe: gguf.h); tok gets the tokenizer pelab can
 * represent, or none with the reason in tok->note. -1 with one line naming name and the key or
 * tensor otherwise. Every tensor is decoded once, a piece at a time (in parallel), straight into
 * the model: under PRECISION_BF16 a model that keeps its matrices and embedding in bf16 alone
 * (model_alloc_params_bf16: half the memory), each weight the float32 decoding rounded to nearest
 * even, the norms and biases in float32 too; never a float32 copy of a whole tensor. */
int gguf_llama_parse(const unsigned char *buf, size_t len, const char *name, Precision precision, Model *m,
                     GgufTokImage *tok);
/* the file memory-mapped: its header checked first, then only the tensors' pages read */
int gguf_llama_read(const char *path, Precision precision, Model *m, GgufTokImage *tok);

#endif
