/* longrope_search.h: a small evolutionary search for LongRoPE's long factors (Ding et al. 2024,
 * section 3.2): per-pair divisors, each >= 1 and non-decreasing from the fastest pair to the
 * slowest (the paper's monotonic constraint), chosen to minimise a loaded model's loss on windows
 * of the target length past its L. Starts from PI (every factor s = len / L) and NTK (pair j:
 * s^(2j/(d-2))), mutates the better half, keeps the best. Simpler than the paper's: no token
 * window n-hat left unscaled, no progressive extension; the short set stays 1 (the plain RoPE). */
#ifndef PELAB_LONGROPE_SEARCH_H
#define PELAB_LONGROPE_SEARCH_H

#include "../model/model.h"

typedef struct {
    int len;         /* target length, past the model's L */
    int windows;     /* rows of len tokens scored per candidate */
    int population;  /* candidates kept (>= 2) */
    int generations; /* rounds of mutation */
    unsigned long long seed;
} LongRopeSearchConfig;

/* best: the factors found (orig_len = the model's L, factor len / L, path empty); *best_loss its
 * mean loss, *pi_loss that of PI (the first candidate). Needs windows * len + 1 tokens. The model's
 * rule is left as best. -1 with one line otherwise. */
int longrope_search(Model *m, const int *tokens, size_t n_tokens, const LongRopeSearchConfig *cfg,
                    LongRopeFactors *best, double *best_loss, double *pi_loss);
/* the bare JSON object longrope:PATH reads back (short_factor, long_factor, both lengths) */
int longrope_write(const char *path, const LongRopeFactors *f);

#endif
