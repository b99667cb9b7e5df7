/* compare_cmd.h: `pelab compare`'s whole command, shared with `pelab suite` (which runs compares). */
#ifndef PELAB_COMPARE_CMD_H
#define PELAB_COMPARE_CMD_H

#include "../lab/compare_plan.h"

/* `pelab compare`'s whole command on c (zeroed first; its cmdline freed): flags, runs, report, as
 * cmd_compare. c stays filled for a caller that reads the runs back (suite_cmd.c). Dies on bad input. */
int compare_main(int argc, char **argv, Compare *c);

#endif
