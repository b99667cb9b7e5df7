/* test_schemes.c: the registry drives the shared checks. Every registered scheme (registry.c), with
 * its default spec and each spec of its test_specs, gets the gradient check of every parameter,
 * KV-cache equality at every position (GQA on and off), causality, the permutation check and the
 * canonical-spec round trip; its declared capabilities are checked against its hooks, and every
 * option of its table against the parser (words, ranges, unknown keys, duplicates). Registering a
 * scheme is all it takes to be covered here. Also: the canonical specs stored in checkpoints,
 * byte for byte, and --scale reaching only the schemes that take rules. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../model/pos/pos.h"
#include "test.h"

/* tiny_model's shape: dim 16, 4 heads, 2 KV heads, 2 layers, L = 8 */
static int init_tiny(PosCtx *pc, const char *spec) { return pos_init(pc, spec, 16, 4, 2, 2, 8); }

/* the canonical spec of spec on the tiny shape into out; -1 (and "") if it does not parse */
static int canonical(const char *spec, char *out, size_t n) {
    PosCtx pc;
    out[0] = 0;
    if (init_tiny(&pc, spec) != 0) return -1;
    pos_spec(&pc, out, n);
    pos_free(&pc);
    return 0;
}

static int has(const PosScheme *s, unsigned cap) { return (s->caps & cap) != 0; }

static int has_rule_option(const PosScheme *s) {
    for (int i = 0; i < s->n_options; i++)
        if (s->options[i].type == POS_OPT_RULE) return 1;
    return 0;
}

/* declared capabilities against what the scheme actually has */
static void capabilities(void) {
    CHECK(pos_count() >= 9 && pos_at(pos_count()) == NULL && pos_at(-1) == NULL, "registry of %d schemes", pos_count());
    for (int i = 0; i < pos_count(); i++) {
        const PosScheme *s = pos_at(i);
        PosCtx pc;
        if (init_tiny(&pc, s->name) != 0) {
            CHECK(0, "%s: default spec: %s", s->name, pelab_errmsg);
            continue;
        }
        /* CoPE, FoX: order from the row's gates */
        int positional = s->input_forward || s->qk_forward || s->bias_row || s->content_row || s->gate_forward;
        CHECK(pos_find(s->name) == s && pos_find_spec(s->name) == s, "%s: found by name", s->name);
        CHECK(has(s, POS_CAP_POSITION_FREE) == !positional, "%s: position-free iff no hook sees a position", s->name);
        CHECK(has(s, POS_CAP_ROTARY) == !!s->qk_forward, "%s: rotary iff it maps q and k", s->name);
        CHECK(has(s, POS_CAP_RULES) == has_rule_option(s), "%s: takes rules iff it has a rule option", s->name);
        CHECK(has(s, POS_CAP_LEARNED) == (pos_n_params(&pc) > 0), "%s: learned iff it has parameters (%zu)", s->name,
              pos_n_params(&pc));
        CHECK(has(s, POS_CAP_DYNAMIC) == !!s->qk_dynamic_from, "%s: dynamic iff it says from where", s->name);
        CHECK(!s->qk_transform_changes || s->qk_dynamic_from, "%s: says when its transform changes only if dynamic",
              s->name);
        CHECK(!s->n_options || s->state_size, "%s: options live in a state block", s->name);
        pos_free(&pc);
    }
}

/* every option of every table: its words, its range, a bad value, a duplicate key */
static void option_tables(void) {
    for (int i = 0; i < pos_count(); i++) {
        const PosScheme *s = pos_at(i);
        char spec[256], got[512], want[512];
        PosCtx pc;
        snprintf(spec, sizeof spec, "%s:no_such_option=1", s->name);
        CHECK(init_tiny(&pc, spec) == -1 && strstr(pelab_errmsg, "'no_such_option'") &&
                  strstr(pelab_errmsg, s->n_options ? "unknown option" : "no options"),
              "%s refused: %s", spec, pelab_errmsg);
        for (int k = 0; k < s->n_options; k++) {
            const PosOption *o = &s->options[k];
            snprintf(spec, sizeof spec, "%s:%s", s->name, o->name);
            CHECK(init_tiny(&pc, spec) == -1 && strstr(pelab_errmsg, "expected key=value"), "%s refused: %s", spec,
                  pelab_errmsg);
            snprintf(spec, sizeof spec, "%s:%s=bogus", s->name, o->name);
            pelab_errmsg[0] = 0;
            const char *named = o->type == POS_OPT_RULE ? "bogus" : spec + strlen(s->name) + 1; /* "key=bogus" */
            CHECK(init_tiny(&pc, spec) == -1 && strstr(pelab_errmsg, named) && !strchr(pelab_errmsg, '\n'),
                  "%s refused in one line naming %s: %s", spec, named, pelab_errmsg);
            if (o->type == POS_OPT_DOUBLE || o->type == POS_OPT_INT) {
                double outside[2] = {o->lo - 1, o->hi * 2 + 1};
                for (int e = 0; e < 2; e++) {
                    snprintf(spec, sizeof spec, "%s:%s=%.17g", s->name, o->name, outside[e]);
                    CHECK(init_tiny(&pc, spec) == -1 && strstr(pelab_errmsg, "expected") &&
                              strstr(pelab_errmsg, spec + strlen(s->name) + 1),
                          "%s (outside [%g, %g]) refused: %s", spec, o->lo, o->hi, pelab_errmsg);
                }
            }
            /* every word is accepted and written back; a later key overrides an earlier one */
            int n_words = 0;
            while (o->type == POS_OPT_WORD && n_words < 4 && o->words[n_words]) n_words++;
            for (int w = 0; w < n_words; w++) {
                snprintf(spec, sizeof spec, "%s:%s=%s", s->name, o->name, o->words[w]);
                canonical(spec, want, sizeof want);
                snprintf(spec, sizeof spec, "%s:%s=%s,%s=%s", s->name, o->name, o->words[(w + 1) % n_words], o->name,
                         o->words[w]);
                canonical(spec, got, sizeof got);
                char written[128];
                snprintf(written, sizeof written, "%s=%s", o->name, o->words[w]);
                CHECK(want[0] && !strcmp(got, want) && strstr(want, written), "%s -> %s (alone: %s)", spec, got, want);
            }
        }
    }
    /* numbers too: the last base wins */
    char a[512], b[512];
    canonical("rope:base=500,layout=half,base=600", a, sizeof a);
    canonical("rope:layout=half,base=600", b, sizeof b);
    CHECK(a[0] && !strcmp(a, b) && strstr(a, "base=600,"), "a later rope base overrides an earlier one: %s", a);
}

/* the canonical spec is stored in checkpoints and compared on --resume: these are the texts pelab
 * has always written (doubles in %.17g, FoPE's in the shortest form, options in table order) */
static void stored_specs(void) {
    static const char *cases[][2] = {
        {"nope", "nope"},
        {"learned", "learned:max_len=8"},
        {"sinusoidal", "sinusoidal:base=10000,scale=0.02,tokens=unscaled"},
        {"sinusoidal:tokens=sqrt_dim,scale=1", "sinusoidal:base=10000,scale=1,tokens=sqrt_dim"},
        {"rope", "rope:base=10000,layout=interleaved,fraction=1,scale=none,orig_len=8,keep=1,max_period=0"},
        {"alibi", "alibi"},
        {"t5", "t5:buckets=32,max_distance=128"},
        {"kerple", "kerple:layers=shared"},
        {"xpos", "xpos:base=10000,layout=interleaved,fraction=1,scale=none,orig_len=8,scale_base=512"},
        {"fope", "fope:base=10000,layout=half,sigma=0.3,sigma_mode=gain,pad=identity,seed=1"},
        {"fire", "fire:width=32,c=0.1,L=8,layers=separate,learn=all"},
        {"fire:learn=mlp,L=512,c=0.03", "fire:width=32,c=0.03,L=512,layers=separate,learn=mlp"},
        {"rope:fraction=0.7,scale=pi:2.5,base=500.1",
         "rope:base=500.10000000000002,layout=interleaved,fraction=0.69999999999999996,scale=pi:2.5,orig_len=8,keep=1,max_period=0"},
        {"xpos:scale=dynatan-a:64,orig_len=16,scale_base=100.1",
         "xpos:base=10000,layout=interleaved,fraction=1,scale=dynatan-a:64,orig_len=16,scale_base=100.09999999999999"},
        {"fope:base=500.1,sigma=0.123456789,layout=interleaved",
         "fope:base=500.1,layout=interleaved,sigma=0.123456789,sigma_mode=gain,pad=identity,seed=1"},
        {"sinusoidal:base=500.3,scale=0.3", "sinusoidal:base=500.30000000000001,scale=0.29999999999999999,tokens=unscaled"},
        {"t5:max_distance=64,buckets=16", "t5:buckets=16,max_distance=64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[512];
        int rc = canonical(cases[i][0], got, sizeof got);
        CHECK(rc == 0 && !strcmp(got, cases[i][1]), "%s writes %s (got %s)", cases[i][0], cases[i][1],
              rc ? pelab_errmsg : got);
    }
}

/* --scale RULE sets the rule of a scheme that takes one, nothing else; every other scheme refuses
 * it in one line (sinusoidal's own scale= is its amplitude: --scale 1 must not reach it) */
static void set_scale(void) {
    for (int i = 0; i < pos_count(); i++) {
        const PosScheme *s = pos_at(i);
        const char *rules[] = {"pi:2", "1", "none"};
        for (int r = 0; r < 3; r++) {
            PosCtx pc;
            char before[512], after[512];
            if (init_tiny(&pc, s->name) != 0) continue;
            float fake_params;
            pc.params = &fake_params;
            pos_spec(&pc, before, sizeof before);
            pelab_errmsg[0] = 0;
            int rc = pos_set_scale(&pc, rules[r]);
            pos_spec(&pc, after, sizeof after);
            if (!has(s, POS_CAP_RULES))
                CHECK(rc == -1 && strstr(pelab_errmsg, "rotary") && strstr(pelab_errmsg, s->name) &&
                          !strcmp(before, after),
                      "%s: --scale %s refused, spec unchanged (%s): %s", s->name, rules[r], after, pelab_errmsg);
            else if (r == 1)
                CHECK(rc == -1 && strstr(pelab_errmsg, "unknown rule") && !strcmp(before, after),
                      "%s: --scale 1 is not a rule: %s", s->name, pelab_errmsg);
            else CHECK(rc == 0 && strstr(after, r ? "scale=none" : "scale=pi:2") && pc.params == &fake_params,
                       "%s: --scale %s -> %s (%s)", s->name, rules[r], after, rc ? pelab_errmsg : "ok");
            pos_free(&pc);
        }
    }
    /* the other options, orig_len included, are kept as they were */
    PosCtx pc;
    char spec[512];
    init_tiny(&pc, "xpos:base=500,layout=half,orig_len=4,scale_base=64");
    CHECK(pos_set_scale(&pc, "yarn:4") == 0, "xpos takes yarn:4: %s", pelab_errmsg);
    pos_spec(&pc, spec, sizeof spec);
    CHECK(!strcmp(spec, "xpos:base=500,layout=half,fraction=1,scale=yarn:4,orig_len=4,scale_base=64"),
          "xpos --scale yarn:4 changes the rule only: %s", spec);
    pos_free(&pc);
}

/* the shared checks of one spec; alternating which of the two gradchecks ties the head */
static void shared_checks(const PosScheme *s, const char *spec, int flip) {
    char a[512], b[512];
    int rc = canonical(spec, a, sizeof a);
    CHECK(rc == 0 && canonical(a, b, sizeof b) == 0 && !strcmp(a, b), "%s: canonical round trip %s -> %s", spec, a,
          rc ? pelab_errmsg : b);
    if (rc) return;
    gradcheck(spec, 4, !flip);
    gradcheck(spec, 2, flip); /* grouped-query attention */
    /* kvcache_check's reference is one forward over all 12 tokens, which a rule dynamic past L = 8
     * does not match; test_rope_scaling.c checks that decoder against prefix forwards */
    PosCtx pc;
    init_tiny(&pc, spec);
    int dynamic = s->qk_dynamic_from && s->qk_dynamic_from(&pc) >= 0;
    int layer0_nope = !pos_layer_active(&pc, 0); /* equivariance_gap runs layer 0 */
    pos_free(&pc);
    if (!dynamic) {
        kvcache_check(spec, 4);
        kvcache_check(spec, 1);
    }
    causality_check(spec);
    float gap = equivariance_gap(spec);
    if (has(s, POS_CAP_POSITION_FREE) || layer0_nope)
        CHECK(gap >= 0 && gap < 1e-5f, "%s, no mask: permutation-equivariant (gap %.3g)", spec, gap);
    else CHECK(gap > 1e-3f, "%s, no mask: NOT permutation-equivariant (gap %.3g)", spec, gap);
}

void test_schemes(void) {
    capabilities();
    option_tables();
    stored_specs();
    set_scale();
    int n_specs = 0;
    for (int i = 0; i < pos_count(); i++) {
        const PosScheme *s = pos_at(i);
        shared_checks(s, s->name, n_specs++ % 2);
        for (int k = 0; k < POS_MAX_TEST_SPECS && s->test_specs[k]; k++) {
            CHECK(pos_find_spec(s->test_specs[k]) == s, "%s lists %s", s->name, s->test_specs[k]);
            shared_checks(s, s->test_specs[k], n_specs++ % 2);
        }
    }
    fprintf(stderr, "  shared checks on %d specs of %d schemes\n", n_specs, pos_count());
}
