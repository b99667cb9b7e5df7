/* inspect_cmd.c: `pelab inspect config.json`: a Hugging Face config's position encoding, what it
 * implies (wavelengths, lengths, attention factor) and the equivalent pelab spec (io/hf_config.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../model/pos/pos.h"
#include "../model/pos/rope_scaling.h"
#include "../io/hf_config.h"
#include "args.h"
#include "commands.h"

static void print_rule(const HfConfig *c) {
    if (!c->rope_type[0]) {
        printf("scaling rule: none%s\n", c->scaling_key ? "" : " (no rope_scaling / rope_parameters)");
        return;
    }
    printf("scaling rule: %s type %s", c->scaling_key, c->rope_type[0] == '?' ? c->rope_type + 1 : c->rope_type);
    if (c->factor) printf(", factor %g", c->factor);
    if (c->orig_max) printf(", original_max_position_embeddings %ld", c->orig_max);
    if (c->beta_fast || c->beta_slow) printf(", beta_fast %g, beta_slow %g", c->beta_fast, c->beta_slow);
    if (c->mscale || c->mscale_all_dim) printf(", mscale %g, mscale_all_dim %g", c->mscale, c->mscale_all_dim);
    if (c->attention_factor) printf(", attention_factor %g", c->attention_factor);
    if (c->truncate >= 0) printf(", truncate %s", c->truncate ? "true" : "false");
    if (c->low_freq || c->high_freq) printf(", low_freq_factor %g, high_freq_factor %g", c->low_freq, c->high_freq);
    if (c->n_short) printf(", %d short and %d long factors", c->n_short, c->n_long);
    printf("\n");
    if (!strcmp(c->rope_type, "yarn") || !strcmp(c->rope_type, "longrope"))
        printf("scale s = %.9g (%s), attention factor on cos and sin %.9g\n", hf_config_scale(c),
               c->orig_max && c->max_pos ? "max_position_embeddings / original_max_position_embeddings" : "factor",
               hf_config_attention_factor(c));
}

/* pair j's wavelength 2 pi / theta_j under the rule at current length n */
static void print_wavelengths(const HfConfig *c, const char *freq_rule) {
    int pairs = rope_rotary_pairs((int)c->rot_head_dim, c->fraction);
    long L = hf_config_original_length(c);
    if (pairs < 1 || pairs > ROPE_MAX_PAIRS || L < 1) {
        printf("wavelengths: not computed (%d rotary pairs, original length %ld)\n", pairs, L);
        return;
    }
    RopeRule rule;
    int have_rule = freq_rule[0] && rope_rule_parse(freq_rule, &rule) == 0 &&
                    rope_rule_check_pairs(&rule, pairs, "inspect") == 0;
    if (!have_rule && rope_rule_parse("none", &rule) != 0) return;
    /* a rule that switches once, when the length passes L (LongRoPE), has a second set of
     * frequencies past it; one that follows the length (dynamic NTK) is shown at L */
    int follows = rope_rule_is_dynamic(&rule), sets = follows && !rope_rule_changes(&rule, (int)L, L + 1, 2 * L + 1) ? 2 : 1;
    double freq[2][ROPE_MAX_PAIRS], af;
    for (int s = 0; s < sets; s++) rope_rule_freqs(&rule, 2 * pairs, c->theta, (int)L, s ? L + 1 : L, freq[s], &af);
    printf("wavelengths 2pi/theta_j, %s, L = %ld (original length)%s:\n",
           have_rule ? "after the rule" : "BEFORE the rule (no pelab rule computes these frequencies)", L,
           sets == 2 ? "; short factors up to L, long past it" : follows ? "; at length L (past it they follow the length)" : "");
    int turning = 0;
    for (int j = 0; j < pairs; j++) {
        double w = 2 * M_PI / freq[0][j];
        turning += w <= L;
        printf("  pair %3d: %14.6g positions, %s a turn within L", j, w, w <= L ? "completes" : "does not complete");
        if (sets == 2) printf("; long: %.6g", 2 * M_PI / freq[1][j]);
        printf("\n");
    }
    printf("%d of %d pairs complete a turn within L = %ld\n", turning, pairs, L);
}

/* every layer's attention (runs of equal layers on one line) and the --attn-pattern that runs it */
static void print_pattern(const HfConfig *c) {
    static LayerAttn layers[HF_MAX_LAYERS];
    char spec[PATTERN_SPEC_MAX + 1];
    int rc = hf_config_pattern(c, spec, sizeof spec, layers);
    if (rc == 0) return;
    char why[sizeof pelab_errmsg];
    snprintf(why, sizeof why, "%s", pelab_errmsg);
    int L = c->n_layers < HF_MAX_LAYERS ? (int)c->n_layers : HF_MAX_LAYERS;
    AttnPattern p;
    int n = rc == 1 && pattern_parse(&p, spec) == 0 ? p.n : L; /* a cycle: one line per kind */
    printf("attention per layer (%d layers%s):\n", L, n < L ? ", as a cycle" : "");
    for (int k = 0; k < n; k++) {
        char what[128], list[HF_MAX_LAYERS * 6] = "";
        int seen = 0, last = k;
        for (int j = 0; j < k; j++) seen |= !memcmp(&layers[j], &layers[k], sizeof layers[k]) && (n < L || j == k - 1);
        if (seen) continue; /* a cycle: every layer of one kind on one line; no cycle: runs of equal layers */
        while (n == L && last + 1 < L && !memcmp(&layers[last + 1], &layers[k], sizeof layers[k])) last++;
        for (int l = k; l < L && strlen(list) + 8 < sizeof list; l++)
            if (n < L ? !memcmp(&layers[l], &layers[k], sizeof layers[k]) : l <= last)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", list[0] ? "," : "", l);
        layer_describe(&layers[k], what, sizeof what);
        printf("  layer%s %s: %s\n", strchr(list, ',') ? "s" : "", list, what);
    }
    if (rc == 1) printf("pelab: --attn-pattern %s\n", spec);
    else printf("pelab: no --attn-pattern: %s\n", why);
}

int cmd_inspect(int argc, char **argv) {
    const char *pos_args[1];
    int n_pos;
    args_parse("inspect", "CONFIG.json   (a Hugging Face config.json: its position encoding and the pelab spec)",
               argc, argv, 1, NULL, 0, pos_args, 1, &n_pos);
    if (n_pos != 1) pelab_die("inspect: expected one config.json (see pelab inspect --help)");
    const char *path = pos_args[0];
    size_t len = strlen(path);
    if (len >= 12 && strcmp(path + len - 12, ".safetensors") == 0)
        pelab_die("inspect: %s: a checkpoint, not a Hugging Face config.json (`pelab info %s` describes a checkpoint, "
                  "its attention pattern and KV cache included)", path, path);
    HfConfig c;
    if (hf_config_read(path, &c) != 0) pelab_die("inspect: %s", pelab_errmsg);
    for (int i = 0; i < c.n_warn; i++) printf("warning: %s: %s\n", path, c.warn[i]);
    printf("%s: model_type %s%s%s%s, %ld layers, %ld heads (%ld kv), head_dim %ld%s, max_position_embeddings %ld\n",
           path, c.model_type[0] ? c.model_type : "?", c.arch[0] ? " (" : "", c.arch, c.arch[0] ? ")" : "", c.n_layers,
           c.n_heads, c.n_kv_heads, c.head_dim, c.head_dim_given ? "" : " (hidden_size / heads)", c.max_pos);
    printf("position: %s", hf_pos_name(c.pos));
    if (c.pos == HF_POS_LEARNED) printf(", a table of %ld positions\n", c.max_pos);
    else if (c.pos == HF_POS_T5) printf(", %ld buckets, max_distance %ld\n", c.t5_buckets, c.t5_max_distance);
    else if (c.pos == HF_POS_ALIBI) printf(", alibi_bias_max %g\n", c.alibi_bias_max ? c.alibi_bias_max : 8);
    else if (c.pos == HF_POS_ROPE)
        printf(", theta %g, layout %s, rotary dims %d of %ld (fraction %g)%s\n", c.theta,
               c.interleaved ? "interleaved (GPT-J pairs 2j, 2j+1)" : "half (HF rotate_half: pairs j, j + d/2)",
               2 * rope_rotary_pairs((int)c.rot_head_dim, c.fraction), c.rot_head_dim, c.fraction,
               c.mla ? " in MLA's qk_rope_head_dim" : "");
    else printf("\n");
    if (c.pos == HF_POS_ROPE) print_rule(&c);
    if (c.sliding_window && !c.layer_pattern)
        printf("sliding window: %ld%s (pelab attends to the whole context: not in the spec)\n", c.sliding_window,
               c.n_sliding_layers ? " in the layer_types marked sliding_attention" : "");
    if (c.chunk_size) printf("attention_chunk_size: %ld (chunked layers: a query sees only its own chunk)\n", c.chunk_size);
    if (c.local_theta) printf("rope_local_base_freq: %g (the sliding layers' base; rope_theta %g the others')\n", c.local_theta, c.theta);
    print_pattern(&c);
    if (c.n_nope_layers) printf("NoPE layers: %d (no_rope_layers / no_rope_layer_interval): +nope@ in the spec\n", c.n_nope_layers);
    if (c.temp_tuning)
        printf("attn_temperature_tuning: queries of the NoPE layers times %g log(floor((pos + 1) / %ld) + 1) + 1: "
               "+temp in the spec\n", c.temp_scale, c.temp_floor);
    if (c.use_logn) printf("use_logn_attn: Qwen's logn from length %ld: +logn in the spec\n", c.logn_len);
    char spec[POS_SPEC_MAX], freq_rule[300], lengths[256];
    /* the lengths come from the model the spec is checked on: never a pos_init of this config's own
     * (possibly missing or zero) head count here */
    int ok = hf_config_pelab_spec(&c, path, spec, sizeof spec, freq_rule, sizeof freq_rule, lengths, sizeof lengths) == 0;
    char why[sizeof pelab_errmsg];
    snprintf(why, sizeof why, "%s", pelab_errmsg);
    if (c.pos == HF_POS_ROPE) print_wavelengths(&c, freq_rule);
    if (ok) {
        printf("lengths: %s\n", lengths);
        printf("pelab: --pos %s\n", spec);
    } else {
        printf("lengths: max_position_embeddings %ld, original %ld\n", c.max_pos, hf_config_original_length(&c));
        printf("pelab: no equivalent spec: %s\n", why);
    }
    return 0;
}
