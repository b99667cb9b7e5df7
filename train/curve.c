/* curve.c: the loss curve CSV of a training run (curve.h). */
#include "curve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/mem.h"
#include "../io/results.h"

void curve_path(const char *ckpt, char *buf, size_t n) {
    const char *slash = strrchr(ckpt, '/'), *dot = strrchr(ckpt, '.');
    size_t stem = dot && (!slash || dot > slash) && dot != ckpt ? (size_t)(dot - ckpt) : strlen(ckpt);
    snprintf(buf, n, "%.*s.curve.csv", (int)stem, ckpt);
}

int curve_judge(const long *step, const double *val, int n, double frac, double abs_nats, int *early) {
    *early = -1;
    if (n < 2) return CURVE_UNKNOWN;
    for (int i = 0; i < n - 1; i++)
        if (step[i] <= 0.8 * step[n - 1]) *early = i;
    if (*early < 0) return CURVE_UNKNOWN;
    double drop = val[*early] - val[n - 1];
    return drop > frac * val[*early] && drop > abs_nats ? CURVE_IMPROVING : CURVE_CONVERGED;
}

static void add_validation(LossCurve *c, long step, double val) {
    if (c->n_val == c->cap_val) {
        c->cap_val = c->cap_val ? 2 * c->cap_val : 64;
        c->val_step = xrealloc(c->val_step, sizeof(long) * c->cap_val);
        c->val = xrealloc(c->val, sizeof(double) * c->cap_val);
    }
    c->val_step[c->n_val] = step, c->val[c->n_val++] = val;
}

/* the rows of an earlier curve (path) at steps <= keep, copied from old into f, their validations
 * kept. A last row cut short (a run killed mid-write: no newline) ends them; a row that does not read
 * is refused: its validation would judge convergence. */
static int copy_rows_upto(LossCurve *c, FILE *old, FILE *f, long keep, const char *path) {
    char line[512];
    if (!fgets(line, sizeof line, old)) return 0; /* header */
    long prev = 0;
    for (int n = 2; fgets(line, sizeof line, old); n++) {
        if (!strchr(line, '\n')) break;
        char *end;
        errno = 0;
        long step = strtol(line, &end, 10);
        if (!(line[0] >= '0' && line[0] <= '9') || errno || end == line || *end != ',' || step <= prev)
            return pelab_fail("%s line %d: expected a step above %ld, then ',' (delete the file to resume without "
                              "the curve so far)", path, n, prev);
        if (step > keep) break;
        prev = step;
        fputs(line, f);
        const char *v = line; /* val_loss: the fifth field, empty where no validation ran */
        for (int i = 0; i < 4 && v; i++) v = strchr(v, ',') ? strchr(v, ',') + 1 : NULL;
        if (!v) return pelab_fail("%s line %d: expected 5 fields (" CURVE_CSV_COLUMNS ")", path, n);
        if (*v == '\n' || (*v == '\r' && v[1] == '\n')) continue;
        double val = strtod(v, &end);
        if (end == v || (*end != '\n' && *end != '\r') || !isfinite(val) || val < 0)
            return pelab_fail("%s line %d: val_loss '%.*s': expected a finite number >= 0 or nothing", path, n,
                              (int)strcspn(v, "\r\n"), v);
        add_validation(c, step, val);
    }
    return 0;
}

/* an earlier run's curve at path: kept as PATH.1, or the first of PATH.2, PATH.3, ... not taken; its
 * name into kept. A second name first (link), so that path never goes missing; where the file
 * system has no links, a rename. */
static int keep_earlier_curve(const char *path, char *kept, size_t cap) {
    enum { MAX_KEPT = 9999 };
    for (int n = 1; n <= MAX_KEPT; n++) {
        snprintf(kept, cap, "%s.%d", path, n);
        if (link(path, kept) == 0) return 0;
        int err = errno;
        if (err == EEXIST) continue;
        if (err == ENOENT) return kept[0] = 0, 0; /* no earlier curve after all */
        struct stat st; /* no hard links on this file system: a rename to a free name */
        if (stat(kept, &st) == 0) continue;
        if (rename(path, kept) == 0) return 0;
        return pelab_fail("cannot keep the earlier loss curve %s as %s: %s", path, kept, strerror(errno));
    }
    return pelab_fail("cannot keep the earlier loss curve %s: %s.1 to %s.%d are taken", path, path, path, MAX_KEPT);
}

int curve_open(LossCurve *c, const char *ckpt, long resume_step, int keep_earlier) {
    memset(c, 0, sizeof *c);
    char path[4200];
    curve_path(ckpt, path, sizeof path);
    /* a new file beside the curve (O_EXCL | O_NOFOLLOW: never through a planted symlink), renamed
     * over it once it holds the rows kept, then appended to */
    AtomicFile *af = &c->pending_file;
    FILE *f = atomic_open(af, path);
    if (!f) return -1;
    results_csv_header(f, &RES_CURVE_CSV);
    FILE *old = resume_step > 0 ? fopen(path, "r") : NULL;
    int rc = old ? copy_rows_upto(c, old, f, resume_step, path) : 0;
    if (old) fclose(old);
    struct stat st;
    if (rc == 0 && fflush(f) != 0) rc = pelab_fail("cannot write %s: %s", af->tmp, strerror(errno));
    if (rc == 0 && keep_earlier && stat(path, &st) == 0) { /* renamed by curve_commit */
        c->f = f;
        c->pending = xmalloc(strlen(path) + 1);
        memcpy(c->pending, path, strlen(path) + 1);
        return 0;
    }
    if (rc != 0) {
        atomic_discard(af);
        curve_close(c);
        return -1;
    }
    if (atomic_publish(af) != 0) return -1;
    c->f = af->f; /* the renamed file stays open for appending */
    return 0;
}

int curve_commit(LossCurve *c, char *kept, size_t cap) {
    kept[0] = 0;
    if (!c->pending) return 0;
    if (keep_earlier_curve(c->pending, kept, cap) != 0) return -1;
    if (atomic_publish(&c->pending_file) != 0) {
        c->f = NULL; /* closed with it */
        return -1;
    }
    free(c->pending);
    c->pending = NULL;
    return 0;
}

void curve_add_loss(LossCurve *c, float loss) { c->loss_sum += loss, c->loss_n++; }

int curve_row(LossCurve *c, long step, long tokens, float lr, float val_loss) {
    if (!c->f) return 0;
    ResultRow w = result_row();
    w.step = step, w.tokens = tokens, w.lr = lr, w.value2 = val_loss;
    if (c->loss_n) w.value = c->loss_sum / c->loss_n;
    results_csv_row(c->f, &RES_CURVE_CSV, &w);
    if (!isnan(val_loss)) { /* as the file holds it (RES_CURVE_CSV: 6 decimals), so that a resumed run,
                             * which reads it back, judges convergence on the same numbers */
        char text[64];
        snprintf(text, sizeof text, "%.6f", val_loss);
        add_validation(c, step, strtod(text, NULL));
    }
    c->loss_sum = 0, c->loss_n = 0;
    if (fflush(c->f) != 0 || ferror(c->f)) return pelab_fail("cannot write the loss curve: %s", strerror(errno));
    return 0;
}

void curve_close(LossCurve *c) {
    if (c->pending) { /* no checkpoint of this run replaced the earlier one: the earlier curve stays its */
        atomic_discard(&c->pending_file); /* closes c->f, removes the temporary file */
        free(c->pending);
        c->pending = NULL;
    } else if (c->f) {
        fclose(c->f);
    }
    free(c->val_step), free(c->val);
    c->f = NULL, c->val_step = NULL, c->val = NULL, c->n_val = c->cap_val = 0;
}
