/* curve.c: the loss curve CSV of a training run (curve.h). */
#include "curve.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* the rows of an earlier curve at steps <= keep, copied from old into f, their validations kept */
static void copy_rows_upto(LossCurve *c, FILE *old, FILE *f, long keep) {
    char line[512];
    if (!fgets(line, sizeof line, old)) return; /* header */
    while (fgets(line, sizeof line, old)) {
        char *end;
        long step = strtol(line, &end, 10);
        if (end == line || *end != ',' || step > keep || !strchr(line, '\n')) break;
        fputs(line, f);
        const char *v = line; /* val_loss: the fifth field, empty where no validation ran */
        for (int i = 0; i < 4 && v; i++) v = strchr(v, ',') ? strchr(v, ',') + 1 : NULL;
        if (v && *v != '\n' && *v != '\r' && *v) add_validation(c, step, strtod(v, NULL));
    }
}

int curve_open(LossCurve *c, const char *ckpt, long resume_step) {
    memset(c, 0, sizeof *c);
    char path[4200], tmp[4300];
    curve_path(ckpt, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return pelab_fail("cannot open %s: %s", tmp, strerror(errno));
    results_csv_header(f, &RES_CURVE_CSV);
    FILE *old = resume_step > 0 ? fopen(path, "r") : NULL;
    if (old) {
        copy_rows_upto(c, old, f, resume_step);
        fclose(old);
    }
    if (fflush(f) != 0 || rename(tmp, path) != 0) {
        fclose(f);
        remove(tmp);
        return pelab_fail("cannot write %s: %s", path, strerror(errno));
    }
    c->f = f; /* the renamed file stays open for appending */
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
    if (c->f) fclose(c->f);
    free(c->val_step), free(c->val);
    c->f = NULL, c->val_step = NULL, c->val = NULL, c->n_val = c->cap_val = 0;
}
