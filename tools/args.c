#include "args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "commands.h"

void args_usage(FILE *f, const char *cmd, const char *synopsis, const OptSpec *opts, int n_opts) {
    fprintf(f, "usage: pelab %s %s\n", cmd, synopsis);
    for (int i = 0; i < n_opts; i++) {
        const OptSpec *o = &opts[i];
        char def[64] = "";
        if (o->type == OPT_RENAMED) continue; /* its new name has the row */
        switch (o->type) {
        case OPT_INT:
        case OPT_THREADS: snprintf(def, sizeof def, " (default %d)", *(int *)o->dst); break;
        case OPT_FLOAT: snprintf(def, sizeof def, " (default %g)", *(float *)o->dst); break;
        case OPT_U64: snprintf(def, sizeof def, " (default %llu)", *(unsigned long long *)o->dst); break;
        case OPT_STR:
        case OPT_OUT_FILE:
        case OPT_OUT_DIR:
            if (*(const char **)o->dst) snprintf(def, sizeof def, " (default %s)", *(const char **)o->dst);
            break;
        case OPT_FLAG:
        case OPT_RENAMED: break;
        }
        const char *metavar = o->type == OPT_FLAG       ? ""
                              : o->type == OPT_STR      ? " S"
                              : o->type == OPT_OUT_FILE ? " PATH"
                              : o->type == OPT_OUT_DIR  ? " DIR"
                                                        : " N";
        fprintf(f, "  %s%-*s %s%s\n", o->name, (int)(18 - strlen(o->name)), metavar, o->help, def);
    }
}

static int parse_number(const char *val, OptType type, double *out) {
    char *end;
    errno = 0;
    *out = type == OPT_FLOAT ? strtod(val, &end) : (double)strtoll(val, &end, 10);
    return !(errno || end == val || *end);
}

void args_parse(const char *cmd, const char *synopsis, int argc, char **argv, int first, const OptSpec *opts,
                int n_opts, const char **positional, int max_pos, int *n_pos) {
    int np = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            args_usage(stdout, cmd, synopsis, opts, n_opts);
            exit(0);
        }
        if (a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == 0) {
            if (np >= max_pos) pelab_die("%s: unexpected argument '%s' (see pelab %s --help)", cmd, a, cmd);
            positional[np++] = a;
            continue;
        }
        const OptSpec *o = NULL;
        const char *inline_val = NULL;
        char name[64];
        snprintf(name, sizeof name, "%s", a);
        char *eq = strchr(name, '=');
        if (eq) *eq = 0, inline_val = a + (eq - name) + 1;
        for (int k = 0; k < n_opts; k++)
            if (strcmp(opts[k].name, name) == 0) o = &opts[k];
        if (!o) pelab_die("%s: unknown flag '%s' (see pelab %s --help)", cmd, name, cmd);
        if (o->type == OPT_RENAMED) { /* the old spelling: the new name's row, and a notice */
            const char *now = o->dst;
            fprintf(stderr, "pelab %s: %s is spelled %s now (%s still works)\n", cmd, name, now, name);
            o = NULL;
            for (int k = 0; k < n_opts; k++)
                if (strcmp(opts[k].name, now) == 0) o = &opts[k];
            if (!o || o->type == OPT_RENAMED) pelab_die("%s: %s: renamed to %s, which has no row", cmd, name, now);
            snprintf(name, sizeof name, "%s", now);
        }
        if (o->type == OPT_FLAG) {
            if (inline_val) pelab_die("%s: flag %s takes no value", cmd, name);
            *(int *)o->dst = 1;
            continue;
        }
        const char *val = inline_val;
        if (!val) {
            if (i + 1 >= argc) pelab_die("%s: flag %s needs a value: %s", cmd, name, o->help);
            val = argv[++i];
        }
        if (o->type == OPT_STR || o->type == OPT_OUT_FILE || o->type == OPT_OUT_DIR) {
            *(const char **)o->dst = val;
            continue;
        }
        if (o->type == OPT_THREADS) {
            double x;
            int limit = threads_limit();
            if (!parse_number(val, OPT_INT, &x) || !(x >= 0))
                pelab_die("%s: %s %s: expected a thread count (0: all cores)", cmd, name, val);
            if (x > limit)
                pelab_die("%s: %s %s: at most %d (4 x the %d online CPUs); more threads than cores only slow pelab down",
                          cmd, name, val, limit, limit / 4);
            *(int *)o->dst = (int)x;
            continue;
        }
        if (o->type == OPT_U64) { /* exact: a double would merge seeds above 2^53 */
            char *end;
            errno = 0;
            unsigned long long u = strtoull(val, &end, 10);
            if (errno || end == val || *end || val[0] == '-')
                pelab_die("%s: %s %s: expected an unsigned integer", cmd, name, val);
            *(unsigned long long *)o->dst = u;
            continue;
        }
        double x;
        if (!parse_number(val, o->type, &x) || !(x >= o->lo && x <= o->hi)) /* NaN fails too */
            pelab_die("%s: %s %s: expected %s in [%g, %g]", cmd, name, val,
                      o->type == OPT_FLOAT ? "a number" : "an integer", o->lo, o->hi);
        if (o->type == OPT_INT) *(int *)o->dst = (int)x;
        else if (o->type == OPT_FLOAT) *(float *)o->dst = (float)x;
        else *(unsigned long long *)o->dst = (unsigned long long)x;
    }
    if (n_pos) *n_pos = np;
    for (int k = 0; k < n_opts; k++) {
        const OptSpec *o = &opts[k];
        const char *path = o->type == OPT_OUT_FILE || o->type == OPT_OUT_DIR ? *(const char **)o->dst : NULL;
        if (path && (o->type == OPT_OUT_FILE ? check_output_file(path) : check_output_dir(path)) != 0)
            pelab_die("%s: %s %s", cmd, o->name, pelab_errmsg);
    }
}

int threads_limit(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return 4 * (int)(cpus > 0 ? cpus : 1);
}

int args_seeds(const char *cmd, const char *flag, const char *list, unsigned long long *out, int max) {
    int n = 0;
    for (const char *p = list;;) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (end == p || errno || *p == '-' || *p == '+' || (*end && *end != ',') || n == max)
            pelab_die("%s: %s %s: expected up to %d comma-separated seeds (unsigned integers)", cmd, flag, list, max);
        for (int k = 0; k < n; k++)
            if (out[k] == x) pelab_die("%s: %s %s: seed %llu given twice", cmd, flag, list, x);
        out[n++] = x;
        if (!*end) return n;
        p = end + 1;
    }
}

int args_numbers(const char *cmd, const char *flag, const char *list, double lo, double hi, double *out, int max) {
    int n = 0;
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || errno || !(x >= lo && x <= hi) || (*end && *end != ',') || n == max)
            pelab_die("%s: %s %s: expected up to %d comma-separated numbers in [%.15g, %.15g]", cmd, flag, list, max,
                      lo, hi);
        out[n++] = x;
        p = *end ? end + 1 : end;
        if (*end && !*p) pelab_die("%s: %s %s: trailing comma", cmd, flag, list);
    }
    if (n == 0) pelab_die("%s: %s: empty list", cmd, flag);
    return n;
}
