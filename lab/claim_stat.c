/* claim_stat.c: a claim statistic's one-sided p values by its method (claim_stat.h). */
#include "claim_stat.h"

#include <math.h>

#include "../core/stats.h"

void claim_stat_onesided(const ClaimStat *st, double shift, double *upper, double *lower) {
    *upper = *lower = NAN;
    if (st->status != CSTAT_TEST) return;
    if (st->method == CTEST_PERMUTE) {
        /* the randomization test is exact when the two series share one distribution (bimodal ones too),
         * the conservative t when they differ only in spread: the larger p of the two is valid in both */
        double tu, tl;
        stats_perm_onesided(st->x, st->n_a, st->y, st->n_b, shift, upper, lower);
        stats_t_onesided(st->effect, st->se, st->df, shift, &tu, &tl);
        if (!isnan(tu)) *upper = fmax(*upper, tu), *lower = fmax(*lower, tl);
    }
    else if (st->method == CTEST_SIGNFLIP) stats_signflip_onesided(st->x, st->n_a, shift, upper, lower);
    else stats_t_onesided(st->effect, st->se, st->df, shift, upper, lower);
}
