/* info_cmd.c: `pelab info [CKPT]`: what a checkpoint holds, and what this machine runs it on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../infer/decode.h"
#include "../io/checkpoint.h"
#include "../model/pos/extend.h"
#include "../model/pos/rope_scaling.h"
#include "args.h"
#include "commands.h"

/* what --scale takes, from the rules' and the methods' tables (rope_scaling.h, extend.h), as the
 * Markdown table README shows (make readme-lists writes it there) */
static void print_rules(void) {
    printf("| `--scale` | what it does | HF config | follows the length |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < rope_rule_count(); i++) {
        const RopeRuleDef *d = rope_rule_at(i);
        RopeRule r = {.def = d, .s = 2};
        int L = 64, follows = rope_rule_is_dynamic(&r);
        const char *hf = d->hf_type ? d->hf_type : d->hf_theta ? "written as rope_theta" : i ? "refused" : "-";
        printf("| `%s`%s%s%s | %s | %s%s%s | %s |\n", d->usage, d->note ? " (" : "", d->note ? d->note : "",
               d->note ? ")" : "", d->summary, d->hf_type ? "`" : "", hf, d->hf_type ? "`" : "",
               !follows ? "no" : rope_rule_changes(&r, L, L + 1, 2 * L + 1) ? "yes" : "once, at L");
    }
    for (int i = 0; i < extend_count(); i++)
        printf("| `%s` | extension method: %s | - | no |\n", extend_at(i)->usage, extend_at(i)->summary);
}

/* each layer's kind of attention and the KV cache it keeps at len tokens fed in blocks of chunk
 * (sample's: 64), against full attention in every layer */
static void print_kv_cache(const Model *m, int len, int chunk) {
    char pattern[PATTERN_SPEC_MAX + 1];
    pattern_spec(&m->cfg.pattern, pattern, sizeof pattern);
    if (m->cfg.pattern.n) printf("attention       pattern %s (a cycle of %d over the layers)\n", pattern, m->cfg.pattern.n);
    printf("kv cache        at %d tokens, blocks of %d, %s keys and values, 1 sequence:\n", len, chunk,
           m->kv_cache_bf16 ? "bf16" : "float32");
    size_t total = 0, full = 0, row = kvcache_layer_bytes(m, 0, 1, 1, 1); /* one row of every kv head */
    for (int l = 0; l < m->cfg.n_layers; l++) {
        LayerAttn k = model_layer_attn(m, l);
        char what[128];
        layer_describe(&k, what, sizeof what);
        if (k.nope || !pos_layer_active(&m->pos, l)) snprintf(what + strlen(what), sizeof what - strlen(what), "%s",
                                                             k.nope ? "" : ", NoPE");
        size_t bytes = kvcache_layer_bytes(m, l, 1, len, chunk);
        total += bytes, full += (size_t)len * row;
        printf("  layer %-3d     %-32s %8d rows %12zu bytes\n", l, what, kvcache_layer_rows(m, l, len, chunk), bytes);
    }
    printf("  total                                          %12zu bytes (full attention: %zu, %.1f%%)\n", total,
           full, full ? 100.0 * total / full : 0.0);
}

int cmd_info(int argc, char **argv) {
    const char *pos_args[1];
    int n_pos, rules = 0, kv_len = 0, kv_chunk = 64;
    const OptSpec opts[] = {
        {"--rules", OPT_FLAG, &rules, 0, 0, "list what --scale takes: the scaling rules and extension methods"},
        {"--kv-len", OPT_INT, &kv_len, 1, 1 << 24,
         "each layer's KV cache at this many tokens (shown at the training length for a per-layer pattern)"},
        {"--kv-chunk", OPT_INT, &kv_chunk, 1, 1 << 16, "with --kv-len: tokens fed per block (sample's 64)"},
    };
    args_parse("info", "[CKPT]   (without one: only this machine's BLAS and CPU)", argc, argv, 1, opts,
               sizeof opts / sizeof opts[0], pos_args, 1, &n_pos);
    if (rules) {
        if (n_pos) pelab_die("info: --rules lists what --scale takes; give it without a checkpoint");
        print_rules();
        return 0;
    }
    if (n_pos == 0) {
        print_machine(stdout, 1);
        return 0;
    }
    Model m;
    CkptMeta meta;
    float *am = NULL, *av = NULL;
    if (checkpoint_load(pos_args[0], &m, &meta, &am, &av) != 0) pelab_die("%s", pelab_errmsg);
    const ModelConfig *c = &m.cfg;
    char spec[256];
    pos_spec(&m.pos, spec, sizeof spec);
    printf("checkpoint      %s\n", pos_args[0]);
    printf("config          vocab %d, dim %d, layers %d, heads %d, kv_heads %d, head_dim %d, hidden %d, "
           "norm_eps %g, output head %s\n",
           c->vocab_size, c->dim, c->n_layers, c->n_heads, c->n_kv_heads, m.head_dim, c->hidden_dim, c->norm_eps,
           c->tied ? "tied to the embedding" : "separate");
    printf("position        %s\n", spec);
    if (c->sliding_window) printf("attention       sliding window: each query sees the %d latest keys, itself included\n",
                                  c->sliding_window);
    char lengths[160];
    pos_lengths(&m.pos, lengths, sizeof lengths);
    printf("lengths         %s\n", lengths);
    printf("parameters      %zu total\n", m.n_params);
    for (int i = 0; i < N_PARAM_TENSORS; i++) {
        const TensorInfo *t = &m.tensors[i];
        if (!t->numel) continue;
        char shape[64] = "";
        for (int d = 0; d < t->ndim; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%d", d ? " x " : "", t->shape[d]);
        printf("  %-18s %-18s %10zu  (%.1f%%)\n", t->name, shape, t->numel, 100.0 * t->numel / m.n_params);
    }
    if (kv_len || c->pattern.n) print_kv_cache(&m, kv_len ? kv_len : c->seq_len, kv_chunk);
    printf("optimizer state %s\n", am ? "present (resumable)" : "absent");
    static const char *const shown[] = {"tokenizer", "data", "data_fingerprint", "step", "train.steps",
                                        "train_loss", "val_loss", "hf_sliding_window", NULL};
    for (int i = 0; shown[i]; i++) {
        const char *v = meta_get(&meta, shown[i]);
        if (v) printf("%-15s %s\n", shown[i], v);
    }
    print_machine(stdout, 1);
    free(am), free(av);
    meta_free(&meta);
    model_free(&m);
    return 0;
}
