/* pattern.h: per-layer attention patterns. A cycle of layer kinds repeats over the layers (layer l
 * is kind l mod n): each kind has a sliding window, a chunk (Llama 4's chunked attention: a query
 * sees only the keys of its own chunk of C positions), a RoPE base and NoPE. The spec, one string:
 *     GROUP[:GROUP...]   GROUP = [N*]ITEM[,ITEM...]   ITEM = global | window=W | chunk=C | base=B | nope
 * e.g. "5*window=512,base=10000:global,base=1000000" (Gemma 3: 5 local to 1 global),
 * "window=128:global,nope" (SWAN-GPT), "3*chunk=8192:global,nope" (Llama 4's iRoPE), "3*global:nope"
 * (SmolLM3: every 4th layer NoPE). A query at position p sees keys at positions in
 * [max(p - W + 1, floor(p / C) * C), p]. */
#ifndef PELAB_PATTERN_H
#define PELAB_PATTERN_H

#include <stddef.h>

enum { PATTERN_MAX = 64, PATTERN_SPEC_MAX = 400 };

typedef struct {
    int window; /* > 0: keys fewer than this many positions behind the query, itself included; 0: all */
    int chunk;  /* > 0: only keys in the query's own chunk of this many positions; 0: no chunks */
    double base; /* > 0: this layer's RoPE base (the scheme's base= option); 0: the scheme's own */
    int nope;   /* 1: no position encoding in this layer (as the scheme's +nope@) */
} LayerAttn;

typedef struct {
    int n; /* kinds in the cycle; 0: no pattern (every layer the model's sliding_window) */
    LayerAttn kind[PATTERN_MAX];
} AttnPattern;

/* "" and "none": no pattern. -1 with one line naming the group and what was expected. */
int pattern_parse(AttnPattern *p, const char *spec);
/* the canonical spec (runs of equal kinds as N*), "none" without a pattern; returns its full length */
size_t pattern_spec(const AttnPattern *p, char *buf, size_t n);
/* layer l's kind; without a pattern, every layer has the model's sliding_window */
LayerAttn pattern_layer(const AttnPattern *p, int sliding_window, int l);
/* the earliest position a query at position qpos sees in a layer of this kind (LONG_MIN: no limit) */
long layer_first_visible(const LayerAttn *k, long qpos);
/* the most keys a layer of this kind needs before a new query besides its own (window - 1 and/or
 * chunk - 1, the smaller), -1 without a limit: what a KV cache must keep of the past */
long layer_span(const LayerAttn *k);
/* one line describing a kind: "window 512, base 10000" / "global, NoPE" */
void layer_describe(const LayerAttn *k, char *buf, size_t n);

#endif
