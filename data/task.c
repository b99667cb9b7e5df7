/* task.c: task specs, examples, the oracle check and training streams (the tasks themselves are
 * in task_kinds.c). */
#include "task.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/mem.h"

const TaskDef *task_find(const char *name) {
    for (int i = 0; i < task_count(); i++)
        if (strcmp(task_def(i)->name, name) == 0) return task_def(i);
    return NULL;
}

const char *task_names(void) {
    static char names[512];
    if (!names[0])
        for (int i = 0; i < task_count(); i++) {
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", task_def(i)->name);
        }
    return names;
}

/* the index of name among o->names ('|'-separated), or -1 */
static int name_index(const TaskOpt *o, const char *name, size_t n) {
    int i = 0;
    for (const char *p = o->names;; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return i;
        if (!bar) return -1;
        p = bar + 1;
    }
}

/* o->names' entry i into out ("?" past the end) */
static void name_of(const TaskOpt *o, int i, char *out, size_t cap) {
    const char *p = o->names;
    for (int k = 0; k < i && p; k++) p = strchr(p, '|') ? strchr(p, '|') + 1 : NULL;
    size_t len = p ? (strchr(p, '|') ? (size_t)(strchr(p, '|') - p) : strlen(p)) : 0;
    snprintf(out, cap, "%.*s", p ? (int)len : 1, p ? p : "?");
}

void task_opt_value_name(const TaskOpt *o, double v, char *out, size_t cap) {
    if (o->names) name_of(o, (int)v, out, cap);
    else snprintf(out, cap, "%g", v);
}

/* "8", "8-32", for a real option also "random" (its whole range), for a named one a name */
static int parse_value(const TaskDef *d, const TaskOpt *o, const char *v, double *lo, double *hi) {
    char *end;
    errno = 0;
    if (o->names) {
        int i = name_index(o, v, strlen(v));
        if (i < 0) return pelab_fail("task %s: %s=%s: expected one of %s", d->name, o->name, v, o->names);
        *lo = *hi = i;
        return 0;
    }
    if (!o->integer && strcmp(v, "random") == 0) {
        *lo = o->lo, *hi = o->hi;
        return 0;
    }
    *lo = strtod(v, &end);
    int ok = end != v && !errno;
    *hi = *lo;
    if (ok && *end == '-' && !o->single) {
        const char *second = end + 1;
        *hi = strtod(second, &end);
        ok = end != second && !errno;
    }
    /* both ends in range (NaN fails here too) before the integer test casts them */
    ok = ok && !*end && *lo >= o->lo && *lo <= o->hi && *hi >= o->lo && *hi <= o->hi;
    if (ok && o->integer) ok = *lo == (long)*lo && *hi == (long)*hi;
    if (!ok)
        return pelab_fail("task %s: %s=%s: expected %s%s in [%g, %g]", d->name, o->name, v,
                          o->integer ? "an integer" : "a number", o->single ? "" : " or a range lo-hi", o->lo, o->hi);
    if (*lo > *hi) return pelab_fail("task %s: %s=%s: a range lo-hi needs lo <= hi", d->name, o->name, v);
    return 0;
}

int task_parse(TaskSpec *t, const char *spec) {
    char buf[512];
    if (strlen(spec) >= sizeof buf) return pelab_fail("task spec too long (%zu bytes)", strlen(spec));
    snprintf(buf, sizeof buf, "%s", spec);
    char *opts = strchr(buf, ':');
    if (opts) *opts++ = 0;
    const TaskDef *d = task_find(buf);
    if (!d) return pelab_fail("unknown task '%s' (tasks: %s)", buf, task_names());
    t->def = d;
    for (int i = 0; i < d->n_opts; i++) t->lo[i] = d->opts[i].def_lo, t->hi[i] = d->opts[i].def_hi;
    if (!opts) return 0;
    int given[TASK_MAX_OPTS] = {0};
    for (char *kv = opts;;) {
        char *next = strchr(kv, ',');
        if (next) *next = 0;
        if (!*kv) return pelab_fail("task %s: empty option in '%s'", d->name, spec);
        char *eq = strchr(kv, '=');
        if (!eq) return pelab_fail("task %s: '%s': expected k=v", d->name, kv);
        *eq = 0;
        int k = 0;
        while (k < d->n_opts && strcmp(d->opts[k].name, kv) != 0) k++;
        if (k == d->n_opts) {
            char names[128] = "";
            for (int i = 0; i < d->n_opts; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", d->opts[i].name);
            return pelab_fail("task %s: unknown option '%s' (options: %s)", d->name, kv, names);
        }
        if (given[k]++) return pelab_fail("task %s: option %s given twice", d->name, kv);
        if (parse_value(d, &d->opts[k], eq + 1, &t->lo[k], &t->hi[k]) != 0) return -1;
        if (!next) break;
        kv = next + 1;
    }
    return 0;
}

void task_format(const TaskSpec *t, char *out, size_t cap) {
    size_t used = (size_t)snprintf(out, cap, "%s", t->def->name);
    for (int i = 0; i < t->def->n_opts && used < cap; i++) {
        char v[64];
        task_opt_value_name(&t->def->opts[i], t->lo[i], v, sizeof v);
        used += (size_t)snprintf(out + used, cap - used, "%c%s=%s", i ? ',' : ':', t->def->opts[i].name, v);
        if (used < cap && t->hi[i] != t->lo[i]) used += (size_t)snprintf(out + used, cap - used, "-%g", t->hi[i]);
    }
}

static double draw(const TaskOpt *o, double lo, double hi, Rng *rng) {
    if (lo == hi) return lo;
    return o->integer ? lo + (double)rng_below(rng, (uint64_t)(hi - lo) + 1) : lo + (hi - lo) * rng_f32(rng);
}

int task_solve(const TaskSpec *t, const char *prompt, size_t n, StrBuf *answer) {
    const TaskDef *d = t->def;
    if (!d->framed) return d->solve(t, prompt, n, answer) == 0 ? (sb_put(answer, "\n", 1), 0) : -1;
    size_t nn = strlen(d->name);
    if (d->dense) { /* the text before one slot: "NAME: " and the body so far; no end marker */
        if (n < nn + 2 || memcmp(prompt, d->name, nn) != 0 || memcmp(prompt + nn, ": ", 2) != 0)
            return pelab_fail("task %s: malformed prompt: expected \"%s: \" then the body", d->name, d->name);
        return d->solve(t, prompt + nn + 2, n - nn - 2, answer);
    }
    if (n < nn + 3 || memcmp(prompt, d->name, nn) != 0 || memcmp(prompt + nn, ": ", 2) != 0 || prompt[n - 1] != '|')
        return pelab_fail("task %s: malformed prompt: expected \"%s: BODY|\"", d->name, d->name);
    if (d->solve(t, prompt + nn + 2, n - nn - 3, answer) != 0) return -1;
    sb_put(answer, "\n", 1);
    return 0;
}

/* a dense task's example: the generator's body, each TASK_SLOT replaced by the oracle's answer to
 * the text before it (its bytes masked), then an unsupervised '\n' */
static int dense_example(const TaskSpec *t, const double *val, Rng *rng, TaskExample *ex) {
    const TaskDef *d = t->def;
    StrBuf body = {0}, out = {0}, mask = {0}, ans = {0};
    int rc = d->generate(val, rng, &body);
    sb_printf(&out, "%s: ", d->name);
    for (size_t i = 0; i < out.len; i++) sb_put(&mask, "", 1);
    size_t first = 0;
    for (size_t i = 0; rc == 0 && i < body.len; i++) {
        if (body.s[i] != TASK_SLOT) {
            sb_put(&out, body.s + i, 1), sb_put(&mask, "", 1);
            continue;
        }
        ans.len = 0;
        if ((rc = task_solve(t, out.s, out.len, &ans)) != 0) break;
        if (!first) first = out.len;
        sb_put(&out, ans.s, ans.len);
        for (size_t k = 0; k < ans.len; k++) sb_put(&mask, "\1", 1);
    }
    sb_put(&out, "\n", 1), sb_put(&mask, "", 1);
    if (rc == 0 && !first) rc = pelab_fail("task %s: an example without an answer", d->name);
    sb_free(&body), sb_free(&ans);
    if (rc != 0) {
        sb_free(&out), sb_free(&mask);
        return -1;
    }
    ex->text = out.s, ex->n = out.len, ex->mask = (unsigned char *)mask.s;
    ex->answer_start = first, ex->answer_len = out.len - first;
    return 0;
}

int task_example(const TaskSpec *t, Rng *rng, int len, TaskExample *ex) {
    const TaskDef *d = t->def;
    const TaskOpt *lo = &d->opts[d->len_opt];
    memset(ex, 0, sizeof *ex);
    if (len != -1 && !(len >= lo->lo && len <= lo->hi))
        return pelab_fail("task %s: %s %d: expected %g..%g", d->name, lo->name, len, lo->lo, lo->hi);
    double val[TASK_MAX_OPTS];
    ex->depth = -1;
    for (int i = 0; i < d->n_opts; i++) {
        val[i] = i == d->len_opt && len != -1 ? len : draw(&d->opts[i], t->lo[i], t->hi[i], rng);
        if (strcmp(d->opts[i].name, "depth") == 0) ex->depth = val[i];
    }
    ex->len = (int)val[d->len_opt];
    if (d->dense) return dense_example(t, val, rng, ex);
    StrBuf b = {0};
    if (d->framed) sb_printf(&b, "%s: ", d->name);
    if (d->generate(val, rng, &b) != 0) {
        sb_free(&b);
        return -1;
    }
    if (d->framed) sb_put(&b, "|", 1);
    ex->answer_start = b.len;
    /* the oracle writes the answer: generator and checker cannot disagree on what it is */
    StrBuf ans = {0};
    int rc = task_solve(t, sb_str(&b), b.len, &ans);
    if (rc == 0) sb_put(&b, ans.s, ans.len);
    sb_free(&ans);
    if (rc != 0) {
        sb_free(&b);
        return -1;
    }
    ex->answer_len = b.len - ex->answer_start;
    ex->n = b.len;
    ex->text = b.s;
    return 0;
}

void task_example_free(TaskExample *ex) {
    free(ex->text);
    free(ex->mask);
    ex->text = NULL;
    ex->mask = NULL;
}

size_t task_answers(const TaskExample *ex) {
    if (!ex->mask) return ex->answer_len;
    size_t k = 0;
    for (size_t i = 0; i < ex->n; i++) k += ex->mask[i];
    return k;
}

/* the oracle's answers: the one after the prompt, or each masked run's, from the text before it */
static int oracle_answers(const TaskSpec *t, const TaskExample *ex, StrBuf *want) {
    if (!ex->mask) return task_solve(t, ex->text, ex->answer_start, want);
    for (size_t i = 0; i < ex->n; i++)
        if (ex->mask[i] && (i == 0 || !ex->mask[i - 1]) && task_solve(t, ex->text, i, want) != 0) return -1;
    return 0;
}

int task_check(const TaskSpec *t, const TaskExample *ex, const char *answer, size_t n, int *n_correct) {
    StrBuf want = {0};
    if (oracle_answers(t, ex, &want) != 0) {
        sb_free(&want);
        return -1;
    }
    int right = 0;
    for (size_t i = 0; i < n && i < want.len; i++) right += answer[i] == want.s[i];
    int exact = n == want.len && (size_t)right == n;
    sb_free(&want);
    if (n_correct) *n_correct = right;
    return exact;
}

/* a byte of a word for task_recall: ASCII letters, digits, '-' (a uuid's) */
static int word_byte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* 1 if the nr bytes of ref are one whole word of pred (np bytes), letters in either case */
static int has_word(const char *pred, size_t np, const char *ref, size_t nr) {
    for (size_t i = 0; i < np;) {
        if (!word_byte(pred[i])) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < np && word_byte(pred[j])) j++;
        int same = j - i == nr;
        for (size_t k = 0; same && k < nr; k++) same = lower(pred[i + k]) == lower(ref[k]);
        if (same) return 1;
        i = j;
    }
    return 0;
}

double task_recall(const TaskSpec *t, const TaskExample *ex, const char *pred, size_t n, int *found, int *total) {
    if (!t->def->listed) return pelab_fail("task %s: not a list of references (no recall score)", t->def->name);
    StrBuf want = {0};
    if (task_solve(t, ex->text, ex->answer_start, &want) != 0) {
        sb_free(&want);
        return -1;
    }
    size_t np = 0; /* the prediction ends at the model's end marker */
    while (np < n && pred[np] != '\n') np++;
    int f = 0, tot = 0;
    for (size_t i = 0; i < want.len;) {
        size_t j = i;
        while (j < want.len && want.s[j] != ' ' && want.s[j] != '\n') j++;
        if (j > i) tot++, f += has_word(pred, np, want.s + i, j - i);
        i = j + 1;
    }
    sb_free(&want);
    if (found) *found = f;
    if (total) *total = tot;
    if (!tot) return pelab_fail("task %s: an answer without references", t->def->name);
    return (double)f / tot;
}

int task_stream(const TaskSpec *t, Rng *rng, size_t n_bytes, char **text, unsigned char **mask,
                unsigned char **starts) {
    char *out = xmalloc(n_bytes + 1);
    unsigned char *m = xmalloc(n_bytes + 1), *st = xcalloc(n_bytes + 1, 1);
    size_t used = 0;
    while (used < n_bytes) {
        TaskExample ex;
        if (task_example(t, rng, -1, &ex) != 0) {
            free(out), free(m), free(st);
            return -1;
        }
        size_t take = ex.n < n_bytes - used ? ex.n : n_bytes - used;
        memcpy(out + used, ex.text, take);
        for (size_t i = 0; i < take; i++) m[used + i] = ex.mask ? ex.mask[i] : i >= ex.answer_start;
        st[used] = 1;
        used += take;
        task_example_free(&ex);
    }
    out[n_bytes] = 0;
    *text = out, *mask = m;
    if (starts) *starts = st;
    else free(st);
    return 0;
}
