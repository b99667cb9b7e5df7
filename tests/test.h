/* test.h: the tiny test harness. Each CHECK is one counted assertion; the runner prints
 * "N passed, N failed" at the end. */
#ifndef PELAB_TEST_H
#define PELAB_TEST_H
#include <stddef.h>
#include <stdio.h>
extern int tests_passed, tests_failed;
#define CHECK(cond, ...)                                                                                    \
    do {                                                                                                    \
        if (cond) tests_passed++;                                                                           \
        else {                                                                                              \
            tests_failed++;                                                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            fprintf(stderr, __VA_ARGS__);                                                                   \
            fprintf(stderr, "\n");                                                                          \
        }                                                                                                   \
    } while (0)
/* the larger of worst and x for a running maximum, a NaN kept (fmax drops it: a check would pass
 * on a NaN). Also the form gcc 12's aarch64 vectorizer compiles: fmax over floats widened to double
 * in a loop crashes it at -O3 ("internal compiler error: in vect_transform_reduction"). */
static inline double worse(double worst, double x) { return x <= worst || worst != worst ? worst : x; }
/* max |a - b| over n floats */
float max_abs_diff(const float *a, const float *b, int n);
/* the first 64 KiB of a file as text, in one buffer the next call reuses; NULL if it does not open */
char *test_slurp(const char *path);
/* a temporary directory for this test run (created once) */
const char *test_tmpdir(void);
/* ../shared/data path or NULL (tests using it skip with a message when absent) */
const char *shared_data_dir(void);

/* from test_cli.c: run a shell command in which "./pelab " stands for the binary under test
 * (PELAB_BIN); exit status returned, stdout+stderr in out */
int run_pelab(const char *cmd, char *out, size_t cap);
int count_lines(const char *s);
/* the command must exit 1 with one line "pelab: ..." containing needle */
void expect_pelab_error(const char *cmd, const char *needle);

/* from test_model.c: the checks every position scheme must pass (tests/test_schemes.c runs them on
 * every registered scheme) */
struct Model;
/* 1: the tiny models below get Qwen2's q/k/v biases (~N(0, 0.35^2) like the weights) */
extern int tiny_qkv_bias;
/* NULL, or the per-layer attention pattern (model/pattern.h) the tiny models below get */
extern const char *tiny_attn_pattern;
/* vocab 13, dim 16, 2 layers, 4 heads, hidden 20, seq_len 8; weights ~N(0, 0.35^2), gains ~1 */
int tiny_model(struct Model *m, const char *spec, int n_kv_heads, int tied, unsigned long long seed);
/* the same with a choice of heads and layers */
int tiny_model_shaped(struct Model *m, const char *spec, int n_heads, int n_kv_heads, int n_layers, int tied,
                      unsigned long long seed);
/* logits [T, V] of the ids (t * 5 + 3) mod V at positions 0..T-1 (out: room for T * V) */
void fixed_logits(struct Model *m, float *out, int T);
typedef struct {
    const char *spec, *needle;
} SpecNeedle;
/* the specs every RoPE-only export refuses (io/rope_target.h), with the phrase each message holds */
extern const SpecNeedle ROPE_TARGET_REFUSED[];
extern const size_t N_ROPE_TARGET_REFUSED;
/* each spec's tiny model (4 kv heads, tied) written by write to the test directory: refused with one
 * line holding its needle (what names the format in messages and paths) */
void check_export_refusals(const SpecNeedle *no, size_t n, const char *what,
                           int (*write)(const char *path, const struct Model *m));
/* central-difference check of every parameter tensor (B=2, T=6, row 1 at positions 2..7) */
void gradcheck(const char *spec, int n_kv_heads, int tied);
/* the same check under a sliding window of `window` keys (ModelConfig.sliding_window) */
void gradcheck_window(const char *spec, int window);
/* KV-cache decoding (4 chunkings, T=12) equals the full forward; batch of 2 equals single */
void kvcache_check(const char *spec, int n_kv_heads);
/* future attention weights exactly 0; changing token t changes no earlier logit */
void causality_check(const char *spec);
/* from test_permutation.c: max |out(P x) - P out(x)| of one attention sublayer without the mask
 * (the scheme's input map, q/k map and score bias included) for a fixed permutation P; -1 if the
 * spec does not parse */
float equivariance_gap(const char *spec);
#endif
