/* attn_scale.h: length-scaled attention, a modifier on any position scheme: "SPEC+logn[:len=N]",
 * "SPEC+temp[:scale=F,floor=N]" or "SPEC+ssmax[:init=F]". After the scheme's q/k transform, every
 * query row is multiplied by f(pos), from its own position id, so the content logits q.k grow with
 * the position (the score biases of ALiBi, T5, KERPLE are not scaled: Qwen, Llama 4 and SSMax scale
 * the query tensor, as here; SSMax scales the whole logit vector, which is the same only without a
 * score bias, so spec.c refuses +ssmax on bias schemes):
 *   logn (Qwen's use_logn_attn): f = log(pos + 1) / log(len) once pos + 1 > len, else 1;
 *        len defaults to the training length L; inference-time in Qwen, here usable in training too
 *   temp (Llama 4's attention temperature tuning): f = scale * log(floor((pos + 1) / floor) + 1) + 1,
 *        scale 0.1 and floor L by default (Llama 4 ships floor 8192 for its 8k training length)
 *   ssmax (Scalable-Softmax, Nakanishi 2025, arXiv 2501.19399): f = s * log(n), n = pos + 1, s
 *        learned per layer and head (the tensor "pos.attn_scale", [n_layers, n_heads]), every s
 *        initialised to init (default 1 / log L: f = 1 at n = L). The paper's n is the number of
 *        keys the query sees: pos + 1 is that count for contiguous positions from 0 (training,
 *        decoding); under --rand-pos or left padding it is the position, as for logn and temp.
 * logn and temp take layers=all|nope: "nope" applies them only in the "+nope@" layers (Llama 4
 * tunes the temperature in its NoPE layers only); written in the spec only when "nope".
 * Keys are not scaled, so a KV cache stays exact; the backward multiplies dq by the same f. */
#ifndef PELAB_ATTN_SCALE_H
#define PELAB_ATTN_SCALE_H

#include <stddef.h>

typedef enum { ATTN_SCALE_NONE, ATTN_SCALE_LOGN, ATTN_SCALE_TEMP, ATTN_SCALE_SSMAX } AttnScaleKind;

typedef struct {
    AttnScaleKind kind;
    int len;        /* logn: the length past which f > 1 */
    int floor_len;  /* temp: floor_scale */
    double scale;   /* temp: attn_scale */
    double init;    /* ssmax: the starting s of every layer and head */
    int nope_only;  /* logn, temp: layers=nope, only in the "+nope@" layers */
    const float *s; /* ssmax: the learned s [n_layers, n_heads] in the model's parameters; NULL: init */
} AttnScale;

/* "logn[:len=N,layers=W]", "temp[:scale=F,floor=N,layers=W]" or "ssmax[:init=F]" (text after the
 * '+'); defaults from the training length train_len. -1 with one line naming the bad part. */
int attn_scale_parse(AttnScale *a, const char *text, int train_len);
/* one line per modifier for --help, each "\n" INDENT "SPEC+NAME  OPTIONS  what it does" */
void attn_scale_help(char *buf, size_t n, const char *indent);
/* "+logn:len=N", "+temp:scale=F,floor=N", "+ssmax:init=F" (",layers=nope" when set), or "" */
void attn_scale_spec(const AttnScale *a, char *buf, size_t n);
/* 1 for a modifier with learned parameters (ssmax) */
int attn_scale_learned(const AttnScale *a);
/* the factor's position part: logn and temp f(pos) whole; ssmax log(pos + 1), without s */
double attn_scale_factor(const AttnScale *a, long pos);
/* the factor of one head of one layer: ssmax s[layer, head] log(pos + 1); the others f(pos) */
double attn_scale_head_factor(const AttnScale *a, long pos, int layer, int head, int n_heads);
/* rows [n, n_heads * head_dim] (queries, or their gradient) times each head's factor at pos[row] */
void attn_scale_apply(const AttnScale *a, float *rows, const int *pos, int n, int n_heads, int head_dim, int layer);
/* ssmax: ds[h] += sum over rows of log(pos + 1) dot(dq'[row, h], q[row, h]), given dq' (the
 * gradient of the scaled queries) and q (the queries before scaling): ds is the layer's [n_heads] */
void attn_scale_backward_s(const float *dq_scaled, const float *q, const int *pos, int n, int n_heads, int head_dim,
                           float *ds);

#endif
