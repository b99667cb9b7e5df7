#include "load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../data/corpus.h"
#include "../data/synth.h"
#include "../io/checkpoint.h"
#include "commands.h"

const char *scale_flag_help(void) {
    static char help[2200];
    if (!help[0]) {
        char rules[1024], methods[1024];
        rope_rule_list(rules, sizeof rules, ", ", 1, 1);
        extend_list(methods, sizeof methods, ", ", 1);
        snprintf(help, sizeof help, "scaling rule, for a scheme that takes one: %s; or an extension method: %s", rules,
                 methods);
    }
    return help;
}

Precision precision_or_die(const char *precision) {
    Precision p = PRECISION_FP32;
    if (precision && precision_parse(precision, &p) != 0) pelab_die("%s", pelab_errmsg);
    return p;
}

int load_flags_given(const LoadFlags *f) {
    return f->scale || f->precision || f->attn_scale || strcmp(f->kv_cache, "fp32") != 0;
}

/* --kv-cache, checked before anything is read */
static int kv_cache_bf16_or_die(const char *cmd, const LoadFlags *f) {
    if (strcmp(f->kv_cache, "fp32") != 0 && strcmp(f->kv_cache, "bf16") != 0)
        pelab_die("%s: --kv-cache %s: expected fp32 or bf16", cmd, f->kv_cache);
    return strcmp(f->kv_cache, "bf16") == 0;
}

void load_flags_apply_or_die(const char *cmd, const LoadFlags *f, Model *m) {
    m->kv_cache_bf16 = kv_cache_bf16_or_die(cmd, f);
    if (f->attn_scale && pos_set_attn_scale(&m->pos, f->attn_scale) != 0)
        pelab_die("--attn-scale %s: %s", f->attn_scale, pelab_errmsg);
}

void load_model_or_die(const char *cmd, const char *path, const LoadFlags *f, Model *m, Tokenizer *tok) {
    kv_cache_bf16_or_die(cmd, f);
    CkptMeta meta;
    if (checkpoint_load_precision(path, m, &meta, precision_or_die(f->precision)) != 0) pelab_die("%s", pelab_errmsg);
    if (tokenizer_from_image(tok, meta_get(&meta, "tokenizer"), meta.tokenizer_image, meta.tokenizer_len, path,
                             m->cfg.vocab_size) != 0)
        pelab_die("%s", pelab_errmsg);
    meta_free(&meta);
    if (f->scale && pos_set_scale(&m->pos, f->scale) != 0) pelab_die("%s", pelab_errmsg);
    load_flags_apply_or_die(cmd, f, m);
}

int *load_text_or_die(const char *cmd, const char *path, const Tokenizer *tok, size_t *n) {
    unsigned char *bytes;
    size_t len;
    if (path) {
        if (corpus_read_file(path, &bytes, &len) != 0) pelab_die("%s: %s", cmd, pelab_errmsg);
    } else {
        len = 1 << 16;
        char *text;
        if (synth_generate("stories", 12345, len, &text) != 0) pelab_die("%s: %s", cmd, pelab_errmsg);
        bytes = (unsigned char *)text;
    }
    int *ids = tokenizer_encode(tok, bytes, len, 0, n);
    free(bytes);
    if (!ids) pelab_die("%s: %s", cmd, pelab_errmsg);
    return ids;
}
