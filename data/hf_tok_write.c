/* hf_tok_write.c: llama2.c's tokenizer.bin as a tokenizer.json (see hf_tok_write.h). */
#include "hf_tok_write.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/json.h"
#include "../core/mem.h"

/* the piece of id as tokenizer.json spells it: specials by name, spaces as U+2581 */
static void piece_json(const Llama2cTok *t, int id, StrBuf *tmp) {
    static const char *const special[3] = {"<unk>", "<s>", "</s>"};
    tmp->len = 0;
    if (id < 3) {
        sb_puts(tmp, special[id]);
        return;
    }
    for (int i = 0; i < t->piece_len[id]; i++) {
        if (t->piece[id][i] == ' ') sb_puts(tmp, "\xe2\x96\x81");
        else sb_put(tmp, (const char *)t->piece[id] + i, 1);
    }
}

typedef struct {
    float score;
    int merged, left, right;
} Merge;

static int by_score(const void *pa, const void *pb) {
    const Merge *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->merged != b->merged) return a->merged < b->merged ? -1 : 1;
    return (a->left > b->left) - (a->left < b->left);
}

int hf_tok_json_from_llama2c(const Llama2cTok *t, StrBuf *out, const char *name) {
    StrBuf tmp = {0};
    /* pieces with "<0xHH>" spelling or ids 0..2 merge with nothing: run.c never forms them by a merge
     * either (their text is not what the pieces beside them join into) */
    Merge *m = NULL;
    size_t n = 0, cap = 0;
    for (int id = 3; id < t->vocab_size; id++) {
        if (t->scores[id] <= -1e10f) continue;
        for (int k = 1; k < t->piece_len[id]; k++) {
            int a = llama2c_tok_lookup(t, t->piece[id], (size_t)k);
            int b = llama2c_tok_lookup(t, t->piece[id] + k, (size_t)(t->piece_len[id] - k));
            if (a < 3 || b < 3) continue; /* absent, or a special id whose bytes happen to match */
            if (n == cap) cap = cap ? 2 * cap : 1024, m = xrealloc(m, cap * sizeof *m);
            m[n++] = (Merge){t->scores[id], id, a, b};
        }
    }
    qsort(m, n, sizeof *m, by_score);
    sb_puts(out, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [\n");
    static const char *const special[3] = {"<unk>", "<s>", "</s>"};
    for (int id = 0; id < 3 && id < t->vocab_size; id++)
        sb_printf(out, "    {\"id\": %d, \"content\": \"%s\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
                       "\"normalized\": false, \"special\": true}%s\n", id, special[id], id < 2 && id + 1 < t->vocab_size ? "," : "");
    sb_puts(out, "  ],\n  \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": "
                 "\"\xe2\x96\x81\"}, {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\xe2\x96\x81\"}]},\n"
                 "  \"pre_tokenizer\": null,\n"
                 "  \"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", "
                 "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"pair\": [{\"SpecialToken\": {\"id\": "
                 "\"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": "
                 "\"<s>\", \"type_id\": 1}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 1}}], \"special_tokens\": {\"<s>\": "
                 "{\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}},\n"
                 "  \"decoder\": {\"type\": \"Sequence\", \"decoders\": [{\"type\": \"Replace\", \"pattern\": {\"String\": "
                 "\"\xe2\x96\x81\"}, \"content\": \" \"}, {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}, {\"type\": "
                 "\"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},\n"
                 "  \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": \"<unk>\", \"continuing_subword_prefix\": "
                 "null, \"end_of_word_suffix\": null, \"fuse_unk\": true, \"byte_fallback\": true, \"vocab\": {\n");
    int rc = 0;
    for (int id = 0; id < t->vocab_size && rc == 0; id++) {
        piece_json(t, id, &tmp);
        if (!json_utf8_valid(tmp.s, tmp.len) || memchr(tmp.s, 0, tmp.len))
            rc = pelab_fail("%s: piece %d is not UTF-8 text: a tokenizer.json cannot hold it", name, id);
        else if (id >= 3 && llama2c_tok_lookup(t, t->piece[id], (size_t)t->piece_len[id]) != id)
            rc = pelab_fail("%s: pieces %d and %d are the same text: a tokenizer.json vocabulary maps a text to one id", name,
                            llama2c_tok_lookup(t, t->piece[id], (size_t)t->piece_len[id]), id);
        sb_puts(out, "    ");
        sb_json(out, sb_str(&tmp));
        sb_printf(out, ": %d%s\n", id, id + 1 < t->vocab_size ? "," : "");
    }
    sb_puts(out, "  },\n  \"merges\": [\n");
    for (size_t i = 0; i < n && rc == 0; i++) {
        sb_puts(out, "    [");
        piece_json(t, m[i].left, &tmp);
        sb_json(out, sb_str(&tmp));
        sb_puts(out, ", ");
        piece_json(t, m[i].right, &tmp);
        sb_json(out, sb_str(&tmp));
        sb_printf(out, "]%s\n", i + 1 < n ? "," : "");
    }
    sb_puts(out, "  ]}\n}\n");
    free(m);
    sb_free(&tmp);
    return rc;
}
