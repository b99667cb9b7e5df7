/* compare_plan.h: what a `pelab compare` (or `pelab demo`) is made of: its schemes, seeds, rules,
 * lengths and training config, and where each run's files go. Shared by the driver (compare.c:
 * train + evaluate each (scheme, seed) run into DIR/runs/NAME.csv, and the PI and/or PoSE fine-tunes of
 * the runs whose scheme takes scaling rules into DIR/runs/NAME_ft-piS.csv, NAME_ft-poseS.csv) and the report
 * (report.c), which never call each other's insides: both read this plan. */
#ifndef PELAB_COMPARE_PLAN_H
#define PELAB_COMPARE_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "../core/strbuf.h"
#include "../io/results.h"
#include "../model/model.h"
#include "../train/train.h"

/* the fine-tune recipes: PI at length S x L, and PoSE (Zhu et al. 2023) with pi:S at length L
 * whose positions skip into [0, S x L), S times the steps so that both see the same tokens */
enum { FT_PI, FT_POSE, FT_KINDS };

enum { CMP_MAX_SCHEMES = 16, CMP_MAX_SEEDS = 32, CMP_MAX_RULES = 8, CMP_MAX_LENGTHS = 16, CMP_BUCKETS = 16 };
enum { CMP_MAX_DEPTHS = 8 }; /* --task-depths */

typedef struct {
    const char *name;                     /* "compare" or "demo": messages and the report title */
    const char *out;                      /* DIR */
    const char *data;                     /* file or synth:NAME */
    const char *mult;                     /* "0.5,1,2,..." as given */
    int n_schemes, n_seeds, n_rules, n_lengths;
    char scheme[CMP_MAX_SCHEMES][128];    /* specs as given ("rope", "alibi", "rope:base=500") */
    char tag[CMP_MAX_SCHEMES][128];       /* file-name form of the spec */
    char pos[CMP_MAX_SCHEMES][128];       /* the --pos spec each scheme trains with: scheme[] less "+randpos[:N]"
                                           * and "+attn(SPEC)" */
    char attn[CMP_MAX_SCHEMES][128];      /* its per-layer attention pattern (model/pattern.h): "+attn(SPEC)" in the
                                           * entry, else --attn-pattern, else "" (every layer global) */
    int rand_pos[CMP_MAX_SCHEMES];        /* its randomized positions (Ruoss et al. 2023), sorted distinct ids from
                                           * [0, N) in training and in the task evaluation: "+randpos:N", or
                                           * --rand-pos N for every scheme (0: positions 0, 1, 2, ...) */
    unsigned long long seed[CMP_MAX_SEEDS];
    char rule[CMP_MAX_RULES][64];         /* post-hoc rules for the models that take them (rope, xpos) */
    int lens[CMP_MAX_LENGTHS];            /* evaluation lengths, mult x L */
    float passkey_frac;
    int eval_tokens;                      /* held-out tokens per length (0: all) */
    int nonoverlap_only;                  /* skip the sliding-window protocol (the demo) */
    int fresh;                            /* retrain runs whose CSV exists (the demo) */
    unsigned char skip_scheme[CMP_MAX_SCHEMES]; /* --seeds auto: schemes whose runs this look does not train */
    int finetune_steps;                   /* PI fine-tune of each run that takes rules (0: none) */
    float finetune_scale;                 /* its S: trained with pi:S at length S x L */
    float finetune_lr;                    /* its peak learning rate */
    int finetune_kinds;                   /* bits 1 << FT_PI, 1 << FT_POSE: which recipes run */
    char finetune_rule[32];               /* "pi:S", both recipes' rule */
    char finetune_label[FT_KINDS][40];    /* rule column in the CSV and report: "pi:S+ft", "pi:S+pose" */
    const char *task;                     /* --task SPEC: train on task:SPEC, evaluate task accuracy at
                                           * lens[] = task lengths (NULL: language modelling) */
    int task_n;                           /* examples per task length */
    float effective_pct;                  /* --task: RULER's effective length at this score, in % (<= 0: 85.6) */
    float effective_rel;                  /* > 0: at this fraction of the series' own score inside L instead */
    int n_depths;                         /* --task-depths: a depth x length grid of rows kind grid (0: none) */
    double depths[CMP_MAX_DEPTHS];
    TrainConfig base;                     /* the shared training config (seq_len = L) */
    int gen_tokens;                       /* long generation: length of each text, prompt included (0: off) */
    int gen_prompts;                      /* texts per model, prompts from the held-out text */
    int keyppl_tokens;                    /* held-out tokens for the key-token perplexity (0: off) */
    float key_gain;                       /* a key token's minimum log-prob gain, long vs short context */
    const char *key_evaluator;            /* the checkpoint that picks key tokens for every run (NULL: each run's own) */
    float gate;                           /* --task: a run learned the task when its exact match inside the trained
                                           * lengths is at least this (default 0.9) */
    float gate_loss;                      /* language modelling: a run whose loss at L is above this failed (0: none);
                                           * the gate's own bound is the unigram loss of the run's evaluation text */
    float converge_frac;                  /* the convergence rule (curve_judge): a run still improving, its validation
                                           * loss fell by more than this fraction over the last 20% of its steps
                                           * (with base.converge: of its steps before its cooldown) */
    float converge_abs;                   /* ... and by more than this many nats */
    float alpha;                          /* the verdicts' significance level, after Holm's correction */
    StrBuf cmdline;                       /* this invocation, shell-quoted */
} Compare;

/* CSV columns of DIR/runs/NAME.csv; kind is length, bucket or passkey (loss = accuracy), or with
 * --task: task (length = the task's length option, protocol = exact or bytes, loss = exact match
 * or byte accuracy, pos_hi = the positions its longest example reached, n = examples), or without:
 *   gen:    long generation (infer/genmetrics.h), one row per metric and position bucket of the
 *           generated texts: protocol = rep4 (repeated-4-gram rate), distinct4 or ownloss (the model's
 *           NLL of its own tokens, full context); length = the longest text; loss = the value (pooled over
 *           the texts); bucket, pos_lo, pos_hi = the positions; n = n-grams or tokens
 *   jump:   the loss jump at L on held-out text (windows of 2L): length 2L, protocol nonoverlap,
 *           loss = mean loss at target positions (L, 2L] minus (L/2, L]
 *   keyppl: key-token perplexity (infer/keyppl.h) at each length: protocol key (loss = mean NLL of the
 *           key tokens, n = their count) and all (the same tokens, every one); and one row with
 *           protocol share, length L: loss = the share of key tokens */
#define CMP_CSV_COLUMNS \
    "kind,scheme,seed,rule,train_len,length,protocol,loss,status,bucket,pos_lo,pos_hi,n,accepted,computable,ci_lo,ci_hi," \
    "depth"

/* ci_lo, ci_hi (rows length, passkey, task, gate): the 95% percentile-bootstrap interval of the
 * run's figure over its evaluation windows (blocks of `length` scored tokens) or examples; empty
 * where there is none. Files written before these columns have 15 and are read all the same.
 *   gate:   --task only, rule none: exact match at a task length inside the trained range (its
 *           ends and middle), protocol exact; the run's gate figure is their mean (README: verdicts)
 *   grid:   --task-depths only, rule none: the task's headline figure (protocol recall for RULER's
 *           tasks, else exact) with the needle at column depth, at each task length */

/* one row of run (scheme s, seed k) under rule at length len: kind, scheme, seed, rule, train_len,
 * length, protocol and model m's accepted and computable lengths set, the rest empty, status ok */
typedef struct {
    ResultRow r;
    char seed[24]; /* r.seed's text */
} CmpRow;
void compare_row(CmpRow *w, const Compare *c, const Model *m, const char *kind, int s, int k, const char *rule, int len,
                 const char *protocol);
/* the row as a line of DIR/runs/NAME.csv (CMP_CSV_COLUMNS) */
void compare_row_write(FILE *f, const CmpRow *w);
/* the verdict defaults: gate 0.9, no loss bound, 1% and 0.01 nats still improving, alpha 0.05 */
void compare_verdict_defaults(Compare *c);
/* base's validations and the rule, once base.steps and base.converge are set: twenty validations a
 * run (the curve the report judges), fifty with base.converge (the rule decides when to cool down,
 * at a validation: finer steps end a run nearer its plateau), the rule's thresholds as the report's */
void compare_set_converge(Compare *c);
/* the seed of a run's task evaluation examples: not its training stream's, the same for every scheme */
unsigned long long compare_task_seed(const Compare *c, int seed);

/* "DIR/runs/TAG_sSEED" + ext */
/* --schemes' splitting rule, for compare and the suite alike: 1 when the comma-separated piece (len bytes)
 * continues the entry before it, prev as joined so far, instead of starting one. A piece whose text
 * before its first '=' has no ':' or '(' is an option ("scale=pi:2" after "rope:base=500"), digits only
 * continue a "+nope@" layer list, and anything inside an unclosed "+attn(" continues it */
int scheme_piece_continues(const char *prev, const char *piece, size_t len);
void compare_run_path(const Compare *c, int scheme, int seed, const char *ext, char *buf, size_t n);
/* a fine-tune (FT_PI or FT_POSE) of that run: "DIR/runs/TAG_sSEED_ft-piS" or "..._ft-poseS" + ext */
void compare_finetune_path(const Compare *c, int kind, int scheme, int seed, const char *ext, char *buf, size_t n);
/* 1 if scheme i takes the post-hoc scaling rules (its scheme declares POS_CAP_RULES: rope, xpos) */
int compare_takes_rules(const Compare *c, int i);
/* scheme i takes --rules entry r: a scaling rule when it takes rules, an extension method
 * (extend.h) when its scheme can carry it (stream: most schemes; the others: rotary ones) */
int compare_takes_rule(const Compare *c, int i, int r);
/* 1 if scheme i's runs are also fine-tuned (the schemes that take rules), by any recipe */
int compare_finetunes(const Compare *c, int i);
/* 1 if scheme i's runs are fine-tuned by recipe kind */
int compare_finetunes_with(const Compare *c, int i, int kind);
/* the fine-tune's target length, S x L: PI's training length, PoSE's position range */
int compare_finetune_len(const Compare *c);
/* kind's steps: PI's finetune_steps; PoSE's as many tokens in rows of L, finetune_steps x S x L / L */
long compare_finetune_steps(const Compare *c, int kind);

#endif
