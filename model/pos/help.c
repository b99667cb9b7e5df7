/* help.c: the position schemes as --help lists them, from their option tables (and the rules and
 * modifiers from theirs: rope_scaling.h, attn_scale.h). */
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "rope_scaling.h"

void pos_options_summary(const PosScheme *s, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    if (s->n_options == 0) pos_put(buf, n, &used, "no options");
    for (int i = 0; i < s->n_options; i++) {
        char kind[128], def[64];
        pos_opt_kind_text(&s->options[i], kind, sizeof kind);
        pos_opt_default_text(&s->options[i], def, sizeof def);
        pos_put(buf, n, &used, "%s%s=%s (%s)", i ? ", " : "", s->options[i].name, kind, def);
    }
}

void pos_help(char *buf, size_t n, const char *indent) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pos_count(); i++) {
        const PosScheme *s = pos_at(i);
        pos_put(buf, n, &used, "%s%s%-11s %s", i ? "\n" : "", indent, s->name, s->n_options ? "" : "no options");
        for (int k = 0; k < s->n_options; k++) {
            const PosOption *o = &s->options[k];
            char kind[128], opt[160], def[64], rules[512] = "";
            pos_opt_kind_text(o, kind, sizeof kind);
            snprintf(opt, sizeof opt, "%s=%s", o->name, kind);
            pos_opt_default_text(o, def, sizeof def);
            if (o->type == POS_OPT_RULE) rope_rule_list(rules, sizeof rules, ", ", 0, 0); /* the help names them all */
            /* the first option beside the name, the others under it */
            pos_put(buf, n, &used, "%s%-*s%-24s %s%s%s (default %s)", k ? "\n" : "", k ? (int)strlen(indent) + 12 : 0,
                    "", opt, o->help, rules[0] ? ": " : "", rules, def);
        }
    }
    /* the modifiers any scheme takes after a '+' (attn_scale.h), then the NoPE layers (spec.c) */
    char mods[1024];
    attn_scale_help(mods, sizeof mods, indent);
    pos_put(buf, n, &used, "%s", mods);
    sinks_help(mods, sizeof mods, indent);
    pos_put(buf, n, &used, "%s\n%s%-11s %-24s %s", mods, indent, "SPEC+nope@L", "L1,L2,...",
            "these 0-based layers skip the scheme (rotary, bias schemes); W = nope: logn, temp only there");
}
