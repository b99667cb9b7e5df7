/* task_eval.h: how well a model does a task (data/task.h): greedy answers to generated examples,
 * scored by the task's oracle, at one length at a time. Byte-level models only (task texts are
 * bytes, one token each). */
#ifndef PELAB_TASK_EVAL_H
#define PELAB_TASK_EVAL_H

#include "../data/task.h"
#include "../model/model.h"

typedef struct {
    int len;             /* the task's length option */
    int n;               /* examples scored */
    int exact;           /* answers right to the last byte (the closing '\n' included) */
    long answer_bytes;   /* answer bytes asked for, over all examples */
    long correct_bytes;  /* of those, right at their position */
    long max_positions;  /* the longest example, prompt + answer: the positions this length reaches */
    double exact_ci[2];  /* 95% percentile-bootstrap interval of exact / n over the examples */
    double bytes_ci[2];  /* and of correct_bytes / answer_bytes (examples resampled whole) */
} TaskScore;

/* n examples of length len from seed: each prompt through the KV cache at positions 0.., then
 * answer_len greedy tokens, each fed back. rand_pos > 0: each example's positions are sorted
 * distinct ids from [0, rand_pos) instead (randomized positions, as Ruoss et al. evaluate the models
 * they train with them; its own stream from seed): the first of max(T, its length) drawn, T the
 * model's training length, as an example starting an aligned training row gets them. -1 with pelab_errmsg if the model is not
 * byte-level, the scheme refuses a position (a learned table too short), or an example is longer
 * than rand_pos. */
int task_eval_length(Model *m, const TaskSpec *t, int len, int n, unsigned long long seed, int rand_pos,
                     TaskScore *score);

#endif
