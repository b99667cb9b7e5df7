/* sample_cmd.c: `pelab sample`: text from a checkpoint with the KV cache (or, with --no-cache,
 * a full forward over the whole sequence at every step: slower, the same text); with --prompts,
 * one text per line of a file, generated side by side in one batch. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/sys.h"
#include "../data/tokenizer.h"
#include "../infer/generate.h"
#include "../infer/lookup.h"
#include "args.h"
#include "commands.h"
#include "../data/lines.h"
#include "load.h"

typedef struct {
    const Tokenizer *tok;
    int prev; /* the token before the one being printed (decoding depends on it after BOS) */
    int n_printed;
    double t_first; /* when the first new token was drawn: the steady rate is timed from there */
} Printer;

static void print_token(int id, void *ctx) {
    Printer *p = ctx;
    if (p->n_printed++ == 0) p->t_first = now_seconds();
    tokenizer_print(p->tok, p->prev, id, stdout);
    fflush(stdout);
    p->prev = id;
}

/* --prompts FILE: one text per line (empty lines skipped), `batch` side by side at a time (the KV
 * cache holds a batch, not the file); each text is what `sample --prompt LINE --seed S` would
 * print, the texts in file order */
static void sample_batch(Model *m, const Tokenizer *tok, const char *path, int batch, int n_new, float temp,
                         float top_p, int top_k, unsigned long long seed) {
    unsigned char *text;
    size_t n;
    if (read_file(path, &text, &n) != 0) pelab_die("%s", pelab_errmsg);
    TextLines tl;
    if (text_lines_encode(&tl, tok, text, n, 1, (size_t)n_new) != 0) pelab_die("sample: --prompts %s: %s", path, pelab_errmsg);
    free(text);
    int n_seq = tl.n, **texts = tl.ids, *n_prompt = tl.len;
    if (n_seq == 0) pelab_die("sample: --prompts %s: no prompt (one per line)", path);
    Sampler *samplers = xmalloc(sizeof(Sampler) * n_seq);
    for (int b = 0; b < n_seq; b++) sampler_init(&samplers[b], m->cfg.vocab_size, temp, top_p, top_k, seed);
    int *n_made = xmalloc(sizeof(int) * n_seq);
    double t0 = now_seconds();
    for (int first = 0; first < n_seq; first += batch) {
        int k = n_seq - first < batch ? n_seq - first : batch;
        if (generate_batch(m, samplers + first, texts + first, n_prompt + first, k, n_new, tok->bos, n_made + first) != 0)
            pelab_die("sample: --prompts %s, line %d..: %s", path, tl.line[first], pelab_errmsg);
    }
    double dt = now_seconds() - t0;
    long total = 0;
    for (int b = 0; b < n_seq; b++) {
        printf("--- line %d (%d/%d) ---\n", tl.line[b], b + 1, n_seq);
        Printer printer = {tok, -1, 0, 0.0};
        for (int i = 0; i < n_prompt[b] + n_made[b]; i++)
            if (i > 0 || texts[b][i] != tok->bos) print_token(texts[b][i], &printer);
            else printer.prev = texts[b][i];
        printf("\n");
        total += n_made[b];
        sampler_free(&samplers[b]);
    }
    fprintf(stderr, "%d texts, %ld tokens in %.2f s: %.1f tokens/s (batches of %d, KV cache)\n", n_seq, total, dt,
            total / dt, batch < n_seq ? batch : n_seq);
    text_lines_free(&tl);
    free(samplers), free(n_made);
}

int cmd_sample(int argc, char **argv) {
    const char *prompt = "", *ckpt = NULL, *prompts = NULL;
    int n_new = 256, steps = 0, top_k = 0, no_cache = 0, threads = 0, batch = 16, lookup = 0;
    float temp = 1.0f, top_p = 0.9f;
    unsigned long long seed = 0;
    LoadFlags load = LOAD_FLAGS_DEFAULT;
    const OptSpec opts[] = {
        {"--prompt", OPT_STR, &prompt, 0, 0, "text to continue (empty: start from BOS, or a newline for byte/bpe models)"},
        {"-n", OPT_INT, &n_new, 1, 1 << 24,
         "tokens to generate, not counting the prompt (llama2.c's -n counts the prompt too: its text is a prefix of ours)"},
        {"--steps", OPT_INT, &steps, 0, 1 << 24,
         "llama2.c's -n instead of -n: N positions in all, prompt (with BOS) included, at most the training "
         "length as in llama2.c (0: use -n)"},
        {"--temp", OPT_FLOAT, &temp, 0, 100, "temperature (0: greedy)"},
        {"--top-k", OPT_INT, &top_k, 0, 1 << 24, "keep the k most likely tokens (0: off)"},
        {"--top-p", OPT_FLOAT, &top_p, 0, 1, "nucleus sampling mass (0 or 1: off)"},
        {"--seed", OPT_U64, &seed, 0, 1.8e19, "random seed (0: from the clock, printed on stderr)"},
        {"--no-cache", OPT_FLAG, &no_cache, 0, 0, "recompute the full forward at every step"},
        {"--prompts", OPT_STR, &prompts, 0, 0,
         "a file of prompts, one per line, continued side by side in one batch (left-padded; each text as "
         "--prompt LINE with the same --seed gives)"},
        {"--batch", OPT_INT, &batch, 1, 4096, "with --prompts: texts side by side (memory: batch x KV cache)"},
        {"--lookup", OPT_INT, &lookup, 0, 63,
         "prompt-lookup decoding: draft up to K tokens from what followed the latest earlier occurrence of the "
         "text's last 2-8 tokens and check them in one forward (greedy: the same text; sampling: the same "
         "distribution by other draws; 0: off)"},
        LOAD_FLAG_ROWS(&load),
        OPT_THREADS_ROW(&threads),
    };
    const char *pos_args[1];
    int n_pos;
    args_parse("sample", "CKPT [flags]", argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (n_pos != 1) pelab_die("sample: expected one checkpoint path (see pelab sample --help)");
    ckpt = pos_args[0];
    if (prompts && (steps > 0 || no_cache || prompt[0]))
        pelab_die("sample: --prompts takes -n, not --steps, --no-cache or --prompt");
    if (lookup && (no_cache || prompts)) pelab_die("sample: --lookup decodes one text with the KV cache (not with --no-cache or --prompts)");
    if (no_cache && strcmp(load.kv_cache, "bf16") == 0) pelab_die("sample: --kv-cache bf16 with --no-cache: no cache to keep");
    set_threads(threads);

    Model m;
    Tokenizer tok;
    load_model_or_die("sample", ckpt, &load, &m, &tok);
    if (seed == 0) {
        seed = (unsigned long long)time(NULL);
        fprintf(stderr, "seed %llu\n", seed);
    }

    if (prompts) {
        sample_batch(&m, &tok, prompts, batch, n_new, temp, top_p, top_k, seed);
        model_free(&m);
        tokenizer_free(&tok);
        return 0;
    }
    size_t plen = strlen(prompt);
    size_t n_prompt_ids;
    int *tokens = tokenizer_encode_prompt(&tok, (const unsigned char *)prompt, plen, (size_t)(n_new > steps ? n_new : steps),
                                          &n_prompt_ids);
    if (!tokens) pelab_die("sample: --prompt: %s", pelab_errmsg);
    int n_prompt = (int)n_prompt_ids;
    if (steps > 0) { /* llama2.c feeds positions 0..steps-1; the prompt's fill all but its last */
        if (steps > m.cfg.seq_len) steps = m.cfg.seq_len; /* llama2.c's clamp; -n goes past L */
        n_new = steps - n_prompt + 1;
        if (n_new < 1) pelab_die("sample: --steps %d: the prompt alone takes %d positions", steps, n_prompt);
    }
    Sampler sampler;
    sampler_init(&sampler, m.cfg.vocab_size, temp, top_p, top_k, seed);
    /* the prompt as the tokenizer decodes it (a llama2.c runner prints its pieces the same way) */
    Printer printer = {&tok, -1, 0, 0.0};
    if (tok.bos >= 0) {
        for (int i = 0; i < n_prompt; i++)
            if (tokens[i] != tok.bos || i > 0) print_token(tokens[i], &printer);
            else printer.prev = tokens[i];
    } else {
        fwrite(prompt, 1, plen, stdout);
        printer.prev = tokens[n_prompt - 1];
    }
    double t0 = now_seconds();
    LookupStats looked;
    int n_made = lookup ? generate_lookup(&m, &sampler, tokens, n_prompt, n_new, lookup, tok.bos, print_token, &printer,
                                          &looked)
                        : generate(&m, &sampler, tokens, n_prompt, n_new, !no_cache, tok.bos, print_token, &printer);
    if (n_made < 0) { /* the text so far ends its line: the error is a line of its own */
        if (printer.n_printed > 0 || (tok.bos < 0 && plen > 0)) printf("\n");
        pelab_die("sample: %s", pelab_errmsg);
    }
    double t_end = now_seconds(), dt = t_end - t0;
    printf("\n");
    char spec[512], lengths[160];
    pos_spec(&m.pos, spec, sizeof spec);
    pos_lengths(&m.pos, lengths, sizeof lengths);
    /* the steady rate as llama2.c's runner reports it: from the first drawn token on, so the
     * prompt, the cache's allocation and the thread pool's start are not in it */
    double steady = n_made > 1 ? (n_made - 1) / (t_end - printer.t_first) : 0;
    fprintf(stderr, "%d tokens in %.2f s: %.1f tokens/s after the first (%s); pos %s; lengths: %s\n", n_made, dt, steady,
            no_cache ? "no cache" : "KV cache", spec, lengths);
    if (lookup)
        fprintf(stderr, "lookup: %ld forwards after the prompt's, %ld tokens drafted, %ld kept (%.0f%%): %.2f tokens a forward\n",
                looked.forwards, looked.drafted, looked.accepted,
                looked.drafted ? 100.0 * looked.accepted / looked.drafted : 0.0,
                looked.forwards ? (double)(n_made - 1) / looked.forwards : 0.0);
    sampler_free(&sampler);
    free(tokens);
    model_free(&m);
    tokenizer_free(&tok);
    return 0;
}
