/* task_ruler.h: the generators and oracles of RULER's synthetic tasks (data/task_ruler.c), for the
 * task table in data/task_kinds.c; formats in task.h. Each generator reads its task's option
 * values in table order (val[0] is always len: every byte of the example, answer included). */
#ifndef PELAB_TASK_RULER_H
#define PELAB_TASK_RULER_H

#include "task.h"

/* the haystack option's names, in index order (vt's: the first two) */
enum { RULER_NOISE, RULER_ESSAY, RULER_NEEDLE };
#define RULER_HAYS "noise|essay|needle"
#define RULER_TEXT_HAYS "noise|essay"
/* the value option's names */
#define RULER_VALUES "number|uuid"

/* val: len, depth, hay, value */
int ruler_gen_niah_single(const double *val, Rng *rng, StrBuf *out);
/* val: len, depth, keys, hay, value */
int ruler_gen_niah_multikey(const double *val, Rng *rng, StrBuf *out);
/* val: len, values, hay, value */
int ruler_gen_niah_multivalue(const double *val, Rng *rng, StrBuf *out);
/* val: len, queries, hay, value */
int ruler_gen_niah_multiquery(const double *val, Rng *rng, StrBuf *out);
/* every needle task's oracle: the values of each key asked */
int ruler_solve_niah(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans);

/* val: len, hops, chains, hay (noise or essay) */
int ruler_gen_vt(const double *val, Rng *rng, StrBuf *out);
int ruler_solve_vt(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans);

/* val: len, top, freq, rare */
int ruler_gen_cwe(const double *val, Rng *rng, StrBuf *out);
/* val: len, alpha, top */
int ruler_gen_fwe(const double *val, Rng *rng, StrBuf *out);
/* cwe's and fwe's oracle: the K most frequent words */
int ruler_solve_top_words(const TaskSpec *t, const char *prompt, size_t n, StrBuf *ans);

#endif
