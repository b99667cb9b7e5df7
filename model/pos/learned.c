/* learned.c: learned absolute position embeddings (GPT-2): x[t] += P[pos[t]].
 * The table has max_len rows (default: the training length); a position past it is an error,
 * never a read past the array (checked by pos_check_positions through max_position).
 * max_len above the training length L is GPT-2's and the original Transformer's setting, the one
 * the ALiBi paper tests: rows L.. get no gradient in training (pos.weight has no weight decay), so
 * they keep their initialization, and evaluation past L reads those untrained rows. */
#include "../../core/rng.h"
#include "../../core/sys.h"
#include "pos.h"

typedef struct {
    int max_len;
} Learned;

static const PosOption learned_options[] = {
    POS_INT("max_len", Learned, max_len, 0, 1, 1 << 24, "rows of the table: a position past it is an error",
            .flags = POS_OPT_TRAIN_LEN),
};

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
    PAR_FOR((size_t)n * D >= PAR_MIN_WORK, int, t, n,
        const float *row = pc->params + (size_t)pos[t] * D;
        for (int i = 0; i < D; i++) x[(size_t)t * D + i] += row[i];
    );
}

static void learned_input_backward(const PosCtx *pc, const float *dx, const int *pos, int n, float *dparams) {
    int D = pc->dim;
    /* rows may repeat across the batch: parallel over columns, never over tokens */
    PAR_FOR((size_t)n * D >= PAR_MIN_WORK, int, i, D,
        for (int t = 0; t < n; t++) dparams[(size_t)pos[t] * D + i] += dx[(size_t)t * D + i];
    );
}

const PosScheme pos_learned = {
    .name = "learned",
    .caps = POS_CAP_LEARNED,
    POS_OPTIONS(learned_options),
    .test_specs = {"learned:max_len=12"}, /* a table past the training length L = 8 */
    .state_size = sizeof(Learned),
    .param_shape = learned_param_shape,
    .init_params = learned_init_params,
    .max_position = learned_max_position,
    .input_forward = learned_input_forward,
    .input_backward = learned_input_backward,
};
