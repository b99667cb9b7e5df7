/* sinks.c: learned attention sinks (sinks.h): the modifier's spec, help and logit look-up; the
 * softmax that uses them is attention's (model/attention.c). */
#include "sinks.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"

enum { SINKS_INIT_MAX = 100 }; /* |init| beyond this is a sink that swallows (or never takes) all weight */

int sinks_parse(PosSinks *s, const char *text) {
    *s = (PosSinks){.on = 1};
    if (strncmp(text, "sinks", 5) != 0 || (text[5] && text[5] != ':'))
        return pelab_fail("+%s: expected +sinks[:init=F]", text);
    if (!text[5]) return 0;
    const char *opt = text + 6;
    if (strncmp(opt, "init=", 5) != 0)
        return pelab_fail("+%s: unknown option '%.*s' (expected init=F)", text, (int)strcspn(opt, "="), opt);
    char *end;
    errno = 0;
    double v = strtod(opt + 5, &end);
    if (errno || end == opt + 5 || *end || !(fabs(v) <= SINKS_INIT_MAX))
        return pelab_fail("+%s: init=%s: expected a number in [%d, %d]", text, opt + 5, -SINKS_INIT_MAX,
                          SINKS_INIT_MAX);
    s->init = v;
    return 0;
}

void sinks_spec(const PosSinks *s, char *buf, size_t n) {
    if (!s->on) {
        if (n) buf[0] = 0;
        return;
    }
    char v[32];
    snprintf(v, sizeof v, "%.15g", s->init);
    if (strtod(v, NULL) != s->init) snprintf(v, sizeof v, "%.17g", s->init);
    snprintf(buf, n, "+sinks:init=%s", v);
}

void sinks_help(char *buf, size_t n, const char *indent) {
    snprintf(buf, n, "\n%s%-11s %-24s %s", indent, "SPEC+sinks", "init=F",
             "one learned logit per layer and head in the softmax's denominator (gpt-oss; default F 0)");
}

float sinks_logit(const PosSinks *s, int layer, int head, int n_heads) {
    if (!s->on) return -INFINITY;
    return s->logit ? s->logit[(size_t)layer * n_heads + head] : (float)s->init;
}
