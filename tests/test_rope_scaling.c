/* test_rope_scaling.c: the RoPE context-extension rules (model/pos/rope_scaling.c) against
 * docs/position-encodings.md section 6.7 (PI, NTK, dynamic NTK, YaRN code variant,
 * Llama-3) and section 8 (DynaTan A and B), the numbers listed there; the
 * rules through the real rope scheme; gradients past L; KV-cache decoding under a dynamic rule,
 * and score / eval under --dynamic window and prefix. LongRoPE: test_longrope.c.
 * (The shared checks of each rule: test_schemes.c, from rope's test_specs.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../infer/decode.h"
#include "../infer/eval.h"
#include "../infer/score.h"
#include "../model/layers.h"
#include "../model/model.h"
#include "../model/pos/rope_scaling.h"
#include "rope_test.h"
#include "test.h"

/* the doc prints 8 significant digits: 1e-7 relative covers the rounding (<= 6.3e-8) */
#define RTOL 1e-7

int rel_near(double got, double want, double rtol) {
    return fabs(got - want) <= rtol * fabs(want) || (want == 0 && fabs(got) < 1e-300);
}

int rel_near_vec(const double *got, const double *want, int n, double rtol) {
    for (int i = 0; i < n; i++)
        if (!rel_near(got[i], want[i], rtol)) return 0;
    return 1;
}

RopeRule rule_of(const char *text) {
    RopeRule r;
    if (rope_rule_parse(text, &r) != 0) CHECK(0, "parse %s: %s", text, pelab_errmsg);
    return r;
}

/* section 6.7: d = 8, b = 10000, s = 4, L = 128 */
enum { D67 = 8, L67 = 128 };
static const double THETA[4] = {1, 0.1, 0.01, 0.001};
static const struct {
    const char *rule;
    long n; /* current length (dynamic rules) */
    double freq[4], attn, base; /* base: b' the frequencies imply, 0 = not listed */
} TABLE67[] = {
    {"none", 128, {1, 0.1, 0.01, 0.001}, 1, 10000},
    {"pi:4", 128, {0.25, 0.025, 0.0025, 0.00025}, 1, 0},
    {"ntk:4", 128, {1, 0.062996052, 0.0039685026, 0.00025}, 1, 63496.042079},
    {"dynamic-ntk:4", 128, {1, 0.1, 0.01, 0.001}, 1, 10000},
    {"dynamic-ntk:4", 64, {1, 0.1, 0.01, 0.001}, 1, 10000}, /* shorter than L: n = max(len, L) */
    {"dynamic-ntk:4", 256, {1, 0.058480355, 0.0034199519, 0.0002}, 1, 85498.7973},
    {"dynamic-ntk:4", 512, {1, 0.042529037, 0.001808719, 7.6923077e-05}, 1, 305673.5094},
    {"dynamic-ntk:1", 128, {1, 0.1, 0.01, 0.001}, 1, 10000},
    {"dynamic-ntk:1", 256, {1, 0.079370053, 0.0062996052, 0.0005}, 1, 25198.4210},
    {"dynamic-ntk:1", 512, {1, 0.062996052, 0.0039685026, 0.00025}, 1, 63496.0421},
    {"dynamic-ntk", 512, {1, 0.062996052, 0.0039685026, 0.00025}, 1, 63496.0421}, /* default factor 1 */
    {"yarn:4", 128, {1, 0.0625, 0.0025, 0.00025}, 1.13862944, 0},
    {"llama3:4", 128, {1, 0.050929582, 0.0025, 0.00025}, 1, 0},
};

static void freqs_section_6_7(void) {
    for (size_t i = 0; i < sizeof TABLE67 / sizeof TABLE67[0]; i++) {
        RopeRule r = rule_of(TABLE67[i].rule);
        double f[4], af = -1;
        rope_rule_freqs(&r, D67, 10000, L67, TABLE67[i].n, f, &af);
        CHECK(rel_near_vec(f, TABLE67[i].freq, 4, RTOL) && rel_near(af, TABLE67[i].attn, RTOL),
              "6.7 %s n=%ld: freq [%.10g %.10g %.10g %.10g] attn %.10g", TABLE67[i].rule, TABLE67[i].n, f[0], f[1],
              f[2], f[3], af);
        /* freq_1 = b'^(-2/8), so b' = freq_1^-4; the .out file prints b' to 10 digits */
        if (TABLE67[i].base > 0)
            CHECK(rel_near(pow(f[1], -4.0), TABLE67[i].base, 2e-9), "6.7 %s n=%ld: b' %.10g, want %.10g",
                  TABLE67[i].rule, TABLE67[i].n, pow(f[1], -4.0), TABLE67[i].base);
        CHECK(rope_rule_is_dynamic(&r) == (r.def == rope_rule_find("dynamic-ntk")), "%s: is_dynamic", TABLE67[i].rule);
    }
    /* mscale = 0.1 ln s + 1, printed to 7 digits (rounding <= 4.7e-7 relative) */
    static const double s_list[] = {1, 2, 4, 8, 16, 32};
    static const double ms[] = {1, 1.069315, 1.138629, 1.207944, 1.277259, 1.346574};
    static const double logit[] = {1, 1.143434, 1.296477, 1.459129, 1.631390, 1.813260};
    for (int i = 0; i < 6; i++) {
        RopeRule r = {.def = rope_rule_find("yarn"), .s = s_list[i]};
        double f[4], af;
        rope_rule_freqs(&r, D67, 10000, L67, L67, f, &af);
        CHECK(rel_near(af, ms[i], 6e-7) && rel_near(af * af, logit[i], 6e-7), "yarn:%g mscale %.9g (want %g)",
              s_list[i], af, ms[i]);
    }
    RopeRule y4 = rule_of("yarn:4");
    double f[4], af;
    rope_rule_freqs(&y4, D67, 10000, L67, L67, f, &af);
    CHECK(rel_near(af * af, 1.29647699, RTOL), "yarn:4 logit multiplier %.10g", af * af);
    /* other rules leave the attention factor at 1 for every s */
    const char *unit_af[] = {"pi:8", "ntk:8", "dynamic-ntk:8", "llama3:8", "dynatan", "dynatan-a"};
    for (int i = 0; i < 6; i++) {
        RopeRule r = rule_of(unit_af[i]);
        rope_rule_freqs(&r, D67, 10000, L67, 4 * L67, f, &af);
        CHECK(af == 1.0, "%s: attention factor %g, want 1", unit_af[i], af);
    }
    /* angle of pair 1 at position 300 */
    static const struct {
        const char *rule;
        double angle;
    } angles[] = {{"none", 30.0}, {"pi:4", 7.5}, {"ntk:4", 18.898816}, {"yarn:4", 18.75}, {"llama3:4", 15.278875}};
    for (int i = 0; i < 5; i++) {
        RopeRule r = rule_of(angles[i].rule);
        rope_rule_freqs(&r, D67, 10000, L67, L67, f, &af);
        double a = rope_rule_angle(&r, f[1], 300, L67);
        CHECK(rel_near(a, angles[i].angle, RTOL), "%s: angle of pair 1 at 300 = %.10g, want %g", angles[i].rule, a,
              angles[i].angle);
    }
    /* YaRN clamps use the rotary dim d: d = 16 gives corr dims (-0.392, 2.618) -> (0, 3), and
     * d = 4 gives high = min(ceil(0.654), d - 1) = 1 (ramp over pair 0..1) */
    double f16[8], f4[2];
    rope_rule_freqs(&y4, 16, 10000, L67, L67, f16, &af);
    double want16[8];
    for (int j = 0; j < 8; j++) {
        double th = pow(10000, -2.0 * j / 16), ramp = fmin(1, j / 3.0);
        want16[j] = th / 4 * ramp + th * (1 - ramp);
    }
    CHECK(rel_near_vec(f16, want16, 8, 1e-12), "yarn:4 d=16 ramp over pairs 0..3 (got pair 1 %.10g)", f16[1]);
    rope_rule_freqs(&y4, 4, 10000, L67, L67, f4, &af);
    CHECK(f4[0] == 1.0 && rel_near(f4[1], 0.01 / 4, 1e-12), "yarn:4 d=4: [%g %g], want [1 0.0025]", f4[0], f4[1]);
    /* d = 2 (one pair, frequency b^0 = 1): NTK's d/(d-2) must not turn the base into inf/nan */
    RopeRule dn = rule_of("dynamic-ntk:2"), nt = rule_of("ntk:4");
    double f2;
    rope_rule_freqs(&dn, 2, 10000, 8, 24, &f2, &af);
    CHECK(f2 == 1.0, "dynamic-ntk d=2 freq %g, want 1", f2);
    rope_rule_freqs(&nt, 2, 10000, 8, 8, &f2, &af);
    CHECK(f2 == 1.0, "ntk d=2 freq %g, want 1", f2);
}

/* section 8: theta = [1, 0.1, 0.01, 0.001], L = 128 */
static const struct {
    const char *rule;
    long pos;
    double phi[4];
} DYNATAN[] = {
    {"dynatan-a", 1, {0.0078123411, 0.00078123411, 7.8123411e-05, 7.8123411e-06}},
    {"dynatan-a", 64, {0.46211716, 0.046211716, 0.0046211716, 0.00046211716}},
    {"dynatan-a", 128, {0.76159416, 0.076159416, 0.0076159416, 0.00076159416}},
    {"dynatan-a", 256, {0.96402758, 0.096402758, 0.0096402758, 0.00096402758}},
    {"dynatan-a", 512, {0.9993293, 0.09993293, 0.009993293, 0.0009993293}},
    {"dynatan-a", 4096, {1, 0.1, 0.01, 0.001}},
    {"dynatan", 1, {0.99997966, 0.099997966, 0.0099997966, 0.00099997966}},
    {"dynatan", 64, {59.150996, 5.9150996, 0.59150996, 0.059150996}},
    {"dynatan", 128, {97.484052, 9.7484052, 0.97484052, 0.097484052}},
    {"dynatan", 256, {123.39553, 12.339553, 1.2339553, 0.12339553}},
    {"dynatan", 512, {127.91415, 12.791415, 1.2791415, 0.12791415}},
    {"dynatan", 4096, {128, 12.8, 1.28, 0.128}},
};

static void dynatan_vectors(void) {
    for (size_t i = 0; i < sizeof DYNATAN / sizeof DYNATAN[0]; i++) {
        RopeRule r = rule_of(DYNATAN[i].rule);
        double f[4], af, phi[4], phi_l[4];
        rope_rule_freqs(&r, D67, 10000, L67, L67, f, &af);
        CHECK(rel_near_vec(f, THETA, 4, 1e-15), "%s keeps the RoPE frequencies", DYNATAN[i].rule);
        for (int j = 0; j < 4; j++) phi[j] = rope_rule_angle(&r, f[j], DYNATAN[i].pos, L67);
        CHECK(rel_near_vec(phi, DYNATAN[i].phi, 4, RTOL), "%s pos=%ld (L = training 128): phi [%.10g %.10g ...]",
              DYNATAN[i].rule, DYNATAN[i].pos, phi[0], phi[1]);
        /* an explicit L wins over the training length */
        char text[32];
        snprintf(text, sizeof text, "%s:128", DYNATAN[i].rule);
        RopeRule rl = rule_of(text);
        for (int j = 0; j < 4; j++) phi_l[j] = rope_rule_angle(&rl, f[j], DYNATAN[i].pos, 999);
        CHECK(rel_near_vec(phi_l, DYNATAN[i].phi, 4, RTOL), "%s pos=%ld with training length 999", text,
              DYNATAN[i].pos);
    }
    RopeRule b = rule_of("dynatan");
    CHECK(rope_rule_angle(&b, 1.0, 0, L67) == 0.0, "dynatan: angle 0 at position 0");
}

static void parsing(void) {
    static const struct {
        const char *text;
        const char *name;
        double s, tan_len;
    } ok[] = {
        {"none", "none", 0, 0},          {"pi:4", "pi", 4, 0},
        {"pi:2.5", "pi", 2.5, 0},        {"ntk:4", "ntk", 4, 0},
        {"dynamic-ntk", "dynamic-ntk", 1, 0}, {"dynamic-ntk:2", "dynamic-ntk", 2, 0},
        {"yarn:4", "yarn", 4, 0},        {"yarn:1", "yarn", 1, 0},
        {"llama3:8", "llama3", 8, 0},    {"dynatan", "dynatan", 0, 0},
        {"dynatan:256", "dynatan", 0, 256}, {"dynatan-a", "dynatan-a", 0, 0},
        {"dynatan-a:256", "dynatan-a", 0, 256},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        RopeRule r, back;
        char desc[64], desc2[64];
        int rc = rope_rule_parse(ok[i].text, &r);
        CHECK(rc == 0 && r.def == rope_rule_find(ok[i].name) && r.s == ok[i].s && r.tan_len == ok[i].tan_len,
              "parse %s: rc %d rule %s s %g L %g (%s)", ok[i].text, rc, rope_rule_def(&r)->name, r.s, r.tan_len,
              rc ? pelab_errmsg : "");
        rope_rule_describe(&r, desc, sizeof desc);
        rc = rope_rule_parse(desc, &back);
        rope_rule_describe(&back, desc2, sizeof desc2);
        CHECK(rc == 0 && back.def == r.def && back.s == r.s && back.tan_len == r.tan_len && !strcmp(desc, desc2),
              "describe round-trip %s -> %s -> %s", ok[i].text, desc, desc2);
    }
    /* rejected, with one line naming what was expected */
    static const struct {
        const char *text, *expect;
    } bad[] = {
        {"pi", "pi:4"},           {"pi:0.5", "expected a number"}, {"yarn:abc", "expected a number"},
        {"warp:2", "expected none, pi:S"}, {"pi:", "expected a number"}, {"pi:4x", "expected a number"},
        {"none:4", "no factor"},  {"dynatan:0.5", "expected a number"}, {"ntk:nan", "expected a number"},
        {"llama3:inf", "expected a number"}, {"", "expected none"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        RopeRule r;
        pelab_errmsg[0] = 0;
        int rc = rope_rule_parse(bad[i].text, &r);
        CHECK(rc == -1 && strstr(pelab_errmsg, bad[i].expect) && !strchr(pelab_errmsg, '\n'),
              "reject '%s' naming '%s' (got rc %d: %s)", bad[i].text, bad[i].expect, rc, pelab_errmsg);
    }
    /* through the scheme: the spec keeps the rule, and the canonical spec parses back to itself */
    PosCtx pc, again;
    CHECK(pos_init(&pc, "rope:scale=warp:2", 8, 1, 1, 1, 128) == -1 && strstr(pelab_errmsg, "warp"),
          "rope:scale=warp:2 rejected: %s", pelab_errmsg);
    const char *specs[] = {"rope:scale=yarn:4", "rope:scale=dynamic-ntk:2,fraction=0.5", "rope:scale=dynatan-a:64"};
    for (int i = 0; i < 3; i++) {
        char s1[512], s2[512];
        CHECK(pos_init(&pc, specs[i], 8, 1, 1, 1, 128) == 0, "%s: %s", specs[i], pelab_errmsg);
        pos_spec(&pc, s1, sizeof s1);
        CHECK(pos_init(&again, s1, 8, 1, 1, 1, 128) == 0, "%s: %s", s1, pelab_errmsg);
        pos_spec(&again, s2, sizeof s2);
        const char *rule = strchr(specs[i], '=') + 1; /* "yarn:4", ... up to a comma */
        char want[64];
        snprintf(want, sizeof want, "scale=%.*s", (int)strcspn(rule, ","), rule);
        CHECK(!strcmp(s1, s2) && strstr(s1, want), "spec round-trip %s -> %s -> %s", specs[i], s1, s2);
        pos_free(&pc);
        pos_free(&again);
    }
}

/* --- through the real scheme ------------------------------------------------------------- */

static const float Q0[8] = {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f, 0.7f, -0.8f};
static const float K0[8] = {0.9f, 0.1f, -0.3f, 0.2f, 0.5f, -0.4f, 0.3f, 0.2f};

/* af * R(pos * freq_j) applied to pair j of x (layout interleaved or half), in double */
static void rotate_ref(const float *x, double *y, int hd, int rot_pairs, int half, const double *freq, double af,
                       long pos) {
    for (int i = 0; i < hd; i++) y[i] = x[i];
    for (int j = 0; j < rot_pairs; j++) {
        int a = half ? j : 2 * j, b = half ? j + rot_pairs : 2 * j + 1;
        double ang = (double)pos * freq[j], c = af * cos(ang), s = af * sin(ang);
        y[a] = x[a] * c - x[b] * s;
        y[b] = x[a] * s + x[b] * c;
    }
}

static void scheme_matches_reference(void) {
    static const int P[] = {0, 1, 5, 127, 300, 1000, 5000};
    enum { NP = sizeof P / sizeof P[0] };
    static const int rules[] = {1, 2, 11, 12}; /* pi, ntk, yarn, llama3 rows of TABLE67 */
    for (int layout = 0; layout < 2; layout++)
        for (int ri = 0; ri < 4; ri++)
            for (int fr = 0; fr < 2; fr++) {
                /* fraction=0.5 of head_dim 16 rotates 8 dims: the rule sees d = rot_dim = 8 */
                int hd = fr ? 16 : 8;
                char spec[128];
                snprintf(spec, sizeof spec, "rope:scale=%s,layout=%s%s", TABLE67[rules[ri]].rule,
                         layout ? "half" : "interleaved", fr ? ",fraction=0.5" : "");
                PosCtx pc;
                if (pos_init(&pc, spec, hd, 1, 1, 1, L67) != 0) {
                    CHECK(0, "%s: %s", spec, pelab_errmsg);
                    continue;
                }
                pos_check_positions(&pc, P, NP);
                float v[NP * 16];
                for (int is_key = 0; is_key < 2; is_key++) {
                    for (int r = 0; r < NP; r++)
                        for (int i = 0; i < hd; i++) v[r * hd + i] = (float)(i + 1) * (is_key ? -0.5f : 1.0f);
                    pc.scheme->qk_forward(&pc, v, P, NP, 1, is_key, 0);
                    double worst = 0, want[16];
                    for (int r = 0; r < NP; r++) {
                        float x[16];
                        for (int i = 0; i < hd; i++) x[i] = (float)(i + 1) * (is_key ? -0.5f : 1.0f);
                        rotate_ref(x, want, hd, 4, layout, TABLE67[rules[ri]].freq, TABLE67[rules[ri]].attn, P[r]);
                        for (int i = 0; i < hd; i++) worst = worse(worst, fabs(v[r * hd + i] - want[i]));
                    }
                    CHECK(worst < 2e-5, "%s %s: qk_forward = af * R(angle) x in double, max |diff| %.3g", spec,
                          is_key ? "key" : "query", worst);
                }
                pos_free(&pc);
            }
}

static double dot8(const float *a, const float *b) {
    double s = 0;
    for (int i = 0; i < 8; i++) s += (double)a[i] * b[i];
    return s;
}

/* q(m).k(n) through the scheme, tables built once for n_positions (one length for dynamic rules) */
static double scheme_dot(PosCtx *pc, int m, int n) {
    float q[8], k[8];
    memcpy(q, Q0, sizeof q);
    memcpy(k, K0, sizeof k);
    pc->scheme->qk_forward(pc, q, &m, 1, 1, 0, 0);
    pc->scheme->qk_forward(pc, k, &n, 1, 1, 1, 0);
    return dot8(q, k);
}

static void relative_property(void) {
    static const char *specs[] = {"rope",        "rope:scale=pi:4",       "rope:scale=ntk:4",
                                  "rope:scale=yarn:4", "rope:scale=llama3:4", "rope:scale=dynamic-ntk:4",
                                  "rope:scale=dynatan", "rope:scale=dynatan-a"};
    for (int i = 0; i < 8; i++) {
        PosCtx pc;
        if (pos_init(&pc, specs[i], 8, 1, 1, 1, L67) != 0) {
            CHECK(0, "%s: %s", specs[i], pelab_errmsg);
            continue;
        }
        int hi = 399; /* one length, 400, for every pair below (dynamic rules: within one forward) */
        pos_check_positions(&pc, &hi, 1);
        double d52 = scheme_dot(&pc, 5, 2), d30 = scheme_dot(&pc, 3, 0), d103 = scheme_dot(&pc, 103, 100);
        double d399 = scheme_dot(&pc, 399, 396);
        double spread = fmax(fmax(fabs(d52 - d30), fabs(d52 - d103)), fabs(d52 - d399));
        int is_tan = strstr(specs[i], "dynatan") != NULL;
        if (is_tan)
            CHECK(spread > 1e-3, "%s is NOT relative: q(5).k(2) %.6f, q(103).k(100) %.6f, q(399).k(396) %.6f",
                  specs[i], d52, d103, d399);
        else
            CHECK(spread < 2e-6, "%s is relative: q(5).k(2) %.8f q(3).k(0) %.8f q(103).k(100) %.8f", specs[i], d52,
                  d30, d103);
        if (i == 0) CHECK(fabs(d52 - -0.4404856942) < 1e-6, "rope q(5).k(2) = %.10f (section 4)", d52);
        /* same position: rotation preserves q.k, so the ratio is the logit multiplier af^2 */
        double ratio = scheme_dot(&pc, 77, 77) / dot8(Q0, K0);
        double want = strstr(specs[i], "yarn") ? 1.29647699 : 1.0;
        CHECK(fabs(ratio - want) < 2e-6 * want, "%s: q(m).k(m) / q.k = %.8f, want %.8f", specs[i], ratio, want);
        pos_free(&pc);
    }
    /* the YaRN multiplier on a pair at distance: q.k under yarn = 1.29647699 * q.k at the yarn frequencies */
    PosCtx py;
    pos_init(&py, "rope:scale=yarn:4", 8, 1, 1, 1, L67);
    int hi = 300;
    pos_check_positions(&py, &hi, 1);
    double qd[8], kd[8], ref = 0;
    rotate_ref(Q0, qd, 8, 4, 0, TABLE67[11].freq, 1.0, 300);
    rotate_ref(K0, kd, 8, 4, 0, TABLE67[11].freq, 1.0, 17);
    for (int i = 0; i < 8; i++) ref += qd[i] * kd[i];
    double got = scheme_dot(&py, 300, 17);
    CHECK(fabs(got - 1.29647699 * ref) < 2e-6, "yarn q(300).k(17) = %.8f = 1.29647699 * %.8f", got, ref);
    pos_free(&py);
}

/* DynaTan through the scheme: default L = the training length (seq_len 128) */
static void dynatan_through_scheme(void) {
    for (size_t i = 0; i < sizeof DYNATAN / sizeof DYNATAN[0]; i++) {
        char spec[64];
        snprintf(spec, sizeof spec, "rope:scale=%s", DYNATAN[i].rule);
        PosCtx pc;
        pos_init(&pc, spec, 8, 1, 1, 1, L67);
        int p = (int)DYNATAN[i].pos;
        pos_check_positions(&pc, &p, 1);
        float x[8] = {1, 0, 1, 0, 1, 0, 1, 0}; /* interleaved pair j = (2j, 2j+1): e0 -> (cos, sin) */
        pc.scheme->qk_forward(&pc, x, &p, 1, 1, 0, 0);
        double worst = 0;
        for (int j = 0; j < 4; j++) {
            double phi = DYNATAN[i].phi[j];
            worst = worse(worst, fmax(fabs(x[2 * j] - cos(phi)), fabs(x[2 * j + 1] - sin(phi))));
        }
        CHECK(worst < 1e-6, "%s pos %d through rope: (cos, sin) of section 8 phi, max |diff| %.3g", spec, p, worst);
        pos_free(&pc);
    }
}

/* --- models -------------------------------------------------------------------------------- */

/* tiny_model's shape and weights, with a choice of heads and layers */
static int small_model(Model *m, const char *spec, int n_heads, int n_kv_heads, int n_layers,
                       unsigned long long seed) {
    return tiny_model_shaped(m, spec, n_heads, n_kv_heads, n_layers, 0, seed);
}

/* gradcheck's positions stop at 7 = L - 1, where a dynamic rule is the plain one: a directional
 * derivative over T = 24 positions (3L) checks the backward where the rules differ from RoPE */
static void directional_gradcheck(const char *spec) {
    Model m;
    if (tiny_model(&m, spec, 2, 0, 11) != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    enum { T = 24 };
    int in[T], tg[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 5 + 2) % 13, tg[i] = (i * 3 + 1) % 13, pos[i] = i;
    model_alloc_train(&m, 1, T);
    model_zero_grad(&m);
    model_forward(&m, in, tg, pos, 1, T);
    model_backward(&m);
    float *u = xmalloc(m.n_params * sizeof(float)), *p0 = xmalloc(m.n_params * sizeof(float));
    memcpy(p0, m.params_mem, m.n_params * sizeof(float));
    Rng rng;
    rng_seed(&rng, 3);
    double analytic = 0;
    for (size_t i = 0; i < m.n_params; i++) u[i] = rng_normal(&rng), analytic += (double)u[i] * m.grads_mem[i];
    const double eps = 1e-3;
    double l[2];
    for (int sgn = 0; sgn < 2; sgn++) {
        for (size_t i = 0; i < m.n_params; i++) m.params_mem[i] = p0[i] + (float)((sgn ? -eps : eps) * u[i]);
        model_forward(&m, in, tg, pos, 1, T);
        l[sgn] = m.mean_loss;
    }
    double numeric = (l[0] - l[1]) / (2 * eps);
    CHECK(fabs(numeric - analytic) <= 1e-2 * fabs(numeric) + 2e-3 && fabs(numeric) > 1e-2,
          "%s positions 0..23: directional derivative analytic %.6f numeric %.6f", spec, analytic, numeric);
    free(u);
    free(p0);
    model_free(&m);
}

/* The shared checks of rope:scale=dynamic-ntk:2,fraction=0.5 (rope's test_specs) stay within L and,
 * on head_dim 4, rotate one pair of frequency 1, which no base changes: these directional checks
 * and dynamic_kvcache do the real work past L. */
static void gradients(void) {
    const char *dir_specs[] = {"rope:scale=dynamic-ntk:2", "rope:scale=yarn:4,layout=half", "rope:scale=dynatan",
                               "rope:scale=dynatan-a:4"};
    for (int i = 0; i < 4; i++) directional_gradcheck(dir_specs[i]);
}

/* q(m) of a unit vector on pair 1 after the tables were built for a sequence of n positions */
float pair1_after_length(PosCtx *pc, int n, int m) {
    int hi = n - 1;
    pos_check_positions(pc, &hi, 1);
    float x[8] = {0, 0, 1, 0, 0, 0, 0, 0};
    pc->scheme->qk_forward(pc, x, &m, 1, 1, 0, 0);
    return x[3];
}

/* For a dynamic rule each prefix has its own length: the reference for the logits at position t
 * is the last row of a full forward over tokens 0..t (kvcache_check's single forward over all 12
 * tokens is not). Re-rotating cached keys would not be enough: a cached token's k and v at layer
 * >= 1 come from its hidden state at its own step, under older frequencies. So past L the decoder
 * recomputes the prefix at every step: exact in every layer up to 3L. The HF-style cache
 * (stale_dynamic: everything kept as computed at each token's own step) is not. */
/* grows: the rule keeps changing past L (dynamic NTK), so row 12 differs too; else (LongRoPE) one
 * switch at L, and row 12 of the long forward equals the forward over 13 tokens */
void dynamic_kvcache_one(Model *m, const char *what, int grows) {
    enum { T = 24, L = 8 }; /* 3x the training length */
    int V = m->cfg.vocab_size, in[T], pos[T], one_layer = m->cfg.n_layers == 1;
    for (int i = 0; i < T; i++) in[i] = (i * 7 + 3) % V, pos[i] = i;
    model_alloc_train(m, 1, T);
    float *ref = xmalloc(sizeof(float) * T * V), *dec = xmalloc(sizeof(float) * V);
    for (int t = 0; t < T; t++) {
        model_forward(m, in, NULL, pos, 1, t + 1);
        memcpy(ref + t * V, m->acts.logits + t * V, sizeof(float) * V);
    }
    /* the rule really acts: rows of one forward over 24 tokens differ from the prefix forwards
     * (row 0 is position 0 attending to itself, never rotated: look at rows 5 and 12) */
    model_forward(m, in, NULL, pos, 1, T);
    float diff5 = max_abs_diff(m->acts.logits + 5 * V, ref + 5 * V, V),
          diff12 = max_abs_diff(m->acts.logits + 12 * V, ref + 12 * V, V);
    CHECK(diff5 > 1e-3f && (grows ? diff12 > 1e-3f : diff12 <= 1e-5f),
          "%s: a forward over 24 tokens gives other logits at t = 5 %s at t = 12 than the prefix forwards "
          "(max |diff| %.3g, %.3g)", what, grows ? "and" : "and the same", diff5, diff12);
    float beyond[2] = {0, 0};
    for (int variant = 0; variant < 2; variant++) {
        KVCache kv;
        kvcache_init(&kv, m, T, 4);
        CHECK(kv.dynamic_from == L, "%s: the cache knows the rule is dynamic past L (%ld)", what, kv.dynamic_from);
        kv.stale_dynamic = variant; /* 1: the HF-style cache, keys rotated once at their own step */
        float in_l = 0;
        int rc = 0;
        for (int t = 0; t < T && rc == 0; t++) {
            rc = decode_forward(m, &kv, in + t, pos + t, 1, dec, 0);
            float d = max_abs_diff(dec, ref + t * V, V);
            if (t < L) in_l = fmaxf(in_l, d);
            else beyond[variant] = fmaxf(beyond[variant], d);
        }
        CHECK(rc == 0 && in_l <= 1e-4f, "%s, %s: decoder = prefix forward within L, max |diff| %.3g (%s)", what,
              variant ? "stale cache" : "recomputing cache", in_l, rc ? pelab_errmsg : "ok");
        kvcache_free(&kv);
    }
    CHECK(beyond[0] <= 1e-4f, "%s (%s): decoder = prefix forward up to 3L, max |diff| %.3g", what,
          one_layer ? "1 layer" : "2 layers", beyond[0]);
    CHECK(beyond[1] > 1e-3f, "%s: the stale (HF-style) cache is wrong beyond L (max |diff| %.3g)", what, beyond[1]);
    free(ref);
    free(dec);
}

static void dynamic_kvcache(void) {
    Model m;
    /* head_dim 8, fraction 0.5: rot_dim 4, so pair 1 (freq b'^(-1/2)) follows the length. (On
     * tiny_model, head_dim 4, fraction 0.5 leaves one pair of frequency b'^0 = 1: nothing to scale.) */
    const char *spec = "rope:scale=dynamic-ntk:2,fraction=0.5";
    PosCtx pc;
    pos_init(&pc, spec, 16, 2, 2, 1, 8);
    float at8 = pair1_after_length(&pc, 8, 5), at24 = pair1_after_length(&pc, 24, 5);
    /* n = 24, L = 8, F = 2: b' = 1e4 * (2*3 - 1)^(4/2) = 250000, freq_1 = 0.002 (0.01 at n <= L) */
    CHECK(fabsf(at8 - (float)sin(5 * 0.01)) < 1e-7f && fabsf(at24 - (float)sin(5 * 0.002)) < 1e-7f,
          "%s head_dim 8: pair 1 at pos 5 = sin(5 * %g) at length 24 (got %g, %g at length 8)", spec, 0.002, at24, at8);
    pos_free(&pc);
    pos_init(&pc, spec, 16, 4, 4, 1, 8); /* tiny_model's head_dim 4 */
    float x[4] = {1, 0, 0, 0};
    int p = 5, hi = 23;
    pos_check_positions(&pc, &hi, 1);
    pc.scheme->qk_forward(&pc, x, &p, 1, 1, 0, 0);
    CHECK(fabsf(x[1] - (float)sin(5.0)) < 1e-7f, "%s head_dim 4: the one pair keeps frequency 1 at any length", spec);
    pos_free(&pc);

    static const struct {
        const char *spec;
        int heads, kv_heads, layers;
    } cases[] = {
        {"rope:scale=dynamic-ntk:2,fraction=0.5", 2, 1, 1}, /* head_dim 8, partial rotary, GQA */
        {"rope:scale=dynamic-ntk:2,layout=half", 4, 4, 1},  /* head_dim 4 */
        {"rope:scale=dynamic-ntk:2,fraction=0.5", 2, 1, 2},
        {"rope:scale=dynamic-ntk:2,layout=half", 4, 4, 2},  /* tiny_model's shape */
    };
    for (int i = 0; i < 4; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s heads %d kv %d layers %d", cases[i].spec, cases[i].heads, cases[i].kv_heads,
                 cases[i].layers);
        if (small_model(&m, cases[i].spec, cases[i].heads, cases[i].kv_heads, cases[i].layers, 21) != 0) {
            CHECK(0, "%s: %s", what, pelab_errmsg);
            continue;
        }
        dynamic_kvcache_one(&m, what, 1);
        model_free(&m);
    }
}

/* HF semantics: a shorter sequence after a long one gets the original frequencies back */
static void dynamic_reset(void) {
    Model m, fresh;
    const char *spec = "rope:scale=dynamic-ntk:2";
    tiny_model(&m, spec, 2, 1, 17);
    tiny_model(&fresh, spec, 2, 1, 17);
    enum { T = 40, S = 6 };
    int V = m.cfg.vocab_size, in[T], pos[T];
    for (int i = 0; i < T; i++) in[i] = (i * 4 + 1) % V, pos[i] = i;
    model_alloc_train(&m, 1, T);
    model_alloc_train(&fresh, 1, S);
    model_forward(&fresh, in, NULL, pos, 1, S);
    CHECK(model_forward(&m, in, NULL, pos, 1, T) == 0, "dynamic forward at length 40: %s", pelab_errmsg);
    CHECK(max_abs_diff(m.acts.logits, fresh.acts.logits, S * V) > 1e-3f,
          "the length-40 forward used other frequencies on its first 6 rows");
    model_forward(&m, in, NULL, pos, 1, S);
    CHECK(memcmp(m.acts.logits, fresh.acts.logits, sizeof(float) * S * V) == 0,
          "length 6 after length 40 = a fresh model at length 6 (max |diff| %.3g)",
          max_abs_diff(m.acts.logits, fresh.acts.logits, S * V));
    /* pelab's rule is a function of the current length alone (n = max(len, L)); HF instead keeps
     * the grown frequencies for any length >= L until one < L arrives. Length 20 after 40: */
    model_forward(&m, in, NULL, pos, 1, T);
    model_alloc_train(&fresh, 1, 20);
    model_forward(&fresh, in, NULL, pos, 1, 20);
    model_forward(&m, in, NULL, pos, 1, 20);
    CHECK(memcmp(m.acts.logits, fresh.acts.logits, sizeof(float) * 20 * V) == 0,
          "length 20 after length 40 = a fresh model at length 20 (stateless rule)");
    model_free(&m);
    model_free(&fresh);
}

/* out[i] = log p(tokens[i + 1]) as the decoder assigns it, feeding tokens[0..n) one at a time */
static void decoded_logprobs(Model *m, const int *tokens, int n, float *out) {
    int V = m->cfg.vocab_size;
    float *row = xmalloc(sizeof(float) * V);
    KVCache kv;
    kvcache_init(&kv, m, n, 4);
    for (int i = 0; i < n; i++) {
        decode_forward(m, &kv, tokens + i, &i, 1, row, 0);
        log_softmax(row, row, V);
        out[i] = row[tokens[i + 1]];
    }
    kvcache_free(&kv);
    free(row);
}

/* out[i] = log p(tokens[i + 1]) from one full forward over tokens[0..n) */
static void window_logprobs(Model *m, const int *tokens, int n, float *out) {
    int V = m->cfg.vocab_size, pos[64];
    for (int i = 0; i < n; i++) pos[i] = i;
    model_alloc_train(m, 1, n);
    model_forward(m, tokens, NULL, pos, 1, n);
    for (int i = 0; i < n; i++) {
        float *row = m->acts.logits + (size_t)i * V;
        log_softmax(row, row, V);
        out[i] = row[tokens[i + 1]];
    }
}

/* eval's windows of len advanced by stride: each target's reference log-prob from the window
 * that scores it (eval.h), by `ref` (the decoder's or one forward's); max |diff| against trace */
static float windows_vs_reference(Model *m, const int *tokens, size_t n, int len, int stride, const float *trace,
                                  void (*ref)(Model *, const int *, int, float *), float *past_l_diff) {
    float lp[64], worst = 0;
    long L = m->cfg.seq_len;
    size_t done = 0, last = n - 1;
    for (size_t s = 0; done < last; s += (size_t)stride) {
        size_t e = s + (size_t)len < last ? s + (size_t)len : last;
        ref(m, tokens + s, (int)(e - s), lp);
        for (size_t t = done + 1; t <= e; t++) {
            float d = fabsf(lp[t - s - 1] - trace[t]);
            worst = fmaxf(worst, d);
            if (past_l_diff && (long)(t - s) > L) *past_l_diff = fmaxf(*past_l_diff, d);
        }
        done = e;
    }
    return worst;
}

/* score and eval under --dynamic: prefix mode gives every target the log-prob KV-cache decoding
 * gives it (its prefix's length), window mode one forward over the window (HF's full forward);
 * on a model without a dynamic rule the two are one computation */
static void dynamic_score_modes(void) {
    enum { N = 61, LEN = 24 }; /* windows of 3L, L = 8: two full, one of 12 */
    Model m;
    const char *spec = "rope:scale=dynamic-ntk:2,fraction=0.5";
    if (small_model(&m, spec, 2, 1, 2, 21) != 0) {
        CHECK(0, "%s: %s", spec, pelab_errmsg);
        return;
    }
    int V = m.cfg.vocab_size, tokens[N];
    for (int i = 0; i < N; i++) tokens[i] = (i * 7 + 3 + i / 5) % V;
    float prefix[N], window[N];
    EvalTrace tp = {prefix, NULL}, tw = {window, NULL};
    ScoreResult rp, rw, sp, sw;
    int rc = eval_windows(&m, tokens, N, LEN, LEN, DYNAMIC_PREFIX, 0, NULL, NULL, &tp, &rp);
    rc |= eval_windows(&m, tokens, N, LEN, LEN, DYNAMIC_WINDOW, 0, NULL, NULL, &tw, &rw);
    CHECK(rc == 0, "%s: eval_windows under both modes: %s", spec, pelab_errmsg);
    float past_l = 0, apart = 0;
    float dec = windows_vs_reference(&m, tokens, N, LEN, LEN, prefix, decoded_logprobs, &past_l);
    CHECK(dec <= 1e-5f && past_l > 0, "%s: prefix mode = the decoder's log-probs at every target, max |diff| %.3g "
          "(past L %.3g)", spec, dec, past_l);
    float full = windows_vs_reference(&m, tokens, N, LEN, LEN, window, window_logprobs, NULL);
    CHECK(full <= 1e-5f, "%s: window mode = one forward over each window, max |diff| %.3g", spec, full);
    for (int t = 1; t < N; t++) apart = fmaxf(apart, fabsf(prefix[t] - window[t]));
    CHECK(apart > 1e-3f, "%s: the two modes differ past L (max |diff| %.3g)", spec, apart);
    /* score = eval at stride len, mode for mode */
    score_tokens(&m, tokens, N, LEN, DYNAMIC_PREFIX, NULL, &sp);
    score_tokens(&m, tokens, N, LEN, DYNAMIC_WINDOW, NULL, &sw);
    CHECK(sp.nll_sum == rp.nll_sum && sw.nll_sum == rw.nll_sum && sp.nll_sum != sw.nll_sum,
          "score_tokens = eval_windows under each mode (%.9g %.9g, %.9g %.9g)", sp.nll_sum, rp.nll_sum, sw.nll_sum,
          rw.nll_sum);
    /* sliding, stride 5: later windows score only their last 5 rows, all past L */
    rc = eval_windows(&m, tokens, N, LEN, 5, DYNAMIC_PREFIX, 0, NULL, NULL, &tp, &rp);
    dec = windows_vs_reference(&m, tokens, N, LEN, 5, prefix, decoded_logprobs, NULL);
    CHECK(rc == 0 && dec <= 1e-5f, "%s: sliding prefix mode = the decoder, max |diff| %.3g", spec, dec);
    /* score --lines: one text of 30 tokens */
    const int *text = tokens, len30 = 30;
    float lines[29], ref[29];
    rc = score_texts(&m, &text, &len30, 1, 4, DYNAMIC_PREFIX, lines, NULL);
    decoded_logprobs(&m, tokens, 29, ref);
    CHECK(rc == 0 && max_abs_diff(lines, ref, 29) <= 1e-5f,
          "%s: score_texts prefix mode = the decoder, max |diff| %.3g", spec, max_abs_diff(lines, ref, 29));
    model_free(&m);

    const char *plain[] = {"rope", "rope:scale=ntk:2"};
    for (int k = 0; k < 2; k++) {
        if (small_model(&m, plain[k], 2, 1, 2, 21) != 0) {
            CHECK(0, "%s: %s", plain[k], pelab_errmsg);
            continue;
        }
        eval_windows(&m, tokens, N, LEN, 5, DYNAMIC_PREFIX, 0, NULL, NULL, &tp, &rp);
        eval_windows(&m, tokens, N, LEN, 5, DYNAMIC_WINDOW, 0, NULL, NULL, &tw, &rw);
        CHECK(memcmp(prefix + 1, window + 1, sizeof(float) * (N - 1)) == 0 && rp.nll_sum == rw.nll_sum,
              "%s: no dynamic rule, both modes the same bit for bit", plain[k]);
        model_free(&m);
    }
}

/* the shared checks of every rule in the table (rope_scaling.c), whatever it is: its texts parse
 * and read back, its frequencies are finite and positive at L and past it, its angle at position 0
 * is 0, a static rule never changes with the length, an HF type maps back to the rule, and every
 * list the user reads names it (the parse error, --help of score and of train, README's block) */
static void every_rule_in_the_table(void) {
    static char help[16384], train_help[65536], readme_block[16384];
    char err[600];
    run_pelab("./pelab score --help", help, sizeof help);
    run_pelab("./pelab train --help", train_help, sizeof train_help);
    RopeRule bogus;
    CHECK(rope_rule_parse("no-such-rule", &bogus) == -1, "an unknown rule is refused");
    snprintf(err, sizeof err, "%s", pelab_errmsg);
    for (int i = 0; i < rope_rule_count(); i++) {
        const RopeRuleDef *d = rope_rule_at(i);
        CHECK(d->name && d->usage && d->title && d->summary && !strncmp(d->usage, d->name, strlen(d->name)),
              "rule %d (%s): name, usage, title and summary, the usage starting with the name", i, d->name);
        CHECK(rope_rule_find(d->name) == d && (!d->hf_type || rope_rule_find_hf(d->hf_type) == d),
              "%s: found by its name and by its HF type %s", d->name, d->hf_type ? d->hf_type : "(none)");
        CHECK(strstr(err, d->usage) != NULL, "%s: named by the unknown-rule message (%s)", d->usage, err);
        CHECK(i == 0 || strstr(help, d->usage) != NULL, "%s: in score --help", d->usage);
        CHECK(strstr(train_help, d->usage) != NULL, "%s: in train --help (the scale= option)", d->usage);
        if (d->arg == ROPE_ARG_CUSTOM) continue; /* longrope: test_longrope.c, with its file */
        const char *arg = d->arg == ROPE_ARG_NONE ? NULL : d->arg == ROPE_ARG_OPT_LENGTH ? "32" : "2.5";
        for (int with = 0; with < 2; with++) {
            if (with && !arg) break;
            if (!with && d->arg == ROPE_ARG_FACTOR) {
                RopeRule r;
                CHECK(rope_rule_parse(d->name, &r) == -1 && strstr(pelab_errmsg, d->name),
                      "%s without its factor is refused naming it (%s)", d->name, pelab_errmsg);
                continue;
            }
            char text[64], back[64], again[64];
            snprintf(text, sizeof text, "%s%s%s", d->name, with ? ":" : "", with ? arg : "");
            RopeRule r, r2;
            int rc = rope_rule_parse(text, &r);
            rope_rule_describe(&r, back, sizeof back);
            int rc2 = rope_rule_parse(back, &r2);
            rope_rule_describe(&r2, again, sizeof again);
            CHECK(rc == 0 && rc2 == 0 && r.def == d && r2.def == d && !strcmp(back, again),
                  "%s parses (%d) and reads back: %s -> %s", text, rc, back, again);
            double f[8], f_past[8], af, af_past;
            rope_rule_freqs(&r, 16, 10000, 64, 64, f, &af);
            rope_rule_freqs(&r, 16, 10000, 64, 1000, f_past, &af_past);
            int ok = isfinite(af) && af > 0 && isfinite(af_past) && af_past > 0;
            for (int j = 0; j < 8; j++) ok &= isfinite(f[j]) && f[j] > 0 && isfinite(f_past[j]) && f_past[j] > 0;
            CHECK(ok, "%s: frequencies and attention factor finite and > 0 at L and past it", text);
            CHECK(rope_rule_angle(&r, f[1], 0, 64) == 0, "%s: angle 0 at position 0", text);
            if (!rope_rule_is_dynamic(&r))
                CHECK(!rope_rule_changes(&r, 64, 64, 1000) && !memcmp(f, f_past, sizeof f) && af == af_past,
                      "%s: a static rule's frequencies do not follow the length", text);
        }
    }
    /* README's table is pelab info --rules, as make readme-lists writes it */
    static char listed[16384];
    int rc = run_pelab("./pelab info --rules", listed, sizeof listed);
    unsigned char *readme;
    size_t n;
    if (read_file("README.md", &readme, &n) != 0) {
        printf("  (README.md not found: its --scale table not checked)\n");
        return;
    }
    const char *marker = "<!-- pelab info --rules -->\n", *begin = strstr((const char *)readme, marker);
    const char *end = begin ? strstr(begin, "<!-- end -->") : NULL;
    size_t len = begin && end ? (size_t)(end - begin) - strlen(marker) : 0;
    if (begin && end && len < sizeof readme_block) memcpy(readme_block, begin + strlen(marker), len), readme_block[len] = 0;
    CHECK(rc == 0 && begin && end && !strcmp(readme_block, listed),
          "README.md's --scale table is what pelab info --rules prints (run make readme-lists): exit %d, %s", rc,
          begin && end ? "the block differs" : "no block between <!-- pelab info --rules --> and <!-- end -->");
    free(readme);
}

void test_rope_scaling(void) {
    every_rule_in_the_table();
    freqs_section_6_7();
    dynatan_vectors();
    parsing();
    scheme_matches_reference();
    relative_property();
    dynatan_through_scheme();
    gradients();
    dynamic_kvcache();
    dynamic_reset();
    dynamic_score_modes();
}
