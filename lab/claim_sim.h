/* claim_sim.h: the proof of the claims' verdict rule by simulation. A simulated suite is a family
 * of CLAIM_SIM_CLAIMS claims shaped as docs/claims.txt's (loss claims between two schemes, between a
 * rule and its checkpoints, flat:TOL against the in-distribution loss; task claims between two
 * schemes, learns:B, degrades:TOL), each with its own constructed protocol: per-seed result rows
 * drawn for up to its plan's last look, read into an aggregate as compare reads its CSVs
 * (report_take_row, report_gates), reduced to each claim's statistic (suite_claim_stat) at every
 * look of its plan, and decided by the family rule (claim_family.h) exactly as `pelab suite` does:
 * the family looks at the union of its claims' looks, each claim tested at its own. A scenario
 * fixes the truth: under a null, any reproduced or contradicted is a false verdict; under an effect,
 * the share reproduced is the power. */
#ifndef PELAB_CLAIM_SIM_H
#define PELAB_CLAIM_SIM_H

#include <stdint.h>

#include "claim_family.h"

enum { CLAIM_SIM_CLAIMS = 20 };

enum { SIM_NORMAL, SIM_UNEQUAL, SIM_BIMODAL, SIM_SKEWED_LOSS, SIM_BIMODAL_LOSS };

typedef struct {
    const char *name;
    int shape;        /* SIM_*: how seeds spread (bimodal: task seeds learned or not; skewed_loss and
                       * bimodal_loss: losses outside the t-tests' assumption, a stress test) */
    double effect;    /* the true effect of every claim in the claimed direction, in seed standard
                       * deviations (0: the null; flat / degrades: at the tolerance) */
    double at_margin; /* > 0: the true effect is this many times the equivalence margin instead */
    int mixed;        /* 1: only the even claims carry the effect, the odd ones are null */
} SimScenario;

extern const SimScenario claim_sim_scenarios[];
extern const int claim_sim_n_scenarios;

typedef struct {
    int suites;
    int false_suites;           /* suites with at least one false verdict (reproduced or contradicted on a
                                 * null claim, contradicted on a true one) */
    int false_no_effect_suites; /* suites with a "no effect" on a claim whose true effect is at least its margin */
    int claims;                 /* claims judged */
    int outcome[CLAIM_OUTCOMES];
    double seeds;               /* seeds per series at each claim's last look, summed */
    double wilson_lo, wilson_hi;/* the 95% Wilson interval of false_suites / suites */
} SimResult;

/* `suites` simulated suites of scenario sc, claim i of each under plans[claim_sim_plan(i, n_plans)] (one
 * plan: the whole family's; alpha: plans[0]'s), from seed; 0, or -1 with pelab_errmsg */
int claim_sim_run(const SimScenario *sc, const SeqPlan *plans, int n_plans, int suites, uint64_t seed, SimResult *out);
/* the plan of simulated claim i among n_plans: round robin, shifted every second claim ((i + i / 2) mod
 * n_plans), so that with two plans each holds as many even claims (the mixed scenarios' effects) as odd
 * ones, and about as many of each shape */
int claim_sim_plan(int i, int n_plans);

#endif
