/* args.h: command-line flags for the subcommands, from one table per command. */
#ifndef PELAB_ARGS_H
#define PELAB_ARGS_H

#include <stdio.h>

typedef enum { OPT_INT, OPT_FLOAT, OPT_STR, OPT_FLAG, OPT_U64 } OptType;

typedef struct {
    const char *name; /* "--lr", or "-n" */
    OptType type;
    void *dst;        /* int*, float*, const char**, int* (flag: set to 1), unsigned long long* */
    double lo, hi;    /* accepted range for numbers */
    const char *help;
} OptSpec;

/* Parses argv[first..argc) into the table; other non-flag words go to positional (up to max_pos).
 * --help prints usage to stdout and exits 0. A bad flag or value: one line on stderr, exit 1. */
void args_parse(const char *cmd, const char *synopsis, int argc, char **argv, int first, const OptSpec *opts,
                int n_opts, const char **positional, int max_pos, int *n_pos);
void args_usage(FILE *f, const char *cmd, const char *synopsis, const OptSpec *opts, int n_opts);

#endif
