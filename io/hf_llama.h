/* hf_llama.h: a pelab RoPE model as a Hugging Face Llama checkpoint directory and back:
 * DIR/config.json (LlamaForCausalLM) and DIR/model.safetensors (float32, HF tensor names:
 * model.embed_tokens.weight, model.layers.N.self_attn.{q,k,v,o}_proj.weight,
 * model.layers.N.mlp.{gate,up,down}_proj.weight, model.layers.N.{input,post_attention}_layernorm.weight,
 * model.norm.weight, lm_head.weight unless tied). HF's Llama rotates halves (pair j = dims j and
 * j + hd/2): the q and k rows of a pelab layout=interleaved model are reordered on the way out and
 * back (rotary_rows_permute), a layout=half model's are written as they are.
 * Rules: pi -> "linear", dynamic-ntk -> "dynamic", yarn -> "yarn", llama3 -> "llama3",
 * longrope -> "longrope" (its factors copied), ntk:S -> no rope_scaling, its base folded into
 * rope_theta (the same frequencies). Everything else HF's Llama does not compute is refused. */
#ifndef PELAB_HF_LLAMA_H
#define PELAB_HF_LLAMA_H

#include "../model/model.h"
#include "rope_target.h" /* rotary_rows_permute */

/* writes dir/config.json and dir/model.safetensors (dir is created); note gets one line on what the
 * export changed in form (a folded ntk base), "" otherwise. -1 with the reason (one line, nothing
 * written) when HF's LlamaForCausalLM does not compute m exactly as pelab does. */
int hf_llama_write(const char *dir, const Model *m, char *note, size_t note_len);
/* the same, the weights as shards of at most shard_bytes each (model-0000K-of-0000N.safetensors and
 * model.safetensors.index.json, as HF's save_pretrained) when they are more; 0: one file. bf16: the
 * tensors as BF16 (rounded to nearest even; torch_dtype bfloat16), as most HF checkpoints are */
int hf_llama_write_sharded(const char *dir, const Model *m, size_t shard_bytes, int as_bf16, char *note, size_t note_len);
/* reads dir/config.json and dir/model.safetensors, or the shards dir/model.safetensors.index.json names
 * (io/hf_index.h; each shard holds exactly the tensors the index puts in it) (F32, BF16 or F16; any key order, __metadata__ optional; tensors
 * named rotary_emb.inv_freq are skipped, any other unknown tensor is refused). LlamaForCausalLM, or
 * MistralForCausalLM (the same decoder): its sliding_window goes to *sliding_window (may be NULL;
 * 0: none) for the caller to report: pelab attends to the whole context, which is Mistral's model
 * up to that many tokens and not past it. */
int hf_llama_read(const char *dir, Model *m, long *sliding_window);

/* dir/name, a file of a Hugging Face model folder, read whole: refused in one line when it is not a
 * regular file or resolves outside the folder (a symlink out of it, which a downloaded archive can
 * hold). The folder of a snapshot of the hub cache (.../snapshots/REV, whose files are symlinks to
 * ../../blobs/HASH) is its repository's folder two levels up. A file over max bytes is refused
 * before it is read (what names its kind: core/files.h's read_file_max); the weights' shards are
 * memory-mapped instead, their headers checked before a tensor's byte is read. */
int hf_read_model_file(const char *dir, const char *name, size_t max, const char *what, unsigned char **buf, size_t *len);

#endif
