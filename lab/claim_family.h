/* claim_family.h: the pre-registered claims of a suite decided together, with seeds added until
 * each is decided, and the false-verdict rate kept.
 *
 * Each claim is one hypothesis fixed before any run, with a direction: its statistic (claim_stat.h)
 * gives at every look (a number of seeds per series fixed in advance, e.g. 3, 5, 8) a two-sided p
 * value for "no difference" (significant with the effect > 0: reproduced; < 0: contradicted) and,
 * where the claim has a margin, the equivalence p value of two one-sided tests against it (the
 * effect shown to lie inside +-margin: no effect).
 *
 * Sequential rule: look k may spend the share spend[k] of alpha (spending proportional to the seeds
 * a look adds). A claim's sequential p value is min over its looks of p_k / spend[k]; by the union
 * bound it is a valid p value whatever the looks' correlation and whenever the seeds stop (decided,
 * a cap, a time budget), so re-testing after every look costs nothing in error rate. Each claim may
 * have its own plan (claims.txt's LOOKS, fixed before any data: seq_plans_of_claims) and spends alpha
 * over its own looks; the family looks at the union of its claims' looks (claim_family_levels), each
 * claim tested only at its own, seeds added only while its schedule lasts (claim_wants_seeds).
 *
 * Family: the testable claims of the protocols that run (fixed by the setting before any data),
 * Holm's step-down over their sequential p values, the difference and the equivalence tests each
 * their own family at alpha; a claim without a test counts with p = 1. Holm is monotone and a
 * sequential p value only falls, so a claim decided at a look stays decided: it is frozen then and
 * gets no further looks. Proof by simulation: tests/test_claim_sim.c, `pelab suite --simulate N`. */
#ifndef PELAB_CLAIM_FAMILY_H
#define PELAB_CLAIM_FAMILY_H

#include "claim_stat.h"

/* CLAIM_NOT_RUN: testable, but its protocol is outside this run (quick leaves some out): not in the
 * family, not counted as inconclusive */
enum { CLAIM_REPRODUCED, CLAIM_CONTRADICTED, CLAIM_NO_EFFECT, CLAIM_FLOOR, CLAIM_INCONCLUSIVE, CLAIM_UNTESTABLE,
       CLAIM_NOT_RUN, CLAIM_OUTCOMES };
extern const char *const claim_outcome_names[CLAIM_OUTCOMES];

enum { SEQ_MAX_LOOKS = CLAIM_MAX_LOOKS };

typedef struct {
    int n_looks;
    int seeds[SEQ_MAX_LOOKS];    /* seeds per series at each look, increasing */
    double spend[SEQ_MAX_LOOKS]; /* the share of alpha each look spends (they sum to 1) */
    double alpha;                /* the family's false-verdict rate */
} SeqPlan;

/* looks at seeds[n] (increasing, 2..CLAIM_MAX_SEEDS), each spending the share of the seeds it adds;
 * 0, or -1 with pelab_errmsg. Their text ("3,5,8", --looks, a claim's LOOKS): io/claims.h
 * claim_looks_parse */
int seq_plan_make(SeqPlan *p, const int *seeds, int n, double alpha);

/* 1 when a and b look at the same seeds (their spend follows) */
int seq_plan_same_looks(const SeqPlan *a, const SeqPlan *b);
/* the look of p at `seeds` seeds per series, or -1 when p takes none there */
int seq_plan_look_at(const SeqPlan *p, int seeds);
/* each claim's plan, fixed before any data, into plans[cl->n]: its own LOOKS where `own` is set and
 * it has them, else def (alpha: def's); 0, or -1 with pelab_errmsg naming the claim's line */
int seq_plans_of_claims(const ClaimList *cl, const SeqPlan *def, int own, SeqPlan *plans);

typedef struct {
    int in_family;               /* testable, its protocol ran: counts in Holm's m */
    int n_looks;                 /* looks taken (frozen once decided) */
    int look[SEQ_MAX_LOOKS];     /* the plan's look behind each (a claim may skip a look: a budget) */
    ClaimStat st[SEQ_MAX_LOOKS]; /* the statistic at each look */
    double p_diff[SEQ_MAX_LOOKS], p_eq[SEQ_MAX_LOOKS]; /* raw p values per look (1 without a test) */
    double seq_diff, seq_eq;     /* min over looks of p / spend, at most 1 */
    int look_diff, look_eq;      /* the look behind each */
    double holm_diff, holm_eq;   /* Holm-adjusted over the family */
    int outcome;                 /* CLAIM_*, set by claim_family_decide */
} ClaimTrack;

/* a claim outside the family (untestable, or its protocol did not run) */
void claim_track_init(ClaimTrack *t, int in_family);
/* look `look` of plan (its index: the spend) with statistic st; ignored once t is decided. A claim
 * may skip looks (each spends its own share; skipping one only gives up that share) but never take
 * one twice or go back */
void claim_track_look(ClaimTrack *t, const SeqPlan *plan, int look, const ClaimStat *st);
/* Holm over the claims in the family, then each one's outcome (the untestable and those outside
 * the family keep CLAIM_UNTESTABLE / CLAIM_NOT_RUN as the caller set in outcome) */
void claim_family_decide(ClaimTrack *t, int n, double alpha);
/* 1 once the claim needs no more seeds (reproduced, contradicted, no effect, floor) */
int claim_decided(const ClaimTrack *t);
/* 1 while claim t under its plan p wants its series at `seeds` seeds: in the family, undecided, and
 * p's last look at or past them (no seeds for a claim whose schedule has ended) */
int claim_wants_seeds(const ClaimTrack *t, const SeqPlan *p, int seeds);
/* the family's looks: the sorted union of the looks (seeds per series) of the claims in the family,
 * t[i] under plans[i], into levels[CLAIM_MAX_SEEDS]; their count (0: none in the family) */
int claim_family_levels(const ClaimTrack *t, const SeqPlan *plans, int n, int *levels);
/* the claim's statistic behind its outcome: the deciding look's, else the last */
const ClaimStat *claim_track_stat(const ClaimTrack *t);
/* about how many seeds per series a single test at level `level` would need to decide the claim
 * with 80% power if its effect were as observed (-1: no estimate, e.g. an effect of 0) */
int claim_seeds_needed(const ClaimTrack *t, double level);

#endif
