/* args.h: command-line flags for the subcommands, from one table per command. */
#ifndef PELAB_ARGS_H
#define PELAB_ARGS_H

#include <stdio.h>

/* OPT_OUT_FILE / OPT_OUT_DIR: a path this command will write (a file, or a directory it creates),
 * checked once every flag is parsed, before any work: a missing directory fails in a second, not
 * after hours of training. OPT_THREADS: an int in [0, threads_limit()]. OPT_RENAMED: an old name
 * of another row's flag (OPT_RENAMED_ROW), still accepted with a one-line notice on stderr and
 * left out of --help. */
typedef enum { OPT_INT, OPT_FLOAT, OPT_STR, OPT_FLAG, OPT_U64, OPT_OUT_FILE, OPT_OUT_DIR, OPT_THREADS, OPT_RENAMED } OptType;

typedef struct {
    const char *name; /* "--lr", or "-n" */
    OptType type;
    void *dst;        /* int*, float*, const char** (str, out-file, out-dir), int* (flag: set to 1; threads),
                         unsigned long long* */
    double lo, hi;    /* accepted range for numbers */
    const char *help;
} OptSpec;

/* Parses argv[first..argc) into the table; other non-flag words go to positional (up to max_pos).
 * --help prints usage to stdout and exits 0. A bad flag or value, or an output path that cannot
 * be written (given or default): one line on stderr, exit 1. */
void args_parse(const char *cmd, const char *synopsis, int argc, char **argv, int first, const OptSpec *opts,
                int n_opts, const char **positional, int max_pos, int *n_pos);
void args_usage(FILE *f, const char *cmd, const char *synopsis, const OptSpec *opts, int n_opts);

/* A flag's comma-separated numbers ("0,0.5,1"): up to max, each in [lo, hi]; anything else (a
 * bad or empty item, a trailing comma, too many) dies with one line naming cmd, flag and list. */
int args_numbers(const char *cmd, const char *flag, const char *list, double lo, double hi, double *out, int max);

/* A flag's comma-separated seeds ("1,2,3"): up to max distinct unsigned integers; anything else
 * dies with one line naming cmd, flag and list. */
int args_seeds(const char *cmd, const char *flag, const char *list, unsigned long long *out, int max);

/* the most --threads accepted: a few times the online CPUs (more only slows every parallel region) */
int threads_limit(void);
/* one row of a command's table: --precision fp32|bf16 */
#define OPT_PRECISION_ROW(dst)                                                                             \
    {"--precision", OPT_STR, (dst), 0, 0,                                                                  \
     "fp32, or bf16: weight products in bf16 with fp32 accumulation (oneDNN on AVX512_BF16 or AMX CPUs; "     \
     "elsewhere bf16 weights widened in registers, inference only)"}
/* one row of a command's table: --attn-scale MOD */
#define OPT_ATTN_SCALE_ROW(dst)                                                                            \
    {"--attn-scale", OPT_STR, (dst), 0, 0,                                                                 \
     "length-scaled attention on the loaded model: logn[:len=N], temp[:scale=F,floor=N] (either with layers=nope) or none (see --pos)"}
/* one row of a command's table: --dynamic window|prefix (score.h's DynamicLength) */
#define OPT_DYNAMIC_ROW(dst)                                                                               \
    {"--dynamic", OPT_STR, (dst), 0, 0,                                                                    \
     "the length a dynamic rule (dynamic-ntk) rotates for; other models score the same either way. "      \
     "window: one forward per window (score --lines: per text), every position under its length, as HF's full "  \
     "forward; prefix: each token under its own prefix's length, as `sample` decodes it (one forward per "  \
     "token past L: O(T^2) per window)"}
/* one row of a command's table: old_name, now spelled new_name (the name of another row) */
#define OPT_RENAMED_ROW(old_name, new_name) {old_name, OPT_RENAMED, (void *)(new_name), 0, 0, NULL}
/* one row of a command's table: --threads N */
#define OPT_THREADS_ROW(dst) {"--threads", OPT_THREADS, (dst), 0, 0, "threads (0: all cores)"}

#endif
