/* options.c: every scheme's options from its declared table (options.h): defaults, parsing,
 * checking and the canonical spelling. A scheme writes no parsing code. */
#include "options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "rope_scaling.h"

void pos_put(char *buf, size_t n, size_t *used, const char *fmt, ...) {
    if (*used >= n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *used, n - *used, fmt, ap);
    va_end(ap);
    if (k > 0) *used += (size_t)k;
}

void *pos_opt_field(const PosCtx *pc, const PosOption *o) { return (char *)pc->state + o->offset; }

size_t pos_opt_size(const PosOption *o) {
    switch (o->type) {
    case POS_OPT_DOUBLE: return sizeof(double);
    case POS_OPT_RULE: return sizeof(RopeRule);
    default: return sizeof(int);
    }
}

const PosOption *pos_opt_find(const PosScheme *s, const char *name) {
    for (int i = 0; i < s->n_options; i++)
        if (strcmp(s->options[i].name, name) == 0) return &s->options[i];
    return NULL;
}

const PosOption *pos_opt_rule(const PosScheme *s) {
    for (int i = 0; i < s->n_options; i++)
        if (s->options[i].type == POS_OPT_RULE) return &s->options[i];
    return NULL;
}

static int n_words(const PosOption *o) {
    int n = 0;
    while (n < (int)(sizeof o->words / sizeof o->words[0]) && o->words[n]) n++;
    return n;
}

void pos_opt_kind_text(const PosOption *o, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    switch (o->type) {
    case POS_OPT_DOUBLE: pos_put(buf, n, &used, "F"); break;
    case POS_OPT_INT: pos_put(buf, n, &used, "N"); break;
    case POS_OPT_RULE: pos_put(buf, n, &used, "RULE"); break;
    case POS_OPT_WORD:
        for (int w = 0; w < n_words(o); w++) pos_put(buf, n, &used, "%s%s", w ? "|" : "", o->words[w]);
        break;
    }
}

void pos_opt_default_text(const PosOption *o, char *buf, size_t n) {
    switch (o->type) {
    case POS_OPT_DOUBLE: snprintf(buf, n, "%g", o->def); break;
    case POS_OPT_INT:
        if (o->flags & POS_OPT_TRAIN_LEN) snprintf(buf, n, "the training length");
        else snprintf(buf, n, "%.0f", o->def);
        break;
    case POS_OPT_WORD: snprintf(buf, n, "%s", o->words[(int)o->def]); break;
    case POS_OPT_RULE: snprintf(buf, n, "none"); break;
    }
}

void pos_opt_set_default(const PosCtx *pc, const PosOption *o) {
    switch (o->type) {
    case POS_OPT_DOUBLE: *(double *)pos_opt_field(pc, o) = o->def; break;
    case POS_OPT_INT: *(int *)pos_opt_field(pc, o) = o->flags & POS_OPT_TRAIN_LEN ? pc->seq_len : (int)o->def; break;
    case POS_OPT_WORD: *(int *)pos_opt_field(pc, o) = (int)o->def; break;
    case POS_OPT_RULE: rope_rule_parse("none", pos_opt_field(pc, o)); break;
    }
}

int pos_opt_parse(const PosCtx *pc, const PosOption *o, const char *val) {
    const char *scheme = pc->scheme->name;
    char *end;
    errno = 0;
    switch (o->type) {
    case POS_OPT_DOUBLE: {
        double x = strtod(val, &end);
        if (errno || end == val || *end || !(x >= o->lo && x <= o->hi))
            return pelab_fail("--pos %s: option %s=%s: expected a number in [%g, %g]", scheme, o->name, val, o->lo,
                              o->hi);
        *(double *)pos_opt_field(pc, o) = x;
        return 0;
    }
    case POS_OPT_INT: {
        long x = strtol(val, &end, 10);
        if (errno || end == val || *end || x < (long)o->lo || x > (long)o->hi)
            return pelab_fail("--pos %s: option %s=%s: expected an integer in [%ld, %ld]", scheme, o->name, val,
                              (long)o->lo, (long)o->hi);
        *(int *)pos_opt_field(pc, o) = (int)x;
        return 0;
    }
    case POS_OPT_WORD: {
        char expected[128];
        size_t used = 0;
        expected[0] = 0;
        for (int w = 0; w < n_words(o); w++) {
            if (strcmp(val, o->words[w]) == 0) {
                *(int *)pos_opt_field(pc, o) = w;
                return 0;
            }
            pos_put(expected, sizeof expected, &used, "%s%s", w == 0 ? "" : w == n_words(o) - 1 ? " or " : ", ",
                    o->words[w]);
        }
        return pelab_fail("--pos %s: option %s=%s: expected %s", scheme, o->name, val, expected);
    }
    case POS_OPT_RULE: return rope_rule_parse(val, pos_opt_field(pc, o));
    }
    return -1;
}

/* the shortest decimal that reads back as x: sigma=0.3, not 0.29999999999999999 */
static void shortest_double(char *buf, size_t n, double x) {
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, x);
        if (strtod(buf, NULL) == x) return;
    }
}

void pos_opt_value_text(const PosCtx *pc, const PosOption *o, char *buf, size_t n) {
    const void *v = pos_opt_field(pc, o);
    switch (o->type) {
    case POS_OPT_DOUBLE:
        if (o->flags & POS_OPT_SHORTEST) shortest_double(buf, n, *(const double *)v);
        else snprintf(buf, n, "%.17g", *(const double *)v);
        break;
    case POS_OPT_INT: snprintf(buf, n, "%d", *(const int *)v); break;
    case POS_OPT_WORD: snprintf(buf, n, "%s", o->words[*(const int *)v]); break;
    case POS_OPT_RULE: rope_rule_describe(v, buf, n); break;
    }
}
