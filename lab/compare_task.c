/* compare_task.c: task accuracy rows of `pelab compare --task` (compare_task.h). */
#include "compare_task.h"

#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../data/task.h"
#include "../infer/task_eval.h"
#include "../model/pos/pos.h"

int compare_task_lengths(Compare *c, double *lo, double *hi) {
    TaskSpec t;
    if (task_parse(&t, c->task) != 0) return pelab_fail("%s: --task: %s", c->name, pelab_errmsg);
    const TaskOpt *o = &t.def->opts[t.def->len_opt];
    *lo = o->lo, *hi = o->hi;
    /* in distribution (the range's ends), then 2x .. 16x its top, as far as the option goes */
    int first = (int)t.lo[t.def->len_opt], top = (int)t.hi[t.def->len_opt];
    static const int mult[] = {0, 1, 2, 4, 8, 16};
    c->n_lengths = 0;
    for (int i = 0; i < 6; i++) {
        int len = i == 0 ? first : mult[i] * top;
        if (len > o->hi) len = (int)o->hi;
        if (c->n_lengths == 0 || len > c->lens[c->n_lengths - 1]) c->lens[c->n_lengths++] = len;
    }
    return 0;
}

/* the index of t's depth option, or -1 */
static int depth_option(const TaskSpec *t) {
    for (int k = 0; k < t->def->n_opts; k++)
        if (strcmp(t->def->opts[k].name, "depth") == 0) return k;
    return -1;
}

int compare_task_takes_depths(const Compare *c) {
    TaskSpec t;
    if (task_parse(&t, c->task) != 0) return pelab_fail("%s: --task: %s", c->name, pelab_errmsg);
    if (depth_option(&t) < 0)
        return pelab_fail("%s: --task-depths: task %s has no depth option (niah_single, niah_multikey and passkey have "
                          "one)", c->name, t.def->name);
    return 0;
}

/* the positions one example of this length reaches, at most (the longest of a few draws) */
static long positions_needed(const TaskSpec *t, int len) {
    Rng rng;
    rng_seed(&rng, 1);
    long most = 0;
    for (int i = 0; i < 8; i++) {
        TaskExample ex;
        if (task_example(t, &rng, len, &ex) != 0) return -1;
        if ((long)ex.n > most) most = (long)ex.n;
        task_example_free(&ex);
    }
    return most;
}

/* exact match and byte accuracy of one task length as rows of `kind` (task: both protocols and, for
 * RULER's tasks, recall, their score; gate: exact match only) */
static int length_rows(const Compare *c, int s, int k, Model *m, const char *rule, const TaskSpec *t, int len,
                        const char *kind, double depth, FILE *f) {
    long accepted = pos_max_position(&m->pos);
    static const char *protocol[3] = {"exact", "bytes", "recall"};
    long need = positions_needed(t, len);
    TaskScore sc;
    /* a learned table refuses what lies past its end: n/a, as the loss rows say it (the
     * longest draw is a guide; the evaluation itself is the judge) */
    int rand_pos = c->rand_pos[s], refused = accepted >= 0 && need > accepted;
    ResStatus why = RES_PAST_TABLE;
    long limit = accepted;
    if (rand_pos > 0 && need > rand_pos) { /* randomized positions are drawn from [0, rand_pos) */
        refused = 1;
        why = RES_PAST_RAND_POS, limit = rand_pos;
    }
    if (!refused && task_eval_length(m, NULL, t, len, c->task_n, compare_task_seed(c, k), rand_pos, &sc) != 0) {
        if (accepted < 0 && rand_pos <= 0)
            return pelab_fail("%s: %s seed %llu: task length %d: %s", c->name, c->scheme[s], c->seed[k], len,
                              pelab_errmsg);
        refused = 1; /* an example longer than the draws that guided the checks above: say which limit */
        if (strstr(pelab_errmsg, "randomized positions")) why = RES_PAST_RAND_POS, limit = rand_pos;
    }
    /* gate: exact match; grid: the headline figure; task: all (recall: RULER's score) */
    int grid = strcmp(kind, "grid") == 0, listed = t->def->listed;
    int p0 = grid && listed ? 2 : 0, n_protocols = strcmp(kind, "gate") == 0 || grid ? 1 : listed ? 3 : 2;
    for (int p = p0; p < p0 + n_protocols; p++) {
        CmpRow w;
        compare_row(&w, c, m, kind, s, k, rule, len, protocol[p]);
        w.r.depth = depth;
        if (refused) {
            w.r.status = why, w.r.limit = limit, w.r.pos_hi = need, w.r.n = 0;
        } else {
            const double *ci = p == 0 ? sc.exact_ci : p == 1 ? sc.bytes_ci : sc.recall_ci;
            w.r.value = p == 0 ? (double)sc.exact / sc.n : p == 1 ? (double)sc.correct_bytes / sc.answer_bytes : sc.recall;
            w.r.pos_hi = sc.max_positions, w.r.n = sc.n, w.r.ci_lo = ci[0], w.r.ci_hi = ci[1];
        }
        compare_row_write(f, &w);
    }
    return 0;
}

int compare_task_gate_lengths(const Compare *c, int *lens, int *n) {
    TaskSpec t;
    if (task_parse(&t, c->task) != 0) return pelab_fail("%s: --task: %s", c->name, pelab_errmsg);
    int lo = (int)t.lo[t.def->len_opt], hi = (int)t.hi[t.def->len_opt], mid = (lo + hi) / 2;
    *n = 0;
    lens[(*n)++] = lo;
    if (mid > lo && mid < hi) lens[(*n)++] = mid;
    if (hi > lo) lens[(*n)++] = hi;
    return 0;
}

int compare_task_rows(const Compare *c, int s, int k, Model *m, const char *rule, FILE *f) {
    TaskSpec t;
    if (task_parse(&t, c->task) != 0) return pelab_fail("%s: --task: %s", c->name, pelab_errmsg);
    if (strcmp(rule, "none") == 0) { /* the in-distribution gate: the run as trained */
        int gate[3], n_gate;
        if (compare_task_gate_lengths(c, gate, &n_gate) != 0) return -1;
        for (int g = 0; g < n_gate; g++)
            if (length_rows(c, s, k, m, rule, &t, gate[g], "gate", NAN, f) != 0) return -1;
    }
    for (int l = 0; l < c->n_lengths; l++)
        if (length_rows(c, s, k, m, rule, &t, c->lens[l], "task", NAN, f) != 0) return -1;
    int opt = depth_option(&t);
    for (int d = 0; strcmp(rule, "none") == 0 && d < c->n_depths; d++) { /* the needle's depth x length grid */
        t.lo[opt] = t.hi[opt] = c->depths[d];
        for (int l = 0; l < c->n_lengths; l++)
            if (length_rows(c, s, k, m, rule, &t, c->lens[l], "grid", c->depths[d], f) != 0) return -1;
    }
    return 0;
}
