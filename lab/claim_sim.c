/* claim_sim.c: simulated suites through the real verdict path (claim_sim.h). */
#include "claim_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/rng.h"
#include "../io/claims.h"
#include "../io/results.h"
#include "compare_plan.h"
#include "report.h"
#include "report_verdict.h"
#include "suite_claims.h"

const SimScenario claim_sim_scenarios[] = {
    {"null: normal seeds", SIM_NORMAL, 0, 0, 0},
    {"null: unequal spreads (x4 between the two series)", SIM_UNEQUAL, 0, 0, 0},
    {"null: bimodal task seeds (learned / not)", SIM_BIMODAL, 0, 0, 0},
    {"half the claims 3 sd, half null: normal", SIM_NORMAL, 3, 0, 1},
    {"half the claims 3 sd, half null: bimodal task seeds", SIM_BIMODAL, 3, 0, 1},
    {"every effect exactly at its equivalence margin: normal", SIM_NORMAL, 0, 1, 0},
    {"every claim true, 1 sd: normal", SIM_NORMAL, 1, 0, 0},
    {"every claim true, 2 sd: normal", SIM_NORMAL, 2, 0, 0},
    {"every claim true, 4 sd: normal", SIM_NORMAL, 4, 0, 0},
    {"every claim true, 2 sd: bimodal task seeds", SIM_BIMODAL, 2, 0, 0},
    /* outside the t-tests' assumption (losses spread about normally over seeds), shown for what it costs */
    {"stress, null: skewed losses (lognormal, sigma 0.8)", SIM_SKEWED_LOSS, 0, 0, 0},
    {"stress, null: bimodal losses too", SIM_BIMODAL_LOSS, 0, 0, 0},
};
const int claim_sim_n_scenarios = sizeof claim_sim_scenarios / sizeof claim_sim_scenarios[0];

/* the claim shapes of a simulated suite, as many of each as docs/claims.txt has about */
enum { K_LM_TWO, K_LM_PAIRED, K_LM_FLAT, K_TASK_TWO, K_TASK_LEARNS, K_TASK_DEGRADES, K_KINDS };
static const int kind_of_claim[CLAIM_SIM_CLAIMS] = {K_LM_TWO, K_LM_TWO, K_LM_TWO, K_LM_TWO, K_LM_PAIRED, K_LM_PAIRED,
                                                    K_LM_PAIRED, K_LM_PAIRED, K_LM_FLAT, K_LM_FLAT, K_LM_FLAT,
                                                    K_LM_FLAT, K_LM_FLAT, K_TASK_TWO, K_TASK_TWO, K_TASK_TWO,
                                                    K_TASK_LEARNS, K_TASK_LEARNS, K_TASK_DEGRADES, K_TASK_DEGRADES};
#define LM_SD 0.1      /* nats: seed-to-seed spread of a loss past L */
#define TASK_SD 0.1    /* accuracy (0..1) */
#define FLAT_TOL 0.1   /* nats */
#define DEGRADE_TOL 20 /* points */

static double clip01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

/* one seed's draw of a series of the given shape, centred on 0 with about unit spread; unequal:
 * the second series (b) four times the first's; bimodal: two modes (learned / not) for tasks;
 * skewed_loss: a lognormal spread of losses (the odd seed far worse); bimodal_loss: two modes
 * everywhere */
static double draw_kind(Rng *rng, int shape, int b, int task) {
    double z = rng_normal(rng);
    if (shape == SIM_UNEQUAL) return b ? 4 * z : z;
    if (shape == SIM_BIMODAL_LOSS || (shape == SIM_BIMODAL && task))
        return (rng_f32(rng) < 0.5f ? -1 : 1) + 0.15 * z; /* sd about 1 */
    if (shape == SIM_SKEWED_LOSS && !task) return (exp(0.8 * z) - exp(0.32)) / 0.947; /* mean 0, sd 1 */
    return z;
}
#define draw(rng, shape, b) draw_kind(rng, shape, b, kind >= K_TASK_TWO)

/* the constructed protocol of one claim: its compare plan and claim */
typedef struct {
    Compare c;
    Claim cl;
    double ref;
    int kind;
} SimClaim;

static void sim_claim_setup(SimClaim *s, int kind, int n_seeds) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    Compare *c = &s->c;
    c->name = "sim";
    compare_verdict_defaults(c);
    c->n_schemes = 2, c->n_seeds = n_seeds;
    snprintf(c->scheme[0], sizeof c->scheme[0], "a"), snprintf(c->scheme[1], sizeof c->scheme[1], "b");
    snprintf(c->tag[0], sizeof c->tag[0], "a"), snprintf(c->tag[1], sizeof c->tag[1], "b");
    for (int k = 0; k < n_seeds; k++) c->seed[k] = k + 1;
    c->base.seq_len = 64;
    int task = kind >= K_TASK_TWO;
    c->task = task ? "copy:len=2-8" : NULL;
    c->n_lengths = 2;
    c->lens[0] = task ? 8 : 64, c->lens[1] = task ? 12 : 256;
    Claim *cl = &s->cl;
    snprintf(cl->id, sizeof cl->id, "sim"), snprintf(cl->protocol, sizeof cl->protocol, task ? "copy" : "lm");
    cl->at = task ? 12 : 4, cl->at_is_mult = !task;
    s->ref = task ? 8 : 1;
    snprintf(cl->a, sizeof cl->a, kind == K_LM_PAIRED ? "a+r" : "a");
    snprintf(cl->b, sizeof cl->b, kind == K_LM_PAIRED ? "a" : "b");
    cl->relation = kind == K_LM_FLAT ? CLAIM_FLAT : kind == K_TASK_DEGRADES ? CLAIM_DEGRADES
                 : kind == K_TASK_LEARNS ? CLAIM_LEARNS : CLAIM_BETTER;
    cl->tol = kind == K_LM_FLAT ? FLAT_TOL : DEGRADE_TOL;
}

/* the true effect of a claim (in its unit) and its margin */
static double true_effect(const SimScenario *sc, int i, int kind, double *margin) {
    int task = kind >= K_TASK_TWO, trend = kind == K_LM_FLAT || kind == K_TASK_DEGRADES;
    double sd = task ? 100 * TASK_SD : LM_SD;
    *margin = trend ? 0 : task ? CLAIM_MARGIN_POINTS : CLAIM_MARGIN_NATS;
    if (sc->at_margin > 0) return trend ? 0 : sc->at_margin * *margin;
    if (sc->mixed && i % 2) return 0;
    return sc->effect * sd;
}

/* the per-seed figures of claim kind with true effect e (in its unit), into a row writer */
typedef struct {
    double a_ref[CLAIM_MAX_SEEDS], a_at[CLAIM_MAX_SEEDS], b_ref[CLAIM_MAX_SEEDS], b_at[CLAIM_MAX_SEEDS];
    double rule_at[CLAIM_MAX_SEEDS]; /* K_LM_PAIRED: scheme a under rule r */
} SimDraws;

static void sim_draw(Rng *rng, const SimScenario *sc, int kind, double e, int n, SimDraws *d) {
    for (int k = 0; k < n; k++) {
        switch (kind) {
        case K_LM_TWO: /* losses: a lower by e when the claim holds */
            d->a_ref[k] = 2.5 + 0.01 * rng_normal(rng), d->b_ref[k] = 2.5 + 0.01 * rng_normal(rng);
            d->a_at[k] = 3 - e + LM_SD * draw(rng, sc->shape, 0), d->b_at[k] = 3 + LM_SD * draw(rng, sc->shape, 1);
            break;
        case K_LM_PAIRED: { /* the same checkpoint under a rule: lower by e, the differences spread by LM_SD */
            double base = 3 + 0.3 * rng_normal(rng);
            d->a_ref[k] = 2.5 + 0.01 * rng_normal(rng), d->b_ref[k] = 2.5;
            d->a_at[k] = base, d->rule_at[k] = base - e + LM_SD * draw(rng, sc->shape == SIM_UNEQUAL ? SIM_NORMAL : sc->shape, 0);
            break;
        }
        case K_LM_FLAT: /* worse past L by TOL - e */
            d->a_ref[k] = 2.5 + 0.05 * rng_normal(rng), d->b_ref[k] = 2.5;
            d->a_at[k] = d->a_ref[k] + FLAT_TOL - e + LM_SD * draw(rng, sc->shape == SIM_UNEQUAL ? SIM_NORMAL : sc->shape, 0);
            d->b_at[k] = 3;
            break;
        case K_TASK_TWO: /* accuracies past L: a higher by e points; every seed learned in distribution */
            d->a_ref[k] = d->b_ref[k] = 1;
            d->a_at[k] = clip01(0.5 + e / 100 + (sc->shape == SIM_BIMODAL ? 0.4 : TASK_SD) * draw(rng, sc->shape, 0));
            d->b_at[k] = clip01(0.5 + (sc->shape == SIM_BIMODAL ? 0.4 : TASK_SD) * draw(rng, sc->shape, 1));
            break;
        case K_TASK_LEARNS: /* the gate figures themselves */
            d->a_ref[k] = clip01(0.5 + e / 100 + (sc->shape == SIM_BIMODAL ? 0.4 : TASK_SD) * draw(rng, sc->shape, 0));
            d->b_ref[k] = clip01(0.5 + (sc->shape == SIM_BIMODAL ? 0.4 : TASK_SD) * draw(rng, sc->shape, 1));
            d->a_at[k] = d->b_at[k] = 0;
            break;
        default: /* K_TASK_DEGRADES: a drops by TOL + e points past L */
            d->a_ref[k] = clip01(0.95 + 0.01 * rng_normal(rng)), d->b_ref[k] = 1;
            d->a_at[k] = clip01(d->a_ref[k] - (DEGRADE_TOL + e) / 100 +
                                0.05 * draw(rng, sc->shape == SIM_UNEQUAL ? SIM_NORMAL : sc->shape, 0));
            d->b_at[k] = 0.5;
        }
    }
}

static void put(const SimClaim *s, Agg *a, GenAgg *g, int si, int k, const char *kind, const char *rule, int len,
                double v) {
    ResultRow r = result_row();
    char seed[16];
    snprintf(seed, sizeof seed, "%d", k + 1);
    r.kind = kind, r.scheme = s->c.scheme[si], r.rule = rule, r.seed = seed, r.train_len = 64, r.length = len;
    r.protocol = s->c.task ? "exact" : "nonoverlap", r.value = v;
    report_take_row(&s->c, a, g, si, k, &r);
}

/* the aggregate of claim s from the first n seeds' rows, as compare reads its runs back */
static void sim_aggregate(const SimClaim *s, const SimDraws *d, int n, Agg *a, GenAgg *g) {
    const Compare *c = &s->c;
    report_agg_begin(c, a);
    for (int k = 0; k < n; k++)
        for (int si = 0; si < 2; si++) {
            a->gate[si][k] = RUN_UNGATED; /* found */
            double ref = si ? d->b_ref[k] : d->a_ref[k], at = si ? d->b_at[k] : d->a_at[k];
            const char *kind = c->task ? "task" : "length";
            if (c->task) put(s, a, g, si, k, "gate", "none", c->lens[0], ref);
            put(s, a, g, si, k, kind, "none", c->lens[0], ref);
            put(s, a, g, si, k, kind, "none", c->lens[1], at);
            if (s->kind == K_LM_PAIRED && si == 0) put(s, a, g, si, k, kind, "r", c->lens[1], d->rule_at[k]);
        }
    report_gates(c, a);
}

int claim_sim_plan(int i, int n_plans) { return n_plans > 0 ? (i + i / 2) % n_plans : 0; }

int claim_sim_run(const SimScenario *sc, const SeqPlan *plans, int n_plans, int suites, uint64_t seed, SimResult *out) {
    memset(out, 0, sizeof *out);
    if (n_plans < 1) return pelab_fail("simulation: expected a plan of looks");
    SeqPlan plan[CLAIM_SIM_CLAIMS];
    int n_max = 0;
    for (int i = 0; i < CLAIM_SIM_CLAIMS; i++) {
        plan[i] = plans[claim_sim_plan(i, n_plans)];
        if (plan[i].seeds[plan[i].n_looks - 1] > n_max) n_max = plan[i].seeds[plan[i].n_looks - 1];
    }
    SimClaim *claims = calloc(CLAIM_SIM_CLAIMS, sizeof *claims);
    SimDraws *draws = calloc(CLAIM_SIM_CLAIMS, sizeof *draws);
    ClaimTrack *tracks = calloc(CLAIM_SIM_CLAIMS, sizeof *tracks);
    Agg *a = malloc(sizeof *a);
    GenAgg *g = calloc(1, sizeof *g);
    if (!claims || !draws || !tracks || !a || !g) {
        free(claims), free(draws), free(tracks), free(a), free(g);
        return pelab_fail("simulation: out of memory");
    }
    double effect[CLAIM_SIM_CLAIMS], margin[CLAIM_SIM_CLAIMS];
    for (int i = 0; i < CLAIM_SIM_CLAIMS; i++) {
        sim_claim_setup(&claims[i], kind_of_claim[i], n_max);
        effect[i] = true_effect(sc, i, kind_of_claim[i], &margin[i]);
    }
    for (int i = 0; i < CLAIM_SIM_CLAIMS; i++) claim_track_init(&tracks[i], 1);
    int levels[CLAIM_MAX_SEEDS], n_levels = claim_family_levels(tracks, plan, CLAIM_SIM_CLAIMS, levels);
    Rng rng;
    rng_seed(&rng, seed);
    for (int su = 0; su < suites; su++) {
        for (int i = 0; i < CLAIM_SIM_CLAIMS; i++) {
            claim_track_init(&tracks[i], 1);
            sim_draw(&rng, sc, kind_of_claim[i], effect[i], n_max, &draws[i]);
        }
        for (int j = 0; j < n_levels; j++) { /* the family's looks; each claim tested at its own */
            for (int i = 0; i < CLAIM_SIM_CLAIMS; i++) {
                int k = seq_plan_look_at(&plan[i], levels[j]);
                if (k < 0 || claim_decided(&tracks[i])) continue;
                sim_aggregate(&claims[i], &draws[i], levels[j], a, g);
                ClaimStat st;
                StrBuf why = {0};
                suite_claim_stat(&claims[i].cl, &claims[i].c, a, g, claims[i].ref, levels[j], &st, &why);
                sb_free(&why);
                claim_track_look(&tracks[i], &plan[i], k, &st);
            }
            claim_family_decide(tracks, CLAIM_SIM_CLAIMS, plans[0].alpha);
        }
        int wrong = 0, wrong_eq = 0;
        for (int i = 0; i < CLAIM_SIM_CLAIMS; i++) {
            int o = tracks[i].outcome, last = tracks[i].n_looks ? tracks[i].look[tracks[i].n_looks - 1] : 0;
            out->outcome[o]++, out->claims++;
            out->seeds += plan[i].seeds[last];
            if ((effect[i] == 0 && (o == CLAIM_REPRODUCED || o == CLAIM_CONTRADICTED)) ||
                (effect[i] > 0 && o == CLAIM_CONTRADICTED))
                wrong = 1;
            if (o == CLAIM_NO_EFFECT && margin[i] > 0 && fabs(effect[i]) >= margin[i]) wrong_eq = 1;
        }
        out->false_suites += wrong, out->false_no_effect_suites += wrong_eq;
    }
    out->suites = suites;
    /* Wilson's 95% interval of a proportion */
    double n = suites, p = n > 0 ? out->false_suites / n : 0, z = 1.959964;
    double mid = (p + z * z / (2 * n)) / (1 + z * z / n), half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n);
    out->wilson_lo = fmax(0, mid - half), out->wilson_hi = fmin(1, mid + half);
    free(claims), free(draws), free(tracks), free(a), free(g);
    return 0;
}
