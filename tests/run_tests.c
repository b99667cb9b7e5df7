/* run_tests.c: runs every test group and prints "N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/kernels.h"
#include "../core/sys.h"
#include "test.h"

int tests_passed, tests_failed;

float max_abs_diff(const float *a, const float *b, int n) {
    float m = 0.0f;
    for (int i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (d > m || d != d) m = d != d ? INFINITY : d;
    }
    return m;
}

char *test_slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

const char *test_tmpdir(void) {
    static char dir[64];
    if (!dir[0]) {
        strcpy(dir, "/tmp/pelab-test-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            exit(1);
        }
    }
    return dir;
}

const char *shared_data_dir(void) {
    static const char *candidates[] = {"../shared/data", "../../shared/data", NULL};
    const char *env = getenv("PELAB_SHARED_DATA");
    struct stat st;
    if (env && stat(env, &st) == 0) return env;
    for (int i = 0; candidates[i]; i++)
        if (stat(candidates[i], &st) == 0 && S_ISDIR(st.st_mode)) return candidates[i];
    return NULL;
}

#define TEST_GROUPS(X) X(test_pos_reference) X(test_model) X(test_attention) X(test_attn_scale) X(test_sinks) X(test_cope) X(test_fire) X(test_fox) X(test_pope) X(test_nope_layers) X(test_batch) X(test_lookup) X(test_bf16) X(test_weights16) X(test_sliding_window) X(test_patterns) X(test_rotary_variants) X(test_bias_schemes) X(test_rope_scaling) X(test_longrope) X(test_extend) X(test_stream) X(test_kv_layout) X(test_hf_config) X(test_hf_llama) X(test_gguf) X(test_gguf_quant) X(test_permutation) X(test_schemes) X(test_probe) X(test_show) X(test_plots) X(test_synth) X(test_bpe) X(test_hf_tok) X(test_llama2c) X(test_sampler) X(test_checkpoint) X(test_train) X(test_crash) X(test_crash_jobs) X(test_faults) X(test_cli) X(test_progress) X(test_passkey) X(test_task) X(test_ruler) X(test_ruler_report) X(test_eval) X(test_genmetrics) X(test_cpu) X(test_gemm) X(test_kernels) X(test_stats) X(test_verdict) X(test_claim_sim) X(test_results) X(test_suite) X(test_corpus) X(test_suite_keyppl) X(test_compare) X(test_jobs) X(test_key_subword) X(test_hardening) X(test_hostile_regex) X(test_hostile_files) X(test_hostile_tok) X(test_hostile_loaders) X(test_run_safety) X(test_outputs) X(test_regress) X(test_docs) X(test_includes)

#define DECLARE(fn) void fn(void);
TEST_GROUPS(DECLARE)

typedef struct {
    const char *name;
    void (*fn)(void);
} Group;
#define ENTRY(fn) {#fn, fn},
static const Group groups[] = {TEST_GROUPS(ENTRY)};

/* no arguments: every group; else the groups whose names contain one of them */
static int selected(const char *name, int argc, char **argv) {
    for (int a = 1; a < argc; a++)
        if (strstr(name, argv[a])) return 1;
    return argc < 2;
}

int main(int argc, char **argv) {
    double t_all = now_seconds();
    /* PELAB_ISA=avx2: every group on that kernel set (core/kernels.h), as ./pelab takes it */
    const char *isa = getenv("PELAB_ISA");
    if (isa && *isa && kernels_force(isa) != 0) {
        fprintf(stderr, "run_tests: %s\n", pelab_errmsg);
        return 1;
    }
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (!selected(groups[i].name, argc, argv)) continue;
        int p0 = tests_passed, f0 = tests_failed;
        double t0 = now_seconds();
        groups[i].fn();
        fprintf(stderr, "%-24s %4d passed, %d failed  (%.2f s)\n", groups[i].name, tests_passed - p0,
                tests_failed - f0, now_seconds() - t0);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", test_tmpdir());
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", test_tmpdir());
    fprintf(stderr, "total time %.1f s\n", now_seconds() - t_all);
    printf("%d passed, %d failed\n", tests_passed, tests_failed);
    return tests_failed ? 1 : 0;
}
