#!/usr/bin/env python3
"""lm_pilot.py RUNS_DIR [SEED...]: the figures of the lm claims whose seeds a power analysis needs
(docs/experiments/power_v8.py), per seed, from a compare directory's runs/ CSVs (the suite's lm
protocol or a recipe search's): yarn-beats-ntk (ntk:4 minus yarn:4 at 4L, paired), rope-fails (4L
minus L, minus the 0.5 tolerance, paired), t5-beats-rope (rope minus t5 at 4L), kerple-beats-alibi
(alibi minus kerple at 16L), keyppl-separates (keygap: (key_rope - key_ft) - (all_rope - all_ft) at
4L, paired with the PI fine-tune). Prints each seed's figures, then mean and sd per claim."""
import csv, glob, os, re, statistics as st, sys

def rows(path):
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []

def loss(rs, rule, length, kind='length', protocol='nonoverlap'):
    for r in rs:
        if r['kind'] == kind and r['rule'] == rule and r['protocol'] == protocol and int(r['length']) == length and r['loss']:
            return float(r['loss'])
    return None

def main():
    d = sys.argv[1]
    seeds = sorted({int(m.group(1)) for f in glob.glob(os.path.join(d, 'rope_s*.csv'))
                    for m in [re.search(r'rope_s(\d+)\.csv$', f)] if m})
    L = 64
    out = {k: [] for k in ('yarn-beats-ntk', 'rope-fails', 'keyppl-separates')}
    series = {k: [] for k in ('rope@4L', 't5@4L', 'alibi@16L', 'kerple@16L')}
    for s in seeds:
        r = rows(os.path.join(d, 'rope_s%d.csv' % s))
        ft = rows(os.path.join(d, 'rope_s%d_ft-pi4.csv' % s))
        line = ['seed %d' % s]
        n, y = loss(r, 'ntk:4', 4 * L), loss(r, 'yarn:4', 4 * L)
        l1, l4 = loss(r, 'none', L), loss(r, 'none', 4 * L)
        if n is not None and y is not None: out['yarn-beats-ntk'].append(n - y); line.append('ntk-yarn %+.3f' % (n - y))
        if l1 is not None and l4 is not None:
            out['rope-fails'].append(l4 - l1 - 0.5); line.append('rope 4L-L %.3f' % (l4 - l1)); series['rope@4L'].append(l4)
        kb, ab = loss(r, 'none', 4 * L, 'keyppl', 'key'), loss(r, 'none', 4 * L, 'keyppl', 'all')
        ka = aa = None
        for rule in {x['rule'] for x in ft}:
            ka, aa = loss(ft, rule, 4 * L, 'keyppl', 'key'), loss(ft, rule, 4 * L, 'keyppl', 'all')
            if ka is not None: break
        if None not in (kb, ab, ka, aa):
            g = (kb - ka) - (ab - aa); out['keyppl-separates'].append(g)
            line.append('keygap %+.3f (key %.3f/%.3f, all %.3f/%.3f: rope/ft)' % (g, kb, ka, ab, aa))
        for name, key, length in (('t5', 't5@4L', 4 * L), ('alibi', 'alibi@16L', 16 * L), ('kerple', 'kerple@16L', 16 * L)):
            v = loss(rows(os.path.join(d, '%s_s%d.csv' % (name, s))), 'none', length)
            if v is not None: series[key].append(v); line.append('%s %.3f' % (key, v))
        steps = rows(os.path.join(d, 'rope_s%d.curve.csv' % s))
        if steps: line.append('steps %s' % steps[-1]['step'])
        print('  '.join(line))
    def ms(v): return '%.4f sd %.4f (n %d)' % (st.mean(v), st.stdev(v), len(v)) if len(v) > 1 else '-'
    for k, v in out.items(): print('%-20s paired %s' % (k, ms(v)))
    for k, v in series.items(): print('%-20s %s' % (k, ms(v)))
    if len(series['rope@4L']) > 1 and len(series['t5@4L']) > 1:
        print('t5-beats-rope        effect %+.4f' % (st.mean(series['rope@4L']) - st.mean(series['t5@4L'])))
    if len(series['alibi@16L']) > 1 and len(series['kerple@16L']) > 1:
        print('kerple-beats-alibi   effect %+.4f' % (st.mean(series['alibi@16L']) - st.mean(series['kerple@16L'])))

main()
