#include "attn_scale.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/sys.h"

/* one "key=value" of a modifier: a number in [lo, hi] */
static int parse_number(const char *mod, const char *key, const char *value, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !(v >= lo && v <= hi))
        return pelab_fail("attention modifier +%s: %s=%s: expected a number in [%g, %g]", mod, key, value, lo, hi);
    *out = v;
    return 0;
}

int attn_scale_parse(AttnScale *a, const char *text, int train_len) {
    char buf[128];
    if (strlen(text) >= sizeof buf) return pelab_fail("attention modifier +%s: too long", text);
    strcpy(buf, text);
    char *opts = strchr(buf, ':');
    if (opts) *opts++ = 0;
    memset(a, 0, sizeof *a);
    if (!strcmp(buf, "logn")) a->kind = ATTN_SCALE_LOGN, a->len = train_len;
    else if (!strcmp(buf, "temp")) a->kind = ATTN_SCALE_TEMP, a->floor_len = train_len, a->scale = 0.1;
    else return pelab_fail("attention modifier +%s: unknown (expected logn or temp)", buf);
    char *save = NULL;
    for (char *tok = opts ? strtok_r(opts, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return pelab_fail("attention modifier +%s: '%s': expected key=value", buf, tok);
        *eq = 0;
        double v = 0;
        if (a->kind == ATTN_SCALE_LOGN && !strcmp(tok, "len")) {
            if (parse_number(buf, tok, eq + 1, 2, 1 << 30, &v) != 0) return -1;
            a->len = (int)v;
        } else if (a->kind == ATTN_SCALE_TEMP && !strcmp(tok, "scale")) {
            if (parse_number(buf, tok, eq + 1, 0, 100, &a->scale) != 0) return -1;
        } else if (a->kind == ATTN_SCALE_TEMP && !strcmp(tok, "floor")) {
            if (parse_number(buf, tok, eq + 1, 1, 1 << 30, &v) != 0) return -1;
            a->floor_len = (int)v;
        } else {
            return pelab_fail("attention modifier +%s: unknown option '%s' (expected %s)", buf, tok,
                              a->kind == ATTN_SCALE_LOGN ? "len" : "scale, floor");
        }
    }
    if (a->kind == ATTN_SCALE_LOGN && a->len < 2) return pelab_fail("attention modifier +logn: len %d: expected >= 2", a->len);
    return 0;
}

void attn_scale_spec(const AttnScale *a, char *buf, size_t n) {
    if (a->kind == ATTN_SCALE_LOGN) snprintf(buf, n, "+logn:len=%d", a->len);
    else if (a->kind == ATTN_SCALE_TEMP) {
        char v[32]; /* the fewest digits that read back exactly */
        snprintf(v, sizeof v, "%.15g", a->scale);
        if (strtod(v, NULL) != a->scale) snprintf(v, sizeof v, "%.17g", a->scale);
        snprintf(buf, n, "+temp:scale=%s,floor=%d", v, a->floor_len);
    }
    else if (n) buf[0] = 0;
}

double attn_scale_factor(const AttnScale *a, long pos) {
    if (a->kind == ATTN_SCALE_LOGN) return pos + 1 > a->len ? log((double)pos + 1) / log((double)a->len) : 1.0;
    if (a->kind == ATTN_SCALE_TEMP) return a->scale * log(floor((double)(pos + 1) / a->floor_len) + 1.0) + 1.0;
    return 1.0;
}

void attn_scale_apply(const AttnScale *a, float *rows, const int *pos, int n, int width) {
    if (a->kind == ATTN_SCALE_NONE) return;
    PAR_FOR((size_t)n * width >= PAR_MIN_WORK, int, r, n,
        float f = (float)attn_scale_factor(a, pos[r]);
        if (f != 1.0f)
            for (int i = 0; i < width; i++) rows[(size_t)r * width + i] *= f;
    );
}
