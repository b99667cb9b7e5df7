/* claims.c: the claims file of the standard suite (claims.h). */
#include "claims.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"

/* the eight fields every line has, then the optional LOOKS */
enum { CLAIM_FIELDS = 8, FIELD_LOOKS = 8, CLAIM_FIELDS_MAX = 9 };
static const char *field_names[CLAIM_FIELDS_MAX] = {"id", "paper", "statement", "protocol", "at", "series", "relation",
                                                    "why-untestable", "looks"};
#define FIELDS_SAID "id | paper | statement | protocol | at | series | relation | why-untestable [| looks]"

/* a field's text without the spaces around it, into out[n]; -1 when it does not fit */
static int trimmed(const char *s, size_t len, char *out, size_t n) {
    while (len && (*s == ' ' || *s == '\t')) s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r')) len--;
    if (len >= n) return -1;
    memcpy(out, s, len);
    out[len] = 0;
    return 0;
}

static int only_chars(const char *s, const char *allowed) { return *s && strspn(s, allowed) == strlen(s); }

/* a finite number filling s entirely */
static int number(const char *s, double *v) {
    char *end;
    if (!*s || strchr(" \t", *s)) return -1;
    *v = strtod(s, &end);
    return *end == 0 && isfinite(*v) ? 0 : -1;
}

#define BAD(field, ...) (pelab_fail("%s:%d: %s: ", name, line, field_names[field]), \
                         bad_tail(__VA_ARGS__))
static int bad_tail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_tail(const char *fmt, ...) {
    size_t used = strlen(pelab_errmsg);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pelab_errmsg + used, sizeof pelab_errmsg - used, fmt, ap);
    va_end(ap);
    return -1;
}

/* the relations that name another series, and their words */
static const struct {
    const char *word;
    int relation;
} pair_relations[] = {{"better", CLAIM_BETTER}, {"learns", CLAIM_LEARNS}, {"keygap", CLAIM_KEYGAP}};
enum { N_PAIR_RELATIONS = sizeof pair_relations / sizeof pair_relations[0] };
#define RELATIONS "better:SERIES, learns:SCHEME, keygap:SERIES, flat:TOL or degrades:TOL"

/* the index in pair_relations of word, or -1 */
static int pair_relation(const char *word) {
    for (int i = 0; i < N_PAIR_RELATIONS; i++)
        if (strcmp(word, pair_relations[i].word) == 0) return i;
    return -1;
}

/* LOOKS (not empty) into c; -1 with the message */
static int parse_looks(const char *text, const char *name, int line, Claim *c) {
    if (c->untestable[0]) return BAD(FIELD_LOOKS, "'%s': a claim that cannot be tested (why-untestable) takes no looks", text);
    int n = claim_looks_parse(text, c->looks, CLAIM_MAX_LOOKS);
    if (n < 0) return pelab_fail("%s:%d: %s: %s", name, line, field_names[FIELD_LOOKS], pelab_errmsg);
    c->n_looks = n;
    return 0;
}

/* one line's fields into c; -1 with the message */
static int parse_line(const char *s, size_t len, const char *name, int line, Claim *c) {
    static const char *series_chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:+=,@*()-";
    char f[CLAIM_FIELDS_MAX][256];
    size_t sizes[CLAIM_FIELDS_MAX] = {sizeof c->id, sizeof c->paper, sizeof c->statement, sizeof c->protocol, 32,
                                      sizeof c->a, sizeof c->b + 16, sizeof c->untestable, 64};
    int n = 0;
    const char *start = s, *end = s + len;
    for (const char *p = s;; p++) {
        if (p < end && *p != '|') continue;
        if (n == CLAIM_FIELDS_MAX)
            return pelab_fail("%s:%d: expected %d or %d fields separated by '|' (" FIELDS_SAID "), got more", name,
                              line, CLAIM_FIELDS, CLAIM_FIELDS_MAX);
        if (trimmed(start, (size_t)(p - start), f[n], sizes[n]) != 0)
            return BAD(n, "longer than %zu bytes", sizes[n] - 1);
        n++;
        if (p == end) break;
        start = p + 1;
    }
    if (n < CLAIM_FIELDS)
        return pelab_fail("%s:%d: expected %d or %d fields separated by '|' (" FIELDS_SAID "), got %d", name, line,
                          CLAIM_FIELDS, CLAIM_FIELDS_MAX, n);
    memset(c, 0, sizeof *c);
    c->line = line;
    if (!only_chars(f[0], "abcdefghijklmnopqrstuvwxyz0123456789-")) return BAD(0, "'%s': expected [a-z0-9-]+", f[0]);
    if (!f[1][0]) return BAD(1, "empty: expected who claimed it");
    if (!f[2][0]) return BAD(2, "empty: expected the claim in words");
    memcpy(c->id, f[0], strlen(f[0]) + 1), memcpy(c->paper, f[1], strlen(f[1]) + 1);
    memcpy(c->statement, f[2], strlen(f[2]) + 1), memcpy(c->untestable, f[7], strlen(f[7]) + 1);
    if (n > FIELD_LOOKS && f[FIELD_LOOKS][0] && parse_looks(f[FIELD_LOOKS], name, line, c) != 0) return -1;
    if (c->untestable[0] && strcmp(f[3], "-") == 0 && strcmp(f[4], "-") == 0 && strcmp(f[5], "-") == 0 &&
        strcmp(f[6], "-") == 0)
        return 0; /* nothing to test: the reason says why */
    if (!only_chars(f[3], "abcdefghijklmnopqrstuvwxyz0123456789_-") || !strchr("abcdefghijklmnopqrstuvwxyz", f[3][0]))
        return BAD(3, "'%s': expected a protocol name (or every test field \"-\" with a reason in why-untestable)", f[3]);
    memcpy(c->protocol, f[3], strlen(f[3]) + 1);
    size_t at_len = strlen(f[4]);
    c->at_is_mult = at_len > 1 && f[4][at_len - 1] == 'L';
    if (c->at_is_mult) f[4][at_len - 1] = 0;
    if (number(f[4], &c->at) != 0 || !(c->at > 0) || c->at > 1e6 || (!c->at_is_mult && c->at != floor(c->at)))
        return BAD(4, "'%s%s': expected a multiple of L (\"4L\") or a task length (\"12\")", f[4], c->at_is_mult ? "L" : "");
    if (!only_chars(f[5], series_chars)) return BAD(5, "'%s': expected a scheme or SCHEME+RULE", f[5]);
    memcpy(c->a, f[5], strlen(f[5]) + 1);
    char *colon = strchr(f[6], ':');
    if (!colon) return BAD(6, "'%s': expected " RELATIONS, f[6]);
    *colon = 0;
    const char *arg = colon + 1;
    int pair = pair_relation(f[6]);
    if (pair >= 0) {
        if (!only_chars(arg, series_chars) || strlen(arg) >= sizeof c->b) return BAD(6, "%s:'%s': expected a series", f[6], arg);
        if (strcmp(arg, c->a) == 0) return BAD(6, "%s:%s: a series against itself", f[6], arg);
        c->relation = pair_relations[pair].relation;
        memcpy(c->b, arg, strlen(arg) + 1);
    } else if (strcmp(f[6], "flat") == 0 || strcmp(f[6], "degrades") == 0) {
        c->relation = f[6][0] == 'f' ? CLAIM_FLAT : CLAIM_DEGRADES;
        if (number(arg, &c->tol) != 0 || !(c->tol >= 0) || c->tol > 1e6)
            return BAD(6, "%s:'%s': expected a tolerance >= 0", f[6], arg);
    } else {
        return BAD(6, "'%s': expected " RELATIONS, f[6]);
    }
    return 0;
}

int claims_parse(const char *text, size_t n, const char *name, ClaimList *out) {
    out->n = 0, out->c = NULL;
    int line = 0, cap = 0;
    for (size_t i = 0; i < n;) {
        const char *s = text + i, *nl = memchr(s, '\n', n - i);
        size_t len = nl ? (size_t)(nl - s) : n - i;
        i += len + 1, line++;
        size_t lead = 0;
        while (lead < len && (s[lead] == ' ' || s[lead] == '\t' || s[lead] == '\r')) lead++;
        if (lead == len || s[lead] == '#') continue;
        if (memchr(s, 0, len)) {
            claims_free(out);
            return pelab_fail("%s:%d: a NUL byte: expected text", name, line);
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 16;
            Claim *g = realloc(out->c, (size_t)cap * sizeof *g);
            if (!g) {
                claims_free(out);
                return pelab_fail("%s: out of memory", name);
            }
            out->c = g;
        }
        Claim *c = &out->c[out->n];
        if (parse_line(s, len, name, line, c) != 0) {
            claims_free(out);
            return -1;
        }
        for (int j = 0; j < out->n; j++)
            if (strcmp(out->c[j].id, c->id) == 0) {
                char id[sizeof c->id];
                int first = out->c[j].line;
                memcpy(id, c->id, sizeof id); /* c is freed below */
                claims_free(out);
                return pelab_fail("%s:%d: id: '%s' is given twice (first on line %d)", name, line, id, first);
            }
        out->n++;
    }
    if (out->n == 0) return pelab_fail("%s: no claims (expected lines id | paper | statement | ...)", name);
    return 0;
}

int claims_load(const char *path, ClaimList *out) {
    unsigned char *buf;
    size_t len;
    out->n = 0, out->c = NULL;
    if (read_file_max(path, FILE_MAX_CONFIG, "a claims file", &buf, &len) != 0) return -1;
    int rc = claims_parse((const char *)buf, len, path, out);
    free(buf);
    return rc;
}

void claims_free(ClaimList *l) {
    free(l->c);
    l->c = NULL, l->n = 0;
}

void claim_relation_str(const Claim *c, char *buf, size_t n) {
    for (int i = 0; i < N_PAIR_RELATIONS; i++)
        if (c->relation == pair_relations[i].relation) {
            snprintf(buf, n, "%s:%s", pair_relations[i].word, c->b);
            return;
        }
    /* flat, degrades: the shortest form that reads back as the same number */
    const char *word = c->relation == CLAIM_FLAT ? "flat" : "degrades";
    char num[40];
    snprintf(num, sizeof num, "%g", c->tol);
    if (strtod(num, NULL) != c->tol) snprintf(num, sizeof num, "%.17g", c->tol);
    snprintf(buf, n, "%s:%s", word, num);
}

int claim_looks_parse(const char *text, int *seeds, int max) {
    int n = 0;
    for (const char *t = text; *t;) {
        char *end = (char *)t;
        long v = *t >= '0' && *t <= '9' ? strtol(t, &end, 10) : 0;
        int last = *end == 0, ok = end > t && (last || (*end == ',' && end[1]));
        if (!ok || n == max || v < 2 || v > CLAIM_MAX_SEEDS || (n && v <= seeds[n - 1])) break;
        seeds[n++] = (int)v;
        if (last) return n;
        t = end + 1;
    }
    return pelab_fail("'%s': expected 1 to %d looks of increasing seeds per series from 2 to %d, such as 5,8,12",
                      text, max, CLAIM_MAX_SEEDS);
}

void claim_looks_str(const int *seeds, int n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; k < n && used < size; k++) used += (size_t)snprintf(buf + used, size - used, "%s%d", k ? "," : "", seeds[k]);
}
