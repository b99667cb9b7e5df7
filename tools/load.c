#include "load.h"

#include "../core/error.h"
#include "../io/checkpoint.h"
#include "commands.h"

void set_attn_scale_or_die(Model *m, const char *text) {
    if (text && pos_set_attn_scale(&m->pos, text) != 0) pelab_die("--attn-scale %s: %s", text, pelab_errmsg);
}

void set_precision_or_die(Model *m, const char *precision) {
    Precision p;
    if (!precision) return;
    if (precision_parse(precision, &p) != 0 || model_set_precision(m, p) != 0) pelab_die("%s", pelab_errmsg);
}

void load_model_or_die(const char *path, const char *scale, const char *precision, Model *m, Tokenizer *tok) {
    CkptMeta meta;
    if (checkpoint_load(path, m, &meta, NULL, NULL) != 0) pelab_die("%s", pelab_errmsg);
    if (tokenizer_from_image(tok, meta_get(&meta, "tokenizer"), meta.tokenizer_image, meta.tokenizer_len, path,
                             m->cfg.vocab_size) != 0)
        pelab_die("%s", pelab_errmsg);
    meta_free(&meta);
    if (scale && pos_set_scale(&m->pos, scale) != 0) pelab_die("%s", pelab_errmsg);
    set_precision_or_die(m, precision);
}
