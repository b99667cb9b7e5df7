/* compare_plan.c: the names and shapes of a compare's runs (compare_plan.h). */
#include "compare_plan.h"

#include <math.h>
#include <stdio.h>

#include "../model/pos/pos.h"

void compare_run_path(const Compare *c, int scheme, int seed, const char *ext, char *buf, size_t n) {
    snprintf(buf, n, "%s/runs/%s_s%llu%s", c->out, c->tag[scheme], c->seed[seed], ext);
}

void compare_finetune_path(const Compare *c, int scheme, int seed, const char *ext, char *buf, size_t n) {
    snprintf(buf, n, "%s/runs/%s_s%llu_ft-pi%g%s", c->out, c->tag[scheme], c->seed[seed], c->finetune_scale, ext);
}

int compare_takes_rules(const Compare *c, int i) {
    const PosScheme *s = pos_find_spec(c->scheme[i]);
    return s && (s->caps & POS_CAP_RULES);
}

int compare_finetunes(const Compare *c, int i) { return c->finetune_steps > 0 && compare_takes_rules(c, i); }

int compare_finetune_len(const Compare *c) { return (int)floor(c->finetune_scale * c->base.seq_len + 0.5); }
