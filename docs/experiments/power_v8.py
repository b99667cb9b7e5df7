#!/usr/bin/env python3
"""power_v8.py PILOT.csv: the pre-registered seed schedule of each claim of suite version 8
(docs/CLAIMS.md, "Version 8: the power schedule"). PILOT.csv: id,effect,sd,paired,test,pass[,source]
(test: t, permute or signflip; sd: a paired figure's spread over the n pilot seeds, or two series'
pooled spread sqrt((sd_A^2 + sd_B^2) / 2),
taken at its one-sided 80% upper confidence bound, sd sqrt((n-1) / chi2_0.2(n-1)), since a pilot of
4 seeds says little about a spread; pass: the share of seeds expected to pass the gate, 1 for
language modelling; cap: the most seeds the protocol's cost allows, CAP unless given). For each claim: the smallest N
(5 <= N <= CAP) whose last look, at the Holm level alpha / FAMILY times that look's share of alpha,
has 80% power for the pilot's effect with N x pass seeds, as lab/claim_family.c's claim_seeds_needed
and core/stats.c's stats_seeds_needed compute it (two-sample t at n seeds per series; a paired
figure's sd taken as sd/sqrt(2)); a randomization test also needs N whose smallest p value clears
the level. The looks: 5, 8, 12, then N (16, 20, 24 ... as the need grows). Pure Python (no scipy)."""
import csv, math, sys

# FAMILY: the Holm step a claim still open after the first look faces: version 7 had 14 claims open
# after its first look (the others decided there with p values far below any step), so alpha / 14
ALPHA, FAMILY, POWER, CAP = 0.05, 14, 0.8, 32

def betacf(a, b, x):  # continued fraction of the regularized incomplete beta (Numerical Recipes' form)
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > 1e-300 else 1e-300); h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d; d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + aa / c if abs(1 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d; d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + aa / c if abs(1 + aa / c) > 1e-300 else 1e-300
        de = d * c; h *= de
        if abs(de - 1) < 1e-14: break
    return h

def ibeta(a, b, x):
    if x <= 0: return 0.0
    if x >= 1: return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    if x < (a + 1) / (a + b + 2): return math.exp(lbt) * betacf(a, b, x) / a
    return 1 - math.exp(lbt) * betacf(b, a, 1 - x) / b

def t_cdf(t, df):
    p = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t))
    return 1 - p if t > 0 else p

def t_quantile(q, df):  # bisection: plenty for a schedule
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < q: lo = mid
        else: hi = mid
    return (lo + hi) / 2

def seeds_needed(effect, sd, level):  # stats_seeds_needed
    ratio = sd / abs(effect)
    for n in range(2, 100000):
        df = 2 * n - 2
        z = t_quantile(1 - level / 2, df) + t_quantile(POWER, df)
        if n >= 2 * z * z * ratio * ratio: return n
    return 100000

def min_p(test, n):
    if test == 'permute': return 2 / math.comb(2 * n, n)
    if test == 'signflip': return 2 / 2 ** n
    return 0

def looks_for(n):
    base = [5, 8, 12]
    if n <= 12: return base
    extra, s = [], 12
    while s < n: s = min(n, s + 4 if s < 24 else s + 8); extra.append(s)
    return base + extra

def chi2_quantile(p, df):  # Wilson-Hilferty: plenty for a spread's confidence bound
    z = -0.8416212335729143 if p == 0.2 else None
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3

def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    print('| claim | pilot effect | sd per seed (pilot seeds; 80% bound) | test | gate passed | seeds for 80% power | looks | power at its last look |')
    print('|---|---:|---:|---|---:|---:|---|---|')
    for r in rows:
        effect, sd_pilot, n_pilot = float(r['effect']), float(r['sd']), int(r['n'])
        sd = sd_pilot * math.sqrt((n_pilot - 1) / chi2_quantile(0.2, n_pilot - 1))
        cap = int(r.get('cap') or CAP)
        paired, test, share = r['paired'] == '1', r['test'], float(r.get('pass') or 1)
        sd2 = sd / math.sqrt(2) if paired else sd  # as claim_seeds_needed
        chosen = None
        for n in range(5, cap + 1):
            lk = looks_for(n)
            level = ALPHA / FAMILY * (lk[-1] - lk[-2]) / lk[-1]
            n_gated = int(lk[-1] * share)
            if seeds_needed(effect, sd2, level) <= n_gated and min_p(test, n_gated) < level:
                chosen = lk; break
        if chosen is None:
            lk = looks_for(cap)
            level = ALPHA / FAMILY * (lk[-1] - lk[-2]) / lk[-1]
            df = 2 * cap - 2
            ng = max(2, int(cap * share))
            z = abs(effect) / (sd2 * math.sqrt(2 / ng)) - t_quantile(1 - level / 2, df)
            note = 'cap: %.0f%%' % (100 * t_cdf(z, df))
            chosen = lk
        else:
            note = '>= 80%'
        print('| %s | %+.3g | %.3g (%d; %.3g) | %s | %.0f%% | %s | %s | %s |' % (r['id'], effect, sd_pilot, n_pilot, sd, test, 100 * share,
              chosen[-1] if note == '>= 80%' else '> %d' % cap, ','.join(map(str, chosen)), note))

main()
