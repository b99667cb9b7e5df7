/* options.h: the option engine every scheme's options go through (options.c), shared by the
 * files of the position-scheme interface (spec.c, help.c, policy.c, registry.c); not for schemes, which only
 * declare their PosOption tables (pos.h). */
#ifndef PELAB_POS_OPTIONS_H
#define PELAB_POS_OPTIONS_H

#include <stddef.h>

#include "pos.h"

/* printf at buf + *used, never past n; *used counts what was asked for, so it may pass n */
void pos_put(char *buf, size_t n, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* where option o's value lives in pc's state, and its size */
void *pos_opt_field(const PosCtx *pc, const PosOption *o);
size_t pos_opt_size(const PosOption *o);
/* the option named name of s, or NULL; the scheme's scaling-rule option (POS_OPT_RULE), or NULL */
const PosOption *pos_opt_find(const PosScheme *s, const char *name);
const PosOption *pos_opt_rule(const PosScheme *s);
/* o's default written into pc's state (the training length from pc->seq_len where the option says) */
void pos_opt_set_default(const PosCtx *pc, const PosOption *o);
/* "key=val" of o into pc's state; -1 with one line naming the scheme, the option and what was expected */
int pos_opt_parse(const PosCtx *pc, const PosOption *o, const char *val);
/* the value as the canonical spec spells it */
void pos_opt_value_text(const PosCtx *pc, const PosOption *o, char *buf, size_t n);
/* what --help shows: the kind of value ("F", "N", "interleaved|half", "RULE") and the default */
void pos_opt_kind_text(const PosOption *o, char *buf, size_t n);
void pos_opt_default_text(const PosOption *o, char *buf, size_t n);

#endif
