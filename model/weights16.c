/* weights16.c: a model whose matrix weights live in bf16 alone (model.h, model_create_bf16), for
 * inference from a bf16 checkpoint at half the weight memory of the widened float32 block. */
#include <stdlib.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "model.h"

int model_weight_in_bf16_only(int t) {
    return t == T_TOK_EMB || t == T_WQ || t == T_WK || t == T_WV || t == T_WO || t == T_W1 || t == T_W2 || t == T_W3 ||
           t == T_LM_HEAD;
}

int model_create_bf16(Model *m, const ModelConfig *cfg, const char *pos_spec) {
    return model_layout(m, cfg, pos_spec) != 0 ? -1 : model_alloc_params_bf16(m);
}

int model_alloc_params_bf16(Model *m) {
    /* a reservation, never a float32 block of the whole model: only the float32 tensors are committed */
    size_t bytes = m->n_params * sizeof(float);
    float *block = mem_reserve(bytes);
    if (!block) {
        model_free(m);
        return -1;
    }
    m->params_reserved = bytes; /* before the block is attached: model_free then releases it */
    if (model_attach_params(m, block) != 0) return -1;
    for (int i = 0; i < N_PARAM_TENSORS; i++) {
        const TensorInfo *t = &m->tensors[i];
        if (t->numel && !model_weight_in_bf16_only(i) &&
            mem_commit(block, t->offset * sizeof(float), t->numel * sizeof(float)) != 0) {
            model_free(m);
            return -1;
        }
    }
    m->params_bf16 = xcalloc(m->n_params, sizeof(bf16));
    m->precision = PRECISION_BF16;
    m->bf16_only = 1;
    return 0;
}

size_t model_weight_bytes(const Model *m) {
    size_t bytes = m->params_bf16 ? m->n_params * sizeof(bf16) : 0;
    if (!m->bf16_only) return bytes + m->n_params * sizeof(float);
    for (int i = 0; i < N_PARAM_TENSORS; i++) /* whole pages: what mem_commit made resident */
        if (!model_weight_in_bf16_only(i)) bytes += mem_commit_span(m->tensors[i].offset * sizeof(float),
                                                                    m->tensors[i].numel * sizeof(float));
    return bytes;
}

int model_weights_bf16_exact(const Model *m) {
    if (m->bf16_only) return 1;
    for (size_t i = 0; i < m->n_params; i++)
        if (bf16_to_float(bf16_from_float(m->params_mem[i])) != m->params_mem[i]) return 0;
    return 1;
}
