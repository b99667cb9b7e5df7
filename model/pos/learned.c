/* learned.c: learned absolute position embeddings (GPT-2): x[t] += P[pos[t]].
 * The table has max_len rows (default: the training length); a position past it is an error,
 * never a read past the array (checked by pos_check_positions through max_position). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "../../core/rng.h"
#include "../../core/sys.h"
#include "pos.h"

typedef struct {
    int max_len;
} Learned;

static int learned_create(PosCtx *pc) {
    Learned *s = xcalloc(1, sizeof *s);
    s->max_len = pc->seq_len;
    pc->state = s;
    return 0;
}

static int learned_set_option(PosCtx *pc, const char *key, const char *val) {
    Learned *s = pc->state;
    if (strcmp(key, "max_len") == 0) return pos_parse_int("learned", key, val, 1, 1 << 24, &s->max_len);
    return pelab_fail("--pos learned: unknown option '%s' (expected max_len=N)", key);
}

static void learned_describe(const PosCtx *pc, char *buf, size_t n) {
    snprintf(buf, n, "max_len=%d", ((const Learned *)pc->state)->max_len);
}

static void learned_param_shape(const PosCtx *pc, int *ndim, int shape[4]) {
    *ndim = 2;
    shape[0] = ((const Learned *)pc->state)->max_len;
    shape[1] = pc->dim;
}

static void learned_init_params(const PosCtx *pc, float *p, Rng *rng) {
    size_t n = (size_t)((const Learned *)pc->state)->max_len * pc->dim;
    for (size_t i = 0; i < n; i++) p[i] = 0.01f * rng_normal(rng); /* GPT-2's wpe init */
}

static long learned_max_position(const PosCtx *pc) { return ((const Learned *)pc->state)->max_len; }

static void learned_input_forward(const PosCtx *pc, float *x, const int *pos, int n) {
    int D = pc->dim;
#pragma omp parallel for if ((size_t)n * D >= PAR_MIN_WORK)
    for (int t = 0; t < n; t++) {
        const float *row = pc->params + (size_t)pos[t] * D;
        for (int i = 0; i < D; i++) x[(size_t)t * D + i] += row[i];
    }
}

static void learned_input_backward(const PosCtx *pc, const float *dx, const int *pos, int n, float *dparams) {
    int D = pc->dim;
    /* rows may repeat across the batch: parallel over columns, never over tokens */
#pragma omp parallel for if ((size_t)n * D >= PAR_MIN_WORK)
    for (int i = 0; i < D; i++)
        for (int t = 0; t < n; t++) dparams[(size_t)pos[t] * D + i] += dx[(size_t)t * D + i];
}

const PosScheme pos_learned = {
    .name = "learned",
    .options_help = "max_len=N (default: the training length)",
    .create = learned_create,
    .set_option = learned_set_option,
    .describe = learned_describe,
    .param_shape = learned_param_shape,
    .init_params = learned_init_params,
    .max_position = learned_max_position,
    .input_forward = learned_input_forward,
    .input_backward = learned_input_backward,
};
