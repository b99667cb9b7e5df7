/* test_genmetrics.c: the long-generation and key-token metrics (infer/genmetrics.h, infer/keyppl.h)
 * on constructed inputs: repetition and distinct-n of cyclic and all-distinct texts, bucket edges,
 * the loss jump of a constructed per-position loss, key-token selection on constructed log-probs;
 * then on a tiny random model: generated texts, their own loss, the loss jump and key tokens are
 * finite, deterministic, and a learned table stops generation at its size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../infer/genmetrics.h"
#include "../infer/keyppl.h"
#include "../model/model.h"
#include "test.h"

static void cyclic_text(void) {
    enum { N = 50 };
    int t[N];
    for (int i = 0; i < N; i++) t[i] = i % 10;
    NgramStats s = {0};
    ngram_stats(t, N, 4, 0, 10, &s); /* the first cycle: 4-grams ending at 3..9 */
    CHECK(s.ngrams == 7 && s.repeated == 0 && s.distinct == 7, "first cycle: 7 new 4-grams (%zu, %zu, %zu)", s.ngrams,
          s.repeated, s.distinct);
    memset(&s, 0, sizeof s);
    /* the 4-grams across the first wrap (7890, 8901, 9012, ending at 10..12) are new too: from 13 on,
     * two more cycles are all seen before, 10 distinct of 20 */
    ngram_stats(t, N, 4, 13, 33, &s);
    CHECK(s.ngrams == 20 && ngram_repeat_rate(&s) == 1.0 && ngram_distinct_rate(&s) == 0.5,
          "after the first cycle: repeat rate 1, distinct-4 10/20 (%zu, %zu, %zu)", s.ngrams, s.repeated, s.distinct);
    /* a bucket across the edge: 4-grams ending at 10..12 new, at 13..15 repeated */
    memset(&s, 0, sizeof s);
    ngram_stats(t, N, 4, 10, 16, &s);
    CHECK(s.ngrams == 6 && s.repeated == 3 && s.distinct == 6, "bucket 10..15: 3 new, 3 repeated (%zu, %zu)",
          s.repeated, s.distinct);
    /* ranges add up: [0, 25) + [25, 50) has the n-gram and repeat counts of [0, 50) */
    NgramStats a = {0}, whole = {0};
    ngram_stats(t, N, 4, 0, 25, &a);
    ngram_stats(t, N, 4, 25, 50, &a);
    ngram_stats(t, N, 4, 0, 50, &whole);
    CHECK(a.ngrams == whole.ngrams && a.repeated == whole.repeated && whole.ngrams == N - 3,
          "buckets partition the n-grams (%zu vs %zu)", a.ngrams, whole.ngrams);
    memset(&s, 0, sizeof s);
    ngram_stats(t, N, 4, 48, 60, &s); /* hi past the end: clipped */
    CHECK(s.ngrams == 2, "a range past the end is clipped (%zu)", s.ngrams);
    memset(&s, 0, sizeof s);
    ngram_stats(t, N, 4, 0, 3, &s);
    CHECK(s.ngrams == 0 && isnan(ngram_repeat_rate(&s)) && isnan(ngram_distinct_rate(&s)),
          "no 4-gram ends before position 3: rates NaN");
}

static void distinct_text(void) {
    enum { N = 300 };
    int t[N];
    for (int i = 0; i < N; i++) t[i] = i;
    for (int n = 1; n <= 5; n++) {
        NgramStats s = {0};
        ngram_stats(t, N, n, 0, N, &s);
        CHECK(s.ngrams == (size_t)(N - n + 1) && ngram_repeat_rate(&s) == 0 && ngram_distinct_rate(&s) == 1,
              "all-distinct text, n = %d: repeat 0, distinct 1", n);
    }
    int same[20] = {0}; /* one token repeated: every 2-gram after the first is a repeat */
    NgramStats s = {0};
    ngram_stats(same, 20, 2, 0, 20, &s);
    CHECK(s.ngrams == 19 && s.repeated == 18 && s.distinct == 1, "a constant text: 18 of 19 repeated, 1 distinct");
}

static void jump(void) {
    enum { L = 8 };
    double sum[2 * L];
    size_t count[2 * L];
    for (int p = 0; p < 2 * L; p++) sum[p] = (p < L ? 1.0 : 3.0) * 10, count[p] = 10; /* loss 1 then 3 */
    sum[0] = 1000; /* positions before L/2 do not count */
    CHECK(fabs(loss_jump(sum, count, L) - 2.0) < 1e-12, "loss jump 3 - 1 = %g", loss_jump(sum, count, L));
    sum[L - 1] = 50, count[L - 1] = 10; /* position L-1 counts on the left: (3*1 + 5) / 4 = 2 */
    CHECK(fabs(loss_jump(sum, count, L) - 1.0) < 1e-12, "left side is [L/2, L): %g", loss_jump(sum, count, L));
    memset(count + L, 0, sizeof(size_t) * L);
    CHECK(isnan(loss_jump(sum, count, L)), "no prediction past L: NaN");
}

static void key_tokens(void) {
    float lp_long[] = {0, -0.1f, -1.0f, -1.5f, -3.0f, -0.5f, -1.99f};
    float lp_short[] = {-9, -5.0f, -3.0f, -3.4f, -9.0f, -0.4f, -4.0f};
    unsigned char key[7];
    size_t k = key_select(lp_long, lp_short, 7, 2.0f, -2.0f, key);
    /* t=1 gain 4.9 key; t=2 gain 2 (>= threshold) key; t=3 gain 1.9 no; t=4 gain 6 but long lp -3 no;
     * t=5 worse with long context no; t=6 gain 2.01 and lp -1.99 key; t=0 never */
    CHECK(k == 3 && key[0] == 0 && key[1] && key[2] && !key[3] && !key[4] && !key[5] && key[6],
          "key tokens: threshold on the gain and the long log-prob (%zu)", k);
    CHECK(key_select(lp_long, lp_short, 7, 5.0f, -2.0f, key) == 0, "a high threshold selects none");
    KeyPpl r = {0};
    key_select(lp_long, lp_short, 7, 2.0f, -2.0f, key);
    key_ppl_add(lp_long, NULL, key, 7, &r);
    CHECK(r.n_all == 6 && r.n_key == 3 && fabs(key_ppl_share(&r) - 0.5) < 1e-12 &&
              fabs(key_ppl_key_loss(&r) - (0.1 + 1.0 + 1.99) / 3) < 1e-6 &&
              fabs(key_ppl_all_loss(&r) - (0.1 + 1.0 + 1.5 + 3.0 + 0.5 + 1.99) / 6) < 1e-6,
          "key-token loss, all-token loss and share (%g, %g, %g)", key_ppl_key_loss(&r), key_ppl_all_loss(&r),
          key_ppl_share(&r));
    /* a token no window predicted (a window's first) is neither scored nor a key token's loss */
    int scored[7] = {0, 1, 0, 1, 1, 1, 1};
    KeyPpl part = {0};
    key_ppl_add(lp_long, scored, key, 7, &part);
    CHECK(part.n_all == 5 && part.n_key == 2 && fabs(key_ppl_key_loss(&part) - (0.1 + 1.99) / 2) < 1e-6,
          "unscored tokens are left out (%zu of all, %zu key)", part.n_all, part.n_key);
    KeyPpl none = {0};
    CHECK(isnan(key_ppl_key_loss(&none)) && isnan(key_ppl_share(&none)), "empty: NaN");
}

/* a tiny random model: every number finite, the same twice, a learned table respected */
static void on_model(void) {
    enum { N = 200 };
    Model m;
    if (tiny_model(&m, "rope", 2, 1, 5) != 0) {
        CHECK(0, "tiny model: %s", pelab_errmsg);
        return;
    }
    int L = m.cfg.seq_len, prompt[4] = {1, 2, 3, 4}, tok[N];
    for (int i = 0; i < N; i++) tok[i] = (i * 7 + i / 5) % m.cfg.vocab_size;
    GenSampling s = {GEN_TEMPERATURE, GEN_TOP_P, 3};
    GenText g, g2;
    int rc = gen_text(&m, prompt, 4, 8 * L, &s, &g);
    CHECK(rc == 0 && g.n == 8 * L && g.n_prompt == 4, "rope writes 8L tokens (%d): %s", g.n, rc ? pelab_errmsg : "");
    rc = gen_text(&m, prompt, 4, 8 * L, &s, &g2);
    CHECK(rc == 0 && memcmp(g.tokens, g2.tokens, sizeof(int) * g.n) == 0, "a fixed seed gives the same text");
    GenRange before = {0}, after = {0};
    gen_range(&g, 4, 0, L, &before);
    gen_range(&g, 4, L, g.n, &after);
    CHECK(before.n_nll == (size_t)(L - 4) && after.n_nll == (size_t)(g.n - L) && isfinite(gen_range_loss(&before)) &&
              isfinite(gen_range_loss(&after)) && after.ng.ngrams == (size_t)(g.n - L),
          "own loss and n-grams of the generated part only (%zu, %zu)", before.n_nll, after.n_nll);
    gen_text_free(&g), gen_text_free(&g2);
    /* the reference: held-out text repeating a 10-token cycle; after the prompt (L/4) and one cycle,
     * every 4-gram of the data's own continuation was seen before */
    int cyc[16 * 8];
    for (int i = 0; i < 16 * 8; i++) cyc[i] = i % 10;
    GenSummary sum;
    rc = gen_summary(&m, cyc, 16 * 8, L, 4 * L, 2, 4, &s, &sum, NULL);
    /* buckets from position 13 on (4-grams ending there): every one repeated, none twice in a bucket
     * narrower than the cycle; the first bucket holds the 2-token prompt, not counted */
    /* (L = 8: the first bucket's 4-grams end at 3..7, 5 a text; after L, those ending at 8..31: the
     * ten 4-grams ending at 3..12 are each text's first cycle, so 8..12 are new, the other 19 seen) */
    int ok = rc == 0 && L == 8 && sum.n_buckets == 4 && sum.width == L && sum.data_bucket[0].ngrams == 10 &&
             sum.data_before.ngrams == 10 && sum.data_after.ngrams == 2 * 24 && sum.data_after.repeated == 2 * (24 - 5);
    for (int b = 2; ok && b < sum.n_buckets; b++)
        ok = sum.data_bucket[b].ngrams == (size_t)(2 * L) && ngram_repeat_rate(&sum.data_bucket[b]) == 1.0 &&
             ngram_distinct_rate(&sum.data_bucket[b]) == 1.0;
    CHECK(ok, "gen_summary's reference: the data's continuation of each prompt, bucket by bucket (rc %d %s, %d "
              "buckets of %d, first %zu)", rc, rc ? pelab_errmsg : "", sum.n_buckets, sum.width,
          sum.data_bucket[0].ngrams);
    double j;
    int refused;
    rc = loss_jump_on_text(&m, tok, N, L, &j, &refused);
    CHECK(rc == 0 && !refused && isfinite(j), "loss jump on text: %g", j);
    unsigned char key[N];
    size_t n_key = 0;
    rc = key_identify(&m, tok, N, L, 0, 0.0f, key, &n_key);
    KeyPpl r;
    int rc2 = key_ppl_at(&m, tok, N, 2 * L, key, &r);
    CHECK(rc == 0 && rc2 == 0 && n_key == r.n_key && r.n_all == N - 1 && isfinite(key_ppl_all_loss(&r)),
          "key tokens at gain 0: %zu of %zu", n_key, r.n_all);
    model_free(&m);

    if (tiny_model(&m, "learned", 2, 1, 5) != 0) {
        CHECK(0, "tiny learned model: %s", pelab_errmsg);
        return;
    }
    rc = gen_text(&m, prompt, 4, 8 * L, &s, &g);
    CHECK(rc == 0 && g.n == L + 1, "learned stops at its table: %d tokens (L = %d)", g.n, L);
    gen_text_free(&g);
    rc = loss_jump_on_text(&m, tok, N, L, &j, &refused);
    CHECK(rc == 0 && refused && isnan(j), "learned: no loss jump past its table");
    model_free(&m);
}

void test_genmetrics(void) {
    cyclic_text();
    distinct_text();
    jump();
    key_tokens();
    on_model();
}
