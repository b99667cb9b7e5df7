/* suite_keyppl.h: the statistic of a keygap:B claim (io/claims.h), LongPPL's claim stated for one
 * pair of series (Fang et al. 2024, "What is Wrong with Perplexity for Long-context Language
 * Modeling?"): perplexity averages over every token, most of which need no long context, so it
 * hides differences in long-context ability that the key tokens (those whose log-prob gains from a
 * long context, infer/keyppl.h) show.
 *
 * From the keyppl rows of a language-modelling compare (--keyppl-tokens): at the claim's length,
 * for every seed where series A and B both have the key tokens' mean NLL (key) and the same text's
 * mean NLL over every token (all), and neither run failed the gate,
 *     d = (key_B - key_A) - (all_B - all_A)      nats
 * how much more A's advantage over B is on the key tokens than on all of them. The effect is the
 * mean of d, > 0 in the claimed direction; paired t over the seeds (se = sd / sqrt(n), df = n - 1).
 * The margin is the loss claims' equivalence margin (SUITE_KEYPPL_MARGIN): a difference shown
 * inside it says key tokens separate A and B no more than perplexity does. Both series should read
 * the same key tokens in a seed (a rule or fine-tune of one run, or compare --key-evaluator):
 * otherwise each run's own evaluator picks its own. */
#ifndef PELAB_SUITE_KEYPPL_H
#define PELAB_SUITE_KEYPPL_H

#include "../core/strbuf.h"
#include "../io/claims.h"
#include "claim_stat.h"
#include "report_agg.h"
#include "report_gen.h"

/* nats per token, as the loss claims' margin: about 5% in perplexity */
#define SUITE_KEYPPL_MARGIN 0.05

/* the statistic of keygap claim cl from protocol runs (c, a, g), from the seeds of index < seeds
 * (0: all) into st; the figures behind it appended to why. 0, or -1 with st->status CSTAT_NONE and
 * why saying why no test is possible (c or g NULL: the protocol did not run). */
int suite_keyppl_stat(const Claim *cl, const Compare *c, const Agg *a, const GenAgg *g, int seeds, ClaimStat *st,
                      StrBuf *why);

#endif
