#include "extend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"

/* the integer after text's ':' at *p, in [lo, hi]; advances *p past it */
static int next_int(const char *text, const char **p, const char *what, long lo, long hi, int *out) {
    char *end;
    long v = strtol(*p, &end, 10);
    if (end == *p || (*end && *end != ':') || v < lo || v > hi)
        return pelab_fail("--scale %s: %s: expected an integer in [%ld, %ld]", text, what, lo, hi);
    *out = (int)v;
    *p = *end ? end + 1 : end;
    return 0;
}

static const struct {
    const char *name;
    ExtendKind kind;
    const char *usage;
} methods[] = {
    {"selfextend", EXTEND_SELF_EXTEND, "selfextend:G:W (group size G >= 1, neighbour window W >= 1)"},
    {"rerope", EXTEND_REROPE, "rerope:W (window W >= 1)"},
    {"leaky-rerope", EXTEND_LEAKY_REROPE, "leaky-rerope:W:K (window W >= 1, slope 1/K past it, K > 1)"},
    {"stream", EXTEND_STREAM, "stream:S:W (S >= 0 sink tokens, W >= 1 recent tokens)"},
};

int extend_parse(const char *text, PosExtend *e) {
    memset(e, 0, sizeof *e);
    size_t len = strcspn(text, ":");
    int m = -1;
    for (int i = 0; i < (int)(sizeof methods / sizeof methods[0]); i++)
        if (strlen(methods[i].name) == len && strncmp(text, methods[i].name, len) == 0) m = i;
    if (m < 0) return 0;
    if (!text[len]) return pelab_fail("--scale %s: needs its arguments: %s", text, methods[m].usage);
    const char *p = text + len + 1;
    int rc = 0;
    e->kind = methods[m].kind;
    switch (e->kind) {
    case EXTEND_SELF_EXTEND:
        rc = next_int(text, &p, "G, the group size", 1, 1 << 20, &e->group);
        if (rc == 0) rc = next_int(text, &p, "W, the neighbour window", 1, 1 << 24, &e->window);
        /* llama.cpp asserts it too: otherwise the official prefill and decode disagree */
        if (rc == 0 && e->window % e->group != 0)
            return pelab_fail("--scale %s: W = %d is not a multiple of G = %d (Self-Extend's prefill and decode "
                              "disagree then; llama.cpp refuses it too)", text, e->window, e->group);
        break;
    case EXTEND_REROPE: rc = next_int(text, &p, "W, the window", 1, 1 << 24, &e->window); break;
    case EXTEND_LEAKY_REROPE: {
        rc = next_int(text, &p, "W, the window", 1, 1 << 24, &e->window);
        if (rc != 0) break;
        char *end;
        e->leak = strtod(p, &end);
        if (end == p || *end || !(e->leak > 1 && e->leak <= 1e6))
            return pelab_fail("--scale %s: K, the inverse slope past W: expected a number in (1, 1e6]", text);
        double shift = e->window * (e->leak - 1);
        if (fabs(shift - floor(shift + 0.5)) > 1e-9)
            return pelab_fail("--scale %s: W x (K - 1) = %g: expected an integer (the far branch's query sits "
                              "at i + W (K - 1))", text, shift);
        if (shift > EXTEND_MAX_SHIFT) /* the far query sits at i + W (K - 1): tables grow that far */
            return pelab_fail("--scale %s: W x (K - 1) = %g: at most %d (the far branch's query sits at i + W (K - "
                              "1), and the rotary tables grow to it); as K grows leaky-rerope approaches rerope:%d",
                              text, shift, EXTEND_MAX_SHIFT, e->window);
        p = end;
        break;
    }
    case EXTEND_STREAM:
        rc = next_int(text, &p, "S, the sink tokens", 0, 1 << 20, &e->sinks);
        if (rc == 0) rc = next_int(text, &p, "W, the recent tokens", 1, 1 << 24, &e->window);
        break;
    case EXTEND_NONE: break;
    }
    if (rc != 0) return -1;
    if (*p) return pelab_fail("--scale %s: too many arguments: expected %s", text, methods[m].usage);
    return 1;
}

void extend_describe(const PosExtend *e, char *buf, size_t n) {
    switch (e->kind) {
    case EXTEND_NONE: snprintf(buf, n, "none"); break;
    case EXTEND_SELF_EXTEND: snprintf(buf, n, "selfextend:%d:%d", e->group, e->window); break;
    case EXTEND_REROPE: snprintf(buf, n, "rerope:%d", e->window); break;
    case EXTEND_LEAKY_REROPE: snprintf(buf, n, "leaky-rerope:%d:%.17g", e->window, e->leak); break;
    case EXTEND_STREAM: snprintf(buf, n, "stream:%d:%d", e->sinks, e->window); break;
    }
}

int extend_two_branch(const PosExtend *e) {
    return e->kind == EXTEND_SELF_EXTEND || e->kind == EXTEND_REROPE || e->kind == EXTEND_LEAKY_REROPE;
}

int extend_far_qpos(const PosExtend *e, int pos) {
    /* a query fewer than W positions in has no far key (keys sit at positions >= 0): its far row is
     * never read, and its own position keeps the tables as short as the sequence */
    if (pos < e->window) return pos;
    switch (e->kind) {
    case EXTEND_SELF_EXTEND: return pos / e->group + e->window - e->window / e->group;
    case EXTEND_REROPE: return e->window;
    case EXTEND_LEAKY_REROPE: return pos + (int)floor(e->window * (e->leak - 1) + 0.5);
    default: return pos;
    }
}

int extend_far_kpos(const PosExtend *e, int pos) {
    switch (e->kind) {
    case EXTEND_SELF_EXTEND: return pos / e->group;
    case EXTEND_REROPE: return 0;
    default: return pos;
    }
}

double extend_relative(const PosExtend *e, int i, int d) {
    if (!extend_two_branch(e) || d < e->window) return d;
    switch (e->kind) {
    case EXTEND_SELF_EXTEND: return i / e->group - (i - d) / e->group + e->window - e->window / e->group;
    case EXTEND_REROPE: return e->window;
    case EXTEND_LEAKY_REROPE: return e->window + (d - e->window) / e->leak;
    default: return d;
    }
}
