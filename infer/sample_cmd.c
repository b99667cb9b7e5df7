/* sample_cmd.c: `pelab sample`: text from a checkpoint with the KV cache (or, with --no-cache,
 * a full forward over the whole sequence at every step: slower, the same text). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../data/tokenizer.h"
#include "../model/checkpoint.h"
#include "../tools/args.h"
#include "../tools/commands.h"
#include "decode.h"
#include "sampler.h"

int cmd_sample(int argc, char **argv) {
    const char *prompt = "", *ckpt = NULL;
    int n_new = 256, top_k = 0, no_cache = 0, threads = 0;
    float temp = 1.0f, top_p = 0.9f;
    unsigned long long seed = 0;
    const OptSpec opts[] = {
        {"--prompt", OPT_STR, &prompt, 0, 0, "text to continue (empty: start from a newline)"},
        {"-n", OPT_INT, &n_new, 1, 1 << 24, "tokens to generate (not counting the prompt)"},
        {"--temp", OPT_FLOAT, &temp, 0, 100, "temperature (0: greedy)"},
        {"--top-k", OPT_INT, &top_k, 0, 1 << 24, "keep the k most likely tokens (0: off)"},
        {"--top-p", OPT_FLOAT, &top_p, 0, 1, "nucleus sampling mass (0 or 1: off)"},
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "random seed (0: from the clock, printed on stderr)"},
        {"--no-cache", OPT_FLAG, &no_cache, 0, 0, "recompute the full forward at every step"},
        {"--threads", OPT_INT, &threads, 0, 1024, "threads (0: all cores)"},
    };
    const char *pos_args[1];
    int n_pos;
    args_parse("sample", "CKPT [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (n_pos != 1) pelab_die("sample: expected one checkpoint path (see pelab sample --help)");
    ckpt = pos_args[0];
    set_threads(threads);

    Model m;
    CkptMeta meta;
    if (checkpoint_load(ckpt, &m, &meta, NULL, NULL) != 0) pelab_die("%s", pelab_errmsg);
    Tokenizer tok;
    if (tokenizer_init(&tok, meta_get(&meta, "tokenizer"), m.cfg.vocab_size) != 0)
        pelab_die("%s: %s", ckpt, pelab_errmsg);
    if (seed == 0) {
        seed = (unsigned long long)time(NULL);
        fprintf(stderr, "seed %llu\n", seed);
    }

    size_t plen = strlen(prompt);
    int *tokens = xmalloc(sizeof(int) * (plen + (size_t)n_new + 1));
    int n_prompt = (int)tokenizer_encode(&tok, prompt, plen, tokens);
    if (n_prompt == 0) tokens[n_prompt++] = '\n'; /* byte models have no BOS: a newline starts a text */
    int total = n_prompt + n_new;
    long max_pos = pos_max_position(&m.pos);
    if (max_pos >= 0 && total > max_pos)
        pelab_die("sample: prompt (%d tokens) + -n %d = %d exceeds the %ld positions the %s scheme accepts", n_prompt,
                  n_new, total, max_pos, m.pos.scheme->name);
    int *positions = xmalloc(sizeof(int) * total);
    for (int i = 0; i < total; i++) positions[i] = i;

    Sampler sampler;
    sampler_init(&sampler, m.cfg.vocab_size, temp, top_p, top_k, seed);
    float *logits = xmalloc(sizeof(float) * m.cfg.vocab_size);
    KVCache kv;
    if (no_cache) model_alloc_train(&m, 1, total);
    else kvcache_init(&kv, &m, total, 64);

    char buf[16];
    fwrite(prompt, 1, plen, stdout);
    double t0 = now_seconds();
    int len = n_prompt;
    for (int i = 0; i < n_new; i++) {
        if (no_cache) {
            if (model_forward(&m, tokens, NULL, positions, 1, len) != 0) pelab_die("%s", pelab_errmsg);
            memcpy(logits, m.acts.logits + (size_t)(len - 1) * m.cfg.vocab_size, sizeof(float) * m.cfg.vocab_size);
        } else {
            int from = i == 0 ? 0 : len - 1; /* first call feeds the whole prompt */
            if (decode_forward(&m, &kv, tokens + from, positions + from, len - from, logits, 0) != 0)
                pelab_die("%s", pelab_errmsg);
        }
        int next = sampler_sample(&sampler, logits);
        tokens[len++] = next;
        size_t nb = tokenizer_decode(&tok, next, buf);
        fwrite(buf, 1, nb, stdout);
        fflush(stdout);
    }
    double dt = now_seconds() - t0;
    printf("\n");
    fprintf(stderr, "%d tokens in %.2f s: %.1f tokens/s (%s)\n", n_new, dt, n_new / dt,
            no_cache ? "no cache" : "KV cache");
    if (!no_cache) kvcache_free(&kv);
    sampler_free(&sampler);
    free(tokens), free(positions), free(logits);
    model_free(&m);
    return 0;
}
