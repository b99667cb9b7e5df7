/* compare.h: the runs of a compare, shared by `pelab compare` and `pelab demo` (a one-seed compare;
 * their flags: tools/compare_cmd.c, tools/demo_cmd.c). */
#ifndef PELAB_COMPARE_H
#define PELAB_COMPARE_H

#include "compare_plan.h"

/* Setup shared by compare and demo. Schemes: "rope,alibi" -> scheme[] and tag[]; -1 with one line
 * (prefixed by c->name) on a bad list. Command line: argv (argv[0] = the subcommand) shell-quoted
 * into cmdline. Fine-tune: finetune_rule / label from finetune_scale. */
int compare_set_schemes(Compare *c, const char *list);
void compare_set_cmdline(Compare *c, int argc, char **argv);
void compare_set_finetune(Compare *c);

/* DIR/runs, created with its parents; DIR's length is bounded here so that every path built from it
 * (run names, CSVs, plots) fits the fixed path buffers of the runs. -1 with pelab_errmsg */
int compare_make_runs_dir(const Compare *c);

/* Trains and evaluates every (scheme, seed) run (only: just the run named SCHEME_sSEED, NULL: all),
 * skipping finished ones unless c->fresh. Progress on stderr. -1 with one line (pelab_errmsg) on a
 * failure; compare_stop_status() then says the exit status it asks for. */
int compare_run_all(const Compare *c, const char *only);
/* before any run: the held-out text (the first seed's split, cut at --eval-tokens) holds every loss
 * length and its next token; -1 with one line naming the longest length and the tokens there are */
int compare_check_data(const Compare *c);
/* after compare_run_all failed: 128 + the signal that stopped a training (the shell's code: a job
 * engine reruns the run, and it resumes from its checkpoint), else 1 */
int compare_stop_status(void);

/* 1 when run (s, k) and every fine-tune it owes have their CSVs */
int compare_run_finished(const Compare *c, int s, int k);

#endif
