/* claim_family.c: sequential looks, Holm over the claims, outcomes (claim_family.h). */
#include "claim_family.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../core/stats.h"

const char *const claim_outcome_names[CLAIM_OUTCOMES] = {"reproduced", "contradicted", "no effect", "floor",
                                                         "inconclusive", "untestable", "not run"};

int seq_plan_make(SeqPlan *p, const int *seeds, int n, double alpha) {
    memset(p, 0, sizeof *p);
    if (n < 1 || n > SEQ_MAX_LOOKS) return pelab_fail("expected 1 to %d looks", SEQ_MAX_LOOKS);
    for (int k = 0; k < n; k++) {
        if (seeds[k] < 2 || seeds[k] > CLAIM_MAX_SEEDS || (k && seeds[k] <= seeds[k - 1]))
            return pelab_fail("expected increasing seed counts from 2 to %d", CLAIM_MAX_SEEDS);
        p->seeds[k] = seeds[k];
        /* the first look spends as if it added its seeds to none before it */
        p->spend[k] = (double)(seeds[k] - (k ? seeds[k - 1] : 0)) / seeds[n - 1];
    }
    p->n_looks = n, p->alpha = alpha;
    return 0;
}

int seq_plan_same_looks(const SeqPlan *a, const SeqPlan *b) {
    return a->n_looks == b->n_looks && memcmp(a->seeds, b->seeds, sizeof(int) * a->n_looks) == 0;
}

int seq_plan_look_at(const SeqPlan *p, int seeds) {
    for (int k = 0; k < p->n_looks; k++)
        if (p->seeds[k] == seeds) return k;
    return -1;
}

int seq_plans_of_claims(const ClaimList *cl, const SeqPlan *def, int own, SeqPlan *plans) {
    for (int i = 0; i < cl->n; i++) {
        const Claim *c = &cl->c[i];
        plans[i] = *def;
        if (own && c->n_looks && seq_plan_make(&plans[i], c->looks, c->n_looks, def->alpha) != 0)
            return pelab_fail("claims line %d: %s: looks: %s", c->line, c->id, pelab_errmsg);
    }
    return 0;
}

void claim_track_init(ClaimTrack *t, int in_family) {
    memset(t, 0, sizeof *t);
    t->in_family = in_family;
    t->seq_diff = t->seq_eq = t->holm_diff = t->holm_eq = 1;
    t->look_diff = t->look_eq = -1;
    t->outcome = CLAIM_INCONCLUSIVE;
}

void claim_track_look(ClaimTrack *t, const SeqPlan *plan, int look, const ClaimStat *st) {
    if (claim_decided(t) || t->n_looks >= SEQ_MAX_LOOKS || look < 0 || look >= plan->n_looks ||
        (t->n_looks && look <= t->look[t->n_looks - 1]))
        return;
    int k = t->n_looks++;
    t->st[k] = *st, t->look[k] = look;
    double up, lo;
    claim_stat_onesided(st, 0, &up, &lo);
    t->p_diff[k] = isnan(up) ? 1 : fmin(1, 2 * fmin(up, lo));
    t->p_eq[k] = 1;
    if (st->margin > 0) { /* two one-sided tests: above -margin and below +margin */
        double up_lo, lo_lo, up_hi, lo_hi;
        claim_stat_onesided(st, -st->margin, &up_lo, &lo_lo);
        claim_stat_onesided(st, st->margin, &up_hi, &lo_hi);
        if (!isnan(up_lo) && !isnan(lo_hi)) t->p_eq[k] = fmax(up_lo, lo_hi);
    }
    double sd = fmin(1, t->p_diff[k] / plan->spend[look]), se = fmin(1, t->p_eq[k] / plan->spend[look]);
    /* `<=` at the first look: a test whose p is 1 was still taken (its claim is tested, not "no test") */
    if (sd < t->seq_diff || t->look_diff < 0) t->seq_diff = sd, t->look_diff = k;
    if (se < t->seq_eq || t->look_eq < 0) t->seq_eq = se, t->look_eq = k;
}

/* Holm over the family's claims of one kind of p value (diff or eq) into adj */
static void holm_family(ClaimTrack *t, int n, int eq) {
    double *p = xmalloc(sizeof(double) * (n + 1)), *adj = xmalloc(sizeof(double) * (n + 1));
    for (int i = 0; i < n; i++) p[i] = t[i].in_family ? (eq ? t[i].seq_eq : t[i].seq_diff) : NAN;
    stats_holm(p, n, adj);
    for (int i = 0; i < n; i++) *(eq ? &t[i].holm_eq : &t[i].holm_diff) = t[i].in_family ? adj[i] : 1;
    free(p), free(adj);
}

void claim_family_decide(ClaimTrack *t, int n, double alpha) {
    holm_family(t, n, 0);
    holm_family(t, n, 1);
    for (int i = 0; i < n; i++) {
        ClaimTrack *c = &t[i];
        if (!c->in_family) continue;
        c->outcome = CLAIM_INCONCLUSIVE;
        if (c->holm_diff < alpha && c->look_diff >= 0)
            c->outcome = c->st[c->look_diff].effect > 0 ? CLAIM_REPRODUCED : CLAIM_CONTRADICTED;
        else if (c->holm_eq < alpha && c->look_eq >= 0) c->outcome = CLAIM_NO_EFFECT;
        else if (c->n_looks && c->st[c->n_looks - 1].status == CSTAT_FLOOR) c->outcome = CLAIM_FLOOR;
    }
}

int claim_decided(const ClaimTrack *t) {
    return t->outcome == CLAIM_REPRODUCED || t->outcome == CLAIM_CONTRADICTED || t->outcome == CLAIM_NO_EFFECT ||
           t->outcome == CLAIM_FLOOR;
}

int claim_wants_seeds(const ClaimTrack *t, const SeqPlan *p, int seeds) {
    return t->in_family && !claim_decided(t) && p->n_looks > 0 && p->seeds[p->n_looks - 1] >= seeds;
}

int claim_family_levels(const ClaimTrack *t, const SeqPlan *plans, int n, int *levels) {
    int at[CLAIM_MAX_SEEDS + 1] = {0}, n_levels = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; t[i].in_family && k < plans[i].n_looks; k++) at[plans[i].seeds[k]] = 1;
    for (int s = 0; s <= CLAIM_MAX_SEEDS; s++)
        if (at[s]) levels[n_levels++] = s;
    return n_levels;
}

const ClaimStat *claim_track_stat(const ClaimTrack *t) {
    if (!t->n_looks) return NULL;
    int k = t->outcome == CLAIM_REPRODUCED || t->outcome == CLAIM_CONTRADICTED ? t->look_diff
          : t->outcome == CLAIM_NO_EFFECT                                       ? t->look_eq
                                                                                : t->n_looks - 1;
    return &t->st[k >= 0 ? k : t->n_looks - 1];
}

int claim_seeds_needed(const ClaimTrack *t, double level) {
    const ClaimStat *st = t->n_looks ? &t->st[t->n_looks - 1] : NULL;
    if (!st || st->status != CSTAT_TEST || !(st->se > 0) || st->effect == 0 || !(level > 0)) return -1;
    /* the per-seed spread behind se: two samples of n each, se = sd sqrt(2 / n); paired, se = sd / sqrt(n),
     * which a two-sample formula takes as sd / sqrt(2) */
    int n = st->n_a < st->n_b ? st->n_a : st->n_b;
    double sd = st->paired ? st->se * sqrt(n) / sqrt(2.0) : st->se * sqrt(n / 2.0);
    int need = stats_seeds_needed(st->effect, sd, level, 0.8);
    /* a randomization test cannot go below its smallest p value, whatever the effect */
    while (need > 0 && need < 100000 &&
           (st->method == CTEST_PERMUTE ? stats_perm_min_p(need, need) : st->method == CTEST_SIGNFLIP ? stats_signflip_min_p(need) : 0) >= level)
        need++;
    return need;
}
