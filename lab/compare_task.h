/* compare_task.h: `pelab compare --task SPEC`: every run trained on task:SPEC and scored by greedy
 * answers at each task length (the lengths of Compare.lens), its rows kind "task" in the run's CSV. */
#ifndef PELAB_COMPARE_TASK_H
#define PELAB_COMPARE_TASK_H

#include <stdio.h>

#include "../model/model.h"
#include "compare_plan.h"

/* the task's default lengths into c->lens (the spec's lo, hi, 2 hi, 4 hi, 8 hi, 16 hi, within what
 * its length option accepts) and that option's bounds into lo, hi (what --task-lens may give); -1
 * with one line on a bad spec */
int compare_task_lengths(Compare *c, double *lo, double *hi);
/* 0 when c->task has a depth option (what --task-depths sets), else -1 with one line */
int compare_task_takes_depths(const Compare *c);
/* the gate's task lengths: the trained range's ends and middle (1 to 3 of them); -1 on a bad spec */
int compare_task_gate_lengths(const Compare *c, int *lens, int *n);
/* exact match, byte accuracy (and a listed task's RULER score, protocol recall) of model m (rule as
 * labelled) at every task length into f, and under rule none the --task-depths grid; a
 * length whose examples pass a learned table's end is a row with status n/a, not an error; under rule
 * none the gate rows first (compare_plan.h); -1 with pelab_errmsg */
int compare_task_rows(const Compare *c, int scheme, int seed, Model *m, const char *rule, FILE *f);

#endif
