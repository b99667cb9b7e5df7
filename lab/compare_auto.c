/* compare_auto.c: seeds in looks until the pairs are decided (compare_auto.h). */
#include "compare_auto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/sys.h"
#include "../io/claims.h"
#include "claim_family.h"
#include "report.h"
#include "suite_claims.h"

typedef struct {
    Claim cl;       /* better:B between two series at one length (the direction is A's, either way) */
    ClaimTrack t;
} AutoPair;

/* every pair of the aggregate's series at every length, as claims */
static AutoPair *make_pairs(const Compare *c, const Agg *a, int *n) {
    int cap = a->n_series * (a->n_series - 1) / 2 * c->n_lengths + 1;
    AutoPair *p = xmalloc(sizeof *p * cap);
    *n = 0;
    for (int l = 0; l < c->n_lengths; l++)
        for (int i = 0; i < a->n_series; i++)
            for (int j = i + 1; j < a->n_series; j++) {
                AutoPair *q = &p[(*n)++];
                memset(q, 0, sizeof *q);
                snprintf(q->cl.id, sizeof q->cl.id, "pair");
                snprintf(q->cl.protocol, sizeof q->cl.protocol, "%s", c->task ? "task" : "lm");
                q->cl.at_is_mult = !c->task;
                q->cl.at = c->task ? c->lens[l] : (double)c->lens[l] / c->base.seq_len;
                snprintf(q->cl.a, sizeof q->cl.a, "%s", a->s[i].label);
                snprintf(q->cl.b, sizeof q->cl.b, "%s", a->s[j].label);
                q->cl.relation = CLAIM_BETTER;
                claim_track_init(&q->t, 1);
            }
    return p;
}

static int read_back(const Compare *c, Agg *a, GenAgg *g) {
    return compare_aggregate(c, a, g) != 0 ? pelab_fail("compare: %s", pelab_errmsg) : 0;
}

static int write_sequential(const Compare *c, const AutoPair *p, int n, const SeqPlan *plan, int looks_done,
                             const char *stop, const Agg *a) {
    char path[1200];
    snprintf(path, sizeof path, "%s/sequential.md", c->out);
    MemFile mf; /* written whole */
    FILE *f = memfile_open(&mf);
    if (!f) return pelab_fail("compare: %s", pelab_errmsg);
    int counts[CLAIM_OUTCOMES] = {0};
    for (int i = 0; i < n; i++) counts[p[i].t.outcome]++;
    fprintf(f, "# compare --seeds auto: every pair, decided in looks\n\n`%s`\n\nExploratory: the family is all %d "
               "pairs of series at every length (Holm over their sequential p values, alpha %g spent across looks "
               "at", sb_str(&c->cmdline), n, plan->alpha);
    for (int k = 0; k < plan->n_looks; k++) fprintf(f, "%s %d", k ? "," : "", plan->seeds[k]);
    fprintf(f, " seeds per series); looks run: %d; %s. Outcomes: %d different, %d no difference within the "
               "margin, %d floor, %d undecided.\n\n| length | A | B | outcome | figures |\n|---|---|---|---|---|\n",
            looks_done, stop, counts[CLAIM_REPRODUCED] + counts[CLAIM_CONTRADICTED], counts[CLAIM_NO_EFFECT],
            counts[CLAIM_FLOOR], counts[CLAIM_INCONCLUSIVE]);
    for (int i = 0; i < n; i++) {
        const AutoPair *q = &p[i];
        const ClaimStat *st = claim_track_stat(&q->t);
        int k = st ? (int)(st - q->t.st) : plan->n_looks - 1;
        StrBuf why = {0};
        ClaimStat again;
        suite_claim_stat(&q->cl, c, a, NULL, 0, plan->seeds[k], &again, &why);
        const char *o = q->t.outcome == CLAIM_REPRODUCED ? "A better" : q->t.outcome == CLAIM_CONTRADICTED ? "B better"
                                                                                                             : claim_outcome_names[q->t.outcome];
        fprintf(f, "| %g%s | %s | %s | **%s** | %s; sequential p %.2g, Holm p %.2g |\n", q->cl.at, c->task ? "" : "L",
                q->cl.a, q->cl.b, o, sb_str(&why), q->t.seq_diff, q->t.holm_diff);
        sb_free(&why);
    }
    if (memfile_commit(&mf, path) != 0) return pelab_fail("compare: %s", pelab_errmsg);
    printf("compare: --seeds auto: %d pairs: %d different, %d no difference, %d floor, %d undecided (looks %d of %d; "
           "%s); %s\n", n, counts[CLAIM_REPRODUCED] + counts[CLAIM_CONTRADICTED], counts[CLAIM_NO_EFFECT],
           counts[CLAIM_FLOOR], counts[CLAIM_INCONCLUSIVE], looks_done, plan->n_looks, stop, path);
    return 0;
}

int compare_auto_run(Compare *c, const char *looks_text, double budget_min, CompareTrainFn train) {
    int looks[SEQ_MAX_LOOKS], n_looks = claim_looks_parse(looks_text, looks, SEQ_MAX_LOOKS);
    SeqPlan plan;
    if (n_looks < 0 || seq_plan_make(&plan, looks, n_looks, c->alpha) != 0)
        return pelab_fail("compare: --looks: %s", pelab_errmsg);
    Agg *a = xmalloc(sizeof *a);
    GenAgg *g = xmalloc(sizeof *g);
    AutoPair *pairs = NULL;
    int n_pairs = 0, looks_done = 0;
    const char *stop = "the last look ran";
    double t0 = now_seconds(), per_run = 0;
    int runs_trained = 0, rc = 0;
    for (int k = 0; k < n_looks; k++) {
        int want[CMP_MAX_SCHEMES] = {0}, n_want = 0;
        for (int s = 0; s < c->n_schemes; s++) want[s] = k == 0;
        for (int i = 0; i < n_pairs; i++) {
            if (claim_decided(&pairs[i].t)) continue;
            int s[2], m = suite_claim_schemes(&pairs[i].cl, c, a, s);
            for (int j = 0; j < m; j++) want[s[j]] = 1;
        }
        for (int s = 0; s < c->n_schemes; s++) n_want += want[s];
        if (!n_want) {
            stop = "every pair was decided";
            break;
        }
        double expect = per_run * n_want * (looks[k] - (k ? looks[k - 1] : 0));
        if (k > 0 && budget_min > 0 && now_seconds() - t0 + expect > budget_min * 60) {
            stop = "the time budget stopped it";
            break;
        }
        c->n_seeds = looks[k];
        for (int i = 0; i < c->n_seeds; i++) c->seed[i] = i + 1;
        for (int s = 0; s < c->n_schemes; s++) c->skip_scheme[s] = !want[s];
        printf("compare: --seeds auto: look %d of %d, %d seeds, %d scheme%s\n", k + 1, n_looks, looks[k], n_want,
               n_want == 1 ? "" : "s");
        fflush(stdout);
        if ((rc = train(c, NULL)) != 0) break;
        runs_trained += n_want * (looks[k] - (k ? looks[k - 1] : 0));
        per_run = (now_seconds() - t0) / runs_trained;
        memset(c->skip_scheme, 0, sizeof c->skip_scheme);
        if ((rc = read_back(c, a, g)) != 0) break;
        if (!pairs) pairs = make_pairs(c, a, &n_pairs);
        for (int i = 0; i < n_pairs; i++) {
            if (claim_decided(&pairs[i].t)) continue;
            ClaimStat st;
            StrBuf why = {0};
            suite_claim_stat(&pairs[i].cl, c, a, NULL, 0, looks[k], &st, &why);
            sb_free(&why);
            claim_track_look(&pairs[i].t, &plan, k, &st);
        }
        /* Holm over the pairs: claim_family_decide on the tracks, gathered */
        ClaimTrack *t = xmalloc(sizeof *t * (n_pairs + 1));
        for (int i = 0; i < n_pairs; i++) t[i] = pairs[i].t;
        claim_family_decide(t, n_pairs, plan.alpha);
        for (int i = 0; i < n_pairs; i++) pairs[i].t = t[i];
        free(t);
        looks_done = k + 1;
    }
    if (rc == 0) rc = read_back(c, a, g);
    if (rc == 0) rc = write_sequential(c, pairs, n_pairs, &plan, looks_done, stop, a);
    free(pairs), free(a), free(g);
    return rc;
}
