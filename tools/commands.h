/* commands.h: one entry point per subcommand; argv[0] is the subcommand name. */
#ifndef PELAB_COMMANDS_H
#define PELAB_COMMANDS_H

#include <stdio.h>

int cmd_train(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_score(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_passkey(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_tokenizer(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_suite(int argc, char **argv);
int cmd_task(int argc, char **argv);
int cmd_longrope_search(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_inspect(int argc, char **argv);

/* Print the recorded error (or msg) as "pelab: ..." and exit(1): only the command layer exits. */
void pelab_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* --threads N for OpenMP and OpenBLAS alike (0: leave the default, all cores) */
void set_threads(int n);
/* the BLAS kernel family and the CPU's instruction sets as one line on report (when report_line),
 * and on stderr the warning when the BLAS runs kernels narrower than the CPU offers (core/cpu.h) */
void print_machine(FILE *report, int report_line);

#endif
