/* jobs.c: a sweep's job file as lines or as a Slurm array script (jobs.h). */
#include "jobs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"

int jobs_format_parse(const char *name, int *fmt) {
    if (strcmp(name, "lines") == 0) *fmt = JOBS_LINES;
    else if (strcmp(name, "slurm") == 0) *fmt = JOBS_SLURM;
    else return pelab_fail("--jobs-format %s: expected lines (GNU parallel, xargs, sh) or slurm (an sbatch array script)", name);
    return 0;
}

void shell_quote(StrBuf *b, const char *w) {
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=+") == strlen(w)) {
        sb_puts(b, w);
        return;
    }
    sb_put(b, "'", 1);
    for (; *w; w++) {
        if (*w == '\'') sb_puts(b, "'\\''");
        else sb_put(b, w, 1);
    }
    sb_put(b, "'", 1);
}

int jobs_word_breaks_line(const char *w) { return strpbrk(w, "\n\r") != NULL; }

/* The array script: sbatch reads the #SBATCH lines (its own flags on the command line override
 * them) and stores the script at submission, so a later --jobs run cannot change queued tasks.
 * Requeued (preemption, a node lost, scontrol requeue), a task appends to its log and its run
 * resumes from its checkpoint. */
static void slurm_script(FILE *f, const char *what, const char *lines, int n, int threads) {
    fprintf(f, "#!/bin/sh\n"
               "# pelab %s --jobs-format slurm: array task i runs the i-th unfinished run of the sweep.\n"
               "# Submit: sbatch --wait THIS_FILE  (sbatch flags before the file override the #SBATCH lines:\n"
               "# --partition, --time, --array=1-%d%%4 to run at most 4 at once, -o 'logs/%%A_%%a.out').\n"
               "# One task by hand: sh THIS_FILE 3. A task killed or requeued reruns and resumes its checkpoint.\n"
               "# Then the report: the same pelab command with --collect instead of --jobs.\n",
            what, n);
    fprintf(f, "#SBATCH --job-name=pelab-%s\n#SBATCH --array=1-%d\n#SBATCH --cpus-per-task=%d\n"
               "#SBATCH --open-mode=append\n#SBATCH --requeue\n",
            what, n, threads > 0 ? threads : 1);
    fprintf(f, "task=${SLURM_ARRAY_TASK_ID:-${1:-}}\n"
               "export OMP_NUM_THREADS=\"${SLURM_CPUS_PER_TASK:-%d}\"\n"
               "echo \"pelab: task $task of %d on $(hostname), attempt ${SLURM_RESTART_COUNT:-0}\" >&2\n"
               "case $task in\n",
            threads > 0 ? threads : 1, n);
    int i = 1;
    for (const char *p = lines; *p; i++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        fprintf(f, "%d) %.*s ;;\n", i, (int)len, p);
        p += len + (eol != NULL);
    }
    fprintf(f, "*) echo \"pelab: task '$task': expected 1..%d (SLURM_ARRAY_TASK_ID, or the first argument)\" >&2; "
               "exit 2 ;;\nesac\n",
            n);
}

int jobs_write(const char *path, int fmt, const char *what, const char *lines, int n, int threads) {
    MemFile mf; /* written whole: a runner never reads half a command list */
    FILE *f = memfile_open(&mf);
    if (!f) return -1;
    if (n > 0 && fmt == JOBS_SLURM) slurm_script(f, what, lines, n, threads);
    else if (n > 0) fputs(lines, f);
    return memfile_commit(&mf, path);
}

void jobs_how(StrBuf *b, int fmt, const char *path) {
    sb_puts(b, fmt == JOBS_SLURM ? "sbatch --wait " : "parallel -j4 < ");
    shell_quote(b, path);
}
