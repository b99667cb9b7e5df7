/* compare_plan.c: the names and shapes of a compare's runs (compare_plan.h). */
#include "compare_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/pos/pos.h"

int scheme_piece_continues(const char *prev, const char *piece, size_t len) {
    const char *eq = memchr(piece, '=', len);
    if (eq && !memchr(piece, ':', (size_t)(eq - piece)) && !memchr(piece, '(', (size_t)(eq - piece))) return 1;
    if (!prev) return 0;
    const char *last_part = strrchr(prev, '+');
    if (len && strspn(piece, "0123456789") >= len && last_part && strncmp(last_part, "+nope@", 6) == 0) return 1;
    int depth = 0;
    for (; *prev; prev++) depth += (*prev == '(') - (*prev == ')');
    return depth > 0;
}

void compare_run_path(const Compare *c, int scheme, int seed, const char *ext, char *buf, size_t n) {
    snprintf(buf, n, "%s/runs/%s_s%llu%s", c->out, c->tag[scheme], c->seed[seed], ext);
}

void compare_finetune_path(const Compare *c, int kind, int scheme, int seed, const char *ext, char *buf, size_t n) {
    snprintf(buf, n, "%s/runs/%s_s%llu_ft-%s%g%s", c->out, c->tag[scheme], c->seed[seed],
             kind == FT_POSE ? "pose" : "pi", c->finetune_scale, ext);
}

int compare_takes_rules(const Compare *c, int i) {
    const PosScheme *s = pos_find_spec(c->scheme[i]);
    return s && (s->caps & POS_CAP_RULES);
}

int compare_takes_rule(const Compare *c, int i, int r) {
    const PosScheme *s = pos_find_spec(c->scheme[i]);
    PosExtend e;
    if (s && extend_parse(c->rule[r], &e) == 1) return pos_extend_refusal(s, &e) == NULL;
    return compare_takes_rules(c, i);
}

int compare_finetunes(const Compare *c, int i) {
    return c->finetune_steps > 0 && c->finetune_kinds && compare_takes_rules(c, i);
}

int compare_finetunes_with(const Compare *c, int i, int kind) {
    return compare_finetunes(c, i) && (c->finetune_kinds >> kind & 1);
}

int compare_finetune_len(const Compare *c) { return (int)floor(c->finetune_scale * c->base.seq_len + 0.5); }

long compare_finetune_steps(const Compare *c, int kind) {
    if (kind == FT_PI) return c->finetune_steps;
    return (long)floor((double)c->finetune_steps * compare_finetune_len(c) / c->base.seq_len + 0.5);
}

void compare_row(CmpRow *w, const Compare *c, const Model *m, const char *kind, int s, int k, const char *rule, int len,
                 const char *protocol) {
    snprintf(w->seed, sizeof w->seed, "%llu", c->seed[k]);
    w->r = result_row();
    w->r.kind = kind, w->r.scheme = c->scheme[s], w->r.seed = w->seed, w->r.rule = rule, w->r.protocol = protocol;
    w->r.train_len = c->base.seq_len, w->r.length = len;
    w->r.accepted = pos_max_position(&m->pos), w->r.computable = pos_computable_position(&m->pos);
}

void compare_row_write(FILE *f, const CmpRow *w) { results_csv_row(f, &RES_COMPARE_CSV, &w->r); }

void compare_verdict_defaults(Compare *c) {
    c->gate = 0.9f, c->gate_loss = 0, c->converge_frac = 0.01f, c->converge_abs = 0.01f, c->alpha = 0.05f;
}

void compare_set_converge(Compare *c) {
    TrainConfig *b = &c->base;
    long every = b->steps / (b->converge ? 50 : 20);
    b->eval_every = every > 0 ? (int)every : 1, b->log_every = b->eval_every;
    b->converge_frac = c->converge_frac, b->converge_abs = c->converge_abs;
}

/* the training stream is drawn from the run's seed itself */
unsigned long long compare_task_seed(const Compare *c, int k) { return 1000003ULL + c->seed[k]; }
