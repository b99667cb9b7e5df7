#!/usr/bin/env python3
"""keyppl_evaluator.py DIR: keyppl-separates' statistic per seed from a compare directory's run CSVs
(rope_sSEED.csv with its PI fine-tune's rows): at 4L (256), (key_rope - key_ft) - (all_rope - all_ft),
the key-token gap minus the all-token gap; > 0 is the claim's direction (lab/suite_keyppl.c's figure)."""
import csv
import glob
import os
import re
import statistics
import sys


def figure(rows, bucket, rule):
    for x in rows:
        if x['kind'] == 'keyppl' and x['length'] == '256' and x['protocol'] == bucket and x['rule'] == rule:
            return float(x['loss']), int(x['n'])
    raise SystemExit(f'keyppl_evaluator: no keyppl {bucket} row for rule {rule} at 256')


def main():
    if len(sys.argv) != 2:
        raise SystemExit('usage: keyppl_evaluator.py DIR (a compare directory, or its runs/)')
    d = sys.argv[1]
    paths = sorted(p for p in glob.glob(os.path.join(d, 'rope_s*.csv')) if re.search(r'_s\d+\.csv$', p))
    diffs = []
    print('| seed | key tokens | key: rope / PI+ft (gap) | all: rope / PI+ft (gap) | key gap - all gap |')
    print('|---:|---:|---|---|---:|')
    for p in paths:
        seed = re.search(r'_s(\d+)\.csv$', p).group(1)
        rows = list(csv.DictReader(open(p)))
        ft = p[:-4] + '_ft-pi4.csv'
        if os.path.exists(ft):
            rows += list(csv.DictReader(open(ft)))
        kr, n = figure(rows, 'key', 'none')
        ar, _ = figure(rows, 'all', 'none')
        kf, _ = figure(rows, 'key', 'pi:4+ft')
        af, _ = figure(rows, 'all', 'pi:4+ft')
        diff = (kr - kf) - (ar - af)
        diffs.append(diff)
        print(f'| {seed} | {n} | {kr:.3f} / {kf:.3f} ({kr - kf:+.3f}) | {ar:.3f} / {af:.3f} ({ar - af:+.3f}) | {diff:+.3f} |')
    if len(diffs) > 1:
        m, sd = statistics.mean(diffs), statistics.stdev(diffs)
        print(f'\nmean {m:+.3f}, sd {sd:.3f}, {len(diffs)} seeds (se {sd / len(diffs) ** 0.5:.3f})')


main()
