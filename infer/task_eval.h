/* task_eval.h: how well a model does a task (data/task.h): greedy answers to generated examples,
 * scored by the task's oracle, at one length at a time. A byte-level model reads a task's text one
 * byte per token; a model with another tokenizer reads the tokenizer's encoding of the prompt (a
 * runner's prompt: BOS first where it has one) and its greedy tokens are decoded until they cover
 * the answer's bytes. */
#ifndef PELAB_TASK_EVAL_H
#define PELAB_TASK_EVAL_H

#include "../data/task.h"
#include "../data/tokenizer.h"
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
    /* a listed task (RULER's): task_recall of each example's greedy answer */
    int listed;
    double recall;       /* RULER's score: the mean over examples of the fraction of references recalled */
    int recall_all;      /* examples with every reference recalled */
    double recall_ci[2]; /* 95% bootstrap interval of recall */
} TaskScore;

/* n examples of length len from seed: each prompt through the KV cache at positions 0.., then
 * answer_len greedy tokens, each fed back (a dense task: every supervised byte predicted from the
 * true text before it, one pass). A listed task's answer may run on past answer_len until the
 * model's '\n', to 2 answer_len bytes (RULER lets a model write more than the answer; within what
 * the scheme's positions and rand_pos allow): exact match and byte accuracy read the first
 * answer_len bytes, recall the bytes before the model's '\n'. rand_pos > 0: each example's positions are sorted
 * distinct ids from [0, rand_pos) instead (randomized positions, as Ruoss et al. evaluate the models
 * they train with them; its own stream from seed): the first of max(T, its length) drawn, T the
 * model's training length, as an example starting an aligned training row gets them. tok: NULL or
 * a byte tokenizer for byte-level models, else the model's own (rand_pos must be 0). -1 with
 * pelab_errmsg if a byte-level run has no 256-token vocabulary, the scheme refuses a position (a
 * learned table too short), or an example is longer than rand_pos. */
int task_eval_length(Model *m, const Tokenizer *tok, const TaskSpec *t, int len, int n, unsigned long long seed,
                     int rand_pos, TaskScore *score);

#endif
