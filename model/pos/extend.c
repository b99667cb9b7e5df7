/* extend.c: the extension methods, one entry each in the table below (ExtendMethod, extend.h), and
 * the generic parts every method goes through: parsing, description, far positions. */
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

/* --- selfextend:G:W ------------------------------------------------------------------------- */

static int selfextend_parse(const char *text, const char **p, PosExtend *e) {
    if (next_int(text, p, "G, the group size", 1, 1 << 20, &e->group) != 0 ||
        next_int(text, p, "W, the neighbour window", 1, 1 << 24, &e->window) != 0)
        return -1;
    /* llama.cpp asserts it too: otherwise the official prefill and decode disagree */
    if (e->window % e->group != 0)
        return pelab_fail("--scale %s: W = %d is not a multiple of G = %d (Self-Extend's prefill and decode "
                          "disagree then; llama.cpp refuses it too)", text, e->window, e->group);
    return 0;
}

static void selfextend_describe(const PosExtend *e, char *buf, size_t n) {
    snprintf(buf, n, "selfextend:%d:%d", e->group, e->window);
}

static int selfextend_far_qpos(const PosExtend *e, int pos) {
    return pos / e->group + e->window - e->window / e->group;
}
static int selfextend_far_kpos(const PosExtend *e, int pos) { return pos / e->group; }

static double selfextend_relative(const PosExtend *e, int i, int d) {
    return i / e->group - (i - d) / e->group + e->window - e->window / e->group;
}

/* --- rerope:W --------------------------------------------------------------------------------- */

static int rerope_parse(const char *text, const char **p, PosExtend *e) {
    return next_int(text, p, "W, the window", 1, 1 << 24, &e->window);
}

static void rerope_describe(const PosExtend *e, char *buf, size_t n) { snprintf(buf, n, "rerope:%d", e->window); }
static int rerope_far_qpos(const PosExtend *e, int pos) { (void)pos; return e->window; }
static int rerope_far_kpos(const PosExtend *e, int pos) { (void)e, (void)pos; return 0; }
static double rerope_relative(const PosExtend *e, int i, int d) { (void)i, (void)d; return e->window; }

/* --- leaky-rerope:W:K --------------------------------------------------------------------------- */

static int leaky_parse(const char *text, const char **p, PosExtend *e) {
    if (next_int(text, p, "W, the window", 1, 1 << 24, &e->window) != 0) return -1;
    char *end;
    e->leak = strtod(*p, &end);
    if (end == *p || (*end && *end != ':') || !(e->leak > 1 && e->leak <= 1e6))
        return pelab_fail("--scale %s: K, the inverse slope past W: expected a number in (1, 1e6]", text);
    double shift = e->window * (e->leak - 1);
    if (fabs(shift - floor(shift + 0.5)) > 1e-9)
        return pelab_fail("--scale %s: W x (K - 1) = %g: expected an integer (the far branch's query sits "
                          "at i + W (K - 1))", text, shift);
    if (shift > EXTEND_MAX_SHIFT) /* the far query sits at i + W (K - 1): tables grow that far */
        return pelab_fail("--scale %s: W x (K - 1) = %g: at most %d (the far branch's query sits at i + W (K - "
                          "1), and the rotary tables grow to it); as K grows leaky-rerope approaches rerope:%d",
                          text, shift, EXTEND_MAX_SHIFT, e->window);
    *p = *end ? end + 1 : end; /* past a ':': the generic check then says there is one argument too many */
    return 0;
}

static void leaky_describe(const PosExtend *e, char *buf, size_t n) {
    snprintf(buf, n, "leaky-rerope:%d:%.17g", e->window, e->leak);
}

static int leaky_far_qpos(const PosExtend *e, int pos) { return pos + (int)floor(e->window * (e->leak - 1) + 0.5); }
static double leaky_relative(const PosExtend *e, int i, int d) {
    (void)i;
    return e->window + (d - e->window) / e->leak;
}

/* the far branch under pi:K: (i + W (K - 1) - j) / K = W + (i - j - W) / K */
static void leaky_far_rule(const PosExtend *e, RopeRule *r) {
    *r = (RopeRule){.def = rope_rule_find("pi"), .s = e->leak};
}

/* --- string[:S:W] ------------------------------------------------------------------------------ */

static int string_check(const char *text, const PosExtend *e) {
    if (e->local >= e->window)
        return pelab_fail("%s: W = %d must be below S = %d (the shifted distances start at W)", text, e->local,
                          e->window);
    return 0;
}

static int string_parse(const char *text, const char **p, PosExtend *e) {
    if (next_int(text, p, "S, the shift", 1, 1 << 24, &e->window) != 0 ||
        next_int(text, p, "W, the local window", 0, 1 << 24, &e->local) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "--scale %s", text);
    return string_check(what, e);
}

/* S = L / 3, W = L / 16 (extend.h) */
static int string_defaults(PosExtend *e, int train_len) {
    e->window = train_len / 3;
    e->local = train_len / 16 > 1 ? train_len / 16 : 1;
    if (e->window < 2)
        return pelab_fail("--scale string: the training length L = %d is too short for S = L / 3 > W >= 1; give "
                          "string:S:W", train_len);
    return string_check("--scale string", e);
}

static void string_describe(const PosExtend *e, char *buf, size_t n) {
    if (e->window) snprintf(buf, n, "string:%d:%d", e->window, e->local);
    else snprintf(buf, n, "string");
}

static int string_far_qpos(const PosExtend *e, int pos) { return pos - e->window + e->local; }
static double string_relative(const PosExtend *e, int i, int d) {
    (void)i;
    return d - e->window + e->local;
}

/* --- dca[:C:W] ---------------------------------------------------------------------------------- */

static int dca_check(const char *text, PosExtend *e) {
    if (e->local >= e->chunk)
        return pelab_fail("%s: W = %d must be below C = %d (chunks of C - W tokens)", text, e->local, e->chunk);
    e->window = e->chunk - e->local; /* c: a query before it has no far key */
    return 0;
}

static int dca_parse(const char *text, const char **p, PosExtend *e) {
    if (next_int(text, p, "C, the chunk size", 1, 1 << 24, &e->chunk) != 0 ||
        next_int(text, p, "W, the local window", 0, 1 << 24, &e->local) != 0)
        return -1;
    char what[96];
    snprintf(what, sizeof what, "--scale %s", text);
    return dca_check(what, e);
}

/* the authors' code: C = 3L / 4, W = L / 16 */
static int dca_defaults(PosExtend *e, int train_len) {
    e->chunk = train_len * 3 / 4, e->local = train_len / 16;
    if (e->chunk < 1) return pelab_fail("--scale dca: the training length L = %d is too short; give dca:C:W", train_len);
    return dca_check("--scale dca", e);
}

static void dca_describe(const PosExtend *e, char *buf, size_t n) {
    if (e->chunk) snprintf(buf, n, "dca:%d:%d", e->chunk, e->local);
    else snprintf(buf, n, "dca");
}

/* the query's own chunk (intra), or the previous one while the successive position i mod c + c
 * stays below C (then it is the real distance) */
static int dca_near(const PosExtend *e, int qpos, int kpos) {
    int c = e->window, cq = qpos / c, ck = kpos / c;
    return cq == ck || (cq == ck + 1 && qpos % c < e->local);
}

static int dca_inter_qpos(const PosExtend *e) {
    int c = e->window;
    return 2 * c - 1 < e->chunk ? 2 * c - 1 : e->chunk;
}
static int dca_far_qpos(const PosExtend *e, int pos) { (void)pos; return dca_inter_qpos(e); }
static int dca_far_kpos(const PosExtend *e, int pos) { return pos % e->window; }
static double dca_relative(const PosExtend *e, int i, int d) { return dca_inter_qpos(e) - (i - d) % e->window; }

/* --- stream:S:W --------------------------------------------------------------------------------- */

static int stream_parse(const char *text, const char **p, PosExtend *e) {
    if (next_int(text, p, "S, the sink tokens", 0, 1 << 20, &e->sinks) != 0) return -1;
    return next_int(text, p, "W, the recent tokens", 1, 1 << 24, &e->window);
}

static void stream_describe(const PosExtend *e, char *buf, size_t n) {
    snprintf(buf, n, "stream:%d:%d", e->sinks, e->window);
}

/* constant memory: S sinks and W recent keys cached, and the query's own (StreamingLLM's
 * start_size + recent_size cached, the new token appended before attention) */
static PosCachePolicy stream_cache_policy(const PosExtend *e) {
    return (PosCachePolicy){.capacity = e->sinks + e->window + 1, .keep_first = e->sinks, .slot_positions = 1,
                            .one_sequence = 1};
}

/* --- the table ------------------------------------------------------------------------------ */

static const ExtendMethod METHODS[] = {
    {.name = "selfextend", .usage = "selfextend:G:W", .args = "group size G >= 1, neighbour window W >= 1",
     .summary = "Self-Extend: exact within W, groups of G past it", .parse = selfextend_parse,
     .describe = selfextend_describe, .far_qpos = selfextend_far_qpos, .far_kpos = selfextend_far_kpos,
     .far_relative = selfextend_relative},
    {.name = "rerope", .usage = "rerope:W", .args = "window W >= 1", .summary = "relative position capped at W",
     .parse = rerope_parse, .describe = rerope_describe, .far_qpos = rerope_far_qpos, .far_kpos = rerope_far_kpos,
     .far_relative = rerope_relative},
    {.name = "leaky-rerope", .usage = "leaky-rerope:W:K", .args = "window W >= 1, slope 1/K past it, K > 1",
     .summary = "slope 1/K past W", .parse = leaky_parse, .describe = leaky_describe, .far_qpos = leaky_far_qpos,
     .far_relative = leaky_relative, .far_rule = leaky_far_rule, .far_usage = "pi:K",
     .refuse_no_rules = "takes no scaling rule, and leaky-rerope divides the frequencies by K with one (pi:K)"},
    {.name = "string", .usage = "string[:S:W]", .args = "shift S >= 1, local window 0 <= W < S (default L/3, L/16)",
     .summary = "STRING: exact below S, distance d - S + W from S on; default S = L/3, W = L/16",
     .example = "string:21:4",
     .parse = string_parse, .describe = string_describe, .far_qpos = string_far_qpos, .far_relative = string_relative,
     .defaults = string_defaults},
    {.name = "dca", .usage = "dca[:C:W]", .args = "chunk size C >= 1, local window 0 <= W < C (default 3L/4, L/16)",
     .summary = "Dual Chunk Attention: chunks of C - W, intra-, successive- and inter-chunk positions; default C = "
                "3L/4, W = L/16",
     .example = "dca:12:3", .parse = dca_parse, .describe = dca_describe, .far_qpos = dca_far_qpos, .far_kpos = dca_far_kpos,
     .far_relative = dca_relative, .near = dca_near, .defaults = dca_defaults},
    {.name = "stream", .usage = "stream:S:W", .args = "S >= 0 sink tokens, W >= 1 recent tokens",
     .summary = "StreamingLLM: S sink tokens and the W before the query in a sliding cache, the query sees S + W + "
                "1 keys, positions = cache slots",
     .parse = stream_parse, .describe = stream_describe, .cache_policy = stream_cache_policy, .cache_only = 1,
     .refuse_input = "adds positions to the input, so a cached token's position cannot follow its slot as the "
                     "cache slides; stream needs positions inside attention (rotary, bias or none)"},
};
enum { N_METHODS = sizeof METHODS / sizeof METHODS[0] };

int extend_count(void) { return N_METHODS; }
const ExtendMethod *extend_at(int i) { return i >= 0 && i < N_METHODS ? &METHODS[i] : NULL; }

void extend_list(char *buf, size_t n, const char *sep, int with_summary) {
    size_t used = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < N_METHODS && used < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s%s%s%s", used ? sep : "", METHODS[i].usage,
                         with_summary ? " (" : "", with_summary ? METHODS[i].summary : "", with_summary ? ")" : "");
        if (k > 0) used += (size_t)k;
    }
}

/* --- what every method goes through ---------------------------------------------------------- */

int extend_parse(const char *text, PosExtend *e) {
    memset(e, 0, sizeof *e);
    size_t len = strcspn(text, ":");
    const ExtendMethod *m = NULL;
    for (int i = 0; i < N_METHODS; i++)
        if (strlen(METHODS[i].name) == len && strncmp(text, METHODS[i].name, len) == 0) m = &METHODS[i];
    if (!m) return 0;
    if (!text[len] && m->defaults) { /* its arguments from the training length (extend_resolve) */
        e->method = m;
        return 1;
    }
    if (!text[len]) return pelab_fail("--scale %s: needs its arguments: %s (%s)", text, m->usage, m->args);
    if (text[strlen(text) - 1] == ':') /* every argument reads up to a ':': a last one would pass as none */
        return pelab_fail("--scale %s: an empty argument after the last ':': expected %s (%s)", text, m->usage, m->args);
    const char *p = text + len + 1;
    e->method = m;
    if (m->parse(text, &p, e) != 0) return -1;
    if (*p) return pelab_fail("--scale %s: too many arguments: expected %s (%s)", text, m->usage, m->args);
    return 1;
}

void extend_describe(const PosExtend *e, char *buf, size_t n) {
    if (e->method) e->method->describe(e, buf, n);
    else snprintf(buf, n, "none");
}

int extend_two_branch(const PosExtend *e) { return e->method && e->method->far_qpos; }

int extend_far_qpos(const PosExtend *e, int pos) {
    /* a query fewer than W positions in has no far key (keys sit at positions >= 0): its far row is
     * never read, and its own position keeps the tables as short as the sequence */
    if (pos < e->window || !extend_two_branch(e)) return pos;
    return e->method->far_qpos(e, pos);
}

int extend_far_kpos(const PosExtend *e, int pos) {
    return extend_two_branch(e) && e->method->far_kpos ? e->method->far_kpos(e, pos) : pos;
}

int extend_near(const PosExtend *e, int qpos, int kpos) {
    return e->method && e->method->near ? e->method->near(e, qpos, kpos) : qpos - kpos < e->window;
}

int extend_resolve(PosExtend *e, int train_len) {
    if (!e->method || !e->method->defaults || e->window) return 0;
    return e->method->defaults(e, train_len);
}

double extend_relative(const PosExtend *e, int i, int d) {
    if (!extend_two_branch(e) || extend_near(e, i, i - d)) return d;
    return e->method->far_relative(e, i, d);
}

PosCachePolicy extend_cache_policy(const PosExtend *e) {
    return e->method && e->method->cache_policy ? e->method->cache_policy(e) : (PosCachePolicy){0};
}
