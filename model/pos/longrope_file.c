/* longrope_file.c: LongRoPE's factors from a JSON file (longrope_file.h). */
#include "longrope_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/files.h"
#include "../../core/json.h"

/* the member key of obj, else of root (HF keeps original_max_position_embeddings at the top level,
 * newer configs inside rope_parameters); *where names it in messages */
static const JsonNode *member(const JsonNode *obj, const JsonNode *root, const char *key, const char *prefix,
                              char *where, size_t n) {
    const JsonNode *v = json_get(obj, key);
    if (v) snprintf(where, n, "%s%s", prefix, key);
    else if (obj != root && (v = json_get(root, key))) snprintf(where, n, "%s", key);
    return v;
}

static int read_factor_set(const char *path, const JsonNode *obj, const char *prefix, const char *key, double *out,
                           int *count) {
    char where[64];
    const JsonNode *a = member(obj, obj, key, prefix, where, sizeof where);
    if (!a) return pelab_fail("--scale longrope:%s: %s%s: missing (expected an array of factors, one per rotary pair)",
                              path, prefix, key);
    if (a->type != JSON_ARRAY)
        return pelab_fail("--scale longrope:%s: %s: expected an array of numbers, got %s", path, where,
                          json_type_name(a->type));
    if (a->n_children < 1 || a->n_children > ROPE_MAX_PAIRS)
        return pelab_fail("--scale longrope:%s: %s: %zu factors; expected 1 to %d", path, where, a->n_children,
                          ROPE_MAX_PAIRS);
    int i = 0;
    for (const JsonNode *e = a->child; e; e = e->next, i++) {
        if (e->type != JSON_NUMBER || !isfinite(e->number) || !(e->number > 0))
            return pelab_fail("--scale longrope:%s: %s[%d]: expected a finite number > 0, got %s", path, where, i,
                              e->type == JSON_NUMBER ? e->str : json_type_name(e->type));
        out[i] = e->number;
    }
    *count = i;
    return 0;
}

/* a positive integer member, 0 if absent */
static int read_length(const char *path, const JsonNode *obj, const JsonNode *root, const char *prefix,
                       const char *key, long *out) {
    char where[64];
    const JsonNode *v = member(obj, root, key, prefix, where, sizeof where);
    *out = 0;
    if (!v) return 0;
    if (v->type != JSON_NUMBER || !v->is_int || v->int_value < 1 || v->int_value > (1 << 30))
        return pelab_fail("--scale longrope:%s: %s: expected an integer in [1, %d]", path, where, 1 << 30);
    *out = (long)v->int_value;
    return 0;
}

/* a finite number >= lo member, 0 if absent */
static int read_number(const char *path, const JsonNode *obj, const char *prefix, const char *key, double lo,
                       double *out) {
    char where[64];
    const JsonNode *v = member(obj, obj, key, prefix, where, sizeof where);
    *out = 0;
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type != JSON_NUMBER || !isfinite(v->number) || !(v->number >= lo) || v->number == 0)
        return pelab_fail("--scale longrope:%s: %s: expected a finite number %s %g", path, where, lo > 0 ? ">=" : ">",
                          lo);
    *out = v->number;
    return 0;
}

static int longrope_fields(const char *path, const JsonNode *root, LongRopeFactors *f) {
    if (root->type != JSON_OBJECT)
        return pelab_fail("--scale longrope:%s: expected a JSON object (an HF config.json or {\"short_factor\": "
                          "[...], \"long_factor\": [...]}), got %s", path, json_type_name(root->type));
    const char *prefix = "rope_scaling.";
    const JsonNode *obj = json_get(root, "rope_scaling");
    if (!obj || obj->type == JSON_NULL) prefix = "rope_parameters.", obj = json_get(root, "rope_parameters");
    if (!obj || obj->type == JSON_NULL) { /* a bare object of the fields */
        if (!json_get(root, "short_factor") && json_get(root, "architectures"))
            return pelab_fail("--scale longrope:%s: rope_scaling: missing (this config has no LongRoPE factors)", path);
        prefix = "", obj = root;
    }
    if (obj->type != JSON_OBJECT)
        return pelab_fail("--scale longrope:%s: %.*s: expected an object, got %s", path, (int)strlen(prefix) - 1,
                          prefix, json_type_name(obj->type));
    const JsonNode *type = json_get(obj, "rope_type");
    if (!type) type = json_get(obj, "type");
    if (type && (type->type != JSON_STRING || strcmp(type->str, "longrope") != 0))
        return pelab_fail("--scale longrope:%s: %s%s: expected \"longrope\"", path, prefix, type->key);
    int n_short = 0, n_long = 0;
    if (read_factor_set(path, obj, prefix, "short_factor", f->short_factor, &n_short) != 0 ||
        read_factor_set(path, obj, prefix, "long_factor", f->long_factor, &n_long) != 0)
        return -1;
    if (n_short != n_long)
        return pelab_fail("--scale longrope:%s: %sshort_factor has %d factors, %slong_factor %d: expected as many",
                          path, prefix, n_short, prefix, n_long);
    f->n_pairs = n_short;
    long max_len;
    double given_factor;
    if (read_length(path, obj, root, prefix, "original_max_position_embeddings", &f->orig_len) != 0 ||
        read_length(path, obj, root, prefix, "max_position_embeddings", &max_len) != 0 ||
        read_number(path, obj, prefix, "factor", 1, &given_factor) != 0 ||
        read_number(path, obj, prefix, "attention_factor", 0, &f->attn_factor) != 0)
        return -1;
    /* HF: with original_max_position_embeddings, the factor is max / original (Phi-3); without it,
     * max_position_embeddings is the original length and "factor" the extension */
    f->factor = given_factor > 0 ? given_factor : 1.0;
    if (f->orig_len > 0 && max_len > 0) f->factor = (double)max_len / f->orig_len;
    else if (max_len > 0) f->orig_len = max_len;
    return 0;
}

int longrope_read(const char *path, LongRopeFactors *f) {
    memset(f, 0, sizeof *f);
    if (!*path) return pelab_fail("--scale longrope: needs the path of a JSON file, e.g. longrope:config.json");
    if (strlen(path) >= ROPE_PATH_MAX)
        return pelab_fail("--scale longrope:%.40s...: the path is longer than %d characters", path, ROPE_PATH_MAX - 1);
    if (strpbrk(path, ",+"))
        return pelab_fail("--scale longrope:%s: the path holds ',' or '+', which separate a spec's parts: rename or "
                          "link the file", path);
    snprintf(f->path, sizeof f->path, "%s", path);
    unsigned char *buf;
    size_t len;
    if (read_file_max(path, FILE_MAX_CONFIG, "a factors file", &buf, &len) != 0) {
        char why[sizeof pelab_errmsg];
        memcpy(why, pelab_errmsg, sizeof why);
        return pelab_fail("--scale longrope: %s", why);
    }
    JsonDoc doc;
    int rc = json_parse(&doc, (const char *)buf, len);
    free(buf);
    if (rc != 0) {
        char why[sizeof pelab_errmsg];
        memcpy(why, pelab_errmsg, sizeof why);
        return pelab_fail("--scale longrope:%s: not valid JSON: %s", path, why);
    }
    rc = longrope_fields(path, doc.root, f);
    json_free(&doc);
    return rc;
}
