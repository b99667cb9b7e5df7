#include "pattern.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

/* "N" of "N*" or of "window=N": digits only */
static int parse_count(const char *s, size_t len, long lo, long hi, long *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len), buf[len] = 0;
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (!(buf[0] >= '0' && buf[0] <= '9') || errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* one group "[N*]ITEM[,ITEM...]" (len bytes at g) into k; its count into *count */
static int parse_group(const char *spec, const char *g, size_t len, LayerAttn *k, long *count) {
    memset(k, 0, sizeof *k);
    *count = 1;
    const char *star = memchr(g, '*', len);
    if (star) {
        if (parse_count(g, (size_t)(star - g), 1, PATTERN_MAX, count) != 0)
            return pelab_fail("--attn-pattern %s: group '%.*s': expected N* with N in 1..%d", spec, (int)len, g,
                              PATTERN_MAX);
        len -= (size_t)(star - g) + 1, g = star + 1;
    }
    if (len == 0) return pelab_fail("--attn-pattern %s: an empty group (expected global, window=W, chunk=C, base=B or nope)", spec);
    int has_global = 0, has_base = 0;
    for (const char *item = g, *stop = g + len; item < stop;) {
        const char *comma = memchr(item, ',', (size_t)(stop - item)), *end = comma ? comma : stop;
        size_t n = (size_t)(end - item);
        long v;
        if (n == 6 && !strncmp(item, "global", 6) && !has_global) has_global = 1;
        else if (n == 4 && !strncmp(item, "nope", 4) && !k->nope) k->nope = 1;
        else if (n > 7 && !strncmp(item, "window=", 7) && !k->window) {
            if (parse_count(item + 7, n - 7, 1, 1 << 24, &v) != 0)
                return pelab_fail("--attn-pattern %s: '%.*s': expected window=W with W in 1..16777216", spec, (int)n, item);
            k->window = (int)v;
        } else if (n > 6 && !strncmp(item, "chunk=", 6) && !k->chunk) {
            if (parse_count(item + 6, n - 6, 1, 1 << 24, &v) != 0)
                return pelab_fail("--attn-pattern %s: '%.*s': expected chunk=C with C in 1..16777216", spec, (int)n, item);
            k->chunk = (int)v;
        } else if (n > 5 && !strncmp(item, "base=", 5) && !has_base) {
            char buf[64], *e;
            if (n - 5 >= sizeof buf) return pelab_fail("--attn-pattern %s: '%.*s': base too long", spec, (int)n, item);
            memcpy(buf, item + 5, n - 5), buf[n - 5] = 0;
            errno = 0;
            double b = strtod(buf, &e);
            if (errno || e == buf || *e || !(b >= 1.0001 && b <= 1e12))
                return pelab_fail("--attn-pattern %s: '%.*s': expected base=B with 1.0001 <= B <= 1e12", spec, (int)n,
                                  item);
            k->base = b, has_base = 1;
        } else {
            int dup = (n == 6 && !strncmp(item, "global", 6)) || (n == 4 && !strncmp(item, "nope", 4)) ||
                      (n > 7 && !strncmp(item, "window=", 7)) || (n > 6 && !strncmp(item, "chunk=", 6)) ||
                      (n > 5 && !strncmp(item, "base=", 5));
            return pelab_fail("--attn-pattern %s: '%.*s': %s", spec, (int)n, item,
                              dup ? "given twice in one group"
                                           : "expected global, window=W, chunk=C, base=B or nope");
        }
        item = comma ? comma + 1 : stop;
        if (comma && item == stop) return pelab_fail("--attn-pattern %s: a group ends in ','", spec);
    }
    if (has_global && (k->window || k->chunk))
        return pelab_fail("--attn-pattern %s: group '%.*s': global attends to every key (no window= or chunk=)", spec,
                          (int)len, g);
    if (k->nope && has_base)
        return pelab_fail("--attn-pattern %s: group '%.*s': a NoPE layer has no base", spec, (int)len, g);
    return 0;
}

static int parse_all(AttnPattern *p, const char *spec);

int pattern_parse(AttnPattern *p, const char *spec) {
    if (parse_all(p, spec) == 0) return 0;
    memset(p, 0, sizeof *p); /* a refused spec leaves no pattern */
    return -1;
}

static int parse_all(AttnPattern *p, const char *spec) {
    memset(p, 0, sizeof *p);
    if (!spec || !*spec || !strcmp(spec, "none")) return 0;
    if (strlen(spec) > PATTERN_SPEC_MAX)
        return pelab_fail("--attn-pattern: spec too long (%zu characters, at most %d)", strlen(spec), PATTERN_SPEC_MAX);
    for (const char *g = spec;;) {
        const char *colon = strchr(g, ':');
        size_t len = colon ? (size_t)(colon - g) : strlen(g);
        LayerAttn k;
        long count;
        if (parse_group(spec, g, len, &k, &count) != 0) return -1;
        if (p->n + count > PATTERN_MAX)
            return pelab_fail("--attn-pattern %s: %ld layers in the cycle or more (at most %d)", spec, p->n + count,
                              PATTERN_MAX);
        for (long i = 0; i < count; i++) p->kind[p->n++] = k;
        if (!colon) return 0;
        g = colon + 1;
    }
}

/* the fewest digits of b that read back exactly */
static void put_double(char *buf, size_t n, double b) {
    if (b == floor(b) && b < 1e15) { /* a whole base as digits: 1000000, not 1e+06 */
        snprintf(buf, n, "%.0f", b);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, b);
        if (strtod(buf, NULL) == b) return;
    }
}

static int same_kind(const LayerAttn *a, const LayerAttn *b) {
    return a->window == b->window && a->chunk == b->chunk && a->base == b->base && a->nope == b->nope;
}

/* appends to buf (size n) at *used, counting what did not fit */
static void put(char *buf, size_t n, size_t *used, const char *text) {
    size_t len = strlen(text);
    if (*used < n) snprintf(buf + *used, n - *used, "%s", text);
    *used += len;
}

size_t pattern_spec(const AttnPattern *p, char *buf, size_t n) {
    size_t used = 0;
    if (n) buf[0] = 0;
    if (p->n == 0) {
        put(buf, n, &used, "none");
        return used;
    }
    for (int i = 0; i < p->n;) {
        int run = 1;
        while (i + run < p->n && same_kind(&p->kind[i], &p->kind[i + run])) run++;
        const LayerAttn *k = &p->kind[i];
        char item[96], num[40];
        if (i) put(buf, n, &used, ":");
        if (run > 1) snprintf(item, sizeof item, "%d*", run), put(buf, n, &used, item);
        int first = 1;
        if (k->window) snprintf(item, sizeof item, "window=%d", k->window), put(buf, n, &used, item), first = 0;
        if (k->chunk) snprintf(item, sizeof item, "%schunk=%d", first ? "" : ",", k->chunk), put(buf, n, &used, item), first = 0;
        if (first) put(buf, n, &used, "global");
        if (k->base > 0) {
            put_double(num, sizeof num, k->base);
            snprintf(item, sizeof item, ",base=%s", num), put(buf, n, &used, item);
        }
        if (k->nope) put(buf, n, &used, ",nope");
        i += run;
    }
    return used;
}

LayerAttn pattern_layer(const AttnPattern *p, int sliding_window, int l) {
    if (p->n == 0) return (LayerAttn){.window = sliding_window};
    return p->kind[l % p->n];
}

long layer_first_visible(const LayerAttn *k, long qpos) {
    long first = LONG_MIN;
    if (k->window > 0) first = qpos - k->window + 1;
    if (k->chunk > 0) {
        long q = qpos >= 0 ? qpos / k->chunk : -((-qpos + k->chunk - 1) / k->chunk); /* floor */
        long start = q * k->chunk;
        first = start > first ? start : first;
    }
    return first;
}

long layer_span(const LayerAttn *k) {
    long span = -1;
    if (k->window > 0) span = k->window - 1;
    if (k->chunk > 0 && (span < 0 || k->chunk - 1 < span)) span = k->chunk - 1;
    return span;
}

void layer_describe(const LayerAttn *k, char *buf, size_t n) {
    size_t used = 0;
    char item[96], num[40];
    buf[0] = 0;
    if (k->window) snprintf(item, sizeof item, "window %d", k->window), put(buf, n, &used, item);
    if (k->chunk) snprintf(item, sizeof item, "%schunk %d", used ? ", " : "", k->chunk), put(buf, n, &used, item);
    if (!used) put(buf, n, &used, "global");
    if (k->base > 0) put_double(num, sizeof num, k->base), snprintf(item, sizeof item, ", base %s", num), put(buf, n, &used, item);
    if (k->nope) put(buf, n, &used, ", NoPE");
}
