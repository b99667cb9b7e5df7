/* test_weights16.c: a bf16 checkpoint run with --precision bf16 keeps its weights in bf16 alone
 * (model_create_bf16, checkpoint_load_precision). A model exported as a BF16 Hugging Face file
 * and imported gives, in bf16 alone, the same logits bit for bit as the widened path (float32
 * block + its bf16 rounding): both run the same bf16 products on the same bf16 weights, and the
 * embedding and norms widened from bf16 are the same floats. Its weight memory is half the float32
 * model's (allocated bytes, not timing); the float32 slots of its matrices are not there (a read
 * faults); a non-finite BF16 weight is refused; an F32 checkpoint under bf16 stays widened. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/rng.h"
#include "../infer/decode.h"
#include "../io/checkpoint.h"
#include "../io/hf_llama.h"
#include "../model/model.h"
#include "test.h"

enum { T = 24 };

/* the full forward's logits [T, V] and the KV-cache decoder's, one token at a time ([T, V]: the
 * one-row products, bf16_gemv) */
static void logits_both(Model *m, float *full, float *step) {
    int in[T], pos[T], V = m->cfg.vocab_size;
    for (int t = 0; t < T; t++) in[t] = (t * 7 + 3) % V, pos[t] = t;
    model_alloc_train(m, 1, T);
    model_forward(m, in, NULL, pos, 1, T);
    memcpy(full, m->acts.logits, sizeof(float) * T * V);
    KVCache c;
    kvcache_init(&c, m, T, 8);
    for (int t = 0; t < T; t++) decode_forward(m, &c, in + t, pos + t, 1, step + (size_t)t * V, 0);
    kvcache_free(&c);
}

/* a model saved the way import saves a bf16 model, at path */
static int bf16_checkpoint(const char *dir, const char *path, Model *src) {
    char note[400];
    Model imported;
    /* large enough that the float32 norms' pages are small beside the matrices */
    ModelConfig cfg = {.vocab_size = 512, .dim = 128, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .hidden_dim = 384,
                       .seq_len = 64, .norm_eps = 1e-5f, .tied = 1};
    if (model_create(src, &cfg, "rope:layout=half") != 0) return -1;
    model_init_weights(src, 11);
    Rng rng;
    rng_seed(&rng, 12);
    for (int t = T_ATTN_NORM; t <= T_FINAL_NORM; t++) /* gains away from 1, so a mix-up would show */
        if (t == T_ATTN_NORM || t == T_MLP_NORM || t == T_FINAL_NORM)
            for (size_t i = 0; i < src->tensors[t].numel; i++)
                src->params_mem[src->tensors[t].offset + i] = 1.0f + 0.2f * rng_normal(&rng);
    if (hf_llama_write_sharded(dir, src, 0, 1, note, sizeof note) != 0 || hf_llama_read(dir, &imported, NULL) != 0)
        return -1;
    int exact = model_weights_bf16_exact(&imported);
    int rc = exact && checkpoint_save_bf16(path, &imported, NULL) == 0 ? 0 : -1;
    if (!exact) pelab_fail("the BF16 file's weights came back not bf16-exact");
    model_free(&imported);
    return rc;
}

/* reading a matrix weight's float32 slot in a bf16-only model: the child must not exit normally */
static int float_slot_faults(const Model *m) {
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY); /* a sanitizer's report of the expected fault is noise */
        if (null >= 0) dup2(null, 2);
        volatile float x = m->params.wq[m->tensors[T_WQ].numel / 2]; /* its ends may share a page with a norm */
        (void)x;
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void same_outputs_half_memory(void) {
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/w16-hf", test_tmpdir());
    snprintf(path, sizeof path, "%s/w16.safetensors", test_tmpdir());
    Model src, wide, only;
    if (bf16_checkpoint(dir, path, &src) != 0) {
        CHECK(0, "bf16 checkpoint: %s", pelab_errmsg);
        return;
    }
    model_free(&src);
    CHECK(checkpoint_load(path, &wide, NULL, NULL, NULL) == 0 && model_set_precision(&wide, PRECISION_BF16) == 0,
          "widened load: %s", pelab_errmsg);
    CHECK(checkpoint_load_precision(path, &only, NULL, PRECISION_BF16) == 0, "bf16 load: %s", pelab_errmsg);
    CHECK(only.bf16_only && !wide.bf16_only && only.precision == PRECISION_BF16, "bf16 alone only under --precision bf16");
    CHECK(memcmp(only.params_bf16, wide.params_bf16, only.n_params * sizeof(bf16)) == 0,
          "the bf16 block read from the file equals the widened block rounded");
    int V = only.cfg.vocab_size;
    float *a = malloc(sizeof(float) * 4 * T * V), *b = a + T * V, *c = b + T * V, *d = c + T * V;
    logits_both(&wide, a, b);
    logits_both(&only, c, d);
    CHECK(memcmp(a, c, sizeof(float) * T * V) == 0, "full forward: bf16 alone = widened, bit for bit (max diff %g)",
          max_abs_diff(a, c, T * V));
    CHECK(memcmp(b, d, sizeof(float) * T * V) == 0, "KV-cache decoder: bf16 alone = widened, bit for bit (max diff %g)",
          max_abs_diff(b, d, T * V));
    free(a);

    /* memory: the allocated weight bytes, float32 model against bf16 alone */
    size_t fp32 = only.n_params * sizeof(float), kept = 0;
    for (int i = 0; i < N_PARAM_TENSORS; i++)
        if (!model_weight_in_bf16_only(i)) kept += only.tensors[i].numel * sizeof(float);
    size_t w16 = model_weight_bytes(&only), slack = 4 * (size_t)sysconf(_SC_PAGESIZE);
    CHECK(w16 <= fp32 / 2 + kept + slack && w16 >= fp32 / 2,
          "bf16 alone holds %zu bytes of weights: half the float32 model's %zu, plus %zu kept in float32 (norms) in "
          "whole pages", w16, fp32, kept);
    CHECK(model_weight_bytes(&wide) == fp32 + fp32 / 2, "the widened path holds float32 and bf16: %zu bytes",
          model_weight_bytes(&wide));
    CHECK(float_slot_faults(&only), "a matrix weight's float32 slot is not there in bf16 alone (a read faults)");
    CHECK(model_set_precision(&only, PRECISION_FP32) != 0 && strstr(pelab_errmsg, "bf16 only"),
          "fp32 refused on a bf16-only model: %s", pelab_errmsg);
    CHECK(checkpoint_save(path, &only, NULL, NULL, NULL) != 0 && strstr(pelab_errmsg, "bf16 only"),
          "a float32 save of a bf16-only model refused: %s", pelab_errmsg);

    /* a bf16-only model saves back as the same bf16 checkpoint */
    char again[640];
    snprintf(again, sizeof again, "%s.again", path);
    Model back;
    CHECK(checkpoint_save_bf16(again, &only, NULL) == 0 && checkpoint_load_precision(again, &back, NULL, PRECISION_BF16) == 0 &&
              memcmp(back.params_bf16, only.params_bf16, only.n_params * sizeof(bf16)) == 0,
          "bf16 alone -> save -> load: the same bf16 weights (%s)", pelab_errmsg);
    model_free(&back);
    model_free(&wide);
    model_free(&only);

    /* an F32 checkpoint under bf16: float32 block + rounding, as before */
    Model f, g;
    snprintf(again, sizeof again, "%s.f32", path);
    tiny_model(&f, "rope", 2, 1, 5);
    CHECK(checkpoint_save(again, &f, NULL, NULL, NULL) == 0 && checkpoint_load_precision(again, &g, NULL, PRECISION_BF16) == 0 &&
              !g.bf16_only && g.precision == PRECISION_BF16 && memcmp(f.params_mem, g.params_mem, f.n_params * 4) == 0,
          "an F32 checkpoint under bf16 is widened as before (%s)", pelab_errmsg);
    model_free(&f);
    model_free(&g);
}

/* a BF16 checkpoint holding an infinity: refused naming the tensor, in both loads */
static void non_finite_refused(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/w16.safetensors", test_tmpdir());
    unsigned char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0) {
        CHECK(0, "%s", pelab_errmsg);
        return;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    buf[8 + hlen + 2] = 0x80, buf[8 + hlen + 3] = 0x7f; /* tok_emb's second element: +inf */
    char bad[640];
    snprintf(bad, sizeof bad, "%s.inf", path);
    Model m;
    CHECK(write_bytes_atomic(bad, buf, len) == 0 && checkpoint_load_precision(bad, &m, NULL, PRECISION_BF16) != 0 &&
              strstr(pelab_errmsg, "tok_emb: element 1"), "+inf in BF16 refused (bf16 alone): %s", pelab_errmsg);
    CHECK(checkpoint_load_precision(bad, &m, NULL, PRECISION_FP32) != 0 && strstr(pelab_errmsg, "tok_emb: element 1"),
          "+inf in BF16 refused (widened): %s", pelab_errmsg);
    free(buf);
}

void test_weights16(void) {
    /* every CPU: natively, or the weights widened in registers */
    same_outputs_half_memory();
    non_finite_refused();
}
