/* suite.c: `pelab suite [quick|full]`: the standard suite. Every protocol of the versioned table
 * (suite_plan.h) is one `pelab compare` in DIR/PROTOCOL (resumable; --jobs writes its per-run
 * commands; --collect only reads), then one report, DIR/suite.md: a summary matrix (scheme x
 * protocol, rank with ties, in distribution / past L), each published claim of docs/claims.txt
 * with its verdict (suite_claims.h), and per protocol its verdict section. DIR/claims.csv holds
 * the claims' outcomes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/strbuf.h"
#include "../core/sys.h"
#include "../io/claims.h"
#include "../io/results.h"
#include "args.h"
#include "commands.h"
#include "compare.h"
#include "report.h"
#include "report_agg.h"
#include "suite_claims.h"
#include "suite_plan.h"
#include "verdict.h"

/* training tokens per second of one thread at the suite's size (dim 64, 2 layers, seeds side by
 * side), and evaluation's share on top: the expected time printed before a run (EXPERIMENTS.md
 * section 14 has the measured figures) */
#define SUITE_TOKENS_PER_S 60000.0
#define SUITE_EVAL_FACTOR 1.6

typedef struct {
    const SuiteProtocol *p;
    Compare *c; /* NULL: not run */
    Agg *a;
    double seconds;
} SuiteResult;

/* the corpus: --data, else tinyshakespeare from ../shared/data (beside the binary or the working
 * directory), else the built-in synthetic stories with a note */
static const char *find_corpus(const char *given, char *buf, size_t n, int *fallback) {
    *fallback = 0;
    if (given) return given;
    char *exe = self_exe_path();
    const char *dirs[2] = {".", NULL};
    char exe_dir[1024] = "";
    if (exe && strrchr(exe, '/')) {
        snprintf(exe_dir, sizeof exe_dir, "%.*s", (int)(strrchr(exe, '/') - exe), exe);
        dirs[1] = exe_dir;
    }
    free(exe);
    for (int i = 0; i < 2; i++) {
        if (!dirs[i]) continue;
        snprintf(buf, n, "%s/../shared/data/tinyshakespeare/input.txt", dirs[i]);
        if (access(buf, R_OK) == 0) return buf;
    }
    *fallback = 1;
    return "synth:stories";
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
    double tokens = n_schemes * seeds * steps * p->batch * p->train_len;
    return tokens / SUITE_TOKENS_PER_S * SUITE_EVAL_FACTOR / (r->threads > 0 ? r->threads : 1);
}

/* "a,b" from the baselines or --schemes, plus --with */
static void scheme_list(const char *schemes, const char *with, StrBuf *out) {
    sb_puts(out, schemes ? schemes : SUITE_BASELINES);
    if (with) sb_printf(out, ",%s", with);
}

/* the rank of scheme s (as trained) among the schemes at length len of the protocol's primary
 * metric, ties shared; 0 when it has no value there */
static void matrix_ranks(const SuiteResult *r, int len, int *rank) {
    const Compare *c = r->c;
    const Agg *a = r->a;
    static double vals[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];
    int seeds[CMP_MAX_SCHEMES][CMP_MAX_SEEDS];
    VerdictSeries vs[CMP_MAX_SCHEMES];
    for (int s = 0; s < c->n_schemes; s++) rank[s] = 0;
    int l = report_length_index(c, len);
    if (l < 0) return;
    int higher_better = c->task != NULL, p = c->task ? TASK_EXACT : EVAL_NONOVERLAP;
    for (int s = 0; s < c->n_schemes; s++) {
        const Series *se = report_series(a, s, "none");
        int n = se ? report_values(a, se, p, l, vals[s], seeds[s]) : 0;
        vs[s] = (VerdictSeries){c->scheme[s], s, n, vals[s], seeds[s]};
    }
    Verdict v;
    verdict_compute(vs, c->n_schemes, higher_better, c->alpha, &v);
    for (int i = 0; i < v.n; i++) rank[v.order[i]] = v.rank[i];
    verdict_free(&v);
}

/* a protocol's length of the summary: a task length, or a multiple of L in tokens */
static int summary_len(const SuiteResult *r, double x) {
    return r->p->task ? (int)x : (int)lround(x * r->p->train_len);
}

/* 1: the protocol ranks the run's schemes (a column of the summary matrix) */
static int in_matrix(const SuiteResult *r) { return r->c && !r->p->schemes; }

static void write_matrix(FILE *f, const SuiteResult *res, int n) {
    fprintf(f, "## Summary: rank by protocol\n\nEach cell: the scheme's rank in distribution / past the trained "
               "length (lengths in the header), on the protocol's primary figure (loss, non-overlapping windows; "
               "exact match for tasks), among the schemes as trained; schemes whose difference is not significant "
               "(Welch over seeds, Holm-adjusted over the pairs of that length) share a rank; — : no run passed "
               "the gate or the length is not computable; blank: not trained in that protocol.\n\n| scheme |");
    for (int i = 0; i < n; i++)
        if (in_matrix(&res[i])) fprintf(f, " %s (%g / %g%s) |", res[i].p->name, res[i].p->ref, res[i].p->past, res[i].p->task ? "" : "L");
    fprintf(f, "\n|---|");
    for (int i = 0; i < n; i++)
        if (in_matrix(&res[i])) fprintf(f, "---|");
    fprintf(f, "\n");
    static int rin[64][CMP_MAX_SCHEMES], rout[64][CMP_MAX_SCHEMES];
    const char *rows[64 * CMP_MAX_SCHEMES]; /* every ranked scheme once, in the order first met */
    int n_rows = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (!in_matrix(&res[i])) continue;
        matrix_ranks(&res[i], summary_len(&res[i], res[i].p->ref), rin[i]);
        matrix_ranks(&res[i], summary_len(&res[i], res[i].p->past), rout[i]);
        for (int s = 0; s < res[i].c->n_schemes; s++) {
            int seen = 0;
            for (int r = 0; r < n_rows && !seen; r++) seen = strcmp(rows[r], res[i].c->scheme[s]) == 0;
            if (!seen) rows[n_rows++] = res[i].c->scheme[s];
        }
    }
    for (int r = 0; r < n_rows; r++) {
        fprintf(f, "| %s |", rows[r]);
        for (int i = 0; i < n && i < 64; i++) {
            if (!in_matrix(&res[i])) continue;
            int s = 0;
            while (s < res[i].c->n_schemes && strcmp(res[i].c->scheme[s], rows[r]) != 0) s++;
            char a[16] = "—", b[16] = "—";
            if (s == res[i].c->n_schemes) a[0] = b[0] = 0; /* not trained here */
            else if (rin[i][s]) snprintf(a, sizeof a, "%d", rin[i][s]);
            if (s < res[i].c->n_schemes && rout[i][s]) snprintf(b, sizeof b, "%d", rout[i][s]);
            fprintf(f, s == res[i].c->n_schemes ? "  |" : " %s / %s |", a, b);
        }
        fprintf(f, "\n");
    }
    if (!n_rows) fprintf(f, "| (no ranking protocol ran) |\n");
}

/* the claims' verdicts into the report and DIR/claims.csv; counts[outcome] */
static void write_claims(FILE *f, const char *dir, int setting, const ClaimList *cl, const SuiteResult *res, int n,
                         int *counts) {
    char path[1200];
    snprintf(path, sizeof path, "%s/claims.csv", dir);
    FILE *csv = fopen(path, "w");
    if (!csv) pelab_die("suite: cannot open %s: %s", path, strerror(errno));
    fprintf(csv, "id,paper,protocol,at,series,relation,outcome,figures\n");
    fprintf(f, "\n## Published claims\n\nEach claim is judged from the protocol's runs: `better:B` by the pair's "
               "test in the protocol's verdict (Holm-adjusted); `learns:B` by Welch's t between the two schemes' "
               "in-distribution exact match over every seed, gate or not; `flat:TOL` / `degrades:TOL` by the 95%% interval of "
               "how much worse the series is at that length than at the protocol's in-distribution length, paired "
               "over seeds, against the tolerance. Computed, never typed; the claims are docs/claims.txt.\n\n"
               "| claim | paper | statement | test | verdict | figures |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < cl->n; i++) {
        const Claim *c = &cl->c[i];
        const SuiteResult *r = NULL;
        for (int j = 0; j < n; j++)
            if (strcmp(res[j].p->name, c->protocol) == 0) r = &res[j];
        StrBuf why = {0};
        const SuiteProtocol *sp = c->untestable[0] ? NULL : suite_protocol(c->protocol);
        int o = CLAIM_INCONCLUSIVE;
        if (!r && sp && sp->not_quick && setting == SUITE_QUICK)
            sb_printf(&why, "protocol %s is not in quick (%s); `suite full`, or `--protocols %s`", sp->name, sp->not_quick,
                      sp->name);
        else o = suite_claim_judge(c, r ? r->c : NULL, r ? r->a : NULL, r ? r->p->ref : 0, &why);
        counts[o]++;
        char rel[200] = "-", test[400] = "—";
        if (!c->untestable[0]) {
            claim_relation_str(c, rel, sizeof rel);
            snprintf(test, sizeof test, "%s at %g%s: %s %s", c->protocol, c->at, c->at_is_mult ? "L" : "", c->a, rel);
        }
        fprintf(f, "| %s | %s | %s | %s | **%s** | %s |\n", c->id, c->paper, c->statement, test, claim_outcome_names[o],
                sb_str(&why));
        results_csv_field(csv, c->id, ','), results_csv_field(csv, c->paper, ','), results_csv_field(csv, c->protocol, ',');
        if (c->untestable[0]) fprintf(csv, "-,");
        else fprintf(csv, "%g%s,", c->at, c->at_is_mult ? "L" : "");
        results_csv_field(csv, c->a, ','), results_csv_field(csv, rel, ','), results_csv_field(csv, claim_outcome_names[o], ',');
        results_csv_field(csv, sb_str(&why), '\n');
        sb_free(&why);
    }
    if (fclose(csv) != 0) pelab_die("suite: cannot write %s: %s", path, strerror(errno));
}

/* the "## Verdict" section of a protocol's report.md, copied under a smaller heading */
static void copy_verdict_section(FILE *f, const char *dir, const char *proto) {
    char path[1200], line[4096];
    snprintf(path, sizeof path, "%s/%s/report.md", dir, proto);
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(f, "(no report: %s)\n", path);
        return;
    }
    int on = 0;
    while (fgets(line, sizeof line, in)) {
        if (strncmp(line, "## ", 3) == 0) {
            if (on) break;
            on = strncmp(line, "## Verdict", 10) == 0;
            continue;
        }
        if (!on) continue;
        if (strncmp(line, "### ", 4) == 0) fputc('#', f); /* one level down */
        fputs(line, f);
    }
    fclose(in);
}

static void write_report(const char *dir, const SuiteRun *run, const char *cmdline, const char *corpus, int fallback,
                         const ClaimList *cl, const SuiteResult *res, int n, const Compare *any, int *counts) {
    char path[1200];
    snprintf(path, sizeof path, "%s/suite.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) pelab_die("suite: cannot open %s: %s", path, strerror(errno));
    fprintf(f, "# pelab suite %s (suite version %d)\n\n`%s`\n\nSchemes: %s. Seeds: %d per scheme. Corpus of `lm`: %s%s\n\n",
            suite_setting_names[run->setting], SUITE_VERSION, cmdline, run->schemes, any->n_seeds, corpus,
            fallback ? " (**no tinyshakespeare in ../shared/data: the built-in synthetic stories instead; loss "
                       "figures are not comparable with a real-corpus suite**)" : "");
    write_matrix(f, res, n);
    write_claims(f, dir, run->setting, cl, res, n, counts);
    fprintf(f, "\n## Protocols\n");
    for (int i = 0; i < suite_n_protocols && run->setting == SUITE_QUICK; i++) {
        int ran = 0;
        for (int j = 0; j < n; j++) ran |= res[j].p == &suite_protocols[i];
        if (!ran && suite_protocols[i].not_quick)
            fprintf(f, "\nNot in quick: %s (%s).\n", suite_protocols[i].name, suite_protocols[i].not_quick);
    }
    for (int i = 0; i < n; i++) {
        if (!res[i].c) continue;
        fprintf(f, "\n### %s\n\n%s; L = %d, %ld steps, batch %d, dim 64, 2 layers, 4 heads. Full report: "
                   "%s/report.md%s\n\n", res[i].p->name, res[i].p->what, res[i].p->train_len, res[i].c->base.steps,
                res[i].p->batch, res[i].p->name, res[i].seconds > 0 ? "" : " (read back, nothing trained here)");
        if (res[i].seconds > 0) fprintf(f, "Wall time of this protocol: %.0f s.\n\n", res[i].seconds);
        copy_verdict_section(f, dir, res[i].p->name);
    }
    if (fclose(f) != 0) pelab_die("suite: cannot write %s: %s", path, strerror(errno));
}

/* --jobs: the protocols' per-run commands, one file */
static void append_file(FILE *out, const char *path) {
    unsigned char *buf;
    size_t len;
    if (read_file(path, &buf, &len) != 0) pelab_die("suite: %s", pelab_errmsg);
    if (fwrite(buf, 1, len, out) != len) pelab_die("suite: --jobs: write failed");
    free(buf);
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
            res[n++] = (SuiteResult){&suite_protocols[i], NULL, NULL, 0};
    return n;
}

int cmd_suite(int argc, char **argv) {
    SuiteRun run = {0};
    const char *schemes = NULL, *with = NULL, *protocols = NULL, *claims_path = NULL, *jobs = NULL, *data = NULL;
    const char *pos[1] = {NULL};
    int n_pos = 0, collect = 0;
    run.dir = NULL;
    const OptSpec opts[] = {
        {"--schemes", OPT_STR, &schemes, 0, 0, "schemes to run (default: the baselines " SUITE_BASELINES ")"},
        {"--with", OPT_STR, &with, 0, 0, "schemes added to the baselines (or to --schemes)"},
        {"--dir", OPT_OUT_DIR, &run.dir, 0, 0, "output directory: DIR/PROTOCOL per protocol, DIR/suite.md "
                                               "(default runs/suite-SETTING)"},
        {"--protocols", OPT_STR, &protocols, 0, 0, "only these protocols (default: all)"},
        {"--data", OPT_STR, &data, 0, 0, "corpus of the lm protocol (default: ../shared/data/tinyshakespeare)"},
        {"--claims", OPT_STR, &claims_path, 0, 0, "claims file (default: docs/claims.txt beside the binary)"},
        {"--seeds", OPT_INT, &run.seeds, 0, 16, "seeds per scheme (0: the setting's, quick 3, full 5)"},
        {"--steps", OPT_INT, &run.steps, 0, 1 << 30, "training steps of every protocol (0: each recipe's)"},
        {"--task-n", OPT_INT, &run.task_n, 0, 1 << 20, "examples per task length (0: compare's 100)"},
        {"--eval-tokens", OPT_INT, &run.eval_tokens, 0, 1 << 30, "held-out tokens per length of lm (0: quick 8192, "
                                                                  "full 32768)"},
        {"--jobs", OPT_OUT_FILE, &jobs, 0, 0, "write every protocol's per-run commands to this file instead of "
                                              "running; then run them and `pelab suite ... --collect`"},
        {"--collect", OPT_FLAG, &collect, 0, 0, "the report from the finished runs, no training"},
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
    char corpus_buf[1200], claims_buf[1200];
    int fallback;
    run.data = find_corpus(data, corpus_buf, sizeof corpus_buf, &fallback);
    ClaimList cl;
    if (claims_load(find_claims(claims_path, claims_buf, sizeof claims_buf), &cl) != 0) pelab_die("suite: %s", pelab_errmsg);

    /* the protocols to run, checked before anything trains */
    SuiteResult res[64];
    int n = select_protocols(protocols, run.setting, res);
    for (int i = 0; i < cl.n; i++)
        if (!cl.c[i].untestable[0] && !suite_protocol(cl.c[i].protocol))
            pelab_die("suite: claims line %d: protocol '%s' is not in suite version %d", cl.c[i].line, cl.c[i].protocol,
                      SUITE_VERSION);
    if (fallback) fprintf(stderr, "suite: no ../shared/data/tinyshakespeare/input.txt: lm runs on synth:stories\n");

    double total = 0;
    int models = 0, seeds = run.seeds > 0 ? run.seeds : suite_seeds[run.setting];
    for (int i = 0; i < n; i++) {
        StrBuf ps = {0};
        suite_protocol_schemes(res[i].p, &run, &ps);
        total += expected_seconds(res[i].p, &run, suite_count_schemes(sb_str(&ps)));
        models += suite_count_schemes(sb_str(&ps)) * seeds;
        sb_free(&ps);
    }
    if (!jobs && !collect)
        printf("suite %s (version %d): %d protocols, %d models (%d seeds each); expected about %.0f min on %d thread%s "
               "(a quiet machine)\n", suite_setting_names[run.setting], SUITE_VERSION, n, models, seeds, total / 60,
               run.threads > 0 ? run.threads : 1, run.threads > 1 ? "s" : "");
    fflush(stdout);
    if (make_dirs(run.dir) != 0) pelab_die("suite: %s", pelab_errmsg);
    FILE *jobs_out = jobs ? fopen(jobs, "w") : NULL;
    if (jobs && !jobs_out) pelab_die("suite: cannot open %s: %s", jobs, strerror(errno));

    StrBuf words = {0};
    const Compare *any = NULL;
    for (int i = 0; i < n; i++) {
        char jobs_path[1200];
        snprintf(jobs_path, sizeof jobs_path, "%s/%s.jobs", run.dir, res[i].p->name);
        const char *extra[2] = {collect ? "--collect" : "--jobs", jobs_path};
        char *cargv[96];
        int cargc = suite_compare_argv(res[i].p, &run, extra, jobs ? 2 : collect ? 1 : 0, &words, cargv, 96);
        if (cargc < 0) pelab_die("suite: %s: too many compare flags", res[i].p->name);
        printf("suite: [%d/%d] %s\n", i + 1, n, res[i].p->name);
        fflush(stdout);
        Compare *c = calloc(1, sizeof *c);
        Agg *a = calloc(1, sizeof *a);
        if (!c || !a) pelab_die("suite: out of memory");
        double t0 = now_seconds();
        compare_main(cargc, cargv, c);
        if (jobs) {
            append_file(jobs_out, jobs_path);
            sb_free(&c->cmdline), free(c), free(a);
            continue;
        }
        res[i].seconds = collect ? 0 : now_seconds() - t0;
        GenAgg *g = calloc(1, sizeof *g);
        if (!g || compare_aggregate(c, a, g) != 0) pelab_die("suite: %s: %s", res[i].p->name, g ? pelab_errmsg : "out of memory");
        free(g); /* the matrix and the claims read the loss and task figures only */
        res[i].c = c, res[i].a = a;
        if (!res[i].p->schemes) any = c;
    }
    sb_free(&words);
    if (jobs) {
        if (fclose(jobs_out) != 0) pelab_die("suite: cannot write %s: %s", jobs, strerror(errno));
        printf("suite: wrote the runs' commands to %s; run them (e.g. parallel -j4 < %s), then the same suite "
               "command with --collect\n", jobs, jobs);
        claims_free(&cl), sb_free(&list);
        return 0;
    }
    int counts[CLAIM_OUTCOMES] = {0};
    StrBuf cmdline = {0};
    sb_puts(&cmdline, "pelab");
    for (int i = 0; i < argc; i++) sb_printf(&cmdline, " %s", argv[i]);
    if (!any) /* only fixed-scheme protocols ran: their seeds for the header */
        for (int i = 0; i < n; i++)
            if (res[i].c) any = res[i].c;
    if (any) write_report(run.dir, &run, sb_str(&cmdline), run.data, fallback, &cl, res, n, any, counts);
    printf("suite: claims: %d reproduced, %d contradicted, %d inconclusive, %d untestable at this scale\n",
           counts[CLAIM_REPRODUCED], counts[CLAIM_CONTRADICTED], counts[CLAIM_INCONCLUSIVE], counts[CLAIM_UNTESTABLE]);
    printf("suite: report in %s/suite.md, claims in %s/claims.csv\n", run.dir, run.dir);
    for (int i = 0; i < n; i++)
        if (res[i].c) sb_free(&res[i].c->cmdline), free(res[i].c), free(res[i].a);
    claims_free(&cl), sb_free(&list), sb_free(&cmdline);
    return 0;
}
