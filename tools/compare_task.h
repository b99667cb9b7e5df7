/* compare_task.h: `pelab compare --task SPEC`: every run trained on task:SPEC and scored by greedy
 * answers at each task length (the lengths of Compare.lens), its rows kind "task" in the run's CSV. */
#ifndef PELAB_COMPARE_TASK_H
#define PELAB_COMPARE_TASK_H

#include <stdio.h>

#include "../model/model.h"
#include "compare_plan.h"

/* --task-lens (NULL: the spec's lo, hi, 2 hi, 4 hi, 8 hi, 16 hi, within what the option accepts)
 * into c->lens; dies with one line on a bad spec or list */
void compare_task_setup(Compare *c, const char *lens);
/* --task-depths (NULL: none) into c->depths; dies with one line on a bad list or a task without a
 * depth option */
void compare_task_depths(Compare *c, const char *depths);
/* the gate's task lengths: the trained range's ends and middle (1 to 3 of them) */
void compare_task_gate_lengths(const Compare *c, int *lens, int *n);
/* exact match, byte accuracy (and a listed task's RULER score, protocol recall) of model m (rule as
 * labelled) at every task length into f, and under rule none the --task-depths grid; a
 * length whose examples pass a learned table's end is a row with status n/a, not an error; under rule
 * none the gate rows first (compare_plan.h) */
void compare_task_rows(const Compare *c, int scheme, int seed, Model *m, const char *rule, FILE *f);

#endif
