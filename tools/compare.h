/* compare.h: the `pelab compare` driver, shared with `pelab demo` (a one-seed compare). */
#ifndef PELAB_COMPARE_H
#define PELAB_COMPARE_H

#include "compare_plan.h"

/* Setup shared by compare and demo; each dies with one line (prefixed by c->name) on bad input.
 * Schemes: "rope,alibi" -> scheme[] and tag[]. Command line: argv (argv[0] = the subcommand)
 * shell-quoted into cmdline. Fine-tune: finetune_rule / label from finetune_scale. */
void compare_set_schemes(Compare *c, const char *list);
void compare_set_cmdline(Compare *c, int argc, char **argv);
void compare_set_finetune(Compare *c);

/* Trains and evaluates every (scheme, seed) run (only: just the run named SCHEME_sSEED, NULL: all),
 * skipping finished ones unless c->fresh. Progress on stderr. */
void compare_run_all(const Compare *c, const char *only);

/* `pelab compare`'s whole command on c (zeroed first; its cmdline freed): flags, runs, report, as
 * cmd_compare. c stays filled for a caller that reads the runs back (suite.c). Dies on bad input. */
int compare_main(int argc, char **argv, Compare *c);

#endif
