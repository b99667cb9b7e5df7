/* info_cmd.c: `pelab info [CKPT]`: what a checkpoint holds, and what this machine runs it on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
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

int cmd_info(int argc, char **argv) {
    const char *pos_args[1];
    int n_pos, rules = 0;
    const OptSpec opts[] = {
        {"--rules", OPT_FLAG, &rules, 0, 0, "list what --scale takes: the scaling rules and extension methods"},
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
