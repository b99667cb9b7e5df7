/* suite_report.h: the standard suite's report, DIR/suite.md: the summary matrix (scheme x protocol,
 * rank with ties, in distribution / past L), each published claim with its verdict and figures (also
 * DIR/claims.csv), and per protocol its verdict section copied from PROTOCOL/report.md. What the
 * suite ran is handed in; `pelab suite` (tools/suite_cmd.c) runs the looks and prints. */
#ifndef PELAB_SUITE_REPORT_H
#define PELAB_SUITE_REPORT_H

#include "../io/claims.h"
#include "claim_family.h"
#include "report.h"
#include "suite_plan.h"

/* one protocol's runs as read back at the latest look */
typedef struct {
    const SuiteProtocol *p;
    Compare *c; /* NULL: not run */
    Agg *a;
    GenAgg *g;      /* the gen, jump and keyppl figures (keygap claims) */
    double seconds; /* training and evaluation here, every look */
    int models;     /* runs trained here */
    int seeds;      /* the seeds per series of the latest look read back */
} SuiteResult;

/* the corpus of the language-modelling protocols and how the report names it */
typedef struct {
    const char *path;  /* --data's spec, or the shipped corpus found */
    char buf[1200];
    char label[160];   /* short, for the claims' table and claims.csv: "tinyshakespeare (shipped)" */
    char what[400];    /* the report's headline sentence */
} SuiteCorpus;

/* the suite's sequential plans and where they stopped, for the report */
typedef struct {
    SeqPlan plan;          /* the setting's looks (or --looks, --seeds): every claim's unless it has its own */
    const SeqPlan *plans;  /* [claims]: each claim's own, fixed before any data (its LOOKS in full, else plan) */
    int n_levels;          /* the suite's looks: the sorted union of the family's claims' looks */
    int levels[CLAIM_MAX_SEEDS];
    int looks_done;     /* levels whose runs all finished and were judged */
    const char *stop;   /* why no further look ran: "every claim decided", "the seed cap", "the time budget ..." */
    char stop_buf[160];
    char skipped[600];  /* looks the budget ran only in part: "the look at 8 seeds left out mqar (4 min), ..." */
    int n_family;       /* claims in the family (Holm's m) */
    char looks[64];     /* plan's: "3, 5, 8" */
} SuiteSeq;

/* the result of the protocol claim c reads, or NULL when it did not run */
const SuiteResult *suite_claim_result(const Claim *c, const SuiteResult *res, int n);

/* DIR/suite.md and DIR/claims.csv from the n protocols' results, the claims and their tracks, the
 * sequential plan; counts[outcome] (CLAIM_OUTCOMES) of the claims. -1 with pelab_errmsg */
int suite_write_report(const char *dir, const SuiteRun *run, const char *cmdline, const SuiteCorpus *corpus,
                       const ClaimList *cl, const ClaimTrack *tracks, const SuiteSeq *seq, const SuiteResult *res, int n,
                       int *counts);

#endif
