/* llamacpp_decode.c: llama.cpp's single-stream greedy decoding speed on a GGUF file, through its C
 * library directly (no node between the tokens), for tools/bench/decode_sidebyside.sh. Built by
 * that script against the llama.h and libllama of one node-llama-cpp install: the headers from the
 * llama.cpp source it ships (llama/gitRelease.bundle), the prebuilt CPU libraries from its
 * bins/linux-x64. Usage:
 *   llamacpp_decode BACKEND_DIR MODEL.gguf N THREADS [F32|F16]
 * Feeds token 1, then each argmax of the logits back, N tokens; prints one line
 * "llama.cpp tokens/s X (N tokens after the first, T threads, kv KV)", timed from the first
 * generated token to the last, as `pelab sample` reports "tokens/s after the first". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-backend.h"
#include "llama.h"

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void quiet(enum ggml_log_level level, const char *text, void *data) {
    (void)data;
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static bool no_progress(float progress, void *data) {
    (void)progress, (void)data;
    return true; /* the default prints a dot per step of the load */
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: llamacpp_decode BACKEND_DIR MODEL.gguf N THREADS [F32|F16]\n");
        return 2;
    }
    const char *backends = argv[1], *model_path = argv[2], *kv = argc > 5 ? argv[5] : "F32";
    int n = atoi(argv[3]), threads = atoi(argv[4]);
    if (n < 2 || threads < 1 || (strcmp(kv, "F32") != 0 && strcmp(kv, "F16") != 0)) {
        fprintf(stderr, "llamacpp_decode: N must be >= 2, THREADS >= 1, KV F32 or F16\n");
        return 2;
    }
    llama_log_set(quiet, NULL);
    ggml_backend_load_all_from_path(backends); /* the CPU variant this machine takes (haswell, zen4, ...) */
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0, mp.progress_callback = no_progress;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "llamacpp_decode: %s: llama.cpp could not load it\n", model_path);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)n + 16, cp.n_batch = 512, cp.n_ubatch = 512;
    cp.n_threads = threads, cp.n_threads_batch = threads;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.type_k = cp.type_v = strcmp(kv, "F16") == 0 ? GGML_TYPE_F16 : GGML_TYPE_F32;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "llamacpp_decode: llama.cpp could not make a context\n");
        return 1;
    }
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_token tok = 1;
    double t_first = 0, t_last = 0;
    int count = 0;
    while (count < n) {
        if (llama_decode(ctx, llama_batch_get_one(&tok, 1)) != 0) {
            fprintf(stderr, "llamacpp_decode: llama_decode failed at token %d\n", count);
            return 1;
        }
        const float *logits = llama_get_logits_ith(ctx, -1);
        int best = 0;
        for (int v = 1; v < n_vocab; v++)
            if (logits[v] > logits[best]) best = v;
        tok = best;
        double t = seconds();
        if (count == 0) t_first = t;
        t_last = t, count++;
    }
    printf("llama.cpp tokens/s %.1f (%d tokens after the first, %d threads, kv %s)\n",
           (count - 1) / (t_last - t_first), count - 1, threads, kv);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
