/* task.h: synthetic tasks for length-generalization experiments: each example is a
 * prompt and an answer in printable ASCII, so the byte tokenizer (vocabulary 256) and the training
 * pipeline consume them as they are. Deterministic from the Rng; every task has an oracle that
 * answers any well-formed prompt, so a checker never trusts the generator.
 *
 * Format: "NAME: BODY|ANSWER\n". The prompt ends at '|' (included); the answer span is ANSWER and
 * the end marker '\n', so a model trained on the span learns where to stop and an exact match
 * requires that it stops. Symbols are a..z then A..Z (vocab=N takes the first N).
 *
 *   copy            copy: abcd|abcd\n                 the body
 *   reverse         reverse: abcd|dcba\n              the body backwards
 *   sort            sort: dbca|abcd\n                 the body's bytes in increasing order
 *   add             add: 123+989|2111\n               the sum, least significant digit first (rev=1,
 *                                                     the default: each answer digit then depends only
 *                                                     on digits already seen and the carry, as the
 *                                                     model writes it); rev=0: 1112
 *   parity          parity: 10110|1\n                 1 if the number of ones is odd
 *   selective_copy  selective_copy: .a..c.b.|acb\n    the symbols, without the '.' noise
 *   count           count: a abacab|3\n               occurrences of the first symbol in the string
 *                                                     after the space, in decimal
 *   flipflop        flipflop: w1i0w0i1r|0\n           w = write the bit, i = ignore it, r = read: the
 *                                                     last written bit (Liu et al. 2023)
 *   mqar            mqar: a1b7c3,cb|37\n              key-value pairs (distinct keys, digit values),
 *                                                     ',' then queried keys: their values in order
 *   passkey         <data/passkey.h's document>\nKey:| 12345\n   (no "NAME: " and no '|': the
 *                                                     prompt ends with "\nKey:", the answer is " 12345"
 *                                                     and '\n'; len counts every byte, '\n' included)
 *
 * Dense tasks (TaskDef.dense) supervise several answers per example, interleaved with the prompt:
 *   mqar_dense      mqar_dense: a1b7c3|c3.a1b7\n   Zoology's MQAR (Arora et al. 2023): key-value
 *                                                     pairs, '|', then queries, each a key (after gap
 *                                                     '.' bytes) followed by its value, every value
 *                                                     supervised; the '\n' closes the example unsupervised
 *                                                     (nothing tells how many queries remain)
 * RULER's synthetic tasks (Hsieh et al. 2024; data/task_ruler.c), listed (task_recall scores them as
 * RULER does, each reference found in any order) and unframed, len counting every byte like passkey;
 * keys, names and words are 3 letters, values 5 digits (value=uuid: "9f3a-07c2"), the haystack
 * passkey's noise sentences, an essay, or (hay=needle) needles of other keys, cut to fit:
 *   niah_single     The grass abc: 12345. is green.\nabc:| 12345\n        the needle at depth (RULER's
 *                                                     niah_single_1; hay=essay: _2; value=uuid: _3)
 *   niah_multikey   the same among needles of keys other than the one asked (RULER's multikey_1;
 *                   hay=needle: _2, the haystack all needles)
 *   niah_multivalue abc: 11111. x abc: 22222.\nabc:| 11111 22222\n   every value of the key, in text order
 *   niah_multiquery abc: 11111. def: 22222.\ndef abc:| 22222 11111\n the values of every key asked, in order
 *   vt              AB=12345. x CD=AB. y EF=CD.\n12345:| AB CD EF\n   variable tracking: every name bound
 *                                                     to the value, in assignment order (other chains
 *                                                     with other values: chains=N)
 *   cwe             abc def abc ghi abc def def\ntop 2:| abc def\n    common words: the top words, each
 *                                                     freq times, among others rare times; order of
 *                                                     first appearance
 *   fwe             ... abc ... def ... abc\ntop 2:| abc def\n        frequent words: Zipf counts
 *                                                     (alpha), "..." the most frequent (noise, not
 *                                                     counted); most frequent first
 * An answer is determined by its prompt: the oracles refuse a key asked twice with other values, a
 * name assigned twice, or a K-th word no more frequent than the next.
 *
 * The generator writes TASK_SLOT where an answer goes; task_example asks the oracle for each one,
 * given everything before it, and marks its bytes in TaskExample.mask. A dense task's exact match
 * asks every supervised byte right, each predicted from the true text before it (teacher forcing:
 * for greedy answers to each query in turn, the same thing).
 *
 * A spec is NAME[:k=v,...]. Every option takes one value or a range lo-hi, drawn uniformly per
 * example (training); one of them is the task's length (len, or pairs for mqar), which
 * task_example can also fix (evaluation). Options marked "single" take one value only. */
#ifndef PELAB_TASK_H
#define PELAB_TASK_H

#include <stddef.h>

#include "../core/rng.h"
#include "../core/strbuf.h"

#define TASK_MAX_OPTS 6

typedef struct {
    const char *name;
    double lo, hi;         /* accepted values */
    double def_lo, def_hi; /* the default (a range when they differ) */
    int integer;           /* 0: a real number (depth) */
    int single;            /* 1: a range is refused (the oracle needs the one value) */
    const char *help;
    /* NULL, or the option's values by name, '|'-separated ("noise|essay|needle"): the spec gives a
     * name, which stands for its index (0, 1, ...; lo..hi is 0..count-1, one value only) */
    const char *names;
} TaskOpt;

struct TaskSpec;
typedef struct TaskDef {
    const char *name, *desc;
    int framed;  /* 1: "NAME: " BODY "|" around the generator's body; 0: it writes the whole prompt */
    int len_opt; /* index in opts of the length option */
    int n_opts;
    TaskOpt opts[TASK_MAX_OPTS];
    /* appends the body (framed) or the whole prompt, from the example's drawn option values */
    int (*generate)(const double *val, Rng *rng, StrBuf *out);
    /* appends the answer (without '\n') to a body (framed) or prompt of n bytes; -1 with
     * pelab_errmsg if malformed */
    int (*solve)(const struct TaskSpec *t, const char *body, size_t n, StrBuf *answer);
    /* 1: several answers per example (above): generate writes TASK_SLOT where each goes, and solve
     * answers the text before a slot (framed: after "NAME: "), without '\n' */
    int dense;
    /* 1: the answer is a list of reference strings separated by spaces (RULER's tasks), scored
     * also by task_recall: which of them the model wrote, in any order */
    int listed;
} TaskDef;

#define TASK_SLOT '\x01' /* a dense generator's "an answer goes here" (never in a finished text) */

typedef struct TaskSpec {
    const TaskDef *def;
    double lo[TASK_MAX_OPTS], hi[TASK_MAX_OPTS];
} TaskSpec;

typedef struct {
    char *text;          /* owned, NUL-terminated: prompt, answer, '\n' */
    size_t n;            /* bytes of text */
    size_t answer_start; /* prompt = text[0, answer_start) (dense: before the first answer) */
    size_t answer_len;   /* answer = text[answer_start, n), the final '\n' included */
    unsigned char *mask; /* dense tasks: [n], 1 on every supervised byte (owned); NULL otherwise */
    int len;             /* the length option's value for this example */
    double depth;        /* passkey: the key depth in [0, 1] asked for; -1 for other tasks */
} TaskExample;

/* the registry, in `pelab task list` order */
int task_count(void);
const TaskDef *task_def(int i);
const TaskDef *task_find(const char *name);
/* "copy, reverse, ..." */
const char *task_names(void);

/* Parses NAME[:k=v,...] strictly; unnamed options keep their defaults. -1 with one line naming
 * the option and what was expected. */
int task_parse(TaskSpec *t, const char *spec);
/* the canonical spec, every option written out: "copy:len=4-16,vocab=26" */
void task_format(const TaskSpec *t, char *out, size_t cap);
/* one value of option o as a spec writes it: "16", "0.25", or its name ("essay") */
void task_opt_value_name(const TaskOpt *o, double v, char *out, size_t cap);

/* One example; len = -1 draws the length from the spec's range, otherwise it is fixed (any value
 * the option accepts). Free with task_example_free. -1 with pelab_errmsg on a bad len. */
int task_example(const TaskSpec *t, Rng *rng, int len, TaskExample *ex);
void task_example_free(TaskExample *ex);

/* The oracle's answer to a prompt (what follows it, '\n' included) into answer; -1 if the prompt
 * is not one of this task's. */
int task_solve(const TaskSpec *t, const char *prompt, size_t n, StrBuf *answer);
/* Compares n bytes a model produced after ex's prompt with the oracle's answer: returns 1 on an
 * exact match (n == answer_len and every byte right), 0 otherwise, -1 on error. *n_correct: bytes
 * right at their position (of min(n, answer_len)). An evaluator passes answer_len greedy bytes.
 * Dense tasks: answer is the model's bytes at the supervised positions, in order (task_answers
 * of them), checked against the oracle's answer to each slot given the example's text before it. */
int task_check(const TaskSpec *t, const TaskExample *ex, const char *answer, size_t n, int *n_correct);

/* RULER's score (string_match_all, Hsieh et al. 2024) for a listed task: the references are the
 * oracle's answer split at its spaces; the prediction is the n bytes a model wrote after the
 * prompt, up to its first '\n'. A reference counts when it is a whole word of the prediction
 * (a maximal run of letters, digits and '-', compared case-insensitively; RULER matches
 * substrings, which for 3-byte words would credit "abc" inside "xabcx"), each once, in any order,
 * extra words costing nothing. Returns the fraction found (*found of *total); -1 with
 * pelab_errmsg if the task is not listed or the oracle refuses the example. */
double task_recall(const TaskSpec *t, const TaskExample *ex, const char *pred, size_t n, int *found, int *total);

/* the supervised bytes of an example: answer_len, or a dense example's masked bytes */
size_t task_answers(const TaskExample *ex);

/* A training stream of exactly n_bytes: examples (lengths drawn from the spec) back to back, the
 * last one cut. mask[i] = 1 where text[i] is a supervised answer byte (a single answer's '\n'
 * included), 0 elsewhere; starts (NULL: not wanted) [i] = 1 where an example begins. All owned by
 * the caller (free). */
int task_stream(const TaskSpec *t, Rng *rng, size_t n_bytes, char **text, unsigned char **mask,
                unsigned char **starts);

#endif
