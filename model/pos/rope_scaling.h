/* rope_scaling.h: RoPE context-extension rules (docs/position-encodings.md sections 6 and 8). A rule
 * only changes how the rotary table is built: per-pair frequencies, an attention factor that
 * multiplies cos and sin of q and k alike (so logits scale by its square), or, for DynaTan, the
 * angle as a function of position. Rules are options of the rotary schemes: rope:scale=pi:4.
 * Each rule is one entry of the table in rope_scaling.c (its RopeRuleDef): adding a rule is adding
 * its entry there, and its tests. */
#ifndef PELAB_ROPE_SCALING_H
#define PELAB_ROPE_SCALING_H

#include <stddef.h>

#include "../../core/strbuf.h"
#include "longrope_file.h"


typedef struct RopeRuleDef RopeRuleDef;

typedef struct {
    const RopeRuleDef *def; /* the rule's definition (rope_rule_find); NULL reads as none */
    double s;      /* scale factor (pi, ntk, yarn, llama3); dynamic-ntk: its factor */
    double tan_len; /* DynaTan's L; 0 = the training length */
    LongRopeFactors longrope; /* longrope only */
} RopeRule;

/* What follows a rule's name after a ':' (rope_rule_parse reads it, rope_rule_describe writes it) */
typedef enum {
    ROPE_ARG_NONE,       /* nothing: "none" */
    ROPE_ARG_FACTOR,     /* NAME:S, S in [1, 1e6] required, in s */
    ROPE_ARG_OPT_FACTOR, /* NAME[:F], F in [1, 1e6], default 1, in s (always written back) */
    ROPE_ARG_OPT_LENGTH, /* NAME[:L], L in [1, 1e6], default 0 (the training length), in tan_len */
    ROPE_ARG_CUSTOM,     /* parse_arg and describe_arg read and write it (longrope:PATH) */
} RopeArg;

/* One scaling rule, declared by its entry in rope_scaling.c's table: everything the rest of pelab
 * asks about a rule comes from here (no code outside that file names a rule). NULL hooks take the
 * defaults said beside them. */
struct RopeRuleDef {
    const char *name;    /* "pi": what --scale and scale= spell */
    const char *usage;   /* "pi:S", as the help lists it */
    const char *note;    /* NULL, or what --help adds after the usage in parentheses */
    const char *title;   /* the rule in prose ("YaRN"), for messages */
    const char *summary; /* what it does, one phrase (pelab info --rules) */
    RopeArg arg;
    int (*parse_arg)(const char *arg, RopeRule *r); /* ROPE_ARG_CUSTOM: the text after "NAME:" ("" if none) */
    void (*describe_arg)(const RopeRule *r, char *buf, size_t n); /* ROPE_ARG_CUSTOM: "NAME:..." */
    /* per-pair frequencies of rotary dimension d (d / 2 pairs) under base b, original length L,
     * current length n, and the attention factor on cos and sin (*attn_factor is 1 on entry);
     * NULL: b^(-2j/d) */
    void (*freqs)(const RopeRule *r, int d, double b, int L, long n, double *freq, double *attn_factor);
    /* rotation angle of a pair of frequency freq at pos; NULL: pos * freq */
    double (*angle)(const RopeRule *r, double freq, long pos, int L);
    /* the frequencies follow the current length: whether those at lengths a and b differ, asked
     * only when one of them is past L; NULL: a static rule */
    int (*changes)(const RopeRule *r, int L, long a, long b);
    /* the rule's original length on a model whose L is otherwise model_len; NULL: model_len */
    int (*length)(const RopeRule *r, int model_len);
    /* -1 with one line when the rule cannot map rot_pairs pairs; NULL: any */
    int (*check_pairs)(const RopeRule *r, int rot_pairs, const char *scheme);
    /* Hugging Face's config.json (io/hf_llama.c writes, io/hf_spec.c reads): the rope_type, NULL
     * if HF has none; hf_scaling writes the "rope_scaling" member (with whatever top-level
     * member it needs before it) for original length L; hf_theta: a rule HF has no type for but
     * writes as another rope_theta (the same frequencies), note saying so; hf_l_is_max_pos: HF
     * takes the rule's L from max_position_embeddings. No hf_scaling and no hf_theta: export
     * refuses the rule. */
    const char *hf_type;
    void (*hf_scaling)(const RopeRule *r, int L, StrBuf *b);
    double (*hf_theta)(const RopeRule *r, double base, int d, char *note, size_t n);
    int hf_l_is_max_pos;
    /* llama.cpp's GGUF (io/gguf_rope.c): gguf_type, the rope.scaling.type it computes the rule as
     * (factor S, original length L), NULL if none; then a rule with hf_theta is written as that
     * base, and any other static rule with attention factor 1 as its per-pair divisors
     * (rope_freqs.weight). gguf_fit reads such divisors of a file back as this rule (S and L),
     * -1 when they are not of its form; NULL: the rule is not read from divisors. */
    const char *gguf_type;
    int (*gguf_fit)(const float *divisor, int pairs, double base, RopeRule *r, int *L);
};

/* the rules, in help order ("none" first) */
int rope_rule_count(void);
const RopeRuleDef *rope_rule_at(int i);
/* the rule named name ("pi"), or the one whose HF rope_type is type ("linear"); NULL if none */
const RopeRuleDef *rope_rule_find(const char *name);
const RopeRuleDef *rope_rule_find_hf(const char *type);
/* the rule whose gguf_type is type ("linear"), or the first with a gguf_fit (type NULL); NULL if none */
const RopeRuleDef *rope_rule_find_gguf(const char *type);
/* the usages joined by sep ("none, pi:S, ..."); with_notes: each note in parentheses after its
 * usage; skip_none: without "none" */
void rope_rule_list(char *buf, size_t n, const char *sep, int with_notes, int skip_none);
/* 1 for the identity rule (none, or a zeroed RopeRule) */
int rope_rule_is_none(const RopeRule *r);
/* the rule's definition (none's for a zeroed RopeRule) */
const RopeRuleDef *rope_rule_def(const RopeRule *r);

/* "none", "pi:4", "ntk:4", "dynamic-ntk", "dynamic-ntk:2", "yarn:4", "llama3:8", "dynatan",
 * "dynatan:256", "dynatan-a", "dynatan-a:256", "longrope:PATH" (reads the file: an HF config.json
 * with rope_scaling, or a bare object with short_factor, long_factor and optionally
 * original_max_position_embeddings, max_position_embeddings, factor, attention_factor; PATH
 * may not hold ',' or '+', the spec's separators); -1 with pelab_errmsg naming what was expected */
int rope_rule_parse(const char *text, RopeRule *r);
void rope_rule_describe(const RopeRule *r, char *buf, size_t n);
/* 1 if the frequencies depend on the current sequence length (the KV cache must re-rotate) */
int rope_rule_is_dynamic(const RopeRule *r);
/* 1 if the rule's frequencies at length b differ from those at length a (original length L): never
 * for a static rule, for dynamic NTK at any two lengths past L, for LongRoPE only across L */
int rope_rule_changes(const RopeRule *r, int L, long a, long b);
/* the rule's original length L for a model whose rules' L is otherwise model_len (LongRoPE's file
 * may name its own) */
int rope_rule_length(const RopeRule *r, int model_len);
/* 0 if the rule fits rot_pairs rotary pairs (LongRoPE: one factor per pair), else -1 and one line
 * naming the scheme, the file and the field */
int rope_rule_check_pairs(const RopeRule *r, int rot_pairs, const char *scheme);
/* Per-pair frequencies for rotary dimension rot_dim (pairs = rot_dim/2), base b, training length L,
 * current length n (dynamic rules), and the attention factor applied to cos and sin. LongRoPE
 * takes its long set when n > L, as HF's seq_len > original_max_position_embeddings; its
 * pairs must have been checked (rope_rule_check_pairs). */
void rope_rule_freqs(const RopeRule *r, int rot_dim, double base, int L, long n, double *freq,
                     double *attn_factor);
/* LongRoPE's attention factor on cos and sin: given when > 0 (the file's attention_factor), else
 * sqrt(1 + ln s / ln L) for scale s > 1 and original length L > 1, else 1 (HF's and pelab's one formula) */
double rope_longrope_attn_factor(double given, double s, long L);
/* the whole pairs that rotate in a head of head_dim at this fraction (partial rotary): what a
 * rule's per-pair factors count */
int rope_rotary_pairs(int head_dim, double fraction);
/* rotation angle of pair j at pos given freq[j] (pos * freq except DynaTan) */
double rope_rule_angle(const RopeRule *r, double freq, long pos, int L);

#endif
