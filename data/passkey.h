/* passkey.h: deterministic passkey-retrieval documents for byte-level models (the Landmark
 * Attention prompt of docs/position-encodings.md section 10.3, shortened so that it fits the 64-256 byte
 * training lengths of the lab's tiny models).
 *
 * A document of `total` bytes, answer included:
 *
 *     Find the key.\n                      instruction (14 bytes)
 *     <prefix filler>Key: 12345, 12345. <suffix filler>
 *     \nKey:                               question (5 bytes): the prompt ends here
 *      12345                               answer (6 bytes: a space and the 5 digits)
 *
 * The filler is "The grass is green. The sky is blue. The sun is yellow. Here we go. There and
 * back again. " repeated and truncated to a byte count (as Landmark does), so every total is
 * exact. The key sentence goes at the last sentence start at or before depth * filler bytes.
 * The section's own key sentence and question alone are 101 bytes, hence the short wording: the
 * shortest document (no filler) is PASSKEY_MIN_LEN = 44 bytes. The question is only the cloze
 * "Key:", the words that lead to the key in the key sentence, as 10.3's question ends with "The
 * pass key is": a first version asking "Key?" left a 2-layer model that copies the key within
 * the key sentence at 0% retrieval (the lead-in differed, so nothing pointed back at the key). */
#ifndef PELAB_PASSKEY_H
#define PELAB_PASSKEY_H

#include "../core/rng.h"
#include "dataset.h"

#define PASSKEY_DIGITS 5
#define PASSKEY_ANSWER_LEN 6 /* " 12345" */
#define PASSKEY_MIN_LEN 44

typedef struct {
    int total;          /* bytes of prompt + answer */
    int prompt_len;     /* total - PASSKEY_ANSWER_LEN: the question ends here */
    int filler_start;   /* byte offset of the filler (after the instruction line) */
    int filler_len;     /* filler bytes, prefix + suffix */
    int depth_offset;   /* where the key sentence starts within the filler (a sentence start) */
    int sentence_offset;/* byte offset of the key sentence in the document */
    int key_offset;     /* byte offset of the key's first digit (its first occurrence) */
    int key;            /* 10000..99999 */
} PasskeyDoc;

/* byte i of the filler: the unit repeated, so truncation at any count is the same text (also
 * RULER's noise haystack, data/task_ruler.c) */
char passkey_filler_at(size_t i);

/* a random 5-digit key, first digit non-zero */
int passkey_random_key(Rng *rng);

/* Writes the document (prompt then answer, exactly total bytes, NUL-terminated) into out, which
 * holds at least total + 1 bytes. depth in [0, 1]: 0 puts the key first, 1 last (before at most
 * one partial sentence). -1 with pelab_errmsg if total < PASSKEY_MIN_LEN or the key has not
 * 5 digits. */
int passkey_document(char *out, int total, double depth, int key, PasskeyDoc *doc);

/* A training window of exactly n tokens (n >= PASSKEY_MIN_LEN): a passkey document with a
 * random key at a random depth (0..100%), the answer at the end. */
void passkey_window(Rng *rng, int n, int *tokens);

/* dataset_train_batch, except that each row is, with probability frac, a passkey window of T+1
 * tokens. All draws come from rng (resume stays exact); frac 0 draws exactly what
 * dataset_train_batch draws. */
void passkey_mix_batch(const Dataset *d, Rng *rng, float frac, int B, int T, int *inputs, int *targets);

#endif
