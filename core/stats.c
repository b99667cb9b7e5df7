/* stats.c: t-tests, Holm, bootstrap and sample size (stats.h). The t distribution is GSL's. */
#include "stats.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

StatSummary stats_summary(const double *x, int n) {
    StatSummary s = {n, NAN, 0};
    if (n < 1) return s;
    double sum = 0;
    for (int i = 0; i < n; i++) sum += x[i];
    s.mean = sum / n;
    if (n < 2) return s;
    double ss = 0; /* two passes: no cancellation for values far from 0 */
    for (int i = 0; i < n; i++) ss += (x[i] - s.mean) * (x[i] - s.mean);
    s.sd = sqrt(ss / (n - 1));
    return s;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double stats_median(double *x, int n) {
    if (n < 1) return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* t, p and the 95% interval from a difference, its standard error and degrees of freedom */
static StatTest t_result(double diff, double se, double df) {
    StatTest r = {diff, NAN, df, NAN, NAN, NAN};
    if (!(se > 0)) { /* no spread: the difference is exact */
        r.t = diff == 0 ? 0 : copysign(INFINITY, diff);
        r.p = diff == 0 ? 1 : 0;
        r.ci_lo = r.ci_hi = diff;
        return r;
    }
    r.t = diff / se;
    r.p = 2 * gsl_cdf_tdist_Q(fabs(r.t), df);
    if (r.p > 1) r.p = 1;
    double q = gsl_cdf_tdist_Qinv(0.025, df);
    r.ci_lo = diff - q * se, r.ci_hi = diff + q * se;
    return r;
}

StatTest stats_welch_summary(StatSummary a, StatSummary b) {
    StatTest none = {a.mean - b.mean, NAN, NAN, NAN, NAN, NAN};
    if (a.n < 2 || b.n < 2) return none;
    double va = a.sd * a.sd / a.n, vb = b.sd * b.sd / b.n, se2 = va + vb;
    /* Welch-Satterthwaite; with no spread at all the df does not matter */
    double df = se2 > 0 ? se2 * se2 / (va * va / (a.n - 1) + vb * vb / (b.n - 1)) : a.n + b.n - 2;
    return t_result(a.mean - b.mean, sqrt(se2), df);
}

StatTest stats_welch(const double *a, int na, const double *b, int nb) {
    return stats_welch_summary(stats_summary(a, na), stats_summary(b, nb));
}

StatTest stats_paired(const double *a, const double *b, int n) {
    double *d = malloc(sizeof(double) * (n > 0 ? n : 1));
    if (!d) {
        StatTest none = {NAN, NAN, NAN, NAN, NAN, NAN};
        return none;
    }
    for (int i = 0; i < n; i++) d[i] = a[i] - b[i];
    StatSummary s = stats_summary(d, n);
    free(d);
    if (n < 2) {
        StatTest none = {s.mean, NAN, NAN, NAN, NAN, NAN};
        return none;
    }
    return t_result(s.mean, s.sd / sqrt(n), n - 1);
}

void stats_holm(const double *p, int m, double *adj) {
    int *order = malloc(sizeof(int) * (m > 0 ? m : 1)), k = 0;
    for (int i = 0; i < m; i++) {
        adj[i] = p[i];
        if (!isnan(p[i]) && order) order[k++] = i;
    }
    if (!order) return;
    for (int i = 1; i < k; i++) /* insertion sort by p: m is a few dozen pairs */
        for (int j = i; j > 0 && p[order[j]] < p[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    double running = 0;
    for (int r = 0; r < k; r++) {
        double v = (k - r) * p[order[r]];
        if (v > 1) v = 1;
        if (v < running) v = running; /* step-down: adjusted p values never decrease */
        running = v;
        adj[order[r]] = v;
    }
    free(order);
}

/* the q-quantile of sorted x[n], linear between order statistics (R's type 7) */
static double quantile_sorted(const double *x, int n, double q) {
    double h = (n - 1) * q;
    int i = (int)floor(h);
    if (i >= n - 1) return x[n - 1];
    return x[i] + (h - i) * (x[i + 1] - x[i]);
}

int stats_bootstrap_ratio(const double *value, const double *weight, size_t n, int reps, uint64_t seed, double level,
                          double *lo, double *hi) {
    double wsum = 0;
    for (size_t i = 0; i < n; i++) wsum += weight[i];
    if (n < 1 || !(wsum > 0) || reps < 2) return -1;
    double *est = malloc(sizeof(double) * reps);
    if (!est) return -1;
    Rng rng;
    rng_seed(&rng, seed);
    int kept = 0;
    for (int r = 0; r < reps; r++) {
        double v = 0, w = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = (size_t)rng_below(&rng, n);
            v += value[j], w += weight[j];
        }
        if (w > 0) est[kept++] = v / w; /* a resample of empty blocks only has no ratio */
    }
    if (kept < 2) {
        free(est);
        return -1;
    }
    qsort(est, kept, sizeof *est, cmp_double);
    *lo = quantile_sorted(est, kept, (1 - level) / 2);
    *hi = quantile_sorted(est, kept, (1 + level) / 2);
    free(est);
    return 0;
}

int stats_seeds_needed(double diff, double sd, double alpha, double power) {
    if (!isfinite(diff) || diff == 0 || !isfinite(sd)) return -1;
    if (sd <= 0) return 2;
    double ratio = sd / fabs(diff);
    for (int n = 2; n <= 100000; n++) {
        double df = 2.0 * n - 2;
        double z = gsl_cdf_tdist_Qinv(alpha / 2, df) + gsl_cdf_tdist_Pinv(power, df);
        if (n >= 2 * z * z * ratio * ratio) return n;
        if (n > 1000) n += n / 10; /* far out: coarser steps */
    }
    return 100000;
}

void stats_t_onesided(double est, double se, double df, double shift, double *upper, double *lower) {
    if (!isfinite(est) || !(se >= 0) || (se > 0 && !(df > 0))) {
        *upper = *lower = NAN;
        return;
    }
    if (se == 0) { /* exact: the estimate is the location */
        *upper = est > shift ? 0 : 1, *lower = est < shift ? 0 : 1;
        return;
    }
    double t = (est - shift) / se;
    *upper = gsl_cdf_tdist_Q(t, df), *lower = gsl_cdf_tdist_P(t, df);
}

/* Welch's statistic of a group of n values with sum s and sum of squares q against the rest of the
 * pool (total n_all, s_all, q_all); the variances are floored so that two constant groups still
 * order by their means */
static double welch_stat(int n, double s, double q, int n_all, double s_all, double q_all, double floor_var) {
    int m = n_all - n;
    double ma = s / n, mb = (s_all - s) / m;
    double va = n > 1 ? (q - s * ma) / (n - 1) : 0, vb = m > 1 ? (q_all - q - (s_all - s) * mb) / (m - 1) : 0;
    if (va < floor_var) va = floor_var;
    if (vb < floor_var) vb = floor_var;
    return (ma - mb) / sqrt(va / n + vb / m);
}

/* C(n, k) as a double (exact for the sizes used here) */
static double choose(int n, int k) {
    double c = 1;
    for (int i = 1; i <= k; i++) c = c * (n - k + i) / i;
    return c;
}

void stats_perm_onesided(const double *a, int na, const double *b, int nb, double shift, double *upper, double *lower) {
    *upper = *lower = NAN;
    int n = na + nb;
    if (na < 1 || nb < 1 || n > 64) return;
    double pool[64], s_all = 0, q_all = 0, scale = 0;
    for (int i = 0; i < n; i++) {
        pool[i] = i < na ? a[i] - shift : b[i - na];
        if (!isfinite(pool[i])) return;
        s_all += pool[i], q_all += pool[i] * pool[i];
        scale = fmax(scale, fabs(pool[i]));
    }
    /* a variance floor far below any real spread: constant groups compare by their means alone */
    double floor_var = 1e-24 * (1 + scale * scale);
    double sa = 0, qa = 0;
    for (int i = 0; i < na; i++) sa += pool[i], qa += pool[i] * pool[i];
    double t_obs = welch_stat(na, sa, qa, n, s_all, q_all, floor_var);
    double eps = 1e-9 * (1 + fabs(t_obs)); /* rounding between equal splits counts as a tie */
    long long hi = 0, lo = 0, total = 0;
    if (n <= 62 && choose(n, na) <= STATS_PERM_DRAWS) {
        /* every subset of na of the n pooled values, as a bit mask (Gosper's hack) */
        unsigned long long mask = (1ULL << na) - 1, end = 1ULL << n;
        while (mask < end) {
            double s = 0, q = 0;
            for (int i = 0; i < n; i++)
                if (mask >> i & 1) s += pool[i], q += pool[i] * pool[i];
            double t = welch_stat(na, s, q, n, s_all, q_all, floor_var);
            hi += t >= t_obs - eps, lo += t <= t_obs + eps, total++;
            unsigned long long c = mask & -mask, r = mask + c;
            mask = (((r ^ mask) >> 2) / c) | r;
        }
        *upper = (double)hi / total, *lower = (double)lo / total;
        return;
    }
    Rng rng;
    rng_seed(&rng, 0x9e3779b97f4a7c15ULL);
    double perm[64];
    for (int d = 0; d < STATS_PERM_DRAWS; d++) {
        memcpy(perm, pool, sizeof(double) * n);
        double s = 0, q = 0;
        for (int i = 0; i < na; i++) { /* the first na of a partial Fisher-Yates shuffle */
            int j = i + (int)rng_below(&rng, (uint64_t)(n - i));
            double t = perm[i];
            perm[i] = perm[j], perm[j] = t;
            s += perm[i], q += perm[i] * perm[i];
        }
        double t = welch_stat(na, s, q, n, s_all, q_all, floor_var);
        hi += t >= t_obs - eps, lo += t <= t_obs + eps;
    }
    *upper = (1.0 + hi) / (1.0 + STATS_PERM_DRAWS), *lower = (1.0 + lo) / (1.0 + STATS_PERM_DRAWS);
}

/* sum of x[n] with the signs of the bits of m flipped (n <= 64) */
static double flipped_sum(const double *x, int n, uint64_t m) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (m >> i & 1) ? -x[i] : x[i];
    return s;
}

void stats_signflip_onesided(const double *d, int n, double shift, double *upper, double *lower) {
    *upper = *lower = NAN;
    if (n < 1 || n > 64) return;
    double x[64], obs = 0, scale = 0;
    for (int i = 0; i < n; i++) {
        x[i] = d[i] - shift;
        if (!isfinite(x[i])) return;
        obs += x[i], scale += fabs(x[i]);
    }
    /* with the sum of squares fixed by the flips, the paired t statistic orders as the sum does */
    double eps = 1e-12 * (1 + scale);
    long long hi = 0, lo = 0;
    if (n <= STATS_SIGNFLIP_EXACT) {
        long long total = 1LL << n;
        for (long long m = 0; m < total; m++) {
            double s = flipped_sum(x, n, (uint64_t)m);
            hi += s >= obs - eps, lo += s <= obs + eps;
        }
        *upper = (double)hi / total, *lower = (double)lo / total;
        return;
    }
    Rng rng;
    rng_seed(&rng, 0x9e3779b97f4a7c15ULL);
    for (int dr = 0; dr < STATS_PERM_DRAWS; dr++) {
        uint64_t m = (uint64_t)rng_u32(&rng) | (n > 32 ? (uint64_t)rng_u32(&rng) << 32 : 0);
        double s = flipped_sum(x, n, m);
        hi += s >= obs - eps, lo += s <= obs + eps;
    }
    *upper = (1.0 + hi) / (1.0 + STATS_PERM_DRAWS), *lower = (1.0 + lo) / (1.0 + STATS_PERM_DRAWS);
}

double stats_perm_min_p(int na, int nb) {
    if (na < 1 || nb < 1) return 1;
    double p = 2 / choose(na + nb, na);
    if (na + nb > 62 || choose(na + nb, na) > STATS_PERM_DRAWS) p = fmax(p, 2.0 / (1 + STATS_PERM_DRAWS));
    return p > 1 ? 1 : p;
}

double stats_signflip_min_p(int n) {
    if (n < 1) return 1;
    double p = 2 / ldexp(1, n);
    if (n > STATS_SIGNFLIP_EXACT) p = fmax(p, 2.0 / (1 + STATS_PERM_DRAWS));
    return fmin(1, p);
}

double stats_t_quantile(double q, double df) { return gsl_cdf_tdist_Pinv(q, df); }
