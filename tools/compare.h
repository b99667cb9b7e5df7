/* compare.h: `pelab compare`, shared between the driver (compare.c: train + evaluate each
 * (scheme, seed) run into DIR/runs/NAME.csv) and the report (report.c: read the CSVs back,
 * aggregate over seeds, write DIR/report.md and the gnuplot scripts / plots). */
#ifndef PELAB_COMPARE_H
#define PELAB_COMPARE_H

#include "../train/train.h"

enum { CMP_MAX_SCHEMES = 16, CMP_MAX_SEEDS = 16, CMP_MAX_RULES = 8, CMP_MAX_LENGTHS = 16, CMP_BUCKETS = 16 };

typedef struct {
    const char *out;                      /* DIR */
    const char *data;                     /* file or synth:NAME */
    const char *mult;                     /* "0.5,1,2,..." as given */
    int n_schemes, n_seeds, n_rules, n_lengths;
    char scheme[CMP_MAX_SCHEMES][128];    /* specs as given ("rope", "alibi", "rope:base=500") */
    char tag[CMP_MAX_SCHEMES][128];       /* file-name form of the spec */
    unsigned long long seed[CMP_MAX_SEEDS];
    char rule[CMP_MAX_RULES][64];         /* post-hoc rules for the rope models */
    int lens[CMP_MAX_LENGTHS];            /* evaluation lengths, mult x L */
    float passkey_frac;
    int eval_tokens;
    TrainConfig base;                     /* the shared training config (seq_len = L) */
    char cmdline[4096];                   /* this invocation, shell-quoted */
} Compare;

/* CSV columns of DIR/runs/NAME.csv; kind is length, bucket or passkey (loss = accuracy) */
#define CMP_CSV_COLUMNS \
    "kind,scheme,seed,rule,train_len,length,protocol,loss,status,bucket,pos_lo,pos_hi,n,accepted,computable"

/* "DIR/runs/TAG_sSEED" + ext */
void compare_run_path(const Compare *c, int scheme, int seed, const char *ext, char *buf, size_t n);
/* 1 if scheme i takes the post-hoc scaling rules (the RoPE models) */
int compare_is_rope(const Compare *c, int i);

/* Reads every finished CSV, writes DIR/report.md and DIR/plots/; runs gnuplot when present.
 * -1 with pelab_errmsg on I/O failure. */
int compare_report(const Compare *c);

#endif
