/* test.h: the tiny test harness. Each CHECK is one counted assertion; the runner prints
 * "N passed, N failed" at the end. */
#ifndef PELAB_TEST_H
#define PELAB_TEST_H
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
/* max |a - b| over n floats */
float max_abs_diff(const float *a, const float *b, int n);
/* a temporary directory for this test run (created once) */
const char *test_tmpdir(void);
/* ../shared/data path or NULL (tests using it skip with a message when absent) */
const char *shared_data_dir(void);
#endif
