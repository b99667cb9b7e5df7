#!/usr/bin/env python3
"""bf16_table.py OUTDIR: the tables of docs/EXPERIMENTS.md's bf16 section from bf16_accuracy.sh's
output: validation loss (from the compare logs' "val_loss" lines) and held-out loss by length
(non-overlapping windows), fp32 seed 1 against bf16 seed 1, beside fp32 seed 1 against seed 2
(the seed-to-seed noise the precision difference is read against)."""
import csv
import glob
import os
import re
import sys


def val_losses(log):
    """{(precision, scheme, seed): validation loss} from the compare progress lines"""
    out, precision = {}, None
    pat = re.compile(r"\] (\S+) seed (\d+): train [\d.]+ s \(val_loss ([\d.]+)\)")
    with open(log) as f:
        for line in f:
            if "/fp32/runs/" in line:
                precision = "fp32"
            elif "/bf16/runs/" in line:
                precision = "bf16"
            m = pat.search(line)
            if m and precision:
                out[(precision, m.group(1), int(m.group(2)))] = float(m.group(3))
    return out


def length_losses(root):
    """{(precision, scheme, seed): {length: loss}} of the non-overlapping protocol"""
    out = {}
    for precision in ("fp32", "bf16"):
        for path in glob.glob(os.path.join(root, precision, "runs", "*.csv")):
            with open(path) as f:
                for row in csv.DictReader(f):
                    if row["kind"] == "length" and row["protocol"] == "nonoverlap" and row["status"] == "ok":
                        key = (precision, row["scheme"], int(row["seed"]))
                        out.setdefault(key, {})[int(row["length"])] = float(row["loss"])
    return out


def main():
    root = sys.argv[1]
    val = val_losses(os.path.join(root, "log.txt"))
    by_len = length_losses(root)
    schemes = sorted({k[1] for k in by_len if k[0] == "bf16"}, key=lambda s: list(k[1] for k in by_len).index(s))
    print("| scheme | val fp32 | val bf16 | bf16 vs fp32 | seed 2 vs seed 1 (fp32) | "
          "loss by length: max abs bf16 - fp32 | max abs seed 2 - seed 1 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in schemes:
        f1, b1, f2 = val.get(("fp32", s, 1)), val.get(("bf16", s, 1)), val.get(("fp32", s, 2))
        lf1, lb1, lf2 = by_len.get(("fp32", s, 1), {}), by_len.get(("bf16", s, 1), {}), by_len.get(("fp32", s, 2), {})
        dprec = max((abs(lb1[n] - lf1[n]) for n in lf1 if n in lb1), default=float("nan"))
        dseed = max((abs(lf2[n] - lf1[n]) for n in lf1 if n in lf2), default=float("nan"))
        rel = lambda a, b: "%+.2f%%" % (100 * (a - b) / b) if a and b else "n/a"
        print("| %s | %.4f | %.4f | %s | %s | %.4f | %.4f |" % (s, f1 or float("nan"), b1 or float("nan"), rel(b1, f1),
                                                                rel(f2, f1), dprec, dseed))
    lengths = sorted({n for v in by_len.values() for n in v})
    print("\nheld-out loss by length (nats/byte), fp32 seed 1 / bf16 seed 1:\n")
    print("| scheme | " + " | ".join(str(n) for n in lengths) + " |")
    print("| --- |" + " ---: |" * len(lengths))
    for s in schemes:
        lf1, lb1 = by_len.get(("fp32", s, 1), {}), by_len.get(("bf16", s, 1), {})
        cells = ["%.3f / %.3f" % (lf1[n], lb1[n]) if n in lf1 and n in lb1 else "n/a" for n in lengths]
        print("| %s | %s |" % (s, " | ".join(cells)))


if __name__ == "__main__":
    main()
