#!/usr/bin/env python3
"""claims_diff.py OLD.csv NEW.csv: the claims of two suite runs side by side (pelab suite's
claims.csv), as a markdown table: outcome, seeds and effect with its 95% interval in each, and
whether the verdict changed. Claims in one file only are listed too. The reason for each change
is for the reader to write (docs/CLAIMS.md): this only lines the figures up.

    python3 docs/experiments/claims_diff.py docs/experiments/suite_full_v7/claims.csv \
        docs/experiments/suite_full_v8/claims.csv
"""
import csv
import sys


def read(path):
    with open(path, newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


def figure(row):
    if row is None:
        return "—", "—", "—"
    eff = row.get("effect", "")
    if eff:
        eff = "%+.3g [%.3g, %.3g]" % (float(eff), float(row["ci_lo"]), float(row["ci_hi"]))
    return row["outcome"], row.get("seeds", ""), eff or "—"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old, new = read(sys.argv[1]), read(sys.argv[2])
    ids = list(old) + [i for i in new if i not in old]
    print("| claim | old | seeds | effect [95%] | new | seeds | effect [95%] | changed |")
    print("|---|---|---|---|---|---|---|---|")
    changed = 0
    for i in ids:
        o, n = figure(old.get(i)), figure(new.get(i))
        moved = o[0] != n[0]
        changed += moved
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (i, *o, *n, "**yes**" if moved else ""))
    print("\n%d of %d claims changed verdict." % (changed, len(ids)))


if __name__ == "__main__":
    main()
