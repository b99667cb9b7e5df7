/* suite_claims.h: a published claim (io/claims.h) judged from one protocol's runs as compare reads
 * them back (report_agg.h): reproduced, contradicted or inconclusive, from the verdict machinery's
 * figures and intervals, never typed. better:B takes the pair (A, B) of the protocol's verdict at
 * that length (Welch or paired t over seeds, Holm-adjusted with every other pair, as the
 * protocol's report and verdicts.csv): significant in the claimed direction is reproduced, in the
 * other contradicted, else inconclusive. flat:TOL / degrades:TOL take A at that length against A
 * at the protocol's reference length, paired over the seeds that have both: the 95% interval of
 * how much worse it is, all below TOL (flat) or all above (degrades) decides, an interval across
 * TOL is inconclusive. learns:B (tasks) takes the gate figures (exact match inside the trained
 * lengths) of schemes A and B as trained over every seed, passed or failed, Welch's t: a claim
 * about learning the task, which the gate would otherwise take out of the data. */
#ifndef PELAB_SUITE_CLAIMS_H
#define PELAB_SUITE_CLAIMS_H

#include "../core/strbuf.h"
#include "../io/claims.h"
#include "report_agg.h"

enum { CLAIM_REPRODUCED, CLAIM_CONTRADICTED, CLAIM_INCONCLUSIVE, CLAIM_UNTESTABLE, CLAIM_OUTCOMES };
extern const char *const claim_outcome_names[CLAIM_OUTCOMES];

/* claim cl against protocol runs (c, a) whose reference length is ref (a task length, or a
 * multiple of L); c and a NULL: the protocol did not run. The outcome; the figures behind it, or
 * why there are none, appended to why. */
int suite_claim_judge(const Claim *cl, const Compare *c, const Agg *a, double ref, StrBuf *why);

#endif
