/* results.h: one results row, typed, with one writer and one reader for CSV and JSON. Every
 * results file pelab writes (eval --csv/--json, task eval --csv/--json, compare's runs/NAME.csv)
 * is a layout (a list of columns naming row fields) over rows of this one struct; the reader maps
 * a file's header (or a JSON object's keys) back onto the same fields, so a column added later is
 * read by name and files written before it (compare's 15 columns without ci_lo, ci_hi) still read.
 * Empty cells: NULL strings, RES_NONE integers, NaN reals (CSV: nothing; JSON: null). */
#ifndef PELAB_RESULTS_H
#define PELAB_RESULTS_H

#include <limits.h>
#include <stdio.h>

/* why a figure was not computed, or RES_OK; limit says where for the RES_PAST_* ones */
typedef enum {
    RES_OK,               /* "ok" */
    RES_NA,               /* "n/a" */
    RES_PAST_TABLE,       /* "n/a (past table of LIMIT)": a learned table ends there */
    RES_PAST_COMPUTABLE,  /* "n/a (past computable LIMIT)": the scheme cannot compute further */
    RES_PAST_RAND_POS,    /* "n/a (longer than rand_pos LIMIT)": randomized positions are drawn below it */
    RES_PAST_THE_TABLE,   /* "n/a (past the table)" */
    RES_NO_KEY_TOKENS,    /* "n/a (no key tokens)" */
    RES_REFUSED_LENGTH,   /* "n/a (refused length)" */
    RES_N_STATUS
} ResStatus;

#define RES_NONE LLONG_MIN /* an empty integer cell */

typedef struct {
    const char *kind;     /* length, bucket, passkey, task, gate, gen, jump, keyppl */
    const char *model, *data, *task; /* eval: checkpoint and data file; task eval: the task spec */
    const char *scheme, *rule;
    const char *seed;     /* as labelled: a number, or the checkpoint's text ("" when it has none) */
    const char *protocol; /* the metric: nonoverlap, sliding, passkey, exact, bytes, rep4, key, ... */
    long long tokens, train_len, length, stride, windows;
    long long bucket, pos_lo, pos_hi; /* a position bucket; pos_hi alone: the positions a task length reached */
    long long n;          /* what the value averages over: tokens, examples, n-grams, trials */
    long long accepted, computable; /* the scheme's limits (-1: none) */
    long long exact, answer_bytes, correct_bytes; /* task eval: the counts behind its two accuracies */
    double depth;         /* task eval: the key's depth */
    int past_train_len;   /* task eval: pos_hi > train_len (1, 0; -1: empty) */
    double value;         /* the figure: a loss, an accuracy, a rate */
    int digits;           /* value's digits after the point (0: the column's) */
    double ppl;           /* eval: exp(value) where value is a loss */
    double ci_lo, ci_hi;  /* its 95% interval */
    double value2, ci2_lo, ci2_hi; /* task eval: byte accuracy beside exact match (value) */
    double recall, recall_ci_lo, recall_ci_hi; /* task eval of a listed task: RULER's score and its interval */
    long long recall_all;          /* ... and the examples with every reference recalled */
    /* a verdict pair (scheme against scheme_b): value, value2 their means over n, n_b seeds;
     * diff = value - value2 with its interval in ci_lo, ci_hi; p raw and Holm-adjusted; ranks */
    const char *scheme_b, *test;
    long long n_b, rank, rank_b;
    double diff, p, p_holm;
    /* a loss-curve row: step, tokens, lr; value the mean training loss, value2 the validation loss */
    long long step;
    double lr;
    /* a scored token (score --per-token): its window or line, position in it, id; value its log-prob.
     * A layer's row (probe --sinks): layer; value, value2 and ratio its figures */
    long long window_index, line, token_pos, token, layer;
    double ratio;
    ResStatus status;
    long limit;           /* the RES_PAST_* limit */
} ResultRow;

/* a row with every cell empty and status ok */
ResultRow result_row(void);
/* the status as written ("n/a (past table of 64)") */
void result_status_str(ResStatus s, long limit, char *buf, size_t n);
/* the text back into s and limit; -1 (no message) when it is none of them */
int result_status_parse(const char *text, ResStatus *s, long *limit);

/* the fields a column can hold */
typedef enum {
    RF_KIND, RF_MODEL, RF_DATA, RF_TASK, RF_SCHEME, RF_RULE, RF_SEED, RF_PROTOCOL,
    RF_TOKENS, RF_TRAIN_LEN, RF_LENGTH, RF_STRIDE, RF_WINDOWS, RF_BUCKET, RF_POS_LO, RF_POS_HI, RF_N,
    RF_ACCEPTED, RF_COMPUTABLE, RF_EXACT, RF_ANSWER_BYTES, RF_CORRECT_BYTES,
    RF_DEPTH, RF_VALUE, RF_PPL, RF_CI_LO, RF_CI_HI, RF_VALUE2, RF_CI2_LO, RF_CI2_HI,
    RF_STATUS,
    RF_SCHEME_B, RF_TEST, RF_N_B, RF_RANK, RF_RANK_B, RF_DIFF, RF_P, RF_P_HOLM, RF_STEP, RF_LR,
    RF_WINDOW_INDEX, RF_LINE, RF_TOKEN_POS, RF_TOKEN, RF_LAYER, RF_RATIO,
    RF_RECALL, RF_RECALL_CI_LO, RF_RECALL_CI_HI, RF_RECALL_ALL,
    RF_CI, RF_CI2, RF_RECALL_CI, /* JSON: [ci_lo, ci_hi], [ci2_lo, ci2_hi], [recall_ci_lo, recall_ci_hi] */
    RF_PAST_L,      /* past_train_len: true or false */
    RF_N_FIELDS
} ResField;

enum {
    RC_G = 1,             /* a real in %g with `digits` significant digits (else %f) */
    RC_IF_BUCKET = 2,     /* JSON: only in rows with a bucket */
    RC_UNLESS_BUCKET = 4, /* JSON: only in rows without one */
    RC_QUOTE = 8,         /* CSV: a text always in quotes (labels that may hold commas) */
};

typedef struct {
    const char *name;     /* CSV header, JSON key */
    ResField field;
    int digits;           /* reals: digits after the point (RC_G: significant) */
    int flags;
} ResColumn;

typedef struct {
    const ResColumn *col;
    int n;
} ResLayout;

/* the files pelab writes */
extern const ResLayout RES_EVAL_CSV, RES_EVAL_JSON;   /* pelab eval --csv, --json "rows" */
extern const ResLayout RES_TASK_CSV, RES_TASK_JSON;   /* pelab task eval --csv, --json "cells" */
extern const ResLayout RES_COMPARE_CSV;               /* compare's DIR/runs/NAME.csv */
extern const ResLayout RES_PASSKEY_CSV;               /* pelab passkey --csv: a (length, depth) cell per row */
extern const ResLayout RES_VERDICT_CSV;               /* compare's DIR/verdicts.csv: a pair of series per row */
extern const ResLayout RES_CURVE_CSV;                 /* a training run's NAME.curve.csv (train/curve.h) */
extern const ResLayout RES_TOKEN_CSV, RES_LINE_TOKEN_CSV; /* score --per-token: by window, by line (--lines) */
extern const ResLayout RES_SINKS_CSV;                 /* probe --sinks: a layer's first-token attention */

/* the header line; one row as a CSV line */
void results_csv_header(FILE *f, const ResLayout *l);
/* one CSV text cell, quoted when it needs it, then end (',' or '\n'): for files that are not results
 * rows (the suite's claims.csv) */
void results_csv_field(FILE *f, const char *s, char end);
void results_csv_row(FILE *f, const ResLayout *l, const ResultRow *r);
/* one row as a JSON object in an array: ",\n    {...}" (first: without the comma) */
void results_json_row(FILE *f, const ResLayout *l, const ResultRow *r, int *first);
/* sep, then "key": "s" with s escaped as a JSON string (the files' other members) */
void json_field(FILE *f, const char *sep, const char *key, const char *s);

/* Reading a CSV results file, row by row; the row's strings point into the reader and live until
 * the next call. Columns are found by name (any of the layouts'); unknown columns are skipped. */
typedef struct {
    FILE *f;
    const char *name;     /* the file, for messages */
    long line;            /* lines read so far (messages name the line a row begins on) */
    int n_cols;
    const ResColumn *col[64]; /* per column: what it holds, or NULL (unknown: skipped) */
    char *buf;            /* the record being read */
    size_t cap;
    char *cells[64];
} ResultReader;

/* reads the header line of f (named name in messages); -1 with one message when it is missing or
 * names no known column */
int results_reader_open(ResultReader *rd, FILE *f, const char *name);
/* the next row: 1, 0 at the end, -1 with "NAME:LINE: column COL: expected ..., got ..." */
int results_reader_next(ResultReader *rd, ResultRow *r);
void results_reader_close(ResultReader *rd);

/* Reading a JSON results file: the array `key` ("rows", "cells") of its top-level object, each
 * element one row by its keys. rows: [*n] (free), their strings owned by the returned document
 * (free with results_json_free). -1 with "NAME: rows[I].KEY: expected ..." */
typedef struct {
    ResultRow *rows;
    int n;
    void *doc;
} ResultJson;
int results_json_read(const char *buf, size_t len, const char *name, const char *key, ResultJson *out);
void results_json_free(ResultJson *rj);

#endif
