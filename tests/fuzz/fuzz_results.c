/* fuzz_results.c: the results reader (io/results.h), the parser of compare's run CSVs, eval's and
 * task eval's CSV and JSON files as report and any later reader take them in.
 *
 * Input: byte 0 picks the form (even: CSV, odd: JSON) and the layout the rows are written back
 * with; the rest is the file. Every row read is written with that layout (W1), W1 is read again
 * and written (W2): W1 == W2 byte for byte (writing normalises once: NaN cells empty, a row's own
 * digits kept), and as many rows. A refused file gives one line naming the file. Never a crash, a
 * read past the input or a leak. */
#include <stdint.h>

#include "../../core/error.h"
#include "../../io/results.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

static void refused(void) {
    FUZZ_CHECK(strncmp(pelab_errmsg, "in.", 3) == 0 && !strchr(pelab_errmsg, '\n'),
               "a refusal not one line naming the file: %s", pelab_errmsg);
}

/* every row of a CSV text written with layout l into a fresh buffer; the row count, or -1 */
static int csv_rewrite(const char *text, size_t n, const ResLayout *l, char **out, size_t *out_n) {
    FILE *in = fmemopen((void *)text, n, "r");
    FILE *w = open_memstream(out, out_n);
    FUZZ_CHECK(in && w, "fmemopen/open_memstream");
    ResultReader rd;
    ResultRow r;
    int rows = 0, rc = results_reader_open(&rd, in, "in.csv");
    if (rc == 0) results_csv_header(w, l);
    while (rc == 0 && (rc = results_reader_next(&rd, &r)) == 1) {
        results_csv_row(w, l, &r);
        rows++, rc = 0;
    }
    results_reader_close(&rd);
    fclose(in), fclose(w);
    return rc < 0 ? -1 : rows;
}

static void check_csv(const char *text, size_t n, const ResLayout *l) {
    if (!n) return; /* fmemopen needs a byte; the empty file is a unit test's case */
    char *w1 = NULL, *w2 = NULL;
    size_t n1 = 0, n2 = 0;
    int rows = csv_rewrite(text, n, l, &w1, &n1);
    if (rows < 0) refused();
    else {
        int again = csv_rewrite(w1, n1, l, &w2, &n2);
        FUZZ_CHECK(again == rows, "%d rows written back read as %d (%s)", rows, again, again < 0 ? pelab_errmsg : "");
        FUZZ_CHECK(n1 == n2 && memcmp(w1, w2, n1) == 0, "rows written, read and written again differ:\n%.*s---\n%.*s",
                   (int)n1, w1, (int)n2, w2);
    }
    free(w1), free(w2);
}

/* the rows of a JSON text ("rows" or "cells") written with layout l; the row count, or -1 */
static int json_rewrite(const char *text, size_t n, const ResLayout *l, const char *key, char **out, size_t *out_n) {
    ResultJson rj;
    if (results_json_read(text, n, "in.json", key, &rj) != 0) return -1;
    FILE *w = open_memstream(out, out_n);
    FUZZ_CHECK(w, "open_memstream");
    int first = 1;
    fprintf(w, "{\"%s\": [", key);
    for (int i = 0; i < rj.n; i++) results_json_row(w, l, &rj.rows[i], &first);
    fprintf(w, "\n]}\n");
    fclose(w);
    int rows = rj.n;
    results_json_free(&rj);
    return rows;
}

static void check_json(const char *text, size_t n, const ResLayout *l) {
    const char *key = strstr(text, "\"cells\"") ? "cells" : "rows";
    char *w1 = NULL, *w2 = NULL;
    size_t n1 = 0, n2 = 0;
    int rows = json_rewrite(text, n, l, key, &w1, &n1);
    if (rows < 0) refused();
    else {
        int again = json_rewrite(w1, n1, l, key, &w2, &n2);
        FUZZ_CHECK(again == rows, "%d rows written back read as %d (%s)", rows, again, again < 0 ? pelab_errmsg : "");
        FUZZ_CHECK(n1 == n2 && memcmp(w1, w2, n1) == 0, "rows written, read and written again differ:\n%.*s---\n%.*s",
                   (int)n1, w1, (int)n2, w2);
    }
    free(w1), free(w2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const ResLayout *const csv[] = {&RES_COMPARE_CSV, &RES_EVAL_CSV, &RES_TASK_CSV, &RES_PASSKEY_CSV};
    static const ResLayout *const json[] = {&RES_EVAL_JSON, &RES_TASK_JSON};
    char *text = malloc(size); /* exactly the bytes after the pick, NUL-terminated for strstr */
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    if (data[0] % 2 == 0) check_csv(text, size - 1, csv[data[0] / 2 % 4]);
    else check_json(text, size - 1, json[data[0] / 2 % 2]);
    free(text);
    return 0;
}
