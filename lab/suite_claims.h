/* suite_claims.h: a published claim (io/claims.h) reduced to its statistic (claim_stat.h) from one
 * protocol's runs as compare reads them back (report_agg.h), at a given number of seeds; the
 * family and the sequential rule that decide it are claim_family.h.
 *   better:B   series A against B at that length, in the claimed direction (lower loss, higher
 *              accuracy): paired over seeds when both come from the same checkpoints (one scheme
 *              under a rule or fine-tune), else two independent samples.
 *   learns:B   (tasks) the gate figures (exact match inside the trained lengths) of schemes A and B
 *              as trained over every seed, passed or failed: a claim about learning the task.
 *   flat:TOL / degrades:TOL  A at that length against A at the protocol's reference length, paired
 *              over the seeds that have both: the effect is by how much the change clears TOL.
 * Loss figures are tested by Student's t (Welch or paired); task accuracies by exact randomization
 * tests (claim_stat.h says why). better:B and learns:B carry an equivalence margin (claim_margin):
 * a difference shown to lie inside it is "no effect". Both series at the same bound of an accuracy
 * (every seed 0%, or every seed 100%) is a floor: no number of seeds can move it. keygap:B (key-token
 * perplexity, LongPPL) is lab/suite_keyppl.h's, from the keyppl rows (g). */
#ifndef PELAB_SUITE_CLAIMS_H
#define PELAB_SUITE_CLAIMS_H

#include "../core/strbuf.h"
#include "../io/claims.h"
#include "claim_family.h"
#include "claim_stat.h"
#include "report_agg.h"
#include "report_gen.h"

/* the equivalence margins fixed before any run: loss 0.05 nats/token (about 5% in perplexity), task
 * accuracy 5 points; flat / degrades have none (their tolerance is the hypothesis) */
#define CLAIM_MARGIN_NATS 0.05
#define CLAIM_MARGIN_POINTS 5.0

/* claim cl's statistic from protocol runs (c, a) whose reference length is ref (a task length, or a
 * multiple of L), from the seeds of index < seeds (0: all) into st; the figures behind it, or why
 * there is no test, appended to why. c and a NULL: the protocol did not run. */
void suite_claim_stat(const Claim *cl, const Compare *c, const Agg *a, const GenAgg *g, double ref, int seeds,
                      ClaimStat *st, StrBuf *why);
/* the schemes (indices into c->scheme) whose seeds the claim's statistic reads, into s[2]; their
 * count (0 when the claim cannot be judged from c) */
int suite_claim_schemes(const Claim *cl, const Compare *c, const Agg *a, int *s);

#endif
