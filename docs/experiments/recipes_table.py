#!/usr/bin/env python3
"""recipes_table.py DIR...: one line per run of a recipe search (docs/experiments/recipes_v8.sh):
config, run, steps trained, final validation loss, gate figure (the mean exact match of the gate
rows: the trained range's ends and middle, as compare's report_gates), exact match at each task
length, and the CPU seconds from times.log. Then per config and scheme: runs passing the gate (90%)."""
import csv, glob, os, sys, collections

def runs(top):
    times = {}
    tl = os.path.join(top, 'times.log')
    if os.path.exists(tl):
        for line in open(tl):
            f = line.split()
            if len(f) >= 7: times[(f[5], f[6])] = float(f[2])
    for cfgdir in sorted(glob.glob(os.path.join(top, '*/runs'))):
        cfg = cfgdir.split('/')[-2]
        for path in sorted(glob.glob(os.path.join(cfgdir, '*_s*.csv'))):
            if path.endswith('.curve.csv'): continue
            run = os.path.basename(path)[:-4]
            rows = list(csv.DictReader(open(path)))
            gate = [float(r['loss']) for r in rows if r['kind'] == 'gate' and r['rule'] == 'none' and r['loss']]
            task = {int(r['length']): float(r['loss']) for r in rows
                    if r['kind'] == 'task' and r['protocol'] == 'exact' and r['rule'] == 'none' and not r['depth'] and r['loss']}
            lm = {int(r['length']): float(r['loss']) for r in rows
                  if r['kind'] == 'length' and r['protocol'] == 'nonoverlap' and r['rule'] == 'none' and r['loss']}
            curve = path[:-4] + '.curve.csv'
            last = list(csv.DictReader(open(curve)))[-1] if os.path.exists(curve) else {}
            yield cfg, run, last, gate, task, lm, times.get((cfg, run)), rows

def main():
    passed = collections.defaultdict(lambda: [0, 0])
    for top in sys.argv[1:]:
        for cfg, run, last, gate, task, lm, cpu, rows in runs(top):
            g = sum(gate) / len(gate) if gate else None
            figs = task or lm
            cols = ' '.join('%d:%.3g' % (k, figs[k] * (100 if task else 1)) for k in sorted(figs))
            extra = ''
            if lm:
                r4 = {r['rule']: float(r['loss']) for r in rows if r['kind'] == 'length' and r['protocol'] == 'nonoverlap' and r['loss']
                      and int(r['length']) == 4 * int(r['train_len'])}
                if 'ntk:4' in r4 and 'yarn:4' in r4: extra = ' ntk-yarn@4L %+.3f' % (r4['ntk:4'] - r4['yarn:4'])
            print('%-12s %-44s steps %5s val %-8s gate %-6s %s%s cpu %s' % (
                cfg, run, last.get('step', '?'), last.get('val_loss', '?')[:6],
                '%.1f' % (100 * g) if g is not None else '-', cols, extra, '%.0f' % cpu if cpu else '-'))
            if g is not None:
                key = (cfg, run.rsplit('_s', 1)[0])
                passed[key][0] += g >= 0.9
                passed[key][1] += 1
    for (cfg, scheme), (p, n) in sorted(passed.items()):
        print('%-12s %-44s passed the gate in %d of %d' % (cfg, scheme, p, n))

main()
