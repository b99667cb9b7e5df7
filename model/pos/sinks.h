/* sinks.h: learned attention sinks, a modifier on any position scheme: "SPEC+sinks[:init=F]".
 * Every head of every layer has one learned logit s (gpt-oss's "sinks", the tensor "pos.sinks",
 * [n_layers, n_heads]) that joins the softmax's denominator only: a query's weights are
 *     p_j = exp(z_j) / (exp(s) + sum_k exp(z_k))
 * over its visible keys' scores z, i.e. a softmax over [z, s] with the sink's column dropped, so the
 * weights may sum to less than 1 and a head can attend to nothing. The sink has no value: the
 * output is sum_j p_j v_j. Its gradient is minus the sum of the row's score gradients
 * (dL/ds = -p_s sum_j p_j dL/dp_j = -sum_j dL/dz_j), which attention accumulates per head.
 * init (default 0: a zero-logit extra key, "softmax plus one") starts every sink. Keys and queries
 * are untouched, so a KV cache stays exact. */
#ifndef PELAB_SINKS_H
#define PELAB_SINKS_H

#include <stddef.h>

typedef struct {
    int on;             /* +sinks given */
    double init;        /* the starting logit of every layer and head */
    const float *logit; /* [n_layers, n_heads] in the model's parameters; NULL: init */
} PosSinks;

/* "sinks[:init=F]" (text after the '+'); -1 with one line naming the bad part */
int sinks_parse(PosSinks *s, const char *text);
/* "+sinks:init=F", or "" without sinks */
void sinks_spec(const PosSinks *s, char *buf, size_t n);
/* "\n" INDENT "SPEC+sinks  init=F  what it does", for --help */
void sinks_help(char *buf, size_t n, const char *indent);
/* the sink logit of one head of one layer; -INFINITY without sinks (a term exp(-inf) = 0) */
float sinks_logit(const PosSinks *s, int layer, int head, int n_heads);

#endif
