/* hf_spec.c: an HF config's position encoding as a pelab spec (hf_config.h), or why there is none. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../core/strbuf.h"
#include "../model/pos/pos.h"
#include "../model/pos/rope_scaling.h"
#include "hf_config.h"

long hf_config_original_length(const HfConfig *c) { return c->orig_max ? c->orig_max : c->max_pos; }

double hf_config_scale(const HfConfig *c) {
    /* transformers: with original_max_position_embeddings the scale is max / original (DeepSeek,
     * Phi-3), the "factor" field then only documents it */
    int by_lengths = !strcmp(c->rope_type, "longrope") || !strcmp(c->rope_type, "yarn");
    if (by_lengths && c->orig_max && c->max_pos) return (double)c->max_pos / (double)c->orig_max;
    return c->factor > 0 ? c->factor : 1.0;
}

/* yarn's get_mscale: 0.1 m ln s + 1 for s > 1 */
static double yarn_mscale(double s, double m) { return s <= 1 ? 1.0 : 0.1 * m * log(s) + 1.0; }

double hf_config_attention_factor(const HfConfig *c) {
    double s = hf_config_scale(c);
    if (!strcmp(c->rope_type, "yarn")) {
        if (c->attention_factor > 0) return c->attention_factor;
        if (c->mscale > 0 && c->mscale_all_dim > 0) return yarn_mscale(s, c->mscale) / yarn_mscale(s, c->mscale_all_dim);
        return yarn_mscale(s, 1.0);
    }
    if (!strcmp(c->rope_type, "longrope")) {
        return rope_longrope_attn_factor(c->attention_factor, s, hf_config_original_length(c));
    }
    return 1.0;
}

/* the pelab rule for the frequencies alone: the one whose definition names this HF rope_type
 * (rope_scaling.h), after the checks of the fields HF's type has and pelab's rule fixes; -1 with
 * the field that has no pelab equivalent */
static int rule_of(const HfConfig *c, const char *path, char *rule, size_t n) {
    const char *k = c->scaling_key ? c->scaling_key : "rope_scaling";
    double s = hf_config_scale(c);
    if (!c->rope_type[0]) return snprintf(rule, n, "none"), 0;
    if (c->rope_type[0] == '?') return pelab_fail("%s.rope_type \"%s\": unknown to HF and pelab", k, c->rope_type + 1);
    const RopeRuleDef *d = rope_rule_find_hf(c->rope_type);
    if (!d) return pelab_fail("%s.rope_type \"%s\": pelab has no rule that computes it", k, c->rope_type);
    int from_file = !strcmp(c->rope_type, "longrope"); /* its factors are in this very file */
    if (!from_file && !(c->factor > 0))
        return pelab_fail("%s.factor: missing or not a number > 0 (type %s needs it)", k, c->rope_type);
    if (!strcmp(c->rope_type, "llama3") && ((c->low_freq && c->low_freq != 1) || (c->high_freq && c->high_freq != 4)))
        return pelab_fail("%s.low_freq_factor %g / high_freq_factor %g: pelab's llama3 rule has 1 and 4", k,
                          c->low_freq ? c->low_freq : 1, c->high_freq ? c->high_freq : 4);
    if (!strcmp(c->rope_type, "yarn")) {
        if (c->beta_fast && c->beta_fast != 32)
            return pelab_fail("%s.beta_fast %g: pelab's yarn has beta_fast 32", k, c->beta_fast);
        if (c->beta_slow && c->beta_slow != 1)
            return pelab_fail("%s.beta_slow %g: pelab's yarn has beta_slow 1", k, c->beta_slow);
        if (c->truncate == 0)
            return pelab_fail("%s.truncate false: pelab's yarn rounds the correction range (truncate true)", k);
    }
    if (!from_file) return snprintf(rule, n, "%s:%.17g", d->name, s), 0;
    if (strpbrk(path, ",+"))
        return pelab_fail("%s: longrope: the path holds ',' or '+', which a pelab spec cannot carry", path);
    return snprintf(rule, n, "%s:%s", d->name, path), 0;
}

/* what pelab's spec has no word for, on top of the rule */
static int rope_extras_refused(const HfConfig *c, const char *rule) {
    if (c->mla) return pelab_fail("qk_rope_head_dim %ld: DeepSeek's MLA rotates a separate rope head; pelab rotates "
                                  "the q/k heads themselves", c->rot_head_dim);
    if (!strncmp(rule, "yarn", 4) && fabs(hf_config_attention_factor(c) - (0.1 * log(hf_config_scale(c)) + 1.0)) > 1e-12)
        return pelab_fail("%s.%s: attention factor %.9g, pelab's yarn uses 0.1 ln s + 1 = %.9g",
                          c->scaling_key ? c->scaling_key : "rope_scaling",
                          c->attention_factor > 0 ? "attention_factor" : "mscale_all_dim",
                          hf_config_attention_factor(c), 0.1 * log(hf_config_scale(c)) + 1.0);
    if (c->use_dynamic_ntk)
        return pelab_fail("use_dynamic_ntk: Qwen's NTK alpha (2^ceil(log2(n/L) + 1) - 1) is not pelab's dynamic-ntk");
    return 0;
}

int hf_config_pelab_spec(const HfConfig *c, const char *path, char *spec, size_t n, char *freq_rule, size_t fn,
                         char *lengths, size_t ln) {
    if (freq_rule && fn) freq_rule[0] = 0;
    if (lengths && ln) lengths[0] = 0;
    switch (c->pos) {
    case HF_POS_UNKNOWN: return pelab_fail("no position mechanism recognised");
    case HF_POS_ALIBI:
        if (c->alibi_bias_max && c->alibi_bias_max != 8)
            return pelab_fail("attn_config.alibi_bias_max %g: pelab's alibi has the official slopes (8)", c->alibi_bias_max);
        snprintf(spec, n, "alibi");
        break;
    case HF_POS_T5: snprintf(spec, n, "t5:buckets=%ld,max_distance=%ld", c->t5_buckets, c->t5_max_distance); break;
    case HF_POS_LEARNED:
        if (!c->max_pos) return pelab_fail("n_positions / max_position_embeddings: missing (the table size)");
        snprintf(spec, n, "learned:max_len=%ld", c->max_pos);
        break;
    case HF_POS_ROPE: {
        char rule[300];
        if (rule_of(c, path, rule, sizeof rule) != 0) return -1;
        if (freq_rule) snprintf(freq_rule, fn, "%s", rule);
        if (rope_extras_refused(c, rule) != 0) return -1;
        StrBuf b = {0}; /* the input decides the length (one +nope@ entry per layer): never a fixed buffer */
        sb_printf(&b, "rope:base=%.17g,layout=%s", c->theta, c->interleaved ? "interleaved" : "half");
        if (c->fraction < 1) sb_printf(&b, ",fraction=%.17g", c->fraction);
        if (strcmp(rule, "none")) {
            sb_printf(&b, ",scale=%s", rule);
            if (strncmp(rule, "longrope", 8) && hf_config_original_length(c))
                sb_printf(&b, ",orig_len=%ld", hf_config_original_length(c));
        }
        if (c->use_logn) sb_printf(&b, "+logn:len=%ld", c->logn_len);
        else if (c->temp_tuning && c->n_nope_layers)
            sb_printf(&b, "+temp:scale=%.17g,floor=%ld,layers=nope", c->temp_scale, c->temp_floor);
        for (int l = 0, first = 1; l < c->n_layers && l < HF_MAX_LAYERS; l++)
            if (c->nope[l]) sb_printf(&b, "%s%d", first ? "+nope@" : ",", l), first = 0;
        size_t len = b.len;
        snprintf(spec, n, "%s", sb_str(&b));
        sb_free(&b);
        if (len >= n || len >= POS_SPEC_MAX)
            return pelab_fail("the pelab spec would be %zu characters, longer than pelab's %d (spec too long)", len,
                              POS_SPEC_MAX - 1);
        break;
    }
    }
    /* claimed only if pelab builds it (pos_init checks every option: pairs, fraction, factors) */
    long hd = c->head_dim > 0 ? c->head_dim : 64, heads = c->n_heads > 0 ? c->n_heads : 1;
    if (hd > 65536) return pelab_fail("head_dim %ld: larger than pelab builds (65536)", hd);
    if (heads > 4096 || hd * heads > (1L << 24)) heads = 1; /* the spec does not depend on the count */
    long L = c->pos == HF_POS_ROPE ? hf_config_original_length(c) : c->max_pos;
    PosCtx pc;
    if (pos_init(&pc, spec, (int)(hd * heads), (int)heads, (int)heads, c->n_layers > 0 ? (int)c->n_layers : 1,
                 L > 0 && L < (1 << 30) ? (int)L : 2048) != 0) {
        char why[sizeof pelab_errmsg];
        snprintf(why, sizeof why, "%s", pelab_errmsg);
        return pelab_fail("%s: pelab cannot build it: %s", spec, why);
    }
    pos_spec(&pc, spec, n);
    if (lengths && ln) pos_lengths(&pc, lengths, ln);
    pos_free(&pc);
    return 0;
}
