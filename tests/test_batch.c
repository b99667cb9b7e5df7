/* test_batch.c: batched decoding with left padding (sample --prompts). For every registered
 * scheme, with and without grouped-query heads: prompts of different lengths decoded side by side
 * give the logits each gives alone (within 1e-5) at the prompt and at every generated step; greedy
 * texts are identical to one-at-a-time generation; the padding's token ids and position ids
 * change no real row's output (bit for bit: a padded key gets weight exactly 0, so nothing of it
 * reaches a bias or a sum); a dynamic rule the texts would cross is decoded one at a time. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/decode.h"
#include "../infer/generate.h"
#include "../infer/sampler.h"
#include "../infer/score.h"
#include "../model/layers.h"
#include "../model/model.h"
#include "test.h"

enum { NSEQ = 3, NEW = 3, MAXP = 5 };
static const int prompt_len[NSEQ] = {1, 5, 3};

static int prompt_token(int b, int i) { return (7 * b + 3 * i + 1) % 13; }

/* the batch's padded prompt: pad_id, pad_pos for the padding */
static void padded(int *in, int *pos, int pad_id, int pad_pos) {
    for (int b = 0; b < NSEQ; b++) {
        int pad = MAXP - prompt_len[b];
        for (int i = 0; i < MAXP; i++) {
            in[b * MAXP + i] = i < pad ? pad_id : prompt_token(b, i - pad);
            pos[b * MAXP + i] = i < pad ? pad_pos : i - pad;
        }
    }
}

/* logits of the batch after the prompt and after each of NEW - 1 fed tokens: [NEW][NSEQ][V] */
static int batch_logits(Model *m, int pad_id, int pad_pos, float *out) {
    int V = m->cfg.vocab_size, in[NSEQ * MAXP], pos[NSEQ * MAXP], threads = omp_get_max_threads();
    KVCache kv;
    /* chunks of 3: the longest padding (4) outlasts the first chunk, whose rows then hold fewer
     * entries than the padding (a past overflow that make sanitize caught) */
    kvcache_init_batch(&kv, m, NSEQ, MAXP + NEW, 3);
    for (int b = 0; b < NSEQ; b++) kv.key_start[b] = MAXP - prompt_len[b];
    padded(in, pos, pad_id, pad_pos);
    int rc = decode_forward_batch(m, &kv, in, pos, MAXP, out, 0);
    for (int t = 1; rc == 0 && t < NEW; t++) {
        int tok[NSEQ], p[NSEQ];
        for (int b = 0; b < NSEQ; b++) tok[b] = (5 * t + b) % V, p[b] = prompt_len[b] + t - 1;
        rc = decode_forward_batch(m, &kv, tok, p, 1, out + (size_t)t * NSEQ * V, 0);
    }
    kvcache_free(&kv);
    /* a tiny model decodes on one thread (decode_threads); the caller's setting comes back */
    CHECK(omp_get_max_threads() == threads, "decoding left %d threads, not the caller's %d", omp_get_max_threads(),
          threads);
    return rc;
}

static void scheme_batch(const char *spec, int n_kv_heads) {
    Model m;
    if (tiny_model(&m, spec, n_kv_heads, 1, 21) != 0) {
        CHECK(0, "batch %s: %s", spec, pelab_errmsg);
        return;
    }
    int V = m.cfg.vocab_size;
    float *batch = xmalloc(sizeof(float) * NEW * NSEQ * V), *other = xmalloc(sizeof(float) * NEW * NSEQ * V);
    float *alone = xmalloc(sizeof(float) * V);
    int rc = batch_logits(&m, 0, 0, batch);
    CHECK(rc == 0, "batch %s kv %d: %s", spec, n_kv_heads, rc ? pelab_errmsg : "");
    if (rc == 0) {
        /* each sequence alone: its prompt, then the same fed tokens */
        double worst = 0;
        for (int b = 0; b < NSEQ; b++) {
            KVCache kv;
            kvcache_init(&kv, &m, MAXP + NEW, 4);
            int in[MAXP], pos[MAXP];
            for (int i = 0; i < prompt_len[b]; i++) in[i] = prompt_token(b, i), pos[i] = i;
            decode_forward(&m, &kv, in, pos, prompt_len[b], alone, 0);
            for (int t = 0; t < NEW; t++) {
                if (t > 0) {
                    int tok = (5 * t + b) % V, p = prompt_len[b] + t - 1;
                    decode_forward(&m, &kv, &tok, &p, 1, alone, 0);
                }
                for (int v = 0; v < V; v++)
                    worst = worse(worst, fabs(alone[v] - batch[((size_t)t * NSEQ + b) * V + v]));
            }
            kvcache_free(&kv);
        }
        CHECK(worst <= 1e-5, "batch %s kv %d: batched logits differ from one-at-a-time by %.3g", spec, n_kv_heads,
              worst);
        /* padding with other ids at another position id: every real row bit for bit the same */
        rc = batch_logits(&m, 11, 3, other);
        CHECK(rc == 0 && memcmp(batch, other, sizeof(float) * NEW * NSEQ * V) == 0,
              "batch %s kv %d: the padding's token or position ids changed a real row", spec, n_kv_heads);
    }

    /* greedy texts: the batch against generate() one text at a time */
    int *texts[NSEQ], *single[NSEQ], n_prompt[NSEQ], n_made[NSEQ];
    Sampler s[NSEQ];
    for (int b = 0; b < NSEQ; b++) {
        texts[b] = xmalloc(sizeof(int) * (MAXP + NEW)), single[b] = xmalloc(sizeof(int) * (MAXP + NEW));
        n_prompt[b] = prompt_len[b];
        for (int i = 0; i < prompt_len[b]; i++) texts[b][i] = single[b][i] = prompt_token(b, i);
        sampler_init(&s[b], V, 0.0f, 0.9f, 0, 1);
    }
    rc = generate_batch(&m, s, texts, n_prompt, NSEQ, NEW, -1, n_made);
    CHECK(rc == 0, "batch %s: generate_batch: %s", spec, rc ? pelab_errmsg : "");
    for (int b = 0; b < NSEQ && rc == 0; b++) {
        Sampler one;
        sampler_init(&one, V, 0.0f, 0.9f, 0, 1);
        int made = generate(&m, &one, single[b], prompt_len[b], NEW, 1, -1, NULL, NULL);
        CHECK(made == n_made[b] && memcmp(single[b], texts[b], sizeof(int) * (prompt_len[b] + made)) == 0,
              "batch %s kv %d: greedy text %d differs from its one-at-a-time generation", spec, n_kv_heads, b);
        sampler_free(&one);
    }
    for (int b = 0; b < NSEQ; b++) free(texts[b]), free(single[b]), sampler_free(&s[b]);
    free(batch), free(other), free(alone);
    model_free(&m);
}

/* score_texts (score --lines): batches of 3 and of all, against each text's own full forward */
static void scoring(const char *spec) {
    enum { NT = 5 };
    static const int lens[NT] = {2, 7, 4, 8, 3};
    Model m;
    tiny_model(&m, spec, 2, 1, 33);
    int V = m.cfg.vocab_size, *texts[NT];
    size_t total = 0;
    for (int t = 0; t < NT; t++) {
        texts[t] = xmalloc(sizeof(int) * lens[t]);
        for (int i = 0; i < lens[t]; i++) texts[t][i] = (3 * t + 5 * i + 2) % V;
        total += lens[t] - 1;
    }
    float *want = xmalloc(sizeof(float) * total), *got = xmalloc(sizeof(float) * total);
    size_t at = 0;
    for (int t = 0; t < NT; t++) { /* the full forward, one text at a time */
        int pos[8];
        for (int i = 0; i < lens[t] - 1; i++) pos[i] = i;
        model_alloc_train(&m, 1, lens[t] - 1);
        model_forward(&m, texts[t], NULL, pos, 1, lens[t] - 1);
        for (int i = 0; i < lens[t] - 1; i++, at++) {
            float *row = m.acts.logits + (size_t)i * V;
            log_softmax(row, row, V);
            want[at] = row[texts[t][i + 1]];
        }
    }
    static const int batches[] = {1, 3, NT};
    for (int k = 0; k < 3; k++) {
        double nll[NT];
        int rc = score_texts(&m, (const int *const *)texts, lens, NT, batches[k], DYNAMIC_WINDOW, got, nll);
        CHECK(rc == 0 && max_abs_diff(got, want, (int)total) <= 1e-5f,
              "score_texts %s batch %d: log-probs off the full forward by %.3g", spec, batches[k],
              rc == 0 ? max_abs_diff(got, want, (int)total) : -1.0f);
    }
    int short_len[1] = {1};
    CHECK(score_texts(&m, (const int *const *)texts, short_len, 1, 4, DYNAMIC_WINDOW, got, NULL) != 0 &&
              strstr(pelab_errmsg, "text 1"),
          "score_texts: a 1-token text is refused, named: %s", pelab_errmsg);
    for (int t = 0; t < NT; t++) free(texts[t]);
    free(want), free(got);
    model_free(&m);
}

/* a dynamic rule the batch would cross: refused by the batched decoder, and generate_batch
 * falls back to one text at a time (equal to generate) */
static void dynamic_rule(void) {
    Model m;
    tiny_model(&m, "rope:scale=dynamic-ntk,orig_len=4", 4, 1, 5);
    int V = m.cfg.vocab_size, in[NSEQ * MAXP], pos[NSEQ * MAXP];
    float *logits = xmalloc(sizeof(float) * NSEQ * V);
    KVCache kv;
    kvcache_init_batch(&kv, &m, NSEQ, MAXP + NEW, 4);
    padded(in, pos, 0, 0);
    CHECK(decode_forward_batch(&m, &kv, in, pos, MAXP, logits, 0) != 0 && strstr(pelab_errmsg, "one at a time"),
          "batch: a dynamic rule past its length is refused: %s", pelab_errmsg);
    kvcache_free(&kv);
    int *texts[NSEQ], n_prompt[NSEQ], n_made[NSEQ];
    Sampler s[NSEQ];
    for (int b = 0; b < NSEQ; b++) {
        texts[b] = xmalloc(sizeof(int) * (MAXP + NEW));
        n_prompt[b] = prompt_len[b];
        for (int i = 0; i < prompt_len[b]; i++) texts[b][i] = prompt_token(b, i);
        sampler_init(&s[b], V, 0.0f, 0.9f, 0, 1);
    }
    int rc = generate_batch(&m, s, texts, n_prompt, NSEQ, NEW, -1, n_made);
    int same = rc == 0;
    for (int b = 0; b < NSEQ && same; b++) {
        int single[MAXP + NEW];
        Sampler one;
        sampler_init(&one, V, 0.0f, 0.9f, 0, 1);
        memcpy(single, texts[b], sizeof(int) * prompt_len[b]);
        int made = generate(&m, &one, single, prompt_len[b], NEW, 1, -1, NULL, NULL);
        same = made == n_made[b] && memcmp(single, texts[b], sizeof(int) * (prompt_len[b] + made)) == 0;
        sampler_free(&one);
    }
    CHECK(same, "batch: under a dynamic rule, generate_batch equals one-at-a-time generation");
    for (int b = 0; b < NSEQ; b++) free(texts[b]), sampler_free(&s[b]);
    free(logits);
    model_free(&m);
}

void test_batch(void) {
    for (int i = 0; i < pos_count(); i++) {
        const char *name = pos_at(i)->name;
        scheme_batch(name, 4);
        scheme_batch(name, 2);
    }
    scheme_batch("rope:layout=half,scale=yarn:4", 2);
    scheme_batch("t5:buckets=8,max_distance=6", 4);
    for (int i = 0; i < pos_count(); i++) scoring(pos_at(i)->name);
    scoring("rope:scale=dynamic-ntk,orig_len=4");
    dynamic_rule();
    expect_pelab_error("./pelab sample x.safetensors --prompts p.txt --steps 5", "--prompts takes -n");
}
