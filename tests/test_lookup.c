/* test_lookup.c: prompt-lookup decoding (sample --lookup). The draft is what followed the latest
 * earlier occurrence of the text's last 2-8 tokens (the longest that occurs), with the most
 * followers; greedy decoding with drafts of 1, 3 and 8 tokens gives generate()'s text for every
 * registered scheme, with grouped-query heads, a windowed layer (a trimmed cache: rollback past
 * its dropped keys) and a bf16 cache, where drafts were both kept and rejected (the cache
 * dropped tokens); sampler_check keeps each token distributed as sampler_sample's (temperature,
 * top-k, top-p), whatever the draft; a sliding cache and a dynamic rule the text would cross are
 * refused, as are --lookup with --no-cache or --prompts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../infer/decode.h"
#include "../infer/generate.h"
#include "../infer/lookup.h"
#include "../infer/sampler.h"
#include "../model/model.h"
#include "test.h"

enum { V = 13 }; /* tiny_model's vocabulary */

static void drafts(void) {
    int draft[8];
    /* a b c d e | a b c -> the latest "a b c" (2-8 tokens) was followed by d e a b c */
    const int t1[] = {1, 2, 3, 4, 5, 1, 2, 3};
    int k = lookup_draft(t1, 8, 4, draft);
    CHECK(k == 4 && draft[0] == 4 && draft[1] == 5 && draft[2] == 1 && draft[3] == 2,
          "lookup_draft: 1 2 3 4 5 1 2 3 drafts 4 5 1 2 (got %d tokens, first %d)", k, k ? draft[0] : -1);
    k = lookup_draft(t1, 8, 8, draft);
    CHECK(k == 5 && draft[4] == 3, "lookup_draft: at most the 5 tokens that followed (got %d)", k);
    /* the longest n-gram wins over a later shorter one: "9 2 3" occurs once, "2 3" later too */
    const int t2[] = {9, 2, 3, 7, 8, 2, 3, 6, 9, 2, 3};
    k = lookup_draft(t2, 11, 2, draft);
    CHECK(k == 2 && draft[0] == 7 && draft[1] == 8, "lookup_draft: the longest n-gram's followers (7 8; got %d, %d)", k,
          k ? draft[0] : -1);
    /* one matching token is not enough (n-grams of 2 at least) */
    const int t3[] = {4, 5, 6, 7, 5};
    CHECK(lookup_draft(t3, 5, 4, draft) == 0, "lookup_draft: a single-token match drafts nothing");
    /* a repeating text: the latest occurrence has one follower, an earlier one the full draft */
    const int t4[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(lookup_draft(t4, 10, 3, draft) == 3, "lookup_draft: a run of one token drafts the full 3");
    CHECK(lookup_draft(t4, 10, 0, draft) == 0, "lookup_draft: k_max 0 drafts nothing");
}

/* greedy generate_lookup equals generate: 0, or -1 (message) where it does not */
static void greedy_same(const char *spec, int kvh, int kv_bf16, long *drafted, long *kept) {
    Model m;
    if (tiny_model(&m, spec, kvh, 1, 41) != 0) {
        CHECK(0, "lookup %s: %s", spec, pelab_errmsg);
        return;
    }
    m.kv_cache_bf16 = kv_bf16;
    /* a prompt that repeats (drafts from the start) in a model that need not follow it (rejections) */
    int prompt[] = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2}, n_prompt = 10, n_new = 30;
    long max_pos = pos_max_position(&m.pos);
    if (max_pos >= 0 && n_prompt + n_new - 1 > max_pos) /* a learned table: 5 + 4 in its 8 positions */
        n_prompt = 5, n_new = (int)max_pos + 1 - n_prompt;
    const int draft_max[] = {1, 3, 8};
    for (int d = 0; d < 3; d++) {
        int want[64], got[64];
        memcpy(want, prompt, sizeof prompt), memcpy(got, prompt, sizeof prompt);
        Sampler a, b;
        sampler_init(&a, V, 0.0f, 0.9f, 0, 1), sampler_init(&b, V, 0.0f, 0.9f, 0, 1);
        LookupStats st;
        int n_want = generate(&m, &a, want, n_prompt, n_new, 1, -1, NULL, NULL);
        int n_got = generate_lookup(&m, &b, got, n_prompt, n_new, draft_max[d], -1, NULL, NULL, &st);
        CHECK(n_got == n_want && n_got == n_new && memcmp(want, got, sizeof(int) * (n_prompt + n_new)) == 0,
              "lookup %s kv %d%s, drafts of %d: greedy text equals generate's (%d and %d tokens; %s)", spec, kvh,
              kv_bf16 ? " bf16 cache" : "", draft_max[d], n_want, n_got, n_got < 0 ? pelab_errmsg : "");
        CHECK(st.accepted <= st.drafted && st.forwards <= n_new - 1 && st.forwards + st.accepted == n_new - 1,
              "lookup %s: stats add up (%ld forwards, %ld drafted, %ld kept, %d new)", spec, st.forwards, st.drafted,
              st.accepted, n_new);
        *drafted += st.drafted, *kept += st.accepted;
        sampler_free(&a), sampler_free(&b);
    }
    model_free(&m);
}

/* sampler_check's kept token against sampler_sample's draws, every cell within 5 standard errors */
static void same_distribution(float temp, float top_p, int top_k, int draft) {
    enum { DRAWS = 100000 };
    const float base[V] = {2.0f, 1.5f, 1.2f, 1.0f, 0.8f, 0.5f, 0.3f, 0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f};
    long plain[V] = {0}, checked[V] = {0}, kept = 0;
    Sampler a, b;
    sampler_init(&a, V, temp, top_p, top_k, 7), sampler_init(&b, V, temp, top_p, top_k, 8);
    float logits[V];
    for (int i = 0; i < DRAWS; i++) {
        memcpy(logits, base, sizeof logits);
        plain[sampler_sample(&a, logits)]++;
        memcpy(logits, base, sizeof logits);
        int tok = sampler_check(&b, logits, draft);
        checked[tok]++, kept += tok == draft;
    }
    double worst = 0;
    for (int t = 0; t < V; t++) {
        double p = (plain[t] + checked[t]) / (2.0 * DRAWS), se = sqrt(2 * p * (1 - p) / DRAWS) + 1e-12;
        double z = fabs((double)plain[t] - checked[t]) / DRAWS / se;
        worst = z > worst ? z : worst;
        CHECK(plain[t] > 0 || checked[t] == 0, "sampler_check T %.1f top-p %.2f top-k %d: token %d drawn, never sampled",
              temp, top_p, top_k, t);
    }
    CHECK(worst < 5, "sampler_check T %.1f top-p %.2f top-k %d draft %d: the kept token distributed as sampler_sample's "
                     "(worst cell %.1f standard errors)", temp, top_p, top_k, draft, worst);
    CHECK(kept == checked[draft], "sampler_check: the draft kept %ld times", kept);
    sampler_free(&a), sampler_free(&b);
}

static void refusals(void) {
    Model m;
    int t[40] = {1, 2, 3, 1, 2};
    Sampler s;
    sampler_init(&s, V, 0.0f, 0.9f, 0, 1);
    tiny_model(&m, "rope:scale=dynamic-ntk,orig_len=8", 4, 1, 5);
    CHECK(generate_lookup(&m, &s, t, 5, 20, 4, -1, NULL, NULL, NULL) < 0 && strstr(pelab_errmsg, "dynamic rule"),
          "lookup: a dynamic rule the text would cross is refused: %s", pelab_errmsg);
    CHECK(generate_lookup(&m, &s, t, 2, 3, 4, -1, NULL, NULL, NULL) == 3, "lookup: a dynamic rule within its length "
                                                                         "decodes: %s", pelab_errmsg);
    model_free(&m);
    tiny_model(&m, "rope", 4, 1, 5);
    CHECK(pos_set_scale(&m.pos, "stream:2:6") == 0, "stream:2:6: %s", pelab_errmsg);
    CHECK(generate_lookup(&m, &s, t, 5, 20, 4, -1, NULL, NULL, NULL) < 0 && strstr(pelab_errmsg, "sliding cache"),
          "lookup: a sliding cache is refused: %s", pelab_errmsg);
    model_free(&m);
    tiny_model(&m, "rope", 4, 1, 5);
    CHECK(generate_lookup(&m, &s, t, 5, 20, 64, -1, NULL, NULL, NULL) < 0 && strstr(pelab_errmsg, "1..63"),
          "lookup: 64 drafted tokens refused: %s", pelab_errmsg);
    /* the stop token ends the text in a draft as in generate: neither kept nor counted */
    int a[40] = {1, 2, 3, 1, 2}, b[40] = {1, 2, 3, 1, 2};
    Sampler s2;
    sampler_init(&s2, V, 0.0f, 0.9f, 0, 1);
    int stop = -1;
    {
        int probe[40] = {1, 2, 3, 1, 2};
        generate(&m, &s2, probe, 5, 20, 1, -1, NULL, NULL);
        stop = probe[12]; /* a token the greedy text draws */
    }
    sampler_free(&s2);
    sampler_init(&s2, V, 0.0f, 0.9f, 0, 1);
    int n_a = generate(&m, &s2, a, 5, 20, 1, stop, NULL, NULL);
    int n_b = generate_lookup(&m, &s, b, 5, 20, 4, stop, NULL, NULL, NULL);
    CHECK(n_a == n_b && n_a < 20 && memcmp(a, b, sizeof(int) * (5 + n_a)) == 0,
          "lookup: the stop token ends the text where generate's ends (%d and %d tokens)", n_a, n_b);
    sampler_free(&s2);
    model_free(&m);
    sampler_free(&s);
    expect_pelab_error("./pelab sample x.safetensors --lookup 4 --no-cache", "--lookup decodes one text");
    expect_pelab_error("./pelab sample x.safetensors --lookup 64", "--lookup");
}

/* kvcache_truncate itself: what it refuses, and that a cache cut back decodes as one never fed the
 * dropped tokens (the same logits within 1e-5: the calls are cut in other blocks) */
static void truncation(void) {
    Model m;
    tiny_model(&m, "rope", 2, 1, 9);
    int tok[6] = {1, 2, 3, 4, 5, 6}, pos[6] = {0, 1, 2, 3, 4, 5};
    float cut[V], fresh[V];
    KVCache a, b;
    kvcache_init(&a, &m, 8, 4), kvcache_init(&b, &m, 8, 4);
    CHECK(decode_forward(&m, &a, tok, pos, 5, NULL, 0) == 0, "kvcache_truncate: 5 tokens fed");
    CHECK(kvcache_truncate(&a, 6) != 0 && strstr(pelab_errmsg, "cannot go back to 6 tokens of 5"),
          "kvcache_truncate: past the cached length refused: %s", pelab_errmsg);
    CHECK(kvcache_truncate(&a, 3) == 0 && a.len == 3, "kvcache_truncate: back to 3 tokens");
    int alt[4] = {1, 2, 3, 6};
    CHECK(decode_forward(&m, &a, tok + 5, pos + 3, 1, cut, 0) == 0 && /* token 6 at position 3 after 1 2 3 */
              decode_forward(&m, &b, alt, pos, 4, fresh, 0) == 0,
          "kvcache_truncate: the cut cache and a fresh one decode");
    double worst = max_abs_diff(cut, fresh, V); /* not an inline fmax loop: gcc 12 for aarch64 crashes on it */
    CHECK(worst <= 1e-5, "kvcache_truncate: a cut cache decodes as a fresh one (max diff %.3g)", worst);
    kvcache_free(&a), kvcache_free(&b);
    kvcache_init_batch(&a, &m, 2, 8, 4);
    CHECK(kvcache_truncate(&a, 0) != 0 && strstr(pelab_errmsg, "batch"), "kvcache_truncate: a batch refused: %s",
          pelab_errmsg);
    kvcache_free(&a);
    model_free(&m);
    tiny_model(&m, "rope:scale=dynamic-ntk,orig_len=4", 4, 1, 5);
    kvcache_init(&a, &m, 8, 4);
    CHECK(decode_forward(&m, &a, tok, pos, 6, NULL, 0) == 0, "kvcache_truncate: 6 tokens fed past the rule's length");
    CHECK(kvcache_truncate(&a, 5) != 0 && strstr(pelab_errmsg, "dynamic rule"),
          "kvcache_truncate: keys past a dynamic rule's length refused: %s", pelab_errmsg);
    kvcache_free(&a);
    model_free(&m);
}

void test_lookup(void) {
    truncation();
    drafts();
    long drafted = 0, kept = 0;
    for (int i = 0; i < pos_count(); i++) {
        greedy_same(pos_at(i)->name, 4, 0, &drafted, &kept);
        greedy_same(pos_at(i)->name, 2, 0, &drafted, &kept);
    }
    greedy_same("rope", 2, 1, &drafted, &kept);
    tiny_attn_pattern = "window=3:global";
    greedy_same("rope", 4, 0, &drafted, &kept);
    tiny_attn_pattern = NULL;
    CHECK(kept > 0 && drafted > kept, "lookup: over the schemes, drafts kept (%ld) and rejected (%ld)", kept,
          drafted - kept);
    same_distribution(1.0f, 0.9f, 0, 2);
    same_distribution(0.7f, 0.0f, 0, 0);
    same_distribution(1.3f, 0.0f, 4, 9); /* a draft outside the top 4: never kept */
    same_distribution(1.0f, 0.5f, 3, 1);
    refusals();
}
