/* fuzz_pos_spec.c: the --pos spec strings (model/pos/spec.c pos_init, every scheme's options through
 * options.c), the --scale rule strings (model/pos/rope_scaling.c rope_rule_parse, pos_set_scale)
 * and extension methods (model/pos/extend.c extend_parse, pos_set_extend).
 *
 * Input: SPEC, then a NUL or newline, then RULE, then optionally another separator and one byte
 * choosing the model shape. A spec that parses is described back (pos_spec); the description must
 * parse again and describe identically. The same for a rule on its own, and for the spec with the
 * rule applied. Every scheme that parses also runs its hooks (input, q/k, score bias, backward) on
 * a few positions, whose outputs must stay finite. The spec is also read as a per-layer attention
 * pattern (model/pattern.h), which must write back canonically. */
#include <math.h>
#include <stdint.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../model/pattern.h"
#include "../../model/pos/rope_scaling.h"
#include "fuzz_common.h"

static const int shapes[][5] = {/* dim, heads, kv heads, layers, seq_len */
                                {32, 4, 2, 2, 64},
                                {16, 2, 1, 1, 16},
                                {64, 2, 2, 1, 128}};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0], MAX_PARAMS = 1 << 20 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_single_thread();
    return 0;
}

static void check_finite(const float *v, size_t n, const char *what, const char *spec) {
    for (size_t i = 0; i < n; i++) FUZZ_CHECK(isfinite(v[i]), "%s: %s[%zu] = %g", spec, what, i, v[i]);
}

/* every hook of the scheme on a few positions, the last at 4 x the training length */
static void run_hooks(PosCtx *pc, const char *spec) {
    const PosScheme *s = pc->scheme;
    enum { N = 8 };
    int pos[N] = {0, 1, 2, 3, 5, 8, 13, 4 * pc->seq_len - 1};
    size_t np = pos_n_params(pc);
    if (np > MAX_PARAMS) return; /* a legal but big table (learned:max_len=16777216): not the parser's business */
    float *params = calloc(np ? np : 1, sizeof(float)), *dparams = calloc(np ? np : 1, sizeof(float));
    Rng rng;
    rng_seed(&rng, 1);
    if (s->init_params && np) s->init_params(pc, params, &rng);
    if (s->after_update && np) s->after_update(pc, params);
    pc->params = np ? params : NULL;
    (void)pos_max_position(pc), (void)pos_computable_position(pc);
    if (s->qk_dynamic_from) (void)s->qk_dynamic_from(pc);
    char lengths[256];
    pos_lengths(pc, lengths, sizeof lengths);
    int n = N;
    if (pos_check_positions(pc, pos, (size_t)n) != 0) n = 5; /* past the table, or not computable */
    if (n == 5 && pos_check_positions(pc, pos, (size_t)n) != 0) goto done; /* learned:max_len=1 and so on */
    int D = pc->dim, H = pc->n_heads, KVH = pc->n_kv_heads, hd = pc->head_dim;
    float *x = malloc(sizeof(float) * (size_t)n * (size_t)(D > H * hd ? D : H * hd));
    for (int i = 0; i < n * D; i++) x[i] = 0.5f - 0.01f * (float)(i % 97);
    if (s->input_forward) {
        s->input_forward(pc, x, pos, n);
        check_finite(x, (size_t)n * D, "input", spec);
        if (s->input_backward && np) s->input_backward(pc, x, pos, n, dparams);
    }
    if (s->qk_forward)
        for (int l = 0; l < pc->n_layers; l++)
            for (int is_key = 0; is_key < 2; is_key++) {
                int heads = is_key ? KVH : H;
                for (int i = 0; i < n * heads * hd; i++) x[i] = 0.25f + 0.01f * (float)(i % 89);
                s->qk_forward(pc, x, pos, n, heads, is_key, l);
                check_finite(x, (size_t)n * heads * hd, is_key ? "k" : "q", spec);
                if (s->qk_backward) s->qk_backward(pc, x, pos, n, heads, is_key, l);
                if (s->qk_backward_mapped) { /* its own output as the forward's, x as the gradient */
                    float *y = malloc(sizeof(float) * (size_t)n * heads * hd);
                    memcpy(y, x, sizeof(float) * (size_t)n * heads * hd);
                    s->qk_backward_mapped(pc, x, y, pos, n, heads, is_key, l, np ? dparams : NULL);
                    free(y);
                }
                check_finite(x, (size_t)n * heads * hd, is_key ? "dk" : "dq", spec);
            }
    if (s->gate_forward)
        for (int l = 0; l < pc->n_layers; l++) {
            float *c = malloc(sizeof(float) * (size_t)n * H);
            for (int i = 0; i < n * D; i++) x[i] = 0.5f - 0.01f * (float)(i % 97);
            s->gate_forward(pc, l, x, n, c);
            check_finite(c, (size_t)n * H, "log forget gates", spec);
            if (s->gate_backward) s->gate_backward(pc, l, x, c, n, NULL, np ? dparams : NULL);
            free(c);
        }
    if (s->bias_row) {
        float row[N], drow[N];
        for (int l = 0; l < pc->n_layers; l++)
            for (int h = 0; h < H; h++)
                for (int q = 0; q < n; q++) {
                    memset(row, 0, sizeof row);
                    s->bias_row(pc, row, pos[q], pos, q + 1, h, l);
                    check_finite(row, (size_t)q + 1, "bias", spec);
                    for (int j = 0; j <= q; j++) drow[j] = 0.1f * (float)(j - q);
                    if (s->bias_backward && np) s->bias_backward(pc, drow, pos[q], pos, q + 1, h, l, dparams);
                }
    }
    if (s->content_row) { /* CoPE: the row's scores and the query vector, then the way back */
        float row[N], scores[N], drow[N], dq[64] = {0};
        const float *q = x; /* the q rows of the transform above, or the input pattern */
        for (int i = 0; i < hd && i < 64; i++) x[i] = 0.3f - 0.05f * (float)i;
        for (int l = 0; l < pc->n_layers; l++)
            for (int h = 0; h < H; h++)
                for (int k = 1; k <= n && hd <= 64; k++) {
                    for (int j = 0; j < k; j++) row[j] = scores[j] = 2.0f - 0.7f * (float)j, drow[j] = 0.1f * (float)(j - k);
                    s->content_row(pc, row, q, k, h, l);
                    check_finite(row, (size_t)k, "content", spec);
                    s->content_backward(pc, &(PosContentGrad){.drow = drow, .scores = scores, .q = q, .dq = dq,
                                                              .dparams = np ? dparams : NULL, .nk = k, .head = h,
                                                              .layer = l});
                    check_finite(drow, (size_t)k, "dscores", spec);
                    check_finite(dq, (size_t)hd, "dq", spec);
                }
    }
    if (np) check_finite(dparams, np, "dparams", spec);
    free(x);
done:
    pc->params = NULL;
    free(params), free(dparams);
}

/* pc parsed from some text: its description must parse again, describe identically, and run */
static void check_roundtrip(PosCtx *pc, const int *shape) {
    char text[1024], again[1024];
    pos_spec(pc, text, sizeof text);
    PosCtx pc2;
    FUZZ_CHECK(pos_init(&pc2, text, shape[0], shape[1], shape[2], shape[3], shape[4]) == 0,
               "the description '%s' does not parse: %s", text, pelab_errmsg);
    pos_spec(&pc2, again, sizeof again);
    FUZZ_CHECK(strcmp(text, again) == 0, "'%s' describes back as '%s'", text, again);
    FUZZ_CHECK(pos_n_params(pc) == pos_n_params(&pc2), "'%s': parameter count changes", text);
    run_hooks(&pc2, text);
    pos_free(&pc2);
}

/* spec without its "scale=VALUE" option (into rest) and VALUE (into val); 0 if it has none */
static int split_scale(const char *spec, char *rest, size_t rest_n, char *val, size_t val_n) {
    const char *p = spec;
    while ((p = strstr(p, "scale=")) && !(p > spec && (p[-1] == ',' || p[-1] == ':'))) p++;
    if (!p) return 0;
    size_t vlen = strcspn(p + 6, ",");
    snprintf(val, val_n, "%.*s", (int)vlen, p + 6);
    snprintf(rest, rest_n, "%.*s%s", (int)(p - spec), spec, p + 6 + vlen);
    return 1;
}

/* --scale RULE succeeded on a scheme described as before: RULE is a rule, and the only change is
 * the scheme's scale= option, now RULE (no other option smuggled in, no other scale= reused) */
static void check_scale_applied(const char *before, const PosCtx *pc, const char *rule) {
    RopeRule r;
    FUZZ_CHECK(rope_rule_parse(rule, &r) == 0, "--scale '%s' accepted on %s but is not a rule: %s", rule, before,
               pelab_errmsg);
    char after[1024], rest_b[1024], rest_a[1024], val_b[512], val_a[512], want[64];
    pos_spec(pc, after, sizeof after);
    FUZZ_CHECK(split_scale(before, rest_b, sizeof rest_b, val_b, sizeof val_b) &&
                   split_scale(after, rest_a, sizeof rest_a, val_a, sizeof val_a),
               "--scale '%s': %s -> %s", rule, before, after);
    rope_rule_describe(&r, want, sizeof want);
    FUZZ_CHECK(strcmp(rest_a, rest_b) == 0 && strcmp(val_a, want) == 0, "--scale '%s' turned %s into %s", rule,
               before, after);
}

/* an extension method's text describes back to itself */
static void check_extend_text(const PosExtend *e, const char *rule) {
    char a[64], b[64];
    PosExtend e2;
    extend_describe(e, a, sizeof a);
    FUZZ_CHECK(extend_parse(a, &e2) == 1, "extension '%s' describes as '%s', which does not parse: %s", rule, a,
               pelab_errmsg);
    extend_describe(&e2, b, sizeof b);
    FUZZ_CHECK(strcmp(a, b) == 0, "extension '%s' describes as '%s', then as '%s'", rule, a, b);
}

/* --scale METHOD succeeded: the spec is unchanged (a method is not stored), the method is in force,
 * and a two-branch method's far positions are accepted and map to finite q and k */
static void check_extend_applied(const char *before, PosCtx *pc, const PosExtend *e, const char *rule) {
    char after[1024];
    pos_spec(pc, after, sizeof after);
    FUZZ_CHECK(strcmp(before, after) == 0 && pc->extend.method == e->method, "--scale '%s' turned %s into %s", rule,
               before, after);
    e = &pc->extend; /* as in force: a method given without arguments takes them from L (dca, string) */
    if (!extend_two_branch(e)) return;
    enum { N = 6 };
    /* the window itself when it is short (a huge one is a legal setting, not a length to build) */
    int at_w = e->window < 4 * pc->seq_len ? e->window : 3;
    int pos[N] = {0, 1, 5, at_w, 2 * pc->seq_len, 4 * pc->seq_len - 1}, qfar[N], kfar[N];
    if (pos_check_positions(pc, pos, N) != 0) return; /* xpos past its computable length */
    const PosCtx *far = pos_far_ctx(pc);
    int hd = pc->head_dim, H = pc->n_heads;
    float *x = malloc(sizeof(float) * N * H * hd);
    for (int i = 0; i < N; i++) {
        qfar[i] = extend_far_qpos(e, pos[i]), kfar[i] = extend_far_kpos(e, pos[i]);
        FUZZ_CHECK(qfar[i] >= 0 && kfar[i] >= 0 && kfar[i] <= pos[i], "'%s': far positions %d, %d of %d", rule,
                   qfar[i], kfar[i], pos[i]);
    }
    for (int is_key = 0; is_key < 2; is_key++) {
        int heads = is_key ? pc->n_kv_heads : H; /* keys carry the KV heads (fope's tables are per KV head) */
        for (int i = 0; i < N * heads * hd; i++) x[i] = 0.25f + 0.01f * (float)(i % 89);
        pc->scheme->qk_forward(far, x, is_key ? kfar : qfar, N, heads, is_key, 0);
        check_finite(x, (size_t)N * heads * hd, is_key ? "far k" : "far q", rule);
    }
    free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *in = malloc(size + 1);
    memcpy(in, data, size);
    in[size] = 0;
    size_t spec_len = 0; /* the spec ends at the first NUL or newline */
    while (spec_len < size && in[spec_len] && in[spec_len] != '\n') spec_len++;
    char *spec = in, *rule = spec_len < size ? in + spec_len + 1 : in + size;
    spec[spec_len] = 0;
    size_t rest = (size_t)(in + size - rule), rule_len = 0;
    while (rule_len < rest && rule[rule_len] && rule[rule_len] != '\n') rule_len++;
    const int *shape = shapes[0];
    if (rule_len + 1 < rest) shape = shapes[(unsigned char)rule[rule_len + 1] % N_SHAPES];
    rule[rule_len] = 0;

    PosCtx pc;
    int spec_ok = pos_init(&pc, spec, shape[0], shape[1], shape[2], shape[3], shape[4]) == 0;
    if (spec_ok) {
        check_roundtrip(&pc, shape);
    } else {
        FUZZ_CHECK(pelab_errmsg[0] != 0, "spec '%s' refused without a message", spec);
        FUZZ_CHECK(pos_init(&pc, "rope", shape[0], shape[1], shape[2], shape[3], shape[4]) == 0, "rope: %s",
                   pelab_errmsg);
    }

    RopeRule r, r2;
    if (rope_rule_parse(rule, &r) == 0) {
        char a[64], b[64];
        rope_rule_describe(&r, a, sizeof a);
        FUZZ_CHECK(rope_rule_parse(a, &r2) == 0, "rule '%s' describes as '%s', which does not parse: %s", rule, a,
                   pelab_errmsg);
        rope_rule_describe(&r2, b, sizeof b);
        FUZZ_CHECK(strcmp(a, b) == 0, "rule '%s' describes as '%s', then as '%s'", rule, a, b);
        FUZZ_CHECK(!rope_rule_is_dynamic(&r) == !rope_rule_is_dynamic(&r2), "rule '%s': dynamic changes", rule);
    }
    char before[1024];
    pos_spec(&pc, before, sizeof before);
    PosExtend e;
    int is_extend = extend_parse(rule, &e);
    FUZZ_CHECK(is_extend >= 0 || pelab_errmsg[0], "extension '%s' refused without a message", rule);
    if (is_extend == 1) check_extend_text(&e, rule);
    if (pos_set_scale(&pc, rule) == 0) {
        if (is_extend == 1) check_extend_applied(before, &pc, &e, rule);
        else check_scale_applied(before, &pc, rule);
        check_roundtrip(&pc, shape);
    }
    pos_free(&pc);
    /* the same spec as an --attn-pattern (model/pattern.h): refused in one line, or written back
     * canonically to a spec that parses to the same kinds and writes back identically */
    AttnPattern p, p2;
    if (pattern_parse(&p, spec) == 0) {
        char a[PATTERN_SPEC_MAX + 1], b[PATTERN_SPEC_MAX + 1];
        FUZZ_CHECK(p.n >= 0 && p.n <= PATTERN_MAX, "pattern '%s': %d kinds", spec, p.n);
        size_t n = pattern_spec(&p, a, sizeof a);
        FUZZ_CHECK(n < sizeof a, "pattern '%s' writes back %zu characters", spec, n);
        FUZZ_CHECK(pattern_parse(&p2, a) == 0, "pattern '%s' writes back as '%s', which does not parse: %s", spec, a,
                   pelab_errmsg);
        pattern_spec(&p2, b, sizeof b);
        FUZZ_CHECK(!strcmp(a, b) && p.n == p2.n && !memcmp(p.kind, p2.kind, sizeof p.kind[0] * (size_t)p.n),
                   "pattern '%s' writes back as '%s', then as '%s'", spec, a, b);
        for (int k = 0; k < p.n; k++) {
            long first = layer_first_visible(&p.kind[k], 1000), span = layer_span(&p.kind[k]);
            FUZZ_CHECK(first <= 1000 && (span < 0 || 1000 - first <= span), "pattern '%s' kind %d: first %ld span %ld",
                       spec, k, first, span);
        }
    } else {
        FUZZ_CHECK(pelab_errmsg[0] && !strchr(pelab_errmsg, '\n') && p.n == 0, "pattern '%s' refused: '%s'", spec,
                   pelab_errmsg);
    }
    free(in);
    return 0;
}
