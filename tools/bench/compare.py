#!/usr/bin/env python3
"""compare.py: `pelab bench` against the PyTorch reference, in one invocation.

    python3 tools/bench/compare.py [--pelab ./pelab] [--configs S,M] [--precision fp32,bf16] [--json OUT] ...

Runs `PELAB bench --json` and then tools/bench/bench_torch.py (one after the other: they would
fight for the cores) on the same configurations, workloads, precisions and long training lengths,
and prints, per workload and precision, both medians (min-max), the ratio pelab/PyTorch of the
medians, PyTorch's best thread setting and both peak RSS; then the training split, both peak RSS
of the long training rows (where PyTorch's naive attention keeps L x L matrices), the parameter
counts (they must be equal) and the speed targets (training against PyTorch per precision; sampling and
long evaluation, fp32). pelab's bf16 is compared with
PyTorch's CPU autocast bf16, fp32 with fp32. This script needs no torch itself: it looks for a
Python that has it ($PYTHON, else this interpreter, python3, /usr/bin/python3) and, if none has,
prints why it skips and exits 0, so CI can run it unconditionally. --pelab-json / --torch-json
reuse earlier runs' JSON instead of running a side again.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from configs import CONFIGS, add_workload_args  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# (config, workload, len or None, precision, what, test(pelab row, torch row) -> (value text, met)); len None:
# the configuration's own row (train: T at its batch, not the long rows)
TARGETS = [
    # training: bf16 against PyTorch's CPU autocast, fp32 against fp32 (2026-12-01)
    ("M", "train", None, "bf16", "train M bf16 >= 1.3x PyTorch bf16", lambda p, t: at_least(p, t, 1.3)),
    ("S", "train", None, "bf16", "train S bf16 >= 1.3x PyTorch bf16", lambda p, t: at_least(p, t, 1.3)),
    ("M", "train", None, "fp32", "train M fp32 >= 1.5x PyTorch fp32", lambda p, t: at_least(p, t, 1.5)),
    ("S", "train", None, "fp32", "train S fp32 >= 1.5x PyTorch fp32", lambda p, t: at_least(p, t, 1.5)),
    # XS: the tiny regime the lab's experiments run in
    ("XS", "train", None, "fp32", "train XS fp32 >= 3x PyTorch fp32", lambda p, t: at_least(p, t, 3.0)),
    # sampling and long evaluation, measured in fp32 as when first set (2026-11-29)
    ("M", "sample", None, "fp32", "sample M >= 2,000 tokens/s",
     lambda p, t: ("%.0f" % p["tokens_per_s"]["median"], p["tokens_per_s"]["median"] >= 2000)),
    ("S", "sample", None, "fp32", "sample S >= 5,000 tokens/s",
     lambda p, t: ("%.0f" % p["tokens_per_s"]["median"], p["tokens_per_s"]["median"] >= 5000)),
    ("S", "eval", 8192, "fp32", "eval S at 8192 >= 3x PyTorch", lambda p, t: at_least(p, t, 3.0)),
    ("S", "eval", 8192, "fp32", "eval S at 8192 peak RSS < 500 MB",
     lambda p, t: ("%.1f MB" % p["peak_rss_mb"], p["peak_rss_mb"] < 500)),
    ("M", "train", None, "fp32", "train M peak RSS < 500 MB",
     lambda p, t: ("%.1f MB" % p["peak_rss_mb"], p["peak_rss_mb"] < 500)),
]


def at_least(p, t, x):
    """(the ratio pelab/PyTorch, whether it reaches x); not measured without a PyTorch figure"""
    if not t or "skipped" in t:
        return "no PyTorch figure", None
    return "x%.2f" % ratio(p, t), ratio(p, t) >= x


def ratio(p, t):
    return p["tokens_per_s"]["median"] / t["tokens_per_s"]["median"]


def find_torch_python():
    """(a Python that imports torch or None, the interpreters tried)"""
    if os.environ.get("PYTHON"):
        candidates = [os.environ["PYTHON"]]
    else:
        candidates = [sys.executable, shutil.which("python3"), "/usr/bin/python3"]
    tried = []
    for c in candidates:
        if not c or c in tried:
            continue
        tried.append(c)
        try:
            r = subprocess.run([c, "-c", "import torch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            continue
        if r.returncode == 0:
            return c, tried
    return None, tried


def common_flags(args):
    flags = []
    for name in ("configs", "workloads", "repeats", "steps", "sample_tokens", "eval_mult", "eval_extra",
                 "eval_tokens", "precision", "train_lens"):
        flags += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    return flags


def run_side(what, cmd, json_path):
    print("compare: running %s: %s" % (what, " ".join(cmd)), flush=True)
    r = subprocess.run(cmd)
    if r.returncode != 0:
        sys.exit("compare: %s failed with status %d" % (what, r.returncode))
    with open(json_path) as f:
        return json.load(f)


def key(row):
    """rows match on configuration, workload, length and precision (JSON from before precisions: fp32);
    a batched sampling row (pelab's --sample-batch) is its own workload: the reference has none"""
    workload = row["workload"]
    if workload == "sample" and row.get("batch", 1) > 1:
        workload = "sample B%d" % row["batch"]
    return row["config"], workload, row["len"], row.get("precision", "fp32")


def is_long_train(row):
    """a training row at a --train-lens length (batch 1), not the configuration's own"""
    return row["workload"] == "train" and row["len"] != CONFIGS[row["config"]]["seq_len"]


def label(row):
    """"S train fp32", "M train T4096 bf16", "S eval 8192 fp32", as pelab bench prints them"""
    if row["workload"] == "eval":
        what = "eval %d" % row["len"]
    elif is_long_train(row):
        what = "train T%d" % row["len"]
    elif row["workload"] == "sample" and row.get("batch", 1) > 1:
        what = "sample B%d" % row["batch"]
    else:
        what = row["workload"]
    return "%s %s %s" % (row["config"], what, row.get("precision", "fp32"))


def measured(row):
    """the row, if it has figures (not a skipped length, a run out of memory, absent)"""
    return row if row and "skipped" not in row else None


def stat_text(s):
    return "%.0f (%.0f-%.0f)" % (s["median"], s["min"], s["max"])


def print_header(pelab, torch):
    print()
    print("pelab: %d thread%s, sgemm peak %.1f GFLOP/s" % (pelab["threads"], "" if pelab["threads"] == 1 else "s",
                                                          pelab["sgemm_gflops"]["max"]), end="")
    if torch:
        print("; PyTorch %s: attention %s, sgemm peak %.1f GFLOP/s (torch.mm)"
              % (torch["torch_version"], torch["attention"], torch["sgemm_gflops"]["max"]), end="")
    print()
    if torch and torch.get("bf16_skipped"):
        print("PyTorch bf16 skipped: %s" % torch["bf16_skipped"])


ROW = "%-22s %24s %24s %9s %11s %9s %9s"


def print_tables(pelab, torch):
    trows = {key(r): r for r in torch["results"]} if torch else {}
    print_header(pelab, torch)
    head = ROW % ("workload", "pelab tokens/s", "PyTorch tokens/s", "torch thr", "pelab/torch", "pelab RSS",
                  "torch RSS")
    print(head)
    print("-" * len(head))
    merged = []
    for p in pelab["results"]:
        if "skipped" in p:
            print("%-22s %24s" % (label(p), "n/a: " + p["skipped"]))
            continue
        t_any = trows.get(key(p))
        t = measured(t_any)
        r = ratio(p, t) if t else None
        merged.append({"config": p["config"], "workload": p["workload"], "precision": p.get("precision", "fp32"),
                       "len": p["len"], "batch": p.get("batch"),
                       "pelab_tokens_per_s": p["tokens_per_s"], "torch_tokens_per_s": t and t["tokens_per_s"],
                       "torch_threads": t and t["threads"], "ratio": r, "pelab_peak_rss_mb": p["peak_rss_mb"],
                       "torch_peak_rss_mb": t and t["peak_rss_mb"], "torch_skipped": t_any and t_any.get("skipped")})
        print(ROW % (label(p), stat_text(p["tokens_per_s"]), stat_text(t["tokens_per_s"]) if t else
                     ("n/a" if t_any else "-"), t["threads"] if t else "-", "x%.2f" % r if r else "-",
                     "%.1f MB" % p["peak_rss_mb"], "%.1f MB" % t["peak_rss_mb"] if t else "-"))
        if t_any and not t:
            print("%-22s PyTorch n/a: %s" % ("", t_any["skipped"]))
    print()
    for p in pelab["results"]:
        if p["workload"] != "train" or "skipped" in p:
            continue
        t = measured(trows.get(key(p)))
        split = lambda r: "%.1f / %.1f / %.1f" % (r["fwd_ms"]["median"], r["bwd_ms"]["median"], r["opt_ms"]["median"])
        print("%s fwd / bwd / opt ms per step: pelab %s, PyTorch %s; GFLOP/s pelab %.1f (%.0f%% of its sgemm peak)"
              "%s" % (label(p), split(p), split(t) if t else "-", p["gflops"], 100 * p["peak_fraction"],
                      ", PyTorch %.1f (%.0f%%)" % (t["gflops"], 100 * t["peak_fraction"]) if t else ""))
    print_long_rss(pelab, trows)
    return merged


def print_long_rss(pelab, trows):
    """the long training rows' peak memory side by side: what they are there for (PyTorch's naive
    attention keeps every layer's L x L softmax for the backward)"""
    rows = [p for p in pelab["results"] if is_long_train(p)]
    if not rows:
        return
    print("\nlong training, batch 1, peak RSS (PyTorch: naive attention, L x L per head and layer):")
    for p in rows:
        t_any = trows.get(key(p))
        t = measured(t_any)
        pel = "n/a" if "skipped" in p else "%.1f MB" % p["peak_rss_mb"]
        tor = "%.1f MB" % t["peak_rss_mb"] if t else ("n/a (%s)" % t_any["skipped"] if t_any else "-")
        times = "  PyTorch/pelab x%.1f" % (t["peak_rss_mb"] / p["peak_rss_mb"]) if t and "skipped" not in p else ""
        print("  %-22s pelab %12s   PyTorch %12s%s" % (label(p), pel, tor, times))


def check_params(pelab, torch):
    """the two models must have the same parameter count in every configuration"""
    ok = True
    seen = {}
    for p in pelab["results"]:
        if "skipped" not in p:
            seen.setdefault(p["config"], [p["params"], None])
    for t in torch["results"] if torch else []:
        if t["config"] in seen and "skipped" not in t:
            seen[t["config"]][1] = t["params"]
    for c, (np_, nt) in sorted(seen.items()):
        same = nt is None or np_ == nt
        ok &= same
        print("parameters %s: pelab %d, PyTorch %s%s" % (c, np_, nt if nt is not None else "-",
                                                         "" if same else "  MISMATCH"))
    return ok


def target_row(rows, config, workload, length, precision):
    """the key of the row a target is about: len None is the configuration's own row (for train, T at
    its batch: the long rows have targets of their own to come, not these)"""
    if length is None and workload == "train":
        length = CONFIGS[config]["seq_len"]
    match = [k for k in rows if k[0] == config and k[1] == workload and k[3] == precision and
             (length is None or k[2] == length)]
    return match[0] if match else None


def print_targets(pelab, torch):
    prow = {key(r): r for r in pelab["results"] if "skipped" not in r}
    trow = {key(r): r for r in torch["results"]} if torch else {}
    print("\ntargets (training against PyTorch per precision; sampling and evaluation in fp32):")
    for config, workload, length, precision, what, test in TARGETS:
        k = target_row(prow, config, workload, length, precision)
        if not k:
            print("  %-34s not measured" % what)
            continue
        value, met = test(prow[k], trow.get(k))
        print("  %-34s %-18s %s" % (what, value, {True: "met", False: "NOT MET", None: "not measured"}[met]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pelab", default="./pelab", help="the pelab binary")
    ap.add_argument("--pelab-threads", type=int, default=0, help="pelab bench --threads (0: all cores)")
    add_workload_args(ap)
    ap.add_argument("--threads", default="1,2", help="PyTorch thread settings to try (bench_torch.py --threads)")
    ap.add_argument("--attention", default="naive", choices=("naive", "sdpa"), help="PyTorch attention")
    ap.add_argument("--pelab-json", help="use this `pelab bench --json` output instead of running pelab")
    ap.add_argument("--torch-json", help="use this bench_torch.py --json output instead of running PyTorch")
    ap.add_argument("--json", help="write both runs and the ratios here")
    args = ap.parse_args()

    python = None
    if not args.torch_json:
        python, tried = find_torch_python()
        if not python:
            print("compare: skipped: no Python with PyTorch (`import torch` failed in %s); install python3-torch "
                  "(apt) or set PYTHON=/path/to/python to compare pelab with the reference" % ", ".join(tried))
            return 0
    if not args.pelab_json and not os.access(args.pelab, os.X_OK):
        sys.exit("compare: %s: no such executable (build it with make, or pass --pelab BIN)" % args.pelab)

    with tempfile.TemporaryDirectory(prefix="pelab-compare-") as tmp:
        if args.pelab_json:
            with open(args.pelab_json) as f:
                pelab = json.load(f)
        else:
            path = os.path.join(tmp, "pelab.json")
            cmd = [args.pelab, "bench", "--json", path, "--threads", str(args.pelab_threads)] + common_flags(args)
            pelab = run_side("pelab", cmd, path)
        if args.torch_json:
            with open(args.torch_json) as f:
                torch = json.load(f)
        else:
            path = os.path.join(tmp, "torch.json")
            cmd = [python, os.path.join(HERE, "bench_torch.py"), "--json", path, "--threads", args.threads,
                   "--attention", args.attention] + common_flags(args)
            torch = run_side("PyTorch", cmd, path)

    if not pelab.get("pos", "rope").startswith("rope"):
        print("compare: warning: pelab ran --pos %s; the PyTorch reference is rope" % pelab["pos"])
    merged = print_tables(pelab, torch)
    params_ok = check_params(pelab, torch)
    print_targets(pelab, torch)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pelab": pelab, "torch": torch, "rows": merged}, f, indent=1)
            f.write("\n")
    if not params_ok:
        print("compare: the PyTorch reference and pelab differ in parameter count", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
