/* llama2c.h: llama2.c's legacy model file (karpathy/llama2.c run.c), read and written.
 *
 * Layout, little-endian: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
 * seq_len; a negative vocab_size means an unshared classifier), then float32 arrays in run.c's
 * order: token_embedding [V, D], rms_att [L, D], wq [L, H*hd, D], wk [L, KVH*hd, D],
 * wv [L, KVH*hd, D], wo [L, D, H*hd], rms_ffn [L, D], w1 [L, F, D], w2 [L, D, F], w3 [L, F, D],
 * rms_final [D], the legacy freq_cis_real and freq_cis_imag tables [seq_len, hd/2] each (run.c
 * skips them; pelab skips them on reading and writes the true cos/sin values), then wcls [V, D]
 * when unshared. Matrices are [out, in] as in pelab, so every tensor maps one to one.
 * The model it describes is pelab's rope (interleaved pairs, base 10000, RMSNorm eps 1e-5). */
#ifndef PELAB_LLAMA2C_H
#define PELAB_LLAMA2C_H

#include <stddef.h>

#include "../model/model.h"

/* builds *m from a file image; -1 with one line naming name and the problem */
int llama2c_parse_model(const unsigned char *buf, size_t len, const char *name, Model *m);
int llama2c_read_model(const char *path, Model *m);
/* -1 (nothing written) when m is not a model llama2.c's runner computes the same way */
int llama2c_check_exportable(const Model *m, const char *name);
/* atomic: path.tmp, fsync, rename */
int llama2c_write_model(const char *path, const Model *m);

#endif
