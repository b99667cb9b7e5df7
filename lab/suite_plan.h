/* suite_plan.h: the standard suite's protocols (`pelab suite`), a fixed table with a version
 * number: each protocol is one `pelab compare` (language modelling on a real corpus, or a task)
 * with a recipe per setting (steps: a fixed budget, or with --converge in extra the cap of a run
 * trained until its validation loss converges; quick: 3 seeds, each task protocol trained to its gate but, with the
 * default baselines, only for those its claims compare; full: 5 seeds, every scheme everywhere,
 * longer budgets). Changing any recipe changes SUITE_VERSION, which every report carries. */
#ifndef PELAB_SUITE_PLAN_H
#define PELAB_SUITE_PLAN_H

#include "../core/strbuf.h"

#define SUITE_VERSION 8
/* the seeds of a suite version are SUITE_SEED_BASE + 1, + 2, ...: version 8 draws fresh ones (101 on;
 * versions up to 7 drew 1 on), so that its verdicts replicate version 7's, whose figures chose its seed
 * schedules (a schedule chosen from data is not tested on the same data), and the recipe searches'
 * seeds (1001 on, docs/experiments/recipes_v8.sh) stay apart */
#define SUITE_SEED_BASE 100
/* the default schemes: the baselines */
#define SUITE_BASELINES "nope,learned,sinusoidal,rope,alibi,t5,kerple"
/* the looks of the sequential rule (claim_family.h): seeds per series at each. Quick at 3 and 5 (version
 * 8; was 3, 5, 8, 12): with lm's fixed 3,000 steps the first two looks take 25 min on 2 cores, and the
 * look at 8 seeds (rope and t5 in version 8's timed run) ran 5.8 min where 4.75 were left: the run took
 * 31:03 (docs/CLAIMS.md) */
#define SUITE_LOOKS_QUICK "3,5"
#define SUITE_LOOKS_FULL "5,8,12"

enum { SUITE_QUICK, SUITE_FULL, SUITE_SETTINGS };

typedef struct {
    const char *name;      /* "lm", "copy", ... */
    const char *what;      /* one line for the report */
    const char *task;      /* task spec, or NULL: language modelling on the corpus */
    int train_len;         /* L */
    const char *lens;      /* task lengths, or multiples of L */
    double ref, past;      /* the in-distribution and past-L lengths of the summary (task lengths, or
                            * multiples of L); ref is also the reference of flat / degrades claims */
    int steps[SUITE_SETTINGS];
    int batch;
    const char *extra;     /* further compare flags, space-separated */
    const char *schemes;   /* a protocol about one method, not a ranking: its fixed schemes (NULL: the
                            * run's); such a protocol is left out of the summary matrix */
    const char *full_baselines;  /* full with the default baselines: only these (plus --with); NULL: all. A task
                                  * protocol of thousands of steps a run trains the schemes its claims compare and
                                  * a reference or two (version 8: the whole of full must fit this machine) */
    const char *quick_baselines; /* quick with the default baselines: only these (plus --with); NULL: all.
                                  * A task trains to its gate in thousands of steps: quick affords a few
                                  * schemes, those its claims compare */
    const char *also;      /* schemes every run of the protocol adds (its claims' series, as one --schemes list
                            * appended whole), or NULL */
    const char *not_quick; /* why quick leaves the protocol out (it runs when --protocols names it), or NULL */
    int layers;            /* layers of every model (0: SUITE_LAYERS) */
    const char *budget_why; /* a language-modelling protocol without --converge: why a fixed budget (the report) */
} SuiteProtocol;

/* layers of a protocol's models unless it says */
#define SUITE_LAYERS 2
static inline int suite_layers(const SuiteProtocol *p) { return p->layers > 0 ? p->layers : SUITE_LAYERS; }

extern const SuiteProtocol suite_protocols[];
extern const int suite_n_protocols;
extern const char *const suite_setting_names[SUITE_SETTINGS];
extern const int suite_seeds[SUITE_SETTINGS];

/* the protocol named name, or NULL */
const SuiteProtocol *suite_protocol(const char *name);

/* what one run of the suite may change in the table (0 / NULL: the recipe's own) */
typedef struct {
    int setting;            /* SUITE_QUICK or SUITE_FULL */
    const char *schemes;    /* "rope,alibi": --schemes or the baselines, then --with */
    int baselines;          /* 1: no --schemes (the default baselines) */
    const char *with;       /* --with, or NULL */
    const char *dir;        /* DIR: DIR/PROTOCOL is each protocol's compare directory */
    const char *data;       /* the corpus of language modelling */
    int seeds, steps, task_n, eval_tokens, threads;
    float alpha;              /* the claims' family-wise level (0: 0.05) */
    const char *only_schemes; /* a look that adds seeds: exactly these schemes (NULL: the protocol's) */
} SuiteRun;

/* the schemes protocol p trains in run r (suite_protocol's schemes, quick_ or full_baselines, also) into out */
void suite_protocol_schemes(const SuiteProtocol *p, const SuiteRun *r, StrBuf *out);
/* the schemes of a --schemes list ("sinusoidal:scale=1,tokens=sqrt_dim" is one: compare's rule) */
int suite_count_schemes(const char *list);
/* entry i of such a list appended to *entry (nothing past the last) */
void suite_scheme_entry(const char *list, int i, StrBuf *entry);

/* the compare command line of protocol p (argv[0] = "compare") as words into argv[max] backed by
 * buf; extra words (e.g. "--collect") appended; the word count, or -1 when max is too small */
int suite_compare_argv(const SuiteProtocol *p, const SuiteRun *r, const char *const *extra, int n_extra, StrBuf *buf,
                       char **argv, int max);

/* the budget of a look: keep[i] = 1 for the protocols (wants[i] set) whose expected seconds
 * expect[i] fit `left` together, taken cheapest first (ties in table order); the count kept. Pure. */
int suite_budget_pick(const double *expect, const int *wants, int n, double left, int *keep);

#endif
