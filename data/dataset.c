#include "dataset.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/hash.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "corpus.h"
#include "synth.h"
#include "task.h"

int dataset_load(Dataset *d, const char *spec, double val_frac, uint64_t synth_seed, size_t synth_bytes,
                 int window) {
    return dataset_load_with(d, spec, NULL, val_frac, synth_seed, synth_bytes, window);
}

/* "task:SPEC": synth_bytes of task examples back to back (data/task.h), the loss counted on the
 * answers only; byte-level, like the task texts */
static int dataset_load_task(Dataset *d, const char *spec, const Tokenizer *tok, double val_frac, uint64_t seed,
                             size_t n_bytes, int window) {
    if (tok && tok->kind != TOK_BYTE)
        return pelab_fail("--data %s: task data is byte-level; this run uses the %s tokenizer", spec,
                          tokenizer_kind_name(tok));
    TaskSpec task;
    if (task_parse(&task, spec + 5) != 0) return -1;
    Rng rng;
    rng_seed(&rng, seed);
    char *text;
    unsigned char *mask, *first;
    if (task_stream(&task, &rng, n_bytes, &text, &mask, &first) != 0) return -1;
    int rc = dataset_from_bytes(d, spec, (const unsigned char *)text, n_bytes, tok, val_frac, window);
    if (rc == 0) {
        /* counted[i]: predicting byte i counts; the byte tokenizer keeps one token per byte */
        dataset_set_counted(d, mask);
        /* where each example begins, as task_stream drew them (a dense example has several answers) */
        size_t last = d->n_train - (size_t)window - 1; /* the last start of a whole training window */
        d->val_window = window;
        d->starts = xmalloc(sizeof(size_t) * (last + 1));
        for (size_t i = 0; i <= last; i++)
            if (first[i]) d->starts[d->n_starts++] = i;
        d->starts = xrealloc(d->starts, sizeof(size_t) * (d->n_starts ? d->n_starts : 1));
        /* validation alike, without overlap: each window at the first example start past the last */
        size_t val_last = d->n - (size_t)window - 1;
        d->val_starts = xmalloc(sizeof(size_t) * ((d->n - d->n_train) / (size_t)window + 1));
        for (size_t i = d->n_train + 1, next = i; i <= val_last; i++)
            if (i >= next && first[i]) d->val_starts[d->n_val_starts++] = i, next = i + (size_t)window;
    }
    free(text), free(mask), free(first);
    return rc;
}

int dataset_load_with(Dataset *d, const char *spec, const Tokenizer *tok, double val_frac, uint64_t synth_seed,
                      size_t synth_bytes, int window) {
    memset(d, 0, sizeof *d);
    unsigned char *bytes = NULL;
    size_t n = 0;
    if (strncmp(spec, "task:", 5) == 0) return dataset_load_task(d, spec, tok, val_frac, synth_seed, synth_bytes, window);
    if (strncmp(spec, "synth:", 6) == 0) {
        char *text;
        if (synth_generate(spec + 6, synth_seed, synth_bytes, &text) != 0) return -1;
        bytes = (unsigned char *)text;
        n = synth_bytes;
    } else if (corpus_read_file(spec, &bytes, &n) != 0) {
        return -1;
    }
    int rc = dataset_from_bytes(d, spec, bytes, n, tok, val_frac, window);
    free(bytes);
    return rc;
}

int dataset_from_bytes(Dataset *d, const char *name, const unsigned char *bytes, size_t n, const Tokenizer *tok,
                       double val_frac, int window) {
    memset(d, 0, sizeof *d);
    if (!(val_frac > 0.0 && val_frac < 1.0))
        return pelab_fail("--val-frac %g: expected a fraction strictly between 0 and 1", val_frac);
    uint64_t fingerprint = fnv1a64(bytes, n, 0);
    Tokenizer byte_tok;
    tokenizer_init_byte(&byte_tok);
    int *ids = tokenizer_encode(tok ? tok : &byte_tok, bytes, n, 0, &n);
    if (!ids) return -1;
    size_t n_val = (size_t)(n * val_frac);
    size_t need = (size_t)window + 1;
    if (n < 2 * need || n_val < need || n - n_val < need) {
        free(ids);
        return pelab_fail("%s: %zu tokens is too short for windows of %zu tokens in both the training and the "
                          "validation part (val-frac %g); need at least %zu",
                          name, n, need, val_frac, (size_t)(need / (val_frac < 0.5 ? val_frac : 1 - val_frac)) + 1);
    }
    d->tokens = ids;
    d->n = n;
    d->n_train = n - n_val;
    d->vocab_size = tok ? tok->vocab_size : 256;
    d->fingerprint = fingerprint;
    d->tok = tok;
    snprintf(d->name, sizeof d->name, "%s", name);
    return 0;
}

void dataset_free(Dataset *d) {
    free(d->tokens);
    free(d->counted);
    free(d->starts);
    free(d->val_starts);
    memset(d, 0, sizeof *d);
}

void dataset_set_counted(Dataset *d, const unsigned char *counted) {
    free(d->counted);
    d->counted = xmalloc(d->n);
    memcpy(d->counted, counted, d->n);
}

/* the target for predicting token i: -1 when it does not count */
static int target_at(const Dataset *d, size_t i) { return d->counted && !d->counted[i] ? -1 : d->tokens[i]; }

void dataset_train_batch(const Dataset *d, Rng *rng, int B, int T, int *inputs, int *targets) {
    size_t n_starts = d->n_train - (size_t)T; /* window [s, s+T] inclusive stays in the train part */
    for (int b = 0; b < B; b++) {
        /* aligned: the window's first token is an example's first, at position 0 as in evaluation */
        size_t s = d->aligned ? d->starts[rng_below(rng, d->n_starts)] : (size_t)rng_below(rng, n_starts);
        for (int t = 0; t < T; t++) {
            inputs[b * T + t] = d->tokens[s + t];
            targets[b * T + t] = target_at(d, s + t + 1);
        }
        if (d->has_sink) inputs[b * T] = d->sink_token;
    }
}

/* aligned validation windows are the val_starts of the window the data was loaded for */
static int val_aligned(const Dataset *d, int T) { return d->aligned && d->val_window == T; }

size_t dataset_val_windows(const Dataset *d, int T) {
    return val_aligned(d, T) ? d->n_val_starts : (d->n - d->n_train - 1) / (size_t)T;
}

void dataset_val_window(const Dataset *d, size_t w, int T, int *inputs, int *targets) {
    size_t s = val_aligned(d, T) ? d->val_starts[w] : d->n_train + w * (size_t)T;
    for (int t = 0; t < T; t++) {
        inputs[t] = d->tokens[s + t];
        targets[t] = target_at(d, s + t + 1);
    }
    if (d->has_sink) inputs[0] = d->sink_token;
}
