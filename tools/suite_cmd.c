/* suite_cmd.c: `pelab suite [quick|full]`: the standard suite. Every protocol of the versioned table
 * (lab/suite_plan.h) is one `pelab compare` in DIR/PROTOCOL (resumable; --jobs writes its per-run
 * commands; --collect only reads), run in looks of seeds until the claims are decided, then one
 * report, DIR/suite.md (lab/suite_report.h): a summary matrix (scheme x protocol, rank with ties, in
 * distribution / past L), each published claim of docs/claims.txt with its verdict
 * (lab/suite_claims.h), and per protocol its verdict section. DIR/claims.csv holds the claims'
 * outcomes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../data/corpus.h"
#include "../io/claims.h"
#include "../train/progress.h"
#include "args.h"
#include "commands.h"
#include "compare_cmd.h"
#include "compare_flags.h"
#include "../lab/report.h"
#include "../lab/claim_family.h"
#include "../lab/claim_sim.h"
#include "../lab/jobs.h"
#include "../lab/suite_claims.h"
#include "../lab/suite_plan.h"
#include "../lab/suite_report.h"

/* training tokens per second of one thread at the suite's size (dim 64, 2 layers, seeds side by
 * side), and evaluation's share on top: the expected time printed before a run (EXPERIMENTS.md
 * section 14 has the measured figures) */
#define SUITE_TOKENS_PER_S 60000.0
#define SUITE_EVAL_FACTOR 1.6

enum { LOOK_TRAIN, LOOK_COLLECT, LOOK_JOBS };

/* --data, else the shipped tinyshakespeare (data/corpora/ in the working directory, beside the
 * binary, or one folder up: build-san/pelab). Never another corpus in silence: none found is an
 * error, and a file is read and checked (a shipped one against its SHA-256) before anything trains. */
static void find_corpus(const char *given, SuiteCorpus *sc) {
    const ShippedCorpus *def = &shipped_corpora[0];
    sc->path = given;
    if (!given) {
        char *exe = self_exe_path();
        int len = exe && strrchr(exe, '/') ? (int)(strrchr(exe, '/') - exe) : -1;
        snprintf(sc->buf, sizeof sc->buf, "%s/%s", CORPUS_DIR, def->file);
        if (access(sc->buf, R_OK) == 0) sc->path = sc->buf;
        for (int up = 0; up < 2 && len >= 0 && !sc->path; up++) {
            snprintf(sc->buf, sizeof sc->buf, "%.*s%s/%s/%s", len, exe, up ? "/.." : "", CORPUS_DIR, def->file);
            if (access(sc->buf, R_OK) == 0) sc->path = sc->buf;
        }
        free(exe);
        if (!sc->path)
            pelab_die("suite: the shipped corpus %s/%s is not in the working directory or beside the binary; give "
                      "--data FILE (a text file, or synth:stories)", CORPUS_DIR, def->file);
    }
    const ShippedCorpus *shipped = corpus_shipped(sc->path);
    if (strncmp(sc->path, "synth:", 6) != 0 && strncmp(sc->path, "task:", 5) != 0) {
        unsigned char *bytes;
        size_t n;
        if (corpus_read_file(sc->path, &bytes, &n) != 0) pelab_die("suite: --data: %s", pelab_errmsg);
        free(bytes);
    }
    const char *base = strrchr(sc->path, '/') ? strrchr(sc->path, '/') + 1 : sc->path;
    if (shipped) {
        snprintf(sc->label, sizeof sc->label, "%s (shipped)", shipped->name);
        snprintf(sc->what, sizeof sc->what, "`%s`: %s, shipped in %s (%zu bytes, SHA-256 %.16s... checked)%s",
                 sc->path, shipped->name, CORPUS_DIR, shipped->bytes, shipped->sha256, given ? ", by --data" : "");
    } else {
        snprintf(sc->label, sizeof sc->label, "%s (--data)", base);
        snprintf(sc->what, sizeof sc->what, "`%s`, by --data (**not the shipped %s: loss figures are not comparable "
                 "with docs/CLAIMS.md's**)", sc->path, def->name);
    }
}

/* --claims, else docs/claims.txt beside the binary (or one folder up: build-san/pelab) */
static const char *find_claims(const char *given, char *buf, size_t n) {
    if (given) return given;
    char *exe = self_exe_path();
    int len = exe && strrchr(exe, '/') ? (int)(strrchr(exe, '/') - exe) : -1;
    const char *found = NULL;
    for (int up = 0; up < 2 && len >= 0 && !found; up++) {
        snprintf(buf, n, "%.*s%s/docs/claims.txt", len, exe, up ? "/.." : "");
        if (access(buf, R_OK) == 0) found = buf;
    }
    free(exe);
    if (!found) pelab_die("suite: docs/claims.txt not found beside the binary; give --claims FILE");
    return found;
}

/* seconds one protocol is expected to take on `threads` threads */
static double expected_seconds(const SuiteProtocol *p, const SuiteRun *r, int n_schemes) {
    double steps = r->steps > 0 ? r->steps : p->steps[r->setting];
    double seeds = r->seeds > 0 ? r->seeds : suite_seeds[r->setting];
    double tokens = n_schemes * seeds * steps * p->batch * p->train_len * suite_layers(p) / SUITE_LAYERS;
    return tokens / SUITE_TOKENS_PER_S * SUITE_EVAL_FACTOR / (r->threads > 0 ? r->threads : 1);
}

/* "a,b" from the baselines or --schemes, plus --with */
static void scheme_list(const char *schemes, const char *with, StrBuf *out) {
    sb_puts(out, schemes ? schemes : SUITE_BASELINES);
    if (with) sb_printf(out, ",%s", with);
}

/* --jobs: a protocol's per-run commands (a file of lines) appended to the suite's, counted */
static int append_lines(StrBuf *out, const char *path) {
    unsigned char *buf;
    size_t len;
    if (read_file_max(path, FILE_MAX_CONFIG, "a jobs file", &buf, &len) != 0) pelab_die("suite: %s", pelab_errmsg);
    sb_put(out, (const char *)buf, len);
    int n = 0;
    for (size_t i = 0; i < len; i++) n += buf[i] == '\n';
    free(buf);
    return n;
}

/* the claims, their plans and where each stands: what a look asks of the protocols */
typedef struct {
    const ClaimList *cl;
    const ClaimTrack *tracks; /* [cl->n] */
    const SeqPlan *plans;     /* [cl->n]: each claim's own */
} SuiteClaims;

/* the schemes of protocol r that the claims still wanting seeds at `seeds` per series read (undecided,
 * their last look at or past it), flagged in want[CMP_MAX_SCHEMES] */
static void needed_mask(const SuiteResult *r, const SuiteClaims *sc, int seeds, int *want) {
    memset(want, 0, sizeof(int) * CMP_MAX_SCHEMES);
    if (!r->c) return;
    for (int i = 0; i < sc->cl->n; i++) {
        const Claim *c = &sc->cl->c[i];
        if (!claim_wants_seeds(&sc->tracks[i], &sc->plans[i], seeds) || strcmp(c->protocol, r->p->name) != 0) continue;
        int s[2], k = suite_claim_schemes(c, r->c, r->a, s);
        for (int j = 0; j < k; j++) want[s[j]] = 1;
    }
}

/* ... as a --schemes list, into out */
static void needed_schemes(const SuiteResult *r, const SuiteClaims *sc, int seeds, StrBuf *out) {
    int want[CMP_MAX_SCHEMES];
    needed_mask(r, sc, seeds, want);
    for (int s = 0; r->c && s < r->c->n_schemes; s++)
        if (want[s]) sb_printf(out, "%s%s", out->len ? "," : "", r->c->scheme[s]);
}

/* runs of (c, a) among the flagged schemes with seed index < seeds that did not finish */
static int missing_runs(const Compare *c, const Agg *a, const int *want, int seeds) {
    int missing = 0;
    for (int s = 0; s < c->n_schemes; s++)
        for (int k = 0; want[s] && k < seeds && k < c->n_seeds; k++) missing += a->gate[s][k] == RUN_MISSING;
    return missing;
}

/* one protocol at one look: train the new seeds of `schemes` (NULL: every scheme), then read every
 * run back into r (the full scheme list at `seeds`); with --jobs, the commands of the look's runs
 * that have not finished (the first look's: every series; a later look's: those the claims still
 * wanting seeds need), appended to jobs (their count added to *n_jobs). The count of the unfinished
 * runs the claims read (0: the look can be judged; training always completes it). */
static int run_look(SuiteResult *r, const SuiteRun *run, int seeds, const char *schemes, int mode, StrBuf *jobs,
                    int *n_jobs, const SuiteClaims *sc) {
    SuiteRun at = *run;
    at.seeds = seeds;
    StrBuf words = {0};
    char *cargv[96];
    Compare *c = calloc(1, sizeof *c);
    Agg *a = calloc(1, sizeof *a);
    GenAgg *g = calloc(1, sizeof *g);
    if (!c || !a || !g) pelab_die("suite: out of memory");
    double t0 = now_seconds();
    if (mode == LOOK_TRAIN) {
        at.only_schemes = schemes;
        int cargc = suite_compare_argv(r->p, &at, NULL, 0, &words, cargv, 96);
        if (cargc < 0) pelab_die("suite: %s: too many compare flags", r->p->name);
        compare_main(cargc, cargv, c);
        sb_free(&c->cmdline);
    }
    /* every run of the protocol read back at this look's seeds */
    at.only_schemes = NULL;
    const char *collect[1] = {"--collect"};
    int cargc = suite_compare_argv(r->p, &at, collect, 1, &words, cargv, 96);
    if (cargc < 0) pelab_die("suite: %s: too many compare flags", r->p->name);
    compare_main(cargc, cargv, c);
    if (compare_aggregate(c, a, g) != 0) pelab_die("suite: %s: %s", r->p->name, pelab_errmsg);
    if (mode == LOOK_TRAIN) {
        r->seconds += now_seconds() - t0;
        int before = r->c ? r->seeds : 0;
        for (int s = 0; s < c->n_schemes; s++)
            for (int k = before; k < seeds; k++) r->models += a->gate[s][k] != RUN_MISSING;
    }
    if (r->c) sb_free(&r->c->cmdline), free(r->c), free(r->a), free(r->g);
    r->c = c, r->a = a, r->g = g, r->seeds = seeds;
    int missing = 0;
    int unfinished = 0; /* the first look trains every series: the reference ones too, which no claim reads */
    if (mode != LOOK_TRAIN) { /* the runs the claims still wanting seeds read: the look waits for them */
        int want[CMP_MAX_SCHEMES];
        needed_mask(r, sc, seeds, want);
        unfinished = missing = missing_runs(c, a, want, seeds);
        if (!schemes) { /* the first look */
            for (int s = 0; s < CMP_MAX_SCHEMES; s++) want[s] = 1;
            unfinished = missing_runs(c, a, want, seeds);
        }
    }
    if (mode == LOOK_JOBS && unfinished) {
        char jobs_path[1200];
        snprintf(jobs_path, sizeof jobs_path, "%s/%s.jobs", run->dir, r->p->name);
        at.only_schemes = schemes;
        const char *extra[2] = {"--jobs", jobs_path};
        cargc = suite_compare_argv(r->p, &at, extra, 2, &words, cargv, 96);
        if (cargc < 0) pelab_die("suite: %s: too many compare flags", r->p->name);
        Compare *jc = calloc(1, sizeof *jc);
        if (!jc) pelab_die("suite: out of memory");
        compare_main(cargc, cargv, jc);
        sb_free(&jc->cmdline), free(jc);
        *n_jobs += append_lines(jobs, jobs_path);
    }
    sb_free(&words);
    return missing;
}

/* the budget at a look: the protocols whose new runs fit `left` seconds, cheapest first (a claim
 * may skip a look: it gives up that look's share of alpha, nothing more); need[i] emptied for the
 * others, which the report names. 0 when none fits: seq->stop says why. */
static int budget_look(const SuiteResult *res, int n, StrBuf *need, const double *expect, double left, int seeds,
                       SuiteSeq *seq) {
    int wants[64], keep[64];
    double total = 0;
    for (int i = 0; i < n; i++) wants[i] = need[i].len > 0, total += wants[i] ? expect[i] : 0;
    int kept = suite_budget_pick(expect, wants, n, left, keep);
    StrBuf out = {0};
    for (int i = 0; i < n; i++) {
        if (!wants[i] || keep[i]) continue;
        sb_printf(&out, "%s%s (%.0f min)", out.len ? ", " : "", res[i].p->name, expect[i] / 60);
        sb_free(&need[i]);
    }
    if (!kept) {
        snprintf(seq->stop_buf, sizeof seq->stop_buf, "the time budget stopped it before the look at %d seeds, "
                 "expected to take %.0f min more", seeds, total / 60);
        seq->stop = seq->stop_buf;
    } else if (out.len) {
        size_t at = strlen(seq->skipped);
        snprintf(seq->skipped + at, sizeof seq->skipped - at, "%sthe look at %d seeds left out %s", at ? "; " : "",
                 seeds, sb_str(&out));
        printf("suite: the budget leaves the look at %d seeds without %s\n", seeds, sb_str(&out));
    }
    sb_free(&out);
    return kept;
}

/* the protocols of --protocols "a,b" (NULL: all, less those quick leaves out), in the table's order,
 * into res; their count */
static int select_protocols(const char *list, int setting, SuiteResult *res) {
    int want[64] = {0};
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
        const SuiteProtocol *sp = suite_protocol(name);
        if (!sp) {
            StrBuf known = {0};
            for (int i = 0; i < suite_n_protocols; i++) sb_printf(&known, "%s%s", i ? ", " : "", suite_protocols[i].name);
            pelab_die("suite: --protocols: unknown protocol '%s' (known: %s)", name, sb_str(&known));
        }
        want[sp - suite_protocols] = 1;
    }
    int n = 0;
    for (int i = 0; i < suite_n_protocols; i++)
        if (list ? want[i] : setting != SUITE_QUICK || !suite_protocols[i].not_quick)
            res[n++] = (SuiteResult){.p = &suite_protocols[i]};
    return n;
}

static void free_results(SuiteResult *res, int n) {
    for (int i = 0; i < n; i++)
        if (res[i].c) sb_free(&res[i].c->cmdline), free(res[i].c), free(res[i].a), free(res[i].g), res[i].c = NULL;
}

/* the claims in the family whose own looks are not the setting's (plan), one line on stdout */
static void print_own_looks(const SuiteClaims *sc, const SeqPlan *plan) {
    StrBuf line = {0};
    for (int i = 0; i < sc->cl->n; i++) {
        const SeqPlan *p = &sc->plans[i];
        if (!sc->tracks[i].in_family || seq_plan_same_looks(p, plan)) continue;
        char looks[64];
        claim_looks_str(p->seeds, p->n_looks, looks, sizeof looks);
        sb_printf(&line, "%s%s %s", line.len ? "; " : "", sc->cl->c[i].id, looks);
    }
    if (line.len) printf("suite: claims with their own looks (claims.txt), seeds per series: %s\n", sb_str(&line));
    sb_free(&line);
}

/* why no protocol wants more seeds at `seeds` per series */
static const char *no_need_reason(const SuiteClaims *sc, int seeds) {
    int undecided = 0, looks_left = 0;
    for (int i = 0; i < sc->cl->n; i++) {
        const SeqPlan *p = &sc->plans[i];
        if (!sc->tracks[i].in_family || claim_decided(&sc->tracks[i])) continue;
        undecided = 1;
        looks_left |= p->seeds[p->n_looks - 1] >= seeds;
    }
    return !undecided ? "every claim was decided"
         : !looks_left ? "every claim still undecided had its last look"
                       : "the claims still undecided read no series trained here";
}

/* the claims in the family, undecided, that take a look at `seeds` per series (their own plan's)
 * and whose protocol's runs reached it (extended[]: the protocols this look trained or read) */
static void judge_level(const SuiteClaims *sc, ClaimTrack *tracks, const SuiteResult *res, int n, const int *extended,
                        int seeds) {
    for (int i = 0; i < sc->cl->n; i++) {
        const Claim *c = &sc->cl->c[i];
        int look = seq_plan_look_at(&sc->plans[i], seeds);
        if (look < 0 || !tracks[i].in_family || claim_decided(&tracks[i])) continue;
        const SuiteResult *r = suite_claim_result(c, res, n);
        if (r && !extended[r - res]) continue; /* its protocol skipped this look (the budget) */
        ClaimStat st;
        StrBuf why = {0};
        suite_claim_stat(c, r ? r->c : NULL, r ? r->a : NULL, r ? r->g : NULL, r ? r->p->ref : 0, seeds, &st, &why);
        sb_free(&why);
        claim_track_look(&tracks[i], &sc->plans[i], look, &st);
    }
}

/* the distinct plans of the testable claims, in the file's order, into out[CLAIM_SIM_CLAIMS] and how many
 * claims hold each into held[]; their count */
static int distinct_plans(const ClaimList *cl, const SeqPlan *plans, SeqPlan *out, int *held) {
    int n = 0;
    for (int i = 0; i < cl->n; i++) {
        if (cl->c[i].untestable[0]) continue;
        int j = 0;
        while (j < n && !seq_plan_same_looks(&out[j], &plans[i])) j++;
        if (j == CLAIM_SIM_CLAIMS)
            pelab_die("suite: --simulate: the claims file has more than %d schedules of looks, the simulated suite's "
                      "claims", CLAIM_SIM_CLAIMS);
        if (j == n) out[n] = plans[i], held[n++] = 0;
        held[j]++;
    }
    return n;
}

/* --simulate N: every scenario of claim_sim.h, a markdown table on stdout. The simulated claims take
 * the plans of the claims file's testable claims (their distinct schedules, claim_sim.h's rotation), or
 * def alone where the claims have none of their own */
static int simulate_suites(int suites, const SeqPlan *def, const ClaimList *cl, const SeqPlan *plans,
                           const char *claims_path) {
    SeqPlan used[CLAIM_SIM_CLAIMS];
    int held[CLAIM_SIM_CLAIMS], n_used = distinct_plans(cl, plans, used, held);
    if (!n_used) used[0] = *def, n_used = 1;
    printf("Simulated suites of %d claims (shaped as docs/claims.txt's), ", CLAIM_SIM_CLAIMS);
    if (n_used == 1) printf("looks at");
    else printf("each under one of the %d schedules of looks of %s's testable claims (claim i under schedule "
                "(i + i / 2) mod %d):", n_used, claims_path, n_used);
    for (int p = 0; p < n_used; p++) {
        for (int k = 0; k < used[p].n_looks; k++) printf("%s %d", k ? "," : p ? ";" : "", used[p].seeds[k]);
        if (n_used > 1) printf(" (%d claim%s)", held[p], held[p] == 1 ? "" : "s");
    }
    printf(" seeds per series, family alpha %g; %d suites per scenario.\n\n", def->alpha, suites);
    printf("| scenario | false verdicts (suites with any) | 95%% Wilson | false no effect | reproduced | contradicted "
           "| no effect | floor | inconclusive | seeds at the last look (mean) |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < claim_sim_n_scenarios; i++) {
        SimResult r;
        double t0 = now_seconds();
        if (claim_sim_run(&claim_sim_scenarios[i], used, n_used, suites, 1000 + i, &r) != 0)
            pelab_die("suite: %s", pelab_errmsg);
        double n = r.claims > 0 ? r.claims : 1;
        printf("| %s | %.2f%% (%d of %d) | %.2f%%–%.2f%% | %.2f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f |\n",
               claim_sim_scenarios[i].name, 100.0 * r.false_suites / r.suites, r.false_suites, r.suites,
               100 * r.wilson_lo, 100 * r.wilson_hi, 100.0 * r.false_no_effect_suites / r.suites,
               100 * r.outcome[CLAIM_REPRODUCED] / n, 100 * r.outcome[CLAIM_CONTRADICTED] / n,
               100 * r.outcome[CLAIM_NO_EFFECT] / n, 100 * r.outcome[CLAIM_FLOOR] / n,
               100 * r.outcome[CLAIM_INCONCLUSIVE] / n, r.seeds / n);
        fprintf(stderr, "suite: simulated %s in %.1f s\n", claim_sim_scenarios[i].name, now_seconds() - t0);
        fflush(stdout);
    }
    return 0;
}

int cmd_suite(int argc, char **argv) {
    SuiteRun run = {0};
    const char *schemes = NULL, *with = NULL, *protocols = NULL, *claims_path = NULL, *jobs = NULL, *data = NULL;
    const char *jobs_format = NULL;
    const char *pos[1] = {NULL};
    int n_pos = 0, collect = 0;
    const char *looks_text = NULL;
    int simulate = 0;
    float budget = -1;
    run.dir = NULL;
    const OptSpec opts[] = {
        {"--schemes", OPT_STR, &schemes, 0, 0, "schemes to run (default: the baselines " SUITE_BASELINES ")"},
        {"--with", OPT_STR, &with, 0, 0, "schemes added to the baselines (or to --schemes)"},
        {"--dir", OPT_OUT_DIR, &run.dir, 0, 0, "output directory: DIR/PROTOCOL per protocol, DIR/suite.md "
                                               "(default runs/suite-SETTING)"},
        {"--protocols", OPT_STR, &protocols, 0, 0, "only these protocols (default: all)"},
        {"--data", OPT_STR, &data, 0, 0, "corpus of the lm and sinks protocols (default: the shipped "
                                          CORPUS_DIR "/tinyshakespeare.txt)"},
        {"--claims", OPT_STR, &claims_path, 0, 0, "claims file (default: docs/claims.txt beside the binary)"},
        {"--seeds", OPT_INT, &run.seeds, 0, CLAIM_MAX_SEEDS, "one look at this many seeds per series, no sequential looks, for every claim "
                                                                 "(0: --looks)"},
        {"--looks", OPT_STR, &looks_text, 0, 0, "seeds per series at each look: every claim is judged at the first, "
                                                "seeds are added to the undecided ones at the next (default quick "
                                                SUITE_LOOKS_QUICK ", full " SUITE_LOOKS_FULL " or a claim's own LOOKS "
                                                "in the claims file; given, it is every claim's)"},
        {"--budget", OPT_FLOAT, &budget, 0, 1e6, "minutes: a look after the first trains only the protocols whose new seeds "
                                                 "are expected (from their runs so far) to end within this, cheapest "
                                                 "first (default quick 30, full 0: none)"},
        {"--alpha", OPT_FLOAT, &run.alpha, 1e-6, 0.5, "the family's false-verdict rate (Holm over the claims; default 0.05)"},
        {"--steps", OPT_INT, &run.steps, 0, 1 << 30, "training steps of every protocol (0: each recipe's)"},
        {"--task-n", OPT_INT, &run.task_n, 0, 1 << 20, "examples per task length (0: compare's 100)"},
        {"--eval-tokens", OPT_INT, &run.eval_tokens, 0, 1 << 30, "held-out tokens per length of lm (0: 32768, quick "
                                                                  "and full alike)"},
        {"--jobs", OPT_OUT_FILE, &jobs, 0, 0, "write every protocol's per-run commands to this file instead of "
                                              "running; then run them and `pelab suite ... --collect`"},
        JOBS_FORMAT_OPT(jobs_format),
        {"--collect", OPT_FLAG, &collect, 0, 0, "the report from the finished runs, no training"},
        {"--simulate", OPT_INT, &simulate, 0, 1 << 24, "no runs: N simulated suites per scenario through the verdict "
                                                       "rule (false-verdict rate and power, lab/claim_sim.h); full: "
                                                       "under the schedules of the claims file's own LOOKS"},
        OPT_THREADS_ROW(&run.threads),
    };
    args_parse("suite", "[quick|full] [--schemes a,b] [--with mine] [--dir DIR] [--jobs FILE | --collect] [flags]",
               argc, argv, 1, opts, sizeof opts / sizeof opts[0], pos, 1, &n_pos);
    run.setting = SUITE_QUICK;
    if (n_pos && strcmp(pos[0], "full") == 0) run.setting = SUITE_FULL;
    else if (n_pos && strcmp(pos[0], "quick") != 0) pelab_die("suite: '%s': expected quick or full", pos[0]);
    static char dir_default[64];
    snprintf(dir_default, sizeof dir_default, "runs/suite-%s", suite_setting_names[run.setting]);
    if (!run.dir) run.dir = dir_default;
    if (strlen(run.dir) > 900) pelab_die("suite: --dir: at most 900 bytes");
    StrBuf list = {0};
    scheme_list(schemes, with, &list);
    run.schemes = sb_str(&list), run.baselines = schemes == NULL, run.with = with;
    static SuiteCorpus corpus;
    char claims_buf[1200];
    find_corpus(data, &corpus);
    run.data = corpus.path;
    ClaimList cl;
    if (claims_load(find_claims(claims_path, claims_buf, sizeof claims_buf), &cl) != 0) pelab_die("suite: %s", pelab_errmsg);

    /* the protocols to run, checked before anything trains */
    SuiteResult res[64];
    int n = select_protocols(protocols, run.setting, res);
    for (int i = 0; i < cl.n; i++)
        if (!cl.c[i].untestable[0] && !suite_protocol(cl.c[i].protocol))
            pelab_die("suite: claims line %d: protocol '%s' is not in suite version %d", cl.c[i].line, cl.c[i].protocol,
                      SUITE_VERSION);

    /* the plans, fixed before any data: the setting's looks (or --looks, --seeds), and in full each
     * claim's own LOOKS where it has them (an explicit --looks or --seeds overrides every claim's) */
    int looks[SEQ_MAX_LOOKS], n_looks = 1, own = run.setting == SUITE_FULL && !looks_text && run.seeds == 0;
    if (run.seeds > 0) looks[0] = run.seeds;
    else if ((n_looks = claim_looks_parse(looks_text ? looks_text : run.setting == SUITE_QUICK ? SUITE_LOOKS_QUICK
                                                                                             : SUITE_LOOKS_FULL,
                                       looks, SEQ_MAX_LOOKS)) < 0)
        pelab_die("suite: --looks: %s", pelab_errmsg);
    SuiteSeq seq;
    memset(&seq, 0, sizeof seq);
    if (seq_plan_make(&seq.plan, looks, n_looks, run.alpha > 0 ? run.alpha : 0.05) != 0) pelab_die("suite: --looks: %s", pelab_errmsg);
    for (int k = 0; k < n_looks; k++)
        snprintf(seq.looks + strlen(seq.looks), sizeof seq.looks - strlen(seq.looks), "%s%d", k ? ", " : "", looks[k]);
    SeqPlan *plans = calloc(cl.n + 1, sizeof *plans);
    if (!plans) pelab_die("suite: out of memory");
    if (seq_plans_of_claims(&cl, &seq.plan, own, plans) != 0) pelab_die("suite: %s", pelab_errmsg);
    seq.plans = plans;
    if (budget < 0) budget = run.setting == SUITE_QUICK ? 30 : 0;
    int fmt = JOBS_LINES;
    if (jobs_format && !jobs) pelab_die("suite: --jobs-format %s: needs --jobs FILE", jobs_format);
    if (jobs_format && jobs_format_parse(jobs_format, &fmt) != 0) pelab_die("suite: %s", pelab_errmsg);
    if (simulate) {
        simulate_suites(simulate, &seq.plan, &cl, plans, claims_path ? claims_path : "docs/claims.txt");
        claims_free(&cl), sb_free(&list), free(plans);
        return 0;
    }
    ClaimTrack *tracks = calloc(cl.n + 1, sizeof *tracks);
    if (!tracks) pelab_die("suite: out of memory");
    for (int i = 0; i < cl.n; i++) {
        int ran = 0;
        for (int j = 0; j < n; j++) ran |= strcmp(res[j].p->name, cl.c[i].protocol) == 0;
        claim_track_init(&tracks[i], !cl.c[i].untestable[0] && ran);
        if (cl.c[i].untestable[0]) tracks[i].outcome = CLAIM_UNTESTABLE;
        else if (!ran) tracks[i].outcome = CLAIM_NOT_RUN;
        seq.n_family += tracks[i].in_family;
    }
    /* the suite's looks: every look of a claim in the family (the setting's alone when none is) */
    seq.n_levels = claim_family_levels(tracks, plans, cl.n, seq.levels);
    if (!seq.n_levels) memcpy(seq.levels, looks, sizeof(int) * n_looks), seq.n_levels = n_looks;
    SuiteClaims sc = {&cl, tracks, plans};

    double total = 0;
    int models = 0, seeds = seq.levels[0];
    run.seeds = seeds; /* the first look's, for the estimate */
    for (int i = 0; i < n; i++) {
        StrBuf ps = {0};
        suite_protocol_schemes(res[i].p, &run, &ps);
        total += expected_seconds(res[i].p, &run, suite_count_schemes(sb_str(&ps)));
        models += suite_count_schemes(sb_str(&ps)) * seeds;
        sb_free(&ps);
    }
    if (!jobs && !collect)
        printf("suite %s (version %d): %d protocols, %d models (%d seeds each) at the first look of %d; expected about "
               "%.0f min on %d thread%s (a quiet machine), then seeds for the claims still undecided%s\n",
               suite_setting_names[run.setting], SUITE_VERSION, n, models, seeds, seq.n_levels, total / 60,
               run.threads > 0 ? run.threads : 1, run.threads > 1 ? "s" : "", budget > 0 ? " within --budget" : "");
    print_own_looks(&sc, &seq.plan);
    fflush(stdout);
    if (make_dirs(run.dir) != 0) pelab_die("suite: %s", pelab_errmsg);
    StrBuf job_lines = {0};
    int n_jobs = 0;

    int mode = jobs ? LOOK_JOBS : collect ? LOOK_COLLECT : LOOK_TRAIN;
    double t_start = now_seconds();
    seq.stop = "the last look ran";
    for (int k = 0; k < seq.n_levels; k++) {
        int seeds_k = seq.levels[k], pending = 0;
        StrBuf need[64];
        memset(need, 0, sizeof need);
        int any_need = 0;
        double expect[64] = {0}; /* seconds protocol i's new runs should take, from its own runs so far */
        for (int i = 0; i < n; i++) {
            if (k == 0) continue;
            needed_schemes(&res[i], &sc, seeds_k, &need[i]);
            any_need |= need[i].len > 0;
            if (need[i].len && res[i].models > 0)
                expect[i] = res[i].seconds / res[i].models * suite_count_schemes(sb_str(&need[i])) *
                            (seeds_k - res[i].seeds);
        }
        if (k > 0 && !any_need) {
            seq.stop = no_need_reason(&sc, seeds_k);
            for (int i = 0; i < n; i++) sb_free(&need[i]);
            break;
        }
        if (k > 0 && mode == LOOK_TRAIN && budget > 0 &&
            budget_look(res, n, need, expect, budget * 60 - (now_seconds() - t_start), seeds_k, &seq) == 0) {
            for (int i = 0; i < n; i++) sb_free(&need[i]);
            break;
        }
        /* this look's models and expected seconds per protocol, for its progress line */
        int look_models[64] = {0};
        double look_expect[64] = {0}, all_expect = 0, done_expect = 0;
        int all_models = 0, done_models = 0;
        for (int i = 0; i < n; i++) {
            if (k > 0 && !need[i].len) continue;
            SuiteRun at = run;
            at.seeds = seeds_k - (k ? res[i].seeds : 0); /* the seeds it adds (a budget may have skipped a look) */
            StrBuf ps = {0};
            if (k == 0) suite_protocol_schemes(res[i].p, &run, &ps);
            int schemes_i = suite_count_schemes(k ? sb_str(&need[i]) : sb_str(&ps));
            sb_free(&ps);
            look_models[i] = schemes_i * at.seeds;
            look_expect[i] = k && expect[i] > 0 ? expect[i] : expected_seconds(res[i].p, &at, schemes_i);
            all_models += look_models[i], all_expect += look_expect[i];
        }
        Progress look_progress;
        progress_count_init(&look_progress, stderr, isatty(fileno(stderr)), "suite", "models", 1, all_models, 0, 0);
        for (int i = 0; i < n; i++) {
            if (k > 0 && !need[i].len) continue;
            printf("suite: [look %d/%d, %d seeds; %d/%d] %s%s%s\n", k + 1, seq.n_levels, seeds_k, i + 1, n,
                   res[i].p->name, k ? ": more seeds for " : "", k ? sb_str(&need[i]) : "");
            fflush(stdout);
            pending += run_look(&res[i], &run, seeds_k, k ? sb_str(&need[i]) : NULL, mode, &job_lines, &n_jobs, &sc);
            if (mode != LOOK_TRAIN) continue;
            done_models += look_models[i], done_expect += look_expect[i];
            char what[160];
            snprintf(what, sizeof what, "look %d/%d: %s done", k + 1, seq.n_levels, res[i].p->name);
            progress_count(&look_progress, done_models, all_expect > 0 ? done_expect / all_expect : -1, 1, what);
        }
        int extended[64];
        for (int i = 0; i < n; i++) extended[i] = k == 0 || need[i].len > 0, sb_free(&need[i]);
        if (pending) { /* --jobs or --collect: this look's runs are not all there */
            snprintf(seq.stop_buf, sizeof seq.stop_buf, "the look at %d seeds waits for %d run%s (%s)", seeds_k, pending,
                     pending == 1 ? "" : "s", jobs ? "their commands are in the --jobs file" : "not finished");
            seq.stop = seq.stop_buf;
            break;
        }
        judge_level(&sc, tracks, res, n, extended, seeds_k);
        claim_family_decide(tracks, cl.n, seq.plan.alpha);
        seq.looks_done = k + 1;
    }
    if (jobs) {
        if (jobs_write(jobs, fmt, "suite", sb_str(&job_lines), n_jobs, run.threads) != 0)
            pelab_die("suite: --jobs: %s", pelab_errmsg);
        StrBuf how = {0};
        jobs_how(&how, fmt, jobs);
        if (!n_jobs)
            printf("suite: every look's runs are finished (%s is empty); the report: the same suite command with "
                   "--collect\n", jobs);
        else
            printf("suite: wrote %d command%s of the next look's runs to %s; run them (%s), then the same suite command "
                   "with --jobs again (the look after, while a claim is undecided) until the file is empty, then with "
                   "--collect\n", n_jobs, n_jobs == 1 ? "" : "s", jobs, sb_str(&how));
        sb_free(&how), sb_free(&job_lines);
        free_results(res, n);
        claims_free(&cl), sb_free(&list), free(tracks), free(plans);
        return 0;
    }
    sb_free(&job_lines);
    int counts[CLAIM_OUTCOMES] = {0};
    StrBuf cmdline = {0};
    sb_puts(&cmdline, "pelab");
    for (int i = 0; i < argc; i++) sb_printf(&cmdline, " %s", argv[i]);
    int any = 0;
    for (int i = 0; i < n; i++) any |= res[i].c != NULL;
    if (any && suite_write_report(run.dir, &run, sb_str(&cmdline), &corpus, &cl, tracks, &seq, res, n, counts) != 0)
        pelab_die("%s", pelab_errmsg);
    printf("suite: claims: %d reproduced, %d contradicted, %d no effect, %d floor, %d inconclusive, %d untestable at "
           "this scale, %d not run (their protocols are outside this run) (looks: %d of %d; %s)\n",
           counts[CLAIM_REPRODUCED], counts[CLAIM_CONTRADICTED], counts[CLAIM_NO_EFFECT], counts[CLAIM_FLOOR],
           counts[CLAIM_INCONCLUSIVE], counts[CLAIM_UNTESTABLE], counts[CLAIM_NOT_RUN], seq.looks_done,
           seq.n_levels, seq.stop);
    printf("suite: report in %s/suite.md, claims in %s/claims.csv\n", run.dir, run.dir);
    free_results(res, n);
    claims_free(&cl), sb_free(&list), sb_free(&cmdline), free(tracks), free(plans);
    return 0;
}
