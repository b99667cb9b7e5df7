/* rope_test.h: helpers of test_rope_scaling.c that test_longrope.c shares (the rules' tests). */
#ifndef PELAB_ROPE_TEST_H
#define PELAB_ROPE_TEST_H

#include "../model/model.h"
#include "../model/pos/rope_scaling.h"

/* |got - want| within rtol of |want| (exactly 0 for want 0) */
int rel_near(double got, double want, double rtol);
int rel_near_vec(const double *got, const double *want, int n, double rtol);
/* the rule a text parses to (a failed parse is a failed check) */
RopeRule rule_of(const char *text);
/* pair 1's second coordinate at position m after the scheme saw length n (a unit vector rotated) */
float pair1_after_length(PosCtx *pc, int n, int m);
/* cached decoding against prefix forwards up to 3L on a dynamic rule (grows: it keeps changing past L) */
void dynamic_kvcache_one(Model *m, const char *what, int grows);

#endif
