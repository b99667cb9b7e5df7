/* hf_index.c: model.safetensors.index.json (see hf_index.h). */
#include "hf_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/json.h"
#include "../core/mem.h"

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

int hf_index_parse(HfIndex *x, const unsigned char *buf, size_t len, const char *name) {
    memset(x, 0, sizeof *x);
    JsonDoc doc;
    if (json_parse(&doc, (const char *)buf, len) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: not valid JSON: %s", name, why);
    }
    int rc = 0;
    const JsonNode *root = doc.root, *map = json_get(root, "weight_map");
    if (root->type != JSON_OBJECT) rc = pelab_fail("%s: expected a JSON object", name);
    for (const JsonNode *e = rc ? NULL : root->child; e && rc == 0; e = e->next)
        if (strcmp(e->key, "metadata") && strcmp(e->key, "weight_map"))
            rc = pelab_fail("%s: unexpected field '%.64s' (an index holds metadata and weight_map)", name, e->key);
    if (rc == 0 && (!map || map->type != JSON_OBJECT || map->n_children == 0))
        rc = pelab_fail("%s: weight_map: expected an object {tensor: shard file} with at least one entry", name);
    if (rc == 0) {
        x->tensors = xcalloc(map->n_children, sizeof *x->tensors);
        x->file_of = xcalloc(map->n_children, sizeof *x->file_of);
        x->files = xcalloc(HF_INDEX_MAX_FILES, sizeof *x->files);
    }
    /* tensor names sorted with their files: a pair array sorted by name, then split */
    for (const JsonNode *e = rc ? NULL : map->child; e && rc == 0; e = e->next) {
        const char *f = e->type == JSON_STRING ? e->str : NULL;
        if (!f || !f[0] || strchr(f, '/') || !strcmp(f, ".") || !strcmp(f, "..") || strlen(f) > 255) {
            rc = pelab_fail("%s: weight_map['%.64s']: expected a shard file name in the index's own directory (no '/')",
                            name, e->key);
            break;
        }
        int k = 0;
        while (k < x->n_files && strcmp(x->files[k], f)) k++;
        if (k == x->n_files) {
            if (x->n_files == HF_INDEX_MAX_FILES) {
                rc = pelab_fail("%s: weight_map names more than %d shard files", name, HF_INDEX_MAX_FILES);
                break;
            }
            x->files[x->n_files++] = dup_str(f);
        }
        /* the name and its file in one string "name\0<k>" keep the pair through the sort */
        size_t n = strlen(e->key);
        char *t = xmalloc(n + 1 + sizeof(int));
        memcpy(t, e->key, n + 1);
        memcpy(t + n + 1, &k, sizeof(int));
        x->tensors[x->n_tensors++] = t;
    }
    if (rc == 0) {
        qsort(x->tensors, (size_t)x->n_tensors, sizeof *x->tensors, by_name);
        for (int i = 0; i < x->n_tensors; i++) memcpy(&x->file_of[i], x->tensors[i] + strlen(x->tensors[i]) + 1, sizeof(int));
    }
    json_free(&doc);
    if (rc != 0) {
        hf_index_free(x);
        for (char *c = pelab_errmsg; *c; c++) /* one line, whatever names the file quotes */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    }
    return rc;
}

void hf_index_free(HfIndex *x) {
    for (int i = 0; i < x->n_files; i++) free(x->files[i]);
    for (int i = 0; i < x->n_tensors; i++) free(x->tensors[i]);
    free(x->files), free(x->tensors), free(x->file_of);
    memset(x, 0, sizeof *x);
}

int hf_index_file_of(const HfIndex *x, const char *tensor) {
    int lo = 0, hi = x->n_tensors - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(x->tensors[mid], tensor);
        if (c == 0) return x->file_of[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}
