/* test_results.c: the one results row (io/results.h). Every kind of row of every file pelab writes
 * (compare's run CSV, eval's CSV and JSON, task eval's CSV and JSON, passkey's CSV) written, read back and written
 * again byte for byte, its typed fields (status enum and limit, empty cells, a passkey's 4 digits)
 * as they were; a compare CSV from before ci_lo, ci_hi still read; bad input refused in one line
 * naming the file, the line and the column; the aggregation (core/stats summary and median) and
 * the report's mean ± std of the gen, jump and keyppl rows against values computed by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/error.h"
#include "../core/stats.h"
#include "../io/results.h"
#include "../lab/compare_plan.h"
#include "../train/curve.h"
#include "test.h"

/* the text written to a memory stream by a writer; the caller frees it */
typedef struct {
    char *s;
    size_t n;
    FILE *f;
} Mem;
static void mem_open(Mem *m) { m->s = NULL, m->n = 0, m->f = open_memstream(&m->s, &m->n); }
static void mem_close(Mem *m) { fclose(m->f); }

/* rows of each kind, as the commands fill them */
static int compare_rows(ResultRow *r) {
    int n = 0;
    ResultRow base = result_row();
    base.scheme = "rope:base=500,layout=half", base.seed = "3", base.rule = "none", base.train_len = 48;
    base.accepted = -1, base.computable = -1;
    r[n] = base, r[n].kind = "length", r[n].length = 96, r[n].protocol = "nonoverlap", r[n].value = 4.25;
    r[n].n = 999, r[n].ci_lo = 4.2, r[n++].ci_hi = 4.3;
    r[n] = base, r[n].kind = "length", r[n].length = 192, r[n].protocol = "sliding", r[n].status = RES_PAST_TABLE;
    r[n].limit = 48, r[n].n = 0, r[n].accepted = 48, r[n++].rule = "pi:2";
    r[n] = base, r[n].kind = "bucket", r[n].length = 96, r[n].protocol = "nonoverlap", r[n].value = 5.5;
    r[n].bucket = 3, r[n].pos_lo = 18, r[n].pos_hi = 23, r[n++].n = 62;
    r[n] = base, r[n].kind = "passkey", r[n].length = 96, r[n].protocol = "passkey", r[n].value = 1.0 / 3;
    r[n].digits = 4, r[n].n = 30, r[n].ci_lo = 0.1667, r[n++].ci_hi = 0.5;
    r[n] = base, r[n].kind = "passkey", r[n].length = 24, r[n].protocol = "passkey", r[n].status = RES_NA, r[n++].n = 0;
    r[n] = base, r[n].kind = "task", r[n].length = 40, r[n].protocol = "exact", r[n].status = RES_PAST_RAND_POS;
    r[n].limit = 64, r[n].pos_hi = 88, r[n++].n = 0;
    r[n] = base, r[n].kind = "gate", r[n].length = 4, r[n].protocol = "exact", r[n].value = 0.9, r[n].pos_hi = 12;
    r[n++].n = 100;
    r[n] = base, r[n].kind = "gen", r[n].length = 384, r[n].protocol = "rep4_data", r[n].value = 0.125, r[n].bucket = 0;
    r[n].pos_lo = 0, r[n].pos_hi = 47, r[n++].n = 108;
    r[n] = base, r[n].kind = "jump", r[n].length = 96, r[n].protocol = "nonoverlap", r[n].status = RES_NA, r[n++].n = 1000;
    r[n] = base, r[n].kind = "keyppl", r[n].length = 48, r[n].protocol = "key", r[n].status = RES_NO_KEY_TOKENS;
    r[n++].n = 0;
    return n;
}

static int eval_rows(ResultRow *r) {
    int n = 0;
    ResultRow base = result_row();
    base.model = "/tmp/a \"quoted\", model\nwith a newline.safetensors", base.seed = "", base.scheme = "rope:base=10000";
    base.rule = "none", base.data = "text.txt", base.tokens = 2931, base.train_len = 16;
    r[n] = base, r[n].kind = "length", r[n].length = 8, r[n].protocol = "sliding", r[n].stride = 4, r[n].windows = 732;
    r[n].n = 2930, r[n].value = 5.217805, r[n++].ppl = exp(5.217805);
    r[n] = base, r[n].kind = "length", r[n].length = 64, r[n].protocol = "nonoverlap", r[n].stride = 64, r[n].windows = 0;
    r[n].n = 0, r[n].status = RES_PAST_COMPUTABLE, r[n++].limit = 32;
    r[n] = base, r[n].kind = "bucket", r[n].length = 8, r[n].protocol = "nonoverlap", r[n].bucket = 1, r[n].pos_lo = 2;
    r[n].pos_hi = 3, r[n].n = 732, r[n].value = 5.215318, r[n++].ppl = exp(5.215318);
    r[n] = base, r[n].kind = "jump", r[n].length = 32, r[n].protocol = "nonoverlap", r[n].n = 2931;
    r[n++].status = RES_PAST_THE_TABLE;
    r[n] = base, r[n].kind = "keyppl", r[n].length = 64, r[n].protocol = "key", r[n].n = 0;
    r[n++].status = RES_REFUSED_LENGTH;
    r[n] = base, r[n].kind = "gen", r[n].length = 128, r[n].protocol = "rep4", r[n].bucket = 7, r[n].pos_lo = 112;
    r[n].pos_hi = 127, r[n].n = 40, r[n++].value = 0.025;
    return n;
}

static int task_rows(ResultRow *r) {
    int n = 0;
    for (int d = 0; d < 2; d++) {
        r[n] = result_row();
        r[n].task = "passkey:len=64-128,depth=0-1", r[n].train_len = 64, r[n].length = 96, r[n].pos_hi = 64 + 32 * d;
        if (d) r[n].depth = 0.5;
        r[n].past_train_len = d;
        r[n].n = 4, r[n].exact = 3, r[n].answer_bytes = 24, r[n].correct_bytes = 20, r[n].value = 0.75;
        r[n].ci_lo = 0.25, r[n].ci_hi = 1, r[n].value2 = 20.0 / 24, r[n].ci2_lo = 0.5, r[n++].ci2_hi = 1;
    }
    return n;
}

static int passkey_rows(ResultRow *r) {
    for (int k = 0; k < 2; k++) {
        r[k] = result_row();
        r[k].model = "ckpt,with comma.safetensors", r[k].scheme = "rope:base=10000,layout=interleaved", r[k].length = 64;
        r[k].depth = 10 + 80 * k, r[k].n = 2 * k;
        if (k) r[k].exact = 1, r[k].value = 0.5, r[k].value2 = 2.5;
    }
    return 2;
}

/* rows through a CSV file and back: the second writing equals the first, byte for byte */
static void csv_round_trip(const char *what, const ResLayout *l, const ResultRow *rows, int n) {
    char path[600];
    snprintf(path, sizeof path, "%s/results_%s.csv", test_tmpdir(), what);
    FILE *f = fopen(path, "w+");
    CHECK(f != NULL, "%s: open", path);
    if (!f) return;
    results_csv_header(f, l);
    for (int i = 0; i < n; i++) results_csv_row(f, l, &rows[i]);
    rewind(f);
    Mem again;
    mem_open(&again);
    results_csv_header(again.f, l);
    ResultReader rd;
    int got = 0, rc = results_reader_open(&rd, f, path);
    ResultRow r;
    int more;
    while (rc == 0 && (more = results_reader_next(&rd, &r)) != 0) {
        if (more < 0) {
            rc = -1;
            break;
        }
        results_csv_row(again.f, l, &r);
        if (got < n && rows[got].status != r.status) CHECK(0, "%s row %d: status %d read as %d", what, got, rows[got].status, r.status);
        got++;
    }
    results_reader_close(&rd);
    mem_close(&again);
    long size = ftell(f);
    char *first = calloc(1, (size_t)size + 1);
    rewind(f);
    size_t k = fread(first, 1, (size_t)size, f);
    fclose(f);
    CHECK(rc == 0 && got == n && k == again.n && memcmp(first, again.s, k) == 0,
          "%s CSV: %d rows written, read, written again identically (read %d, rc %d: %s)\n%s---\n%s", what, n, got, rc,
          pelab_errmsg, first, again.s);
    free(first), free(again.s);
}

/* rows through a JSON document ({"KEY": [...]}) and back */
static void json_round_trip(const char *what, const ResLayout *l, const char *key, const ResultRow *rows, int n) {
    Mem a, b;
    mem_open(&a), mem_open(&b);
    int first = 1;
    fprintf(a.f, "{\"%s\": [", key);
    for (int i = 0; i < n; i++) results_json_row(a.f, l, &rows[i], &first);
    fprintf(a.f, "\n]}\n");
    mem_close(&a);
    ResultJson rj;
    int rc = results_json_read(a.s, a.n, what, key, &rj);
    first = 1;
    fprintf(b.f, "{\"%s\": [", key);
    for (int i = 0; rc == 0 && i < rj.n; i++) results_json_row(b.f, l, &rj.rows[i], &first);
    fprintf(b.f, "\n]}\n");
    mem_close(&b);
    CHECK(rc == 0 && rj.n == n && a.n == b.n && memcmp(a.s, b.s, a.n) == 0,
          "%s JSON: %d rows written, read, written again identically (rc %d: %s)\n%s---\n%s", what, n, rc, pelab_errmsg,
          a.s, b.s);
    if (rc == 0) results_json_free(&rj);
    free(a.s), free(b.s);
}

/* the typed fields of compare rows as read back */
static void typed_fields(void) {
    ResultRow rows[16];
    int n = compare_rows(rows);
    Mem m;
    mem_open(&m);
    results_csv_header(m.f, &RES_COMPARE_CSV);
    for (int i = 0; i < n; i++) results_csv_row(m.f, &RES_COMPARE_CSV, &rows[i]);
    mem_close(&m);
    FILE *f = fmemopen(m.s, m.n, "r");
    ResultReader rd;
    ResultRow r[16];
    int k = 0;
    if (results_reader_open(&rd, f, "mem") == 0)
        while (k < 16 && results_reader_next(&rd, &r[k]) == 1) {
            /* the strings point into the reader: keep what the checks need */
            r[k].kind = strcmp(r[k].kind, rows[k].kind) == 0 ? rows[k].kind : "mismatch";
            r[k].scheme = strcmp(r[k].scheme, rows[k].scheme) == 0 ? rows[k].scheme : "mismatch";
            k++;
        }
    results_reader_close(&rd);
    fclose(f);
    CHECK(k == n, "compare rows read: %d of %d", k, n);
    if (k != n) return free(m.s);
    int kinds_ok = 1;
    for (int i = 0; i < n; i++) kinds_ok &= strcmp(r[i].kind, "mismatch") != 0 && strcmp(r[i].scheme, "mismatch") != 0;
    CHECK(kinds_ok, "kinds and a quoted scheme with a comma read back");
    CHECK(r[0].value == 4.25 && r[0].ci_lo == 4.2 && r[0].ci_hi == 4.3 && r[0].n == 999 && r[0].bucket == RES_NONE &&
              r[0].accepted == -1 && r[0].status == RES_OK,
          "a length row: value, interval, n; empty bucket; accepted -1");
    CHECK(r[1].status == RES_PAST_TABLE && r[1].limit == 48 && isnan(r[1].value) && isnan(r[1].ci_lo),
          "a refused length: RES_PAST_TABLE of 48, no value, no interval");
    CHECK(r[3].digits == 4 && fabs(r[3].value - 0.3333) < 1e-12 && r[4].status == RES_NA,
          "passkey: 4 digits kept (%d, %g); n/a", r[3].digits, r[3].value);
    CHECK(r[5].status == RES_PAST_RAND_POS && r[5].limit == 64 && r[5].pos_hi == 88 && r[9].status == RES_NO_KEY_TOKENS,
          "task past rand_pos 64 reaching 88; keyppl without key tokens");
    free(m.s);

    char buf[64];
    int statuses_ok = 1;
    for (int s = 0; s < RES_N_STATUS; s++) {
        ResStatus back;
        long limit;
        result_status_str(s, 1234, buf, sizeof buf);
        statuses_ok &= result_status_parse(buf, &back, &limit) == 0 && back == (ResStatus)s &&
                       (strchr(buf, '1') == NULL || limit == 1234);
    }
    ResStatus st;
    long lim;
    CHECK(statuses_ok && result_status_parse("n/a (past table of 12x)", &st, &lim) != 0 &&
              result_status_parse("fine", &st, &lim) != 0 && result_status_parse("n/a (past table of -1)", &st, &lim) == 0 &&
              lim == -1,
          "every status writes and parses back; near misses refused");
}

/* a file written before ci_lo, ci_hi (15 columns), and a row shorter than the header */
static void old_files(void) {
    const char *old = "kind,scheme,seed,rule,train_len,length,protocol,loss,status,bucket,pos_lo,pos_hi,n,accepted,computable\n"
                      "length,rope,1,none,16,32,nonoverlap,3.500000,ok,,,,1000,-1,-1\n";
    FILE *f = fmemopen((void *)old, strlen(old), "r");
    ResultReader rd;
    ResultRow r;
    int rc = results_reader_open(&rd, f, "old.csv") == 0 ? results_reader_next(&rd, &r) : -1;
    CHECK(rc == 1 && r.value == 3.5 && r.length == 32 && isnan(r.ci_lo) && isnan(r.ci_hi),
          "a 15-column compare CSV reads, without an interval (%d: %s)", rc, pelab_errmsg);
    CHECK(results_reader_next(&rd, &r) == 0, "... and ends");
    results_reader_close(&rd);
    fclose(f);
    Mem m;
    mem_open(&m);
    results_csv_header(m.f, &RES_COMPARE_CSV);
    mem_close(&m);
    CHECK(m.n == strlen(CMP_CSV_COLUMNS) + 1 && strncmp(m.s, CMP_CSV_COLUMNS, m.n - 1) == 0,
          "the layout's header is CMP_CSV_COLUMNS: %s", m.s);
    free(m.s);
}

/* text as a CSV file named bad.csv: the reader's result over all rows, its message in msg */
static int read_text(const char *text, char *msg, size_t cap) {
    FILE *f = fmemopen((void *)text, strlen(text) ? strlen(text) : 1, "r");
    if (!strlen(text)) fgetc(f); /* an empty stream */
    ResultReader rd;
    ResultRow r;
    int rc = results_reader_open(&rd, f, "bad.csv");
    while (rc == 0 && (rc = results_reader_next(&rd, &r)) == 1) rc = 0;
    results_reader_close(&rd);
    fclose(f);
    snprintf(msg, cap, "%s", rc < 0 ? pelab_errmsg : "");
    return rc;
}

static void bad_input(void) {
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"", "bad.csv: empty"},
        {"x,y,z\n1,2,3\n", "bad.csv:1: the header names no results column"},
        {"kind,length,loss\nlength,32,3.5\nlength,abc,3.5\n", "bad.csv:3: column length: expected an integer, got 'abc'"},
        {"kind,length,loss\nlength,32,3.5x\n", "bad.csv:2: column loss: expected a number, got '3.5x'"},
        {"kind,status\nlength,fine\n", "bad.csv:2: column status: expected a status"},
        {"kind,length\nlength,32,7\n", "bad.csv:2: more fields than the header's 2 columns"},
        {"kind,scheme\nlength,\"rope\n", "bad.csv:2: column 2: a quote that does not close"},
        {"kind,scheme\nlength,\"rope\"x\n", "bad.csv:2: column 2: text after a closing quote"},
        {"kind,scheme\nlength,\"a\nb\"\nlength,x,y\n", "bad.csv:4: more fields"},
        {"kind,length\nlength,99999999999999999999\n", "bad.csv:2: column length: expected an integer"},
    };
    char msg[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = read_text(cases[i].text, msg, sizeof msg);
        CHECK(rc < 0 && strstr(msg, cases[i].needle) && !strchr(msg, '\n'), "bad CSV %zu refused in one line with '%s': %s",
              i, cases[i].needle, msg);
    }
    static const char nul[] = "kind,length\nlen\0gth,3\n";
    FILE *f = fmemopen((void *)nul, sizeof nul - 1, "r");
    ResultReader rd;
    ResultRow r;
    int rc = results_reader_open(&rd, f, "nul.csv") == 0 ? results_reader_next(&rd, &r) : 1;
    results_reader_close(&rd);
    fclose(f);
    CHECK(rc < 0 && strstr(pelab_errmsg, "nul.csv:2: a NUL byte"), "a NUL byte refused: %s", pelab_errmsg);

    static const struct {
        const char *text, *needle;
    } json[] = {
        {"[1]", "bad.json: expected an object with an array \"rows\""},
        {"{\"rows\": [1]}", "bad.json: rows[0]: expected an object, got number"},
        {"{\"rows\": [{\"length\": 1.5}]}", "bad.json: rows[0].length: expected an integer or null"},
        {"{\"rows\": [{}, {\"nll\": \"x\"}]}", "bad.json: rows[1].nll: expected a number or null"},
        {"{\"rows\": [{\"status\": \"fine\"}]}", "bad.json: rows[0].status: expected a status string"},
        {"{\"rows\": [{\"exact_ci95\": [1]}]}", "bad.json: rows[0].exact_ci95: expected [low, high]"},
        {"{\"rows\": [{\"kind\": 3}]}", "bad.json: rows[0].kind: expected a string or null"},
        {"{\"rows\": [", "bad.json: byte"},
    };
    for (size_t i = 0; i < sizeof json / sizeof json[0]; i++) {
        ResultJson rj;
        rc = results_json_read(json[i].text, strlen(json[i].text), "bad.json", "rows", &rj);
        CHECK(rc < 0 && strstr(pelab_errmsg, json[i].needle) && !strchr(pelab_errmsg, '\n'),
              "bad JSON %zu refused with '%s': %s", i, json[i].needle, pelab_errmsg);
    }
}

/* the one aggregation against hand-computed values, and the report's cells built on it */
static void aggregation(void) {
    double x[] = {4, 1, 3, 2};
    StatSummary s = stats_summary(x, 4);
    CHECK(s.n == 4 && s.mean == 2.5 && fabs(s.sd - sqrt(5.0 / 3)) < 1e-15, "summary of 1..4: mean 2.5, sd %.15g", s.sd);
    CHECK(stats_median(x, 4) == 2.5 && stats_median(x, 3) == 2 && isnan(stats_median(x, 0)), "median of 1..4 and 1..3");
    StatSummary one = stats_summary(x, 1);
    CHECK(one.mean == 1 && one.sd == 0 && isnan(stats_summary(x, 0).mean), "one value: sd 0; none: NaN");

    /* compare --collect on constructed runs: the jump over 3 seeds, 0.5 0.7 0.9 = 0.7000 ± 0.2000;
     * the key-token loss over 2 (the third has none), 2 and 2.5 = 2.2500 ± 0.3536; the key share
     * 0.1 and 0.4 = 0.2500 ± 0.2121 */
    char dir[600], path[700], cmd[1600];
    static char out[1 << 16];
    snprintf(dir, sizeof dir, "%s/results_agg", test_tmpdir());
    snprintf(path, sizeof path, "%s/runs", dir);
    mkdir(dir, 0755), mkdir(path, 0755);
    const double jump[3] = {0.5, 0.7, 0.9}, share[3] = {0.1, 0.4, NAN};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/runs/rope_s%d.csv", dir, k + 1);
        FILE *f = fopen(path, "w");
        if (!f) continue;
        char seed[8];
        snprintf(seed, sizeof seed, "%d", k + 1);
        ResultRow r = result_row();
        r.scheme = "rope", r.seed = seed, r.rule = "none", r.train_len = 16, r.accepted = r.computable = -1;
        results_csv_header(f, &RES_COMPARE_CSV);
        ResultRow w = r;
        w.kind = "length", w.length = 16, w.protocol = "nonoverlap", w.value = 3, w.n = 100;
        results_csv_row(f, &RES_COMPARE_CSV, &w);
        w = r, w.kind = "jump", w.length = 32, w.protocol = "nonoverlap", w.value = jump[k], w.n = 100;
        results_csv_row(f, &RES_COMPARE_CSV, &w);
        w = r, w.kind = "keyppl", w.length = 16, w.protocol = "key", w.value = k < 2 ? 2 + 0.5 * k : NAN, w.n = 10;
        w.status = k < 2 ? RES_OK : RES_NO_KEY_TOKENS;
        results_csv_row(f, &RES_COMPARE_CSV, &w);
        w = r, w.kind = "keyppl", w.length = 16, w.protocol = "share", w.value = share[k], w.n = 10;
        results_csv_row(f, &RES_COMPARE_CSV, &w);
        /* long generation under two rules: the held-out text's own rate is written with each rule's rows
         * but is one figure per seed (0.2, 0.3, 0.4: 0.3000 ± 0.1000) */
        const char *rules[2] = {"none", "pi:2"};
        for (int q = 0; q < 2; q++) {
            w = r, w.rule = rules[q], w.kind = "gen", w.length = 64, w.protocol = "rep4", w.value = 0.5, w.bucket = 0;
            w.pos_lo = 0, w.pos_hi = 31, w.n = 20;
            results_csv_row(f, &RES_COMPARE_CSV, &w);
            w.protocol = "rep4_data", w.value = 0.2 + 0.1 * k;
            results_csv_row(f, &RES_COMPARE_CSV, &w);
        }
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "PELAB_NO_GNUPLOT=1 ./pelab compare --schemes rope --seeds 3 --seq-len 16 --mult 1 "
                              "--rules none --keyppl-tokens 100 --out %s --collect", dir);
    int rc = run_pelab(cmd, out, sizeof out);
    snprintf(path, sizeof path, "%s/report.md", dir);
    FILE *f = fopen(path, "r");
    static char rep[1 << 16];
    size_t n = f ? fread(rep, 1, sizeof rep - 1, f) : 0;
    rep[n] = 0;
    if (f) fclose(f);
    CHECK(rc == 0 && strstr(rep, "| rope | none | 0.7000 ± 0.2000 |") && strstr(rep, "| rope | none | 2.2500 ± 0.3536 | 0.2500 ± 0.2121 |"),
          "report: the jump and the key share as mean ± sample std over seeds (exit %d): %s", rc, rc ? out : rep);
    CHECK(strstr(rep, "| *held-out text* | (reference) | 0.3000 ± 0.1000 |") != NULL,
          "report: the held-out text's rate once per seed, not once per rule: %s", rep);

    /* a run's CSV with a bad row: the report stops with one line naming the file, line and column */
    snprintf(path, sizeof path, "%s/runs/rope_s2.csv", dir);
    if ((f = fopen(path, "a"))) fputs("length,rope,2,none,16,sixteen,nonoverlap,3,ok,,,,1,-1,-1,,\n", f), fclose(f);
    rc = run_pelab(cmd, out, sizeof out);
    CHECK(rc == 1 && count_lines(out) == 1 && strstr(out, "rope_s2.csv:10: column length: expected an integer, got 'sixteen'"),
          "a bad row in a run's CSV: one line naming file, line and column (exit %d): %s", rc, out);
}

/* a verdicts.csv pair (labels always quoted) and a loss curve's rows, with an empty train loss */
static int verdict_rows(ResultRow *r) {
    r[0] = result_row();
    r[0].protocol = "nonoverlap", r[0].length = 256, r[0].scheme = "rope+pi:4", r[0].scheme_b = "alibi, slopes=2";
    r[0].test = "welch", r[0].n = 5, r[0].n_b = 4, r[0].value = 3.25, r[0].value2 = 2.5, r[0].diff = 0.75;
    r[0].ci_lo = 0.125, r[0].ci_hi = 1.375, r[0].p = 0.0125, r[0].p_holm = 0.0375, r[0].rank = 2, r[0].rank_b = 1;
    r[1] = r[0], r[1].test = "paired-t", r[1].p = 1e-7, r[1].scheme_b = "rope";
    return 2;
}

static int curve_rows(ResultRow *r) {
    r[0] = result_row();
    r[0].step = 0, r[0].tokens = 0, r[0].lr = 3e-4, r[0].value2 = 5.545177;
    r[1] = result_row();
    r[1].step = 50, r[1].tokens = 25600, r[1].lr = 0.000287, r[1].value = 3.123456;
    return 2;
}

/* score --per-token's rows (by window, by line) and probe --sinks' rows */
static int token_rows(ResultRow *r) {
    for (int i = 0; i < 3; i++) {
        r[i] = result_row();
        r[i].window_index = i / 2, r[i].line = 7 + i, r[i].token_pos = i + 1, r[i].token = 40 + i;
        r[i].value = -0.25 * (i + 1) - 1e-6;
    }
    return 3;
}

static int sinks_rows(ResultRow *r) {
    for (int l = 0; l < 2; l++) {
        r[l] = result_row();
        r[l].layer = l, r[l].value = 0.0625 * (l + 1), r[l].value2 = 0.5 + l * 0.25, r[l].ratio = 1.25 + l;
    }
    return 2;
}

static void pair_and_curve_files(void) {
    Mem m;
    ResultRow rows[2];
    verdict_rows(rows);
    mem_open(&m);
    results_csv_header(m.f, &RES_VERDICT_CSV);
    results_csv_row(m.f, &RES_VERDICT_CSV, &rows[0]);
    mem_close(&m);
    CHECK(strcmp(m.s, "metric,length,a,b,test,n_a,n_b,mean_a,mean_b,diff,ci_lo,ci_hi,p,p_holm,rank_a,rank_b\n"
                      "nonoverlap,256,\"rope+pi:4\",\"alibi, slopes=2\",welch,5,4,3.25,2.5,0.75,0.125,1.375,0.0125,0.0375,2,1\n") == 0,
          "a verdict pair as verdicts.csv writes it: %s", m.s);
    free(m.s);
    mem_open(&m);
    results_csv_header(m.f, &RES_CURVE_CSV);
    mem_close(&m);
    CHECK(m.n == strlen(CURVE_CSV_COLUMNS) + 1 && strncmp(m.s, CURVE_CSV_COLUMNS, m.n - 1) == 0,
          "the curve layout's header is CURVE_CSV_COLUMNS: %s", m.s);
    free(m.s);
}

void test_results(void) {
    ResultRow rows[16];
    int n = compare_rows(rows);
    csv_round_trip("compare", &RES_COMPARE_CSV, rows, n);
    n = eval_rows(rows);
    csv_round_trip("eval", &RES_EVAL_CSV, rows, n);
    json_round_trip("eval", &RES_EVAL_JSON, "rows", rows, n);
    n = task_rows(rows);
    csv_round_trip("task", &RES_TASK_CSV, rows, n);
    json_round_trip("task", &RES_TASK_JSON, "cells", rows, n);
    n = passkey_rows(rows);
    csv_round_trip("passkey", &RES_PASSKEY_CSV, rows, n);
    n = verdict_rows(rows);
    csv_round_trip("verdict", &RES_VERDICT_CSV, rows, n);
    n = curve_rows(rows);
    csv_round_trip("curve", &RES_CURVE_CSV, rows, n);
    n = token_rows(rows);
    csv_round_trip("tokens", &RES_TOKEN_CSV, rows, n);
    csv_round_trip("line_tokens", &RES_LINE_TOKEN_CSV, rows, n);
    n = sinks_rows(rows);
    csv_round_trip("sinks", &RES_SINKS_CSV, rows, n);
    pair_and_curve_files();
    typed_fields();
    old_files();
    bad_input();
    aggregation();
}
