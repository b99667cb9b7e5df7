/* decode_block.c: what a decoding call of n new tokens costs against one of 1 (sample --lookup
 * checks a draft of n - 1 tokens in one call; sample --prompts feeds n texts' tokens in one): the
 * model's cache filled to position P, then calls of n = 1, 2, 3, 4, 5, 8 tokens at P, alternated
 * call by call (a noisy host moves them all alike) and each cut back to P (kvcache_truncate);
 * the median of each n and its ratio to n = 1. `make bench-block` builds it and runs it on config
 * M (5 training steps: the weights' values do not matter to the time):
 *   build/bench/decode_block MODEL.safetensors [REPEATS [P]]   (OMP_NUM_THREADS: the threads) */
#include <stdio.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/mem.h"
#include "../../core/sys.h"
#include "../../infer/decode.h"
#include "../../io/checkpoint.h"

enum { N_SIZES = 6, MAX_NEW = 8 };
static const int sizes[N_SIZES] = {1, 2, 3, 4, 5, 8};

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: decode_block MODEL.safetensors [REPEATS [P]]\n");
        return 2;
    }
    int repeats = argc > 2 ? atoi(argv[2]) : 300, P = argc > 3 ? atoi(argv[3]) : 128;
    if (repeats < 1 || P < 1) {
        fprintf(stderr, "decode_block: REPEATS and P must be positive\n");
        return 2;
    }
    Model m;
    CkptMeta meta;
    if (checkpoint_load_precision(argv[1], &m, &meta, PRECISION_FP32) != 0) {
        fprintf(stderr, "decode_block: %s\n", pelab_errmsg);
        return 1;
    }
    int total = P + MAX_NEW, *tokens = xmalloc(sizeof(int) * total), *pos = xmalloc(sizeof(int) * total);
    for (int i = 0; i < total; i++) tokens[i] = (i * 7 + 3) % m.cfg.vocab_size, pos[i] = i;
    float *logits = xmalloc(sizeof(float) * MAX_NEW * m.cfg.vocab_size);
    double *secs = xmalloc(sizeof(double) * N_SIZES * repeats);
    KVCache kv;
    kvcache_init(&kv, &m, total, 64);
    if (decode_forward(&m, &kv, tokens, pos, P, logits, 0) != 0) {
        fprintf(stderr, "decode_block: %s\n", pelab_errmsg);
        return 1;
    }
    for (int r = 0; r < repeats; r++)
        for (int s = 0; s < N_SIZES; s++) {
            int n = sizes[s];
            double t0 = now_seconds();
            /* every row's logits past one token, as a lookup check asks for them */
            int rc = decode_forward(&m, &kv, tokens + P, pos + P, n, logits, n > 1);
            secs[s * repeats + r] = now_seconds() - t0;
            if (rc != 0 || kvcache_truncate(&kv, P) != 0) {
                fprintf(stderr, "decode_block: %s\n", pelab_errmsg);
                return 1;
            }
        }
    printf("decode_block: %s, cache at %d, %d repeats (median ms a call; x its cost at 1 token)\n", argv[1], P,
           repeats);
    double one = 0;
    for (int s = 0; s < N_SIZES; s++) {
        qsort(secs + s * repeats, repeats, sizeof(double), by_value);
        double median = secs[s * repeats + repeats / 2];
        one = s == 0 ? median : one;
        printf("  %d new: %.3f ms  x%.2f\n", sizes[s], median * 1e3, median / one);
    }
    kvcache_free(&kv);
    model_free(&m);
    meta_free(&meta);
    free(tokens), free(pos), free(logits), free(secs);
    return 0;
}
