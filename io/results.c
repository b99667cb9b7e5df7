/* results.c: the results row's layouts, writer and reader (results.h). */
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/json.h"

/* ---- the fields: what type each holds and where ---- */

enum { T_STR, T_INT, T_REAL, T_STATUS, T_PAIR, T_BOOL };

#define S_(m) {T_STR, offsetof(ResultRow, m), 0}
#define I_(m) {T_INT, offsetof(ResultRow, m), 0}
#define R_(m) {T_REAL, offsetof(ResultRow, m), 0}
static const struct {
    int type;
    size_t off, off2;
} FIELD[RF_N_FIELDS] = {
    [RF_KIND] = S_(kind), [RF_MODEL] = S_(model), [RF_DATA] = S_(data), [RF_TASK] = S_(task),
    [RF_SCHEME] = S_(scheme), [RF_RULE] = S_(rule), [RF_SEED] = S_(seed), [RF_PROTOCOL] = S_(protocol),
    [RF_TOKENS] = I_(tokens), [RF_TRAIN_LEN] = I_(train_len), [RF_LENGTH] = I_(length), [RF_STRIDE] = I_(stride),
    [RF_WINDOWS] = I_(windows), [RF_BUCKET] = I_(bucket), [RF_POS_LO] = I_(pos_lo), [RF_POS_HI] = I_(pos_hi),
    [RF_N] = I_(n), [RF_ACCEPTED] = I_(accepted), [RF_COMPUTABLE] = I_(computable), [RF_EXACT] = I_(exact),
    [RF_ANSWER_BYTES] = I_(answer_bytes), [RF_CORRECT_BYTES] = I_(correct_bytes),
    [RF_DEPTH] = R_(depth), [RF_VALUE] = R_(value), [RF_PPL] = R_(ppl), [RF_CI_LO] = R_(ci_lo), [RF_CI_HI] = R_(ci_hi),
    [RF_VALUE2] = R_(value2), [RF_CI2_LO] = R_(ci2_lo), [RF_CI2_HI] = R_(ci2_hi),
    [RF_STATUS] = {T_STATUS, offsetof(ResultRow, status), 0},
    [RF_SCHEME_B] = S_(scheme_b), [RF_TEST] = S_(test), [RF_N_B] = I_(n_b), [RF_RANK] = I_(rank),
    [RF_RANK_B] = I_(rank_b), [RF_DIFF] = R_(diff), [RF_P] = R_(p), [RF_P_HOLM] = R_(p_holm), [RF_STEP] = I_(step),
    [RF_LR] = R_(lr), [RF_WINDOW_INDEX] = I_(window_index), [RF_LINE] = I_(line), [RF_TOKEN_POS] = I_(token_pos),
    [RF_TOKEN] = I_(token), [RF_LAYER] = I_(layer), [RF_RATIO] = R_(ratio),
    [RF_RECALL] = R_(recall), [RF_RECALL_CI_LO] = R_(recall_ci_lo), [RF_RECALL_CI_HI] = R_(recall_ci_hi),
    [RF_RECALL_ALL] = I_(recall_all),
    [RF_RECALL_CI] = {T_PAIR, offsetof(ResultRow, recall_ci_lo), offsetof(ResultRow, recall_ci_hi)},
    [RF_CI] = {T_PAIR, offsetof(ResultRow, ci_lo), offsetof(ResultRow, ci_hi)},
    [RF_CI2] = {T_PAIR, offsetof(ResultRow, ci2_lo), offsetof(ResultRow, ci2_hi)},
    [RF_PAST_L] = {T_BOOL, offsetof(ResultRow, past_train_len), 0},
};
#undef S_
#undef I_
#undef R_

#define STR_AT(r, f) (*(const char **)((char *)(r) + FIELD[f].off))
#define INT_AT(r, f) (*(long long *)((char *)(r) + FIELD[f].off))
#define REAL_AT(r, off) (*(double *)((char *)(r) + (off)))

/* ---- the layouts ---- */

static const ResColumn EVAL_CSV[] = {
    {"kind", RF_KIND, 0, 0}, {"model", RF_MODEL, 0, 0}, {"seed", RF_SEED, 0, 0}, {"scheme", RF_SCHEME, 0, 0},
    {"rule", RF_RULE, 0, 0}, {"data", RF_DATA, 0, 0}, {"tokens", RF_TOKENS, 0, 0}, {"train_len", RF_TRAIN_LEN, 0, 0},
    {"length", RF_LENGTH, 0, 0}, {"protocol", RF_PROTOCOL, 0, 0}, {"stride", RF_STRIDE, 0, 0},
    {"bucket", RF_BUCKET, 0, 0}, {"pos_lo", RF_POS_LO, 0, 0}, {"pos_hi", RF_POS_HI, 0, 0},
    {"windows", RF_WINDOWS, 0, 0}, {"n_scored", RF_N, 0, 0}, {"nll", RF_VALUE, 6, 0}, {"ppl", RF_PPL, 6, RC_G},
    {"status", RF_STATUS, 0, 0},
};
static const ResColumn EVAL_JSON[] = {
    {"kind", RF_KIND, 0, 0}, {"model", RF_MODEL, 0, 0}, {"seed", RF_SEED, 0, 0}, {"scheme", RF_SCHEME, 0, 0},
    {"rule", RF_RULE, 0, 0}, {"data", RF_DATA, 0, 0}, {"tokens", RF_TOKENS, 0, 0}, {"train_len", RF_TRAIN_LEN, 0, 0},
    {"length", RF_LENGTH, 0, 0}, {"protocol", RF_PROTOCOL, 0, 0}, {"bucket", RF_BUCKET, 0, RC_IF_BUCKET},
    {"pos_lo", RF_POS_LO, 0, RC_IF_BUCKET}, {"pos_hi", RF_POS_HI, 0, RC_IF_BUCKET},
    {"stride", RF_STRIDE, 0, RC_UNLESS_BUCKET}, {"windows", RF_WINDOWS, 0, RC_UNLESS_BUCKET},
    {"n_scored", RF_N, 0, 0}, {"nll", RF_VALUE, 6, 0}, {"ppl", RF_PPL, 6, RC_G}, {"status", RF_STATUS, 0, 0},
};
static const ResColumn TASK_CSV[] = {
    {"task", RF_TASK, 0, 0}, {"depth", RF_DEPTH, 2, 0}, {"length", RF_LENGTH, 0, 0}, {"positions", RF_POS_HI, 0, 0},
    {"n", RF_N, 0, 0}, {"exact_match", RF_VALUE, 6, 0}, {"byte_accuracy", RF_VALUE2, 6, 0},
    {"exact_ci_lo", RF_CI_LO, 6, 0}, {"exact_ci_hi", RF_CI_HI, 6, 0}, {"bytes_ci_lo", RF_CI2_LO, 6, 0},
    {"bytes_ci_hi", RF_CI2_HI, 6, 0}, {"ruler_score", RF_RECALL, 6, 0}, {"ruler_ci_lo", RF_RECALL_CI_LO, 6, 0},
    {"ruler_ci_hi", RF_RECALL_CI_HI, 6, 0},
};
static const ResColumn TASK_JSON[] = {
    {"depth", RF_DEPTH, 4, 0}, {"length", RF_LENGTH, 0, 0}, {"positions", RF_POS_HI, 0, 0},
    {"past_train_len", RF_PAST_L, 0, 0}, {"n", RF_N, 0, 0}, {"exact", RF_EXACT, 0, 0},
    {"exact_match", RF_VALUE, 6, 0}, {"answer_bytes", RF_ANSWER_BYTES, 0, 0},
    {"correct_bytes", RF_CORRECT_BYTES, 0, 0}, {"byte_accuracy", RF_VALUE2, 6, 0}, {"exact_ci95", RF_CI, 6, 0},
    {"bytes_ci95", RF_CI2, 6, 0}, {"ruler_score", RF_RECALL, 6, 0}, {"all_recalled", RF_RECALL_ALL, 0, 0},
    {"ruler_ci95", RF_RECALL_CI, 6, 0},
};
static const ResColumn COMPARE_CSV[] = {
    {"kind", RF_KIND, 0, 0}, {"scheme", RF_SCHEME, 0, 0}, {"seed", RF_SEED, 0, 0}, {"rule", RF_RULE, 0, 0},
    {"train_len", RF_TRAIN_LEN, 0, 0}, {"length", RF_LENGTH, 0, 0}, {"protocol", RF_PROTOCOL, 0, 0},
    {"loss", RF_VALUE, 6, 0}, {"status", RF_STATUS, 0, 0}, {"bucket", RF_BUCKET, 0, 0}, {"pos_lo", RF_POS_LO, 0, 0},
    {"pos_hi", RF_POS_HI, 0, 0}, {"n", RF_N, 0, 0}, {"accepted", RF_ACCEPTED, 0, 0},
    {"computable", RF_COMPUTABLE, 0, 0}, {"ci_lo", RF_CI_LO, 6, 0}, {"ci_hi", RF_CI_HI, 6, 0},
    {"depth", RF_DEPTH, 2, 0},
};

static const ResColumn PASSKEY_CSV[] = {
    {"model", RF_MODEL, 0, 0}, {"pos", RF_SCHEME, 0, 0}, {"length", RF_LENGTH, 0, 0}, {"depth", RF_DEPTH, 0, 0},
    {"trials", RF_N, 0, 0}, {"exact", RF_EXACT, 0, 0}, {"accuracy", RF_VALUE, 4, 0}, {"mean_rank", RF_VALUE2, 4, 0},
};

static const ResColumn VERDICT_CSV[] = {
    {"metric", RF_PROTOCOL, 0, 0}, {"length", RF_LENGTH, 0, 0}, {"a", RF_SCHEME, 0, RC_QUOTE},
    {"b", RF_SCHEME_B, 0, RC_QUOTE}, {"test", RF_TEST, 0, 0}, {"n_a", RF_N, 0, 0}, {"n_b", RF_N_B, 0, 0},
    {"mean_a", RF_VALUE, 6, RC_G}, {"mean_b", RF_VALUE2, 6, RC_G}, {"diff", RF_DIFF, 6, RC_G},
    {"ci_lo", RF_CI_LO, 6, RC_G}, {"ci_hi", RF_CI_HI, 6, RC_G}, {"p", RF_P, 6, RC_G}, {"p_holm", RF_P_HOLM, 6, RC_G},
    {"rank_a", RF_RANK, 0, 0}, {"rank_b", RF_RANK_B, 0, 0},
};

static const ResColumn CURVE_CSV[] = {
    {"step", RF_STEP, 0, 0}, {"tokens", RF_TOKENS, 0, 0}, {"lr", RF_LR, 6, RC_G},
    {"train_loss", RF_VALUE, 6, 0}, {"val_loss", RF_VALUE2, 6, 0},
};

static const ResColumn TOKEN_CSV[] = {
    {"window", RF_WINDOW_INDEX, 0, 0}, {"position", RF_TOKEN_POS, 0, 0}, {"token", RF_TOKEN, 0, 0},
    {"logprob", RF_VALUE, 6, 0},
};
static const ResColumn LINE_TOKEN_CSV[] = {
    {"line", RF_LINE, 0, 0}, {"position", RF_TOKEN_POS, 0, 0}, {"token", RF_TOKEN, 0, 0}, {"logprob", RF_VALUE, 6, 0},
};

static const ResColumn SINKS_CSV[] = {
    {"layer", RF_LAYER, 0, 0}, {"mean_over_heads", RF_VALUE, 4, 0}, {"largest_head", RF_VALUE2, 4, 0},
    {"mean_over_uniform", RF_RATIO, 2, 0},
};

#define LAYOUT(cols) {cols, sizeof cols / sizeof cols[0]}
const ResLayout RES_EVAL_CSV = LAYOUT(EVAL_CSV), RES_EVAL_JSON = LAYOUT(EVAL_JSON), RES_TASK_CSV = LAYOUT(TASK_CSV),
                RES_TASK_JSON = LAYOUT(TASK_JSON), RES_COMPARE_CSV = LAYOUT(COMPARE_CSV), RES_PASSKEY_CSV = LAYOUT(PASSKEY_CSV),
                RES_VERDICT_CSV = LAYOUT(VERDICT_CSV), RES_CURVE_CSV = LAYOUT(CURVE_CSV),
                RES_TOKEN_CSV = LAYOUT(TOKEN_CSV), RES_LINE_TOKEN_CSV = LAYOUT(LINE_TOKEN_CSV),
                RES_SINKS_CSV = LAYOUT(SINKS_CSV);
static const ResLayout *const LAYOUTS[] = {&RES_COMPARE_CSV, &RES_EVAL_CSV, &RES_EVAL_JSON, &RES_TASK_CSV, &RES_TASK_JSON,
                                           &RES_PASSKEY_CSV, &RES_VERDICT_CSV, &RES_CURVE_CSV,
                                           &RES_TOKEN_CSV, &RES_LINE_TOKEN_CSV, &RES_SINKS_CSV};

/* the column of any layout with this name, or NULL */
static const ResColumn *column_named(const char *name) {
    for (size_t i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++)
        for (int c = 0; c < LAYOUTS[i]->n; c++)
            if (strcmp(LAYOUTS[i]->col[c].name, name) == 0) return &LAYOUTS[i]->col[c];
    return NULL;
}

ResultRow result_row(void) {
    ResultRow r;
    memset(&r, 0, sizeof r);
    long long *ints[] = {&r.tokens, &r.train_len, &r.length, &r.stride, &r.windows, &r.bucket, &r.pos_lo, &r.pos_hi,
                         &r.n, &r.accepted, &r.computable, &r.exact, &r.answer_bytes, &r.correct_bytes,
                         &r.n_b, &r.rank, &r.rank_b, &r.step, &r.window_index, &r.line, &r.token_pos,
                         &r.token, &r.layer, &r.recall_all};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) *ints[i] = RES_NONE;
    r.depth = r.value = r.ppl = r.ci_lo = r.ci_hi = r.value2 = r.ci2_lo = r.ci2_hi = NAN;
    r.diff = r.p = r.p_holm = r.lr = r.ratio = r.recall = r.recall_ci_lo = r.recall_ci_hi = NAN;
    r.status = RES_OK;
    r.past_train_len = -1;
    return r;
}

/* ---- statuses ---- */

static const struct {
    const char *text; /* before the limit, or all of it */
    int has_limit;
} STATUS[RES_N_STATUS] = {
    [RES_OK] = {"ok", 0}, [RES_NA] = {"n/a", 0}, [RES_PAST_TABLE] = {"n/a (past table of ", 1},
    [RES_PAST_COMPUTABLE] = {"n/a (past computable ", 1}, [RES_PAST_RAND_POS] = {"n/a (longer than rand_pos ", 1},
    [RES_PAST_THE_TABLE] = {"n/a (past the table)", 0}, [RES_NO_KEY_TOKENS] = {"n/a (no key tokens)", 0},
    [RES_REFUSED_LENGTH] = {"n/a (refused length)", 0},
};

void result_status_str(ResStatus s, long limit, char *buf, size_t n) {
    if (s < 0 || s >= RES_N_STATUS) s = RES_NA;
    if (STATUS[s].has_limit) snprintf(buf, n, "%s%ld)", STATUS[s].text, limit);
    else snprintf(buf, n, "%s", STATUS[s].text);
}

int result_status_parse(const char *text, ResStatus *s, long *limit) {
    for (int i = 0; i < RES_N_STATUS; i++) {
        size_t k = strlen(STATUS[i].text);
        if (!STATUS[i].has_limit) {
            if (strcmp(text, STATUS[i].text) == 0) return *s = i, *limit = 0, 0;
            continue;
        }
        if (strncmp(text, STATUS[i].text, k) != 0 || !(text[k] == '-' || (text[k] >= '0' && text[k] <= '9'))) continue;
        char *end;
        errno = 0;
        long v = strtol(text + k, &end, 10);
        if (errno || strcmp(end, ")") != 0) return -1;
        *s = i, *limit = v;
        return 0;
    }
    return -1;
}

/* ---- writing ---- */

static void csv_quoted(FILE *f, const char *s) {
    fputc('"', f); /* a quote inside doubled */
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_text(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\n\r")) csv_quoted(f, s);
    else fputs(s, f);
}

static void json_text(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

void json_field(FILE *f, const char *sep, const char *key, const char *s) {
    fprintf(f, "%s\"%s\": ", sep, key);
    json_text(f, s);
}

/* a real as the column writes it (digits: the row's own for value), or the empty cell */
static void real_cell(FILE *f, const ResColumn *c, const ResultRow *r, double v, int json) {
    if (isnan(v)) {
        if (json) fputs("null", f);
        return;
    }
    int digits = c->field == RF_VALUE && !(c->flags & RC_G) && r->digits > 0 ? r->digits : c->digits;
    /* past 1e15 a fixed-point form runs to hundreds of digits, longer than any reader takes as a
     * number (the JSON reader's limit is 64): the shortest exact form instead */
    if (!(c->flags & RC_G) && fabs(v) >= 1e15) fprintf(f, "%.17g", v);
    else fprintf(f, c->flags & RC_G ? "%.*g" : "%.*f", digits, v);
}

static void cell(FILE *f, const ResColumn *c, const ResultRow *r, int json) {
    char status[64];
    switch (FIELD[c->field].type) {
    case T_STR: {
        const char *s = STR_AT(r, c->field);
        if (json) json_text(f, s ? s : "");
        else if (c->flags & RC_QUOTE) csv_quoted(f, s ? s : "");
        else csv_text(f, s ? s : "");
        break;
    }
    case T_INT: {
        long long v = INT_AT(r, c->field);
        if (v != RES_NONE) fprintf(f, "%lld", v);
        else if (json) fputs("null", f);
        break;
    }
    case T_REAL: real_cell(f, c, r, REAL_AT(r, FIELD[c->field].off), json); break;
    case T_STATUS:
        result_status_str(r->status, r->limit, status, sizeof status);
        if (json) json_text(f, status);
        else csv_text(f, status);
        break;
    case T_PAIR:
        fputc('[', f);
        real_cell(f, c, r, REAL_AT(r, FIELD[c->field].off), 1);
        fputs(", ", f);
        real_cell(f, c, r, REAL_AT(r, FIELD[c->field].off2), 1);
        fputc(']', f);
        break;
    case T_BOOL: {
        int v = *(const int *)((const char *)r + FIELD[c->field].off);
        if (v >= 0) fputs(v ? "true" : "false", f);
        else if (json) fputs("null", f);
        break;
    }
    }
}

void results_csv_field(FILE *f, const char *s, char end) {
    csv_text(f, s);
    fputc(end, f);
}

void results_csv_header(FILE *f, const ResLayout *l) {
    for (int i = 0; i < l->n; i++) fprintf(f, "%s%c", l->col[i].name, i + 1 < l->n ? ',' : '\n');
}

void results_csv_row(FILE *f, const ResLayout *l, const ResultRow *r) {
    for (int i = 0; i < l->n; i++) {
        cell(f, &l->col[i], r, 0);
        fputc(i + 1 < l->n ? ',' : '\n', f);
    }
}

void results_json_row(FILE *f, const ResLayout *l, const ResultRow *r, int *first) {
    fprintf(f, "%s\n    {", *first ? "" : ",");
    *first = 0;
    const char *sep = "";
    for (int i = 0; i < l->n; i++) {
        const ResColumn *c = &l->col[i];
        int bucket = r->bucket != RES_NONE;
        if ((c->flags & RC_IF_BUCKET && !bucket) || (c->flags & RC_UNLESS_BUCKET && bucket)) continue;
        fprintf(f, "%s\"%s\": ", sep, c->name);
        cell(f, c, r, 1);
        sep = ", ";
    }
    fputc('}', f);
}

/* ---- reading ---- */

/* the digits after the point of a number as written (0: none, or an exponent form), at most
 * MAX_KEPT_DIGITS: past a double's precision more digits say nothing, and a number written back
 * stays short enough for every reader */
enum { MAX_KEPT_DIGITS = 20 };
static int fraction_digits(const char *s) {
    const char *dot = strchr(s, '.');
    if (!dot || strpbrk(s, "eE")) return 0;
    int n = (int)strspn(dot + 1, "0123456789");
    return n < MAX_KEPT_DIGITS ? n : MAX_KEPT_DIGITS;
}

/* at most 40 bytes of s for a one-line message: control characters as '?' */
static const char *shown(const char *s, char *buf, size_t n) {
    size_t k = 0;
    for (; s[k] && k < 40 && k + 1 < n; k++) buf[k] = (unsigned char)s[k] < 0x20 ? '?' : s[k];
    buf[k] = 0;
    return buf;
}

/* text (NUL-terminated, not empty) into the field of column c; NULL, or what was expected */
static const char *set_cell(ResultRow *r, const ResColumn *c, char *text) {
    char *end;
    switch (FIELD[c->field].type) {
    case T_STR: STR_AT(r, c->field) = text; return NULL;
    case T_INT: {
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || *end || end == text || v == RES_NONE) return "an integer";
        INT_AT(r, c->field) = v;
        return NULL;
    }
    case T_REAL: {
        errno = 0;
        double v = strtod(text, &end);
        if (*end || end == text || (errno == ERANGE && isinf(v))) return "a number";
        REAL_AT(r, FIELD[c->field].off) = v;
        if (c->field == RF_VALUE && !(c->flags & RC_G)) r->digits = fraction_digits(text) == c->digits ? 0 : fraction_digits(text);
        return NULL;
    }
    case T_STATUS:
        if (result_status_parse(text, &r->status, &r->limit) != 0) return "a status (ok, n/a, n/a (past table of N), ...)";
        return NULL;
    case T_BOOL:
        if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0) return "true or false";
        *(int *)((char *)r + FIELD[c->field].off) = text[0] == 't';
        return NULL;
    default: return "a column of JSON files only"; /* [low, high] pairs */
    }
}

int results_reader_open(ResultReader *rd, FILE *f, const char *name) {
    memset(rd, 0, sizeof *rd);
    rd->f = f, rd->name = name;
    ssize_t len = getline(&rd->buf, &rd->cap, f);
    if (len <= 0) return pelab_fail("%s: empty, expected a header line of column names", name);
    rd->line = 1;
    while (len > 0 && (rd->buf[len - 1] == '\n' || rd->buf[len - 1] == '\r')) rd->buf[--len] = 0;
    int known = 0;
    for (char *p = rd->buf, *save = NULL, *tok = strtok_r(p, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (rd->n_cols == 64) return pelab_fail("%s:1: more than 64 columns", name);
        rd->col[rd->n_cols] = column_named(tok);
        known += rd->col[rd->n_cols++] != NULL;
    }
    if (!known) return pelab_fail("%s:1: the header names no results column (such as kind, length, loss)", name);
    return 0;
}

/* one record into rd->buf: a line, and the next ones while a quoted field is open; its length, or -1 at the end */
static ssize_t read_record(ResultReader *rd) {
    size_t used = 0;
    char *line = NULL;
    size_t line_cap = 0;
    int quotes = 0;
    for (;;) {
        ssize_t k = getline(&line, &line_cap, rd->f);
        if (k <= 0) break;
        rd->line++;
        if (used + (size_t)k + 1 > rd->cap) {
            rd->cap = 2 * (used + (size_t)k + 1);
            char *grown = realloc(rd->buf, rd->cap);
            if (!grown) {
                free(line);
                return -1;
            }
            rd->buf = grown;
        }
        memcpy(rd->buf + used, line, (size_t)k);
        used += (size_t)k;
        rd->buf[used] = 0;
        for (ssize_t i = 0; i < k; i++) quotes += line[i] == '"';
        if (quotes % 2 == 0) break;
    }
    free(line);
    return used ? (ssize_t)used : -1;
}

int results_reader_next(ResultReader *rd, ResultRow *r) {
    long first_line = rd->line + 1;
    ssize_t len = read_record(rd);
    if (len < 0) return 0;
    if ((ssize_t)strlen(rd->buf) != len) return pelab_fail("%s:%ld: a NUL byte in the row", rd->name, first_line);
    while (len > 0 && (rd->buf[len - 1] == '\n' || rd->buf[len - 1] == '\r')) rd->buf[--len] = 0;
    *r = result_row();
    int n = 0;
    char *p = rd->buf, *w = rd->buf;
    for (;;) { /* split in place: "" inside quotes is a quote */
        if (n == rd->n_cols)
            return pelab_fail("%s:%ld: more fields than the header's %d columns", rd->name, first_line, rd->n_cols);
        rd->cells[n++] = w;
        if (*p == '"') {
            for (p++;; p++) {
                if (!*p) return pelab_fail("%s:%ld: column %d: a quote that does not close", rd->name, first_line, n);
                if (*p == '"' && p[1] == '"') *w++ = '"', p++;
                else if (*p == '"') break;
                else *w++ = *p;
            }
            p++;
            if (*p && *p != ',')
                return pelab_fail("%s:%ld: column %d: text after a closing quote", rd->name, first_line, n);
        }
        while (*p && *p != ',') *w++ = *p++;
        int more = *p == ',';
        *w++ = 0;
        if (!more) break;
        p++;
    }
    for (int i = 0; i < n; i++) {
        const ResColumn *c = rd->col[i];
        if (!c || (!rd->cells[i][0] && FIELD[c->field].type != T_STR)) continue; /* unknown, or empty */
        const char *want = set_cell(r, c, rd->cells[i]);
        char got[48];
        if (want)
            return pelab_fail("%s:%ld: column %s: expected %s, got '%s'", rd->name, first_line, c->name, want,
                              shown(rd->cells[i], got, sizeof got));
    }
    return 1;
}

void results_reader_close(ResultReader *rd) {
    free(rd->buf);
    rd->buf = NULL;
}

/* one JSON member into the row; NULL, or what was expected */
static const char *set_json(ResultRow *r, const ResColumn *c, const JsonNode *v) {
    int type = FIELD[c->field].type;
    if (v->type == JSON_NULL && type != T_STATUS) return NULL; /* empty */
    switch (type) {
    case T_STR:
        if (v->type != JSON_STRING) return "a string or null";
        STR_AT(r, c->field) = v->str;
        return NULL;
    case T_INT:
        if (v->type != JSON_NUMBER || !v->is_int || v->int_value == RES_NONE) return "an integer or null";
        INT_AT(r, c->field) = v->int_value;
        return NULL;
    case T_REAL:
        if (v->type != JSON_NUMBER) return "a number or null";
        REAL_AT(r, FIELD[c->field].off) = v->number;
        if (c->field == RF_VALUE && !(c->flags & RC_G)) r->digits = fraction_digits(v->str) == c->digits ? 0 : fraction_digits(v->str);
        return NULL;
    case T_STATUS:
        if (v->type != JSON_STRING || result_status_parse(v->str, &r->status, &r->limit) != 0)
            return "a status string (ok, n/a, n/a (past table of N), ...)";
        return NULL;
    case T_PAIR: {
        const JsonNode *a = json_at(v, 0), *b = json_at(v, 1);
        if (v->type != JSON_ARRAY || v->n_children != 2 || !(a->type == JSON_NUMBER || a->type == JSON_NULL) ||
            !(b->type == JSON_NUMBER || b->type == JSON_NULL))
            return "[low, high] (numbers or null)";
        REAL_AT(r, FIELD[c->field].off) = a->type == JSON_NUMBER ? a->number : NAN;
        REAL_AT(r, FIELD[c->field].off2) = b->type == JSON_NUMBER ? b->number : NAN;
        return NULL;
    }
    default:
        if (v->type != JSON_TRUE && v->type != JSON_FALSE) return "true, false or null";
        *(int *)((char *)r + FIELD[c->field].off) = v->type == JSON_TRUE;
        return NULL;
    }
}

int results_json_read(const char *buf, size_t len, const char *name, const char *key, ResultJson *out) {
    memset(out, 0, sizeof *out);
    JsonDoc *doc = calloc(1, sizeof *doc);
    if (!doc) return pelab_fail("%s: out of memory", name);
    if (json_parse(doc, buf, len) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        for (char *q = why; *q; q++) /* one line, whatever the parser quoted */
            if ((unsigned char)*q < 0x20) *q = '?';
        free(doc);
        return pelab_fail("%s: %s", name, why);
    }
    out->doc = doc;
    const JsonNode *arr = json_get(doc->root, key);
    if (!arr || arr->type != JSON_ARRAY) {
        results_json_free(out);
        return pelab_fail("%s: expected an object with an array \"%s\"", name, key);
    }
    out->rows = malloc(sizeof(ResultRow) * (arr->n_children + 1));
    if (!out->rows) {
        results_json_free(out);
        return pelab_fail("%s: out of memory", name);
    }
    for (const JsonNode *e = arr->child; e; e = e->next, out->n++) {
        ResultRow *r = &out->rows[out->n];
        *r = result_row();
        if (e->type != JSON_OBJECT) { /* the message first: it names parts of the document */
            pelab_fail("%s: %s[%d]: expected an object, got %s", name, key, out->n, json_type_name(e->type));
            results_json_free(out);
            return -1;
        }
        for (const JsonNode *m = e->child; m; m = m->next) {
            const ResColumn *c = column_named(m->key);
            const char *want = c ? set_json(r, c, m) : NULL;
            if (want) {
                char shown_key[48];
                pelab_fail("%s: %s[%d].%s: expected %s", name, key, out->n, shown(m->key, shown_key, sizeof shown_key), want);
                results_json_free(out);
                return -1;
            }
        }
    }
    return 0;
}

void results_json_free(ResultJson *rj) {
    if (rj->doc) json_free(rj->doc);
    free(rj->doc), free(rj->rows);
    memset(rj, 0, sizeof *rj);
}
