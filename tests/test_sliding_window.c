/* test_sliding_window.c: Mistral's sliding window (ModelConfig.sliding_window, import --hf
 * --sliding-window). Every softmax weight on a key window or more positions behind its query is
 * exactly 0 and the rest of the row sums to 1; the KV-cache decoder equals the full forward under
 * the window in every chunking; a window at least the length changes nothing (bit for bit), a
 * shorter one changes the rows past it; the window survives a checkpoint and an HF export
 * (MistralForCausalLM), and import applies it only when asked; training under a window passes the
 * finite-difference gradient check, with learned biases (T5, FIRE) and a content bias (CoPE) whose
 * backward must line up with the keys past the window. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../infer/decode.h"
#include "../io/checkpoint.h"
#include "../io/hf_llama.h"
#include "../model/model.h"
#include "test.h"

enum { T = 12, W = 3 };

static void forward(Model *m, float *logits) {
    int in[T], pos[T];
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 2) % m->cfg.vocab_size, pos[t] = t;
    model_alloc_train(m, 1, T);
    model_forward(m, in, NULL, pos, 1, T);
    if (logits) memcpy(logits, m->acts.logits, sizeof(float) * T * m->cfg.vocab_size);
}

static void probs_zero_past_window(void) {
    Model m;
    tiny_model(&m, "rope", 2, 1, 21);
    m.cfg.sliding_window = W;
    model_keep_attention(&m, 1);
    forward(&m, NULL);
    int H = m.cfg.n_heads, bad_zero = 0, bad_seen = 0;
    double worst_sum = 0;
    for (int l = 0; l < m.cfg.n_layers; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                const float *row = m.acts.att_probs + (((size_t)l * H + h) * T + i) * T;
                double sum = 0;
                for (int j = 0; j < T; j++) {
                    int in_window = j <= i && i - j < W;
                    bad_zero += !in_window && row[j] != 0.0f;
                    bad_seen += in_window && !(row[j] > 0.0f);
                    sum += row[j];
                }
                worst_sum = worse(worst_sum, fabs(sum - 1.0));
            }
    CHECK(bad_zero == 0, "window %d: every weight on a key %d or more positions behind is exactly 0 (%d are not)", W, W,
          bad_zero);
    CHECK(bad_seen == 0 && worst_sum < 1e-5, "the keys inside it share the row (%d at 0, |sum - 1| <= %.2g)", bad_seen,
          worst_sum);
    model_free(&m);
}

static void decoder_equals_full(void) {
    Model m;
    tiny_model(&m, "rope", 2, 1, 22);
    m.cfg.sliding_window = W;
    int V = m.cfg.vocab_size, in[T], pos[T];
    static float full[T * 13], dec[T * 13];
    forward(&m, full);
    for (int t = 0; t < T; t++) in[t] = (t * 5 + 2) % V, pos[t] = t;
    const int chunkings[] = {1, 2, 5, T};
    for (size_t c = 0; c < sizeof chunkings / sizeof chunkings[0]; c++) {
        KVCache kv;
        kvcache_init(&kv, &m, T, 4);
        int rc = 0;
        for (int t = 0; t < T && rc == 0; t += chunkings[c]) {
            int n = T - t < chunkings[c] ? T - t : chunkings[c];
            rc = decode_forward(&m, &kv, in + t, pos + t, n, dec + (size_t)t * V, 1);
        }
        kvcache_free(&kv);
        float diff = max_abs_diff(full, dec, T * V);
        CHECK(rc == 0 && diff <= 1e-5f, "window %d: KV-cache decoder in chunks of %d = full forward (max |diff| %.3g)",
              W, chunkings[c], diff);
    }
    /* a window of the whole length is no window; a shorter one changes the rows past it only */
    static float none[T * 13], wide[T * 13];
    m.cfg.sliding_window = 0;
    forward(&m, none);
    m.cfg.sliding_window = T;
    forward(&m, wide);
    CHECK(memcmp(none, wide, sizeof none) == 0, "a window of %d (the length) = no window, bit for bit", T);
    CHECK(memcmp(none, full, sizeof(float) * W * V) == 0 && max_abs_diff(none + W * V, full + W * V, (T - W) * V) > 1e-4f,
          "window %d: rows 0..%d as without it, later rows differ", W, W - 1);
    model_free(&m);
}

static void kept_in_files(void) {
    char dir[512], path[600], cmd[1400], out[4096];
    snprintf(dir, sizeof dir, "%s/sw-hf", test_tmpdir());
    snprintf(path, sizeof path, "%s/sw.safetensors", test_tmpdir());
    Model m, back;
    tiny_model(&m, "rope", 2, 1, 23);
    m.cfg.sliding_window = W;
    CHECK(checkpoint_save(path, &m, NULL, NULL, NULL) == 0 && checkpoint_load(path, &back, NULL, NULL, NULL) == 0 &&
              back.cfg.sliding_window == W, "the window survives a checkpoint (%s)", pelab_errmsg);
    model_free(&back);
    char note[400];
    long window = 0;
    CHECK(hf_llama_write(dir, &m, note, sizeof note) == 0 && hf_llama_read(dir, &back, &window) == 0 && window == W &&
              back.cfg.sliding_window == 0,
          "exported as Mistral with sliding_window %d; read back, it is reported (%ld), not applied (%s)", W, window,
          pelab_errmsg);
    model_free(&back);
    snprintf(cmd, sizeof cmd, "./pelab import --hf %s --out %s --sliding-window", dir, path);
    int rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 0 && checkpoint_load(path, &back, NULL, NULL, NULL) == 0 && back.cfg.sliding_window == W,
          "import --sliding-window applies it (%s)", out);
    if (rc == 0) model_free(&back);
    snprintf(cmd, sizeof cmd, "./pelab import --hf %s --out %s", dir, path);
    CHECK(run_pelab(cmd, out, sizeof out) == 0 && strstr(out, "is not applied (import --sliding-window applies it)"),
          "without the flag, import says the window is not applied: %s", out);
    snprintf(cmd, sizeof cmd, "./pelab import --llama2c x.bin --tokenizer t.bin --out %s --sliding-window", path);
    expect_pelab_error(cmd, "--sliding-window goes with --hf");
    model_free(&m);
}

void test_sliding_window(void) {
    probs_zero_past_window();
    decoder_equals_full();
    kept_in_files();
    const char *specs[] = {"rope", "t5", "fire", "cope"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) gradcheck_window(specs[i], W);
}
