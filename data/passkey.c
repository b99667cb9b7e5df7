/* passkey.c: passkey documents (format in passkey.h) and the training mix. */
#include "passkey.h"
#include "../core/error.h"
#include "../core/mem.h"
#include "../core/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char INSTRUCTION[] = "Find the key.\n";
static const char QUESTION[] = "\nKey:"; /* the key sentence's own lead-in: a cloze, as in 10.3 */
static const char FILLER[] =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";
enum { FILLER_UNIT = sizeof FILLER - 1, KEY_SENTENCE_LEN = 19 }; /* "Key: 12345, 12345. " */

int passkey_random_key(Rng *rng) { return 10000 + (int)rng_below(rng, 90000); }

char passkey_filler_at(size_t i) { return FILLER[i % FILLER_UNIT]; }
static char filler_at(int i) { return passkey_filler_at((size_t)i); }

/* every sentence starts at 0 or right after ". " */
static int sentence_start(int i) { return i == 0 || (filler_at(i - 1) == ' ' && filler_at(i - 2) == '.'); }

int passkey_document(char *out, int total, double depth, int key, PasskeyDoc *doc) {
    if (total < PASSKEY_MIN_LEN)
        return pelab_fail("passkey: a document needs at least %d bytes, asked for %d", PASSKEY_MIN_LEN, total);
    if (key < 10000 || key > 99999) return pelab_fail("passkey: key %d: expected 5 digits", key);
    if (!(depth >= 0.0 && depth <= 1.0)) return pelab_fail("passkey: depth %g: expected 0..1", depth);
    int n_instr = (int)strlen(INSTRUCTION), n_q = (int)strlen(QUESTION);
    int n_fill = total - PASSKEY_MIN_LEN;
    /* the last sentence start at or before depth * filler: at most one sentence early */
    int p = (int)(depth * n_fill);
    while (!sentence_start(p)) p--;
    char sentence[32];
    snprintf(sentence, sizeof sentence, "Key: %d, %d. ", key, key);
    char *w = out;
    memcpy(w, INSTRUCTION, n_instr), w += n_instr;
    for (int i = 0; i < p; i++) *w++ = filler_at(i);
    memcpy(w, sentence, KEY_SENTENCE_LEN), w += KEY_SENTENCE_LEN;
    for (int i = p; i < n_fill; i++) *w++ = filler_at(i);
    memcpy(w, QUESTION, n_q), w += n_q;
    snprintf(w, PASSKEY_ANSWER_LEN + 1, " %d", key);
    doc->total = total;
    doc->prompt_len = total - PASSKEY_ANSWER_LEN;
    doc->filler_start = n_instr;
    doc->filler_len = n_fill;
    doc->depth_offset = p;
    doc->sentence_offset = n_instr + p;
    doc->key_offset = n_instr + p + 5; /* after "Key: " */
    doc->key = key;
    return 0;
}

void passkey_window(Rng *rng, int n, int *tokens) {
    int key = passkey_random_key(rng);
    double depth = (double)rng_below(rng, 101) / 100.0;
    char *text = xmalloc((size_t)n + 1);
    PasskeyDoc doc;
    passkey_document(text, n, depth, key, &doc); /* cannot fail: n >= PASSKEY_MIN_LEN is the caller's */
    for (int i = 0; i < n; i++) tokens[i] = (unsigned char)text[i];
    free(text);
}

void passkey_mix_batch(const Dataset *d, Rng *rng, float frac, int B, int T, int *inputs, int *targets) {
    if (!(frac > 0.0f)) { /* no extra draws: runs without the mix keep their exact data order */
        dataset_train_batch(d, rng, B, T, inputs, targets);
        return;
    }
    int *row = xmalloc(sizeof(int) * ((size_t)T + 1));
    for (int b = 0; b < B; b++) {
        if (rng_f32(rng) < frac) {
            passkey_window(rng, T + 1, row);
            memcpy(inputs + (size_t)b * T, row, sizeof(int) * T);
            memcpy(targets + (size_t)b * T, row + 1, sizeof(int) * T);
        } else {
            dataset_train_batch(d, rng, 1, T, inputs + (size_t)b * T, targets + (size_t)b * T);
        }
    }
    free(row);
}
