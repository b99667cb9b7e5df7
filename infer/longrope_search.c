#include "longrope_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/files.h"
#include "../core/mem.h"
#include "../core/rng.h"
#include "../core/strbuf.h"

typedef struct {
    double factor[ROPE_MAX_PAIRS];
    double loss;
} Candidate;

/* the constraint: every factor >= 1, none smaller than the one of a faster pair */
static void make_monotonic(double *f, int n) {
    for (int j = 0; j < n; j++) f[j] = fmax(f[j], j ? f[j - 1] : 1.0);
}

/* mean loss of the windows under long factors f */
static int evaluate(Model *m, const int *tokens, const LongRopeSearchConfig *cfg, const int *pos,
                    LongRopeFactors *lr, Candidate *c) {
    RopeRule rule = {.def = rope_rule_find("longrope"), .longrope = *lr};
    memcpy(rule.longrope.long_factor, c->factor, sizeof(double) * lr->n_pairs);
    if (pos_set_rule(&m->pos, &rule) != 0) return -1;
    if (model_forward(m, tokens, tokens + 1, pos, 1, cfg->len) != 0) return -1;
    double sum = m->mean_loss;
    for (int w = 1; w < cfg->windows; w++) {
        const int *row = tokens + (size_t)w * cfg->len;
        if (model_forward(m, row, row + 1, pos, 1, cfg->len) != 0) return -1;
        sum += m->mean_loss;
    }
    c->loss = sum / cfg->windows;
    return 0;
}

static int by_loss(const void *a, const void *b) {
    double la = ((const Candidate *)a)->loss, lb = ((const Candidate *)b)->loss;
    return (la > lb) - (la < lb);
}

int longrope_search(Model *m, const int *tokens, size_t n_tokens, const LongRopeSearchConfig *cfg,
                    LongRopeFactors *best, double *best_loss, double *pi_loss) {
    int L = m->cfg.seq_len, np = pos_rotary_pairs(&m->pos), P = cfg->population;
    if (np < 1 || np > ROPE_MAX_PAIRS)
        return pelab_fail("longrope search: the %s scheme takes no scaling rule (expected rope or xpos)",
                          m->pos.scheme->name);
    if (cfg->len <= L) return pelab_fail("longrope search: --len %d: expected more than the model's L %d", cfg->len, L);
    if (P < 2 || cfg->windows < 1 || cfg->generations < 0)
        return pelab_fail("longrope search: expected a population >= 2, windows >= 1, generations >= 0");
    if (n_tokens < (size_t)cfg->windows * cfg->len + 1)
        return pelab_fail("longrope search: %zu tokens; %d windows of %d need %zu", n_tokens, cfg->windows, cfg->len,
                          (size_t)cfg->windows * cfg->len + 1);
    LongRopeFactors lr = {.n_pairs = np, .orig_len = L, .factor = (double)cfg->len / L};
    for (int j = 0; j < np; j++) lr.short_factor[j] = 1.0;
    int *pos = xmalloc(sizeof(int) * cfg->len);
    for (int t = 0; t < cfg->len; t++) pos[t] = t;
    model_alloc_train(m, 1, cfg->len);
    Candidate *pool = xcalloc((size_t)2 * P, sizeof(Candidate)); /* the population, then its children */
    Rng rng;
    rng_seed(&rng, cfg->seed);
    double s = lr.factor;
    int rc = 0;
    for (int i = 0; i < P && rc == 0; i++) {
        for (int j = 0; j < np; j++)
            pool[i].factor[j] = i % 2 == 0 ? s : pow(s, np > 1 ? (double)j / (np - 1) : 1.0); /* PI, NTK */
        if (i >= 2) /* the rest: mutated copies of the two */
            for (int j = 0; j < np; j++) pool[i].factor[j] *= exp(0.2 * rng_normal(&rng));
        make_monotonic(pool[i].factor, np);
        rc = evaluate(m, tokens, cfg, pos, &lr, &pool[i]);
    }
    if (rc == 0) *pi_loss = pool[0].loss;
    for (int g = 0; g < cfg->generations && rc == 0; g++) {
        qsort(pool, P, sizeof(Candidate), by_loss);
        for (int c = 0; c < P && rc == 0; c++) {
            Candidate *child = &pool[P + c];
            *child = pool[rng_below(&rng, (P + 1) / 2)]; /* a parent from the better half */
            for (int j = 0; j < np; j++)
                if (rng_f32(&rng) < 0.3f) child->factor[j] *= exp(0.1 * rng_normal(&rng));
            make_monotonic(child->factor, np);
            rc = evaluate(m, tokens, cfg, pos, &lr, child);
        }
        qsort(pool, 2 * P, sizeof(Candidate), by_loss);
    }
    if (rc == 0) {
        qsort(pool, P, sizeof(Candidate), by_loss);
        memcpy(lr.long_factor, pool[0].factor, sizeof(double) * np);
        *best = lr;
        *best_loss = pool[0].loss;
        RopeRule rule = {.def = rope_rule_find("longrope"), .longrope = lr};
        rc = pos_set_rule(&m->pos, &rule);
    }
    free(pool);
    free(pos);
    return rc;
}

int longrope_write(const char *path, const LongRopeFactors *f) {
    StrBuf b = {0};
    const double *sets[2] = {f->short_factor, f->long_factor};
    for (int k = 0; k < 2; k++) {
        sb_printf(&b, "%s\"%s_factor\": [", k ? ",\n " : "{", k ? "long" : "short");
        for (int j = 0; j < f->n_pairs; j++) sb_printf(&b, "%s%.17g", j ? ", " : "", sets[k][j]);
        sb_printf(&b, "]");
    }
    sb_printf(&b, ",\n \"original_max_position_embeddings\": %ld, \"max_position_embeddings\": %ld}\n",
                   f->orig_len, (long)lround(f->orig_len * f->factor));
    int rc = write_bytes_atomic(path, sb_str(&b), b.len);
    sb_free(&b);
    return rc;
}
