/* attn_scale.h: length-scaled attention, a modifier on any position scheme: "SPEC+logn[:len=N]" or
 * "SPEC+temp[:scale=F,floor=N]". After the scheme's q/k transform, every query row is multiplied
 * by f(pos), its own position id, so the content logits q.k grow with the position (the score
 * biases of ALiBi, T5, KERPLE are not scaled: Qwen and Llama 4 scale the query tensor, as here):
 *   logn (Qwen's use_logn_attn): f = log(pos + 1) / log(len) once pos + 1 > len, else 1;
 *        len defaults to the training length L; inference-time in Qwen, here usable in training too
 *   temp (Llama 4's attention temperature tuning): f = scale * log(floor((pos + 1) / floor) + 1) + 1,
 *        scale 0.1 and floor L by default (Llama 4 ships floor 8192 for its 8k training length)
 * Keys are not scaled, so a KV cache stays exact; the backward multiplies dq by the same f. */
#ifndef PELAB_ATTN_SCALE_H
#define PELAB_ATTN_SCALE_H

#include <stddef.h>

typedef enum { ATTN_SCALE_NONE, ATTN_SCALE_LOGN, ATTN_SCALE_TEMP } AttnScaleKind;

typedef struct {
    AttnScaleKind kind;
    int len;       /* logn: the length past which f > 1 */
    int floor_len; /* temp: floor_scale */
    double scale;  /* temp: attn_scale */
} AttnScale;

/* "logn[:len=N]" or "temp[:scale=F,floor=N]" (text after the '+'); defaults from the training
 * length train_len. -1 with one line naming the bad part. */
int attn_scale_parse(AttnScale *a, const char *text, int train_len);
/* "+logn:len=N", "+temp:scale=F,floor=N", or "" (none) */
void attn_scale_spec(const AttnScale *a, char *buf, size_t n);
double attn_scale_factor(const AttnScale *a, long pos);
/* rows [n, width] (queries, or their gradient) times f(pos[row]) */
void attn_scale_apply(const AttnScale *a, float *rows, const int *pos, int n, int width);

#endif
