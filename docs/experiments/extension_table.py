#!/usr/bin/env python3
"""extension_table.py CSV... : mean (and std over the files, when there are several) of the loss
by rule, length and protocol from `pelab eval --csv` files, as Markdown tables (section 12)."""
import csv
import statistics
import sys
from collections import defaultdict

cells = defaultdict(list)  # (protocol, rule, length) -> [nll per file]
rules, lengths = [], []
for path in sys.argv[1:]:
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["kind"] != "length" or row["status"] != "ok":
                continue
            rule, length = row["rule"], int(row["length"])
            if rule not in rules:
                rules.append(rule)
            if length not in lengths:
                lengths.append(length)
            cells[(row["protocol"], rule, length)].append(float(row["nll"]))
lengths.sort()
for protocol in ("nonoverlap", "sliding"):
    print(f"\n{protocol}:\n")
    print("| rule | " + " | ".join(str(n) for n in lengths) + " |")
    print("|---|" + "---:|" * len(lengths))
    best = {n: min(statistics.mean(cells[(protocol, r, n)]) for r in rules if cells[(protocol, r, n)]) for n in lengths}
    for r in rules:
        out = []
        for n in lengths:
            v = cells[(protocol, r, n)]
            if not v:
                out.append("")
                continue
            m = statistics.mean(v)
            s = f"{m:.3f}" + (f" ± {statistics.stdev(v):.3f}" if len(v) > 1 else "")
            out.append(f"**{s}**" if m == best[n] else s)
        print(f"| {r} | " + " | ".join(out) + " |")
