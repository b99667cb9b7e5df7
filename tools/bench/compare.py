#!/usr/bin/env python3
"""compare.py: `pelab bench` against the PyTorch reference, in one invocation.

    python3 tools/bench/compare.py [--pelab ./pelab] [--configs S,M] [--repeats 5] [--json OUT] ...

Runs `PELAB bench --json` and then tools/bench/bench_torch.py (one after the other: they would
fight for the cores) on the same configurations and workloads, and prints, per workload, both
medians (min-max), the ratio pelab/PyTorch of the medians, PyTorch's best thread setting and
both peak RSS; then the training split, the parameter counts (they must be equal) and the
targets of issue 6. This script needs no torch itself: it looks for a Python that has it ($PYTHON,
else this interpreter, python3, /usr/bin/python3) and, if none has, prints why it skips and exits
0, so CI can run it unconditionally. --pelab-json / --torch-json reuse earlier runs' JSON instead
of running a side again.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from configs import add_workload_args  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# issue 6: (config, workload, len or None, what, test(pelab row, torch row) -> (value text, met))
TARGETS = [
    ("M", "train", None, "train M >= 3,900 tokens/s",
     lambda p, t: ("%.0f" % p["tokens_per_s"]["median"], p["tokens_per_s"]["median"] >= 3900)),
    ("S", "train", None, "train S >= 18,000 tokens/s",
     lambda p, t: ("%.0f" % p["tokens_per_s"]["median"], p["tokens_per_s"]["median"] >= 18000)),
    ("M", "sample", None, "sample M >= 2,000 tokens/s",
     lambda p, t: ("%.0f" % p["tokens_per_s"]["median"], p["tokens_per_s"]["median"] >= 2000)),
    ("S", "sample", None, "sample S >= 5,000 tokens/s",
     lambda p, t: ("%.0f" % p["tokens_per_s"]["median"], p["tokens_per_s"]["median"] >= 5000)),
    ("S", "eval", 8192, "eval S at 8192 >= 3x PyTorch",
     lambda p, t: ("x%.2f" % ratio(p, t), ratio(p, t) >= 3.0) if t else ("no PyTorch figure", None)),
    ("S", "eval", 8192, "eval S at 8192 peak RSS < 500 MB",
     lambda p, t: ("%.1f MB" % p["peak_rss_mb"], p["peak_rss_mb"] < 500)),
    ("M", "train", None, "train M peak RSS < 500 MB",
     lambda p, t: ("%.1f MB" % p["peak_rss_mb"], p["peak_rss_mb"] < 500)),
]


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
                 "eval_tokens"):
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
    return row["config"], row["workload"], row["len"]


def label(row):
    return "%s %s" % (row["config"], "eval %d" % row["len"] if row["workload"] == "eval" else row["workload"])


def stat_text(s):
    return "%.0f (%.0f-%.0f)" % (s["median"], s["min"], s["max"])


def print_tables(pelab, torch):
    trows = {key(r): r for r in torch["results"]} if torch else {}
    print()
    print("pelab: %d thread%s, sgemm peak %.1f GFLOP/s" % (pelab["threads"], "" if pelab["threads"] == 1 else "s",
                                                          pelab["sgemm_gflops"]["max"]), end="")
    if torch:
        print("; PyTorch %s: attention %s, sgemm peak %.1f GFLOP/s (torch.mm)"
              % (torch["torch_version"], torch["attention"], torch["sgemm_gflops"]["max"]), end="")
    print()
    head = "%-14s %24s %24s %9s %11s %9s %9s" % ("workload", "pelab tokens/s", "PyTorch tokens/s", "torch thr",
                                                  "pelab/torch", "pelab RSS", "torch RSS")
    print(head)
    print("-" * len(head))
    merged = []
    for p in pelab["results"]:
        if "skipped" in p:
            print("%-14s %24s" % (label(p), "n/a: " + p["skipped"]))
            continue
        t = trows.get(key(p))
        r = ratio(p, t) if t else None
        merged.append({"config": p["config"], "workload": p["workload"], "len": p["len"],
                       "pelab_tokens_per_s": p["tokens_per_s"], "torch_tokens_per_s": t and t["tokens_per_s"],
                       "torch_threads": t and t["threads"], "ratio": r, "pelab_peak_rss_mb": p["peak_rss_mb"],
                       "torch_peak_rss_mb": t and t["peak_rss_mb"]})
        print("%-14s %24s %24s %9s %11s %9s %9s" % (
            label(p), stat_text(p["tokens_per_s"]), stat_text(t["tokens_per_s"]) if t else "-",
            t["threads"] if t else "-", "x%.2f" % r if r else "-", "%.1f MB" % p["peak_rss_mb"],
            "%.1f MB" % t["peak_rss_mb"] if t else "-"))
    print()
    for p in pelab["results"]:
        if p["workload"] != "train" or "skipped" in p:
            continue
        t = trows.get(key(p))
        split = lambda r: "%.1f / %.1f / %.1f" % (r["fwd_ms"]["median"], r["bwd_ms"]["median"], r["opt_ms"]["median"])
        print("%s fwd / bwd / opt ms per step: pelab %s, PyTorch %s; GFLOP/s pelab %.1f (%.0f%% of its sgemm peak)"
              "%s" % (label(p), split(p), split(t) if t else "-", p["gflops"], 100 * p["peak_fraction"],
                      ", PyTorch %.1f (%.0f%%)" % (t["gflops"], 100 * t["peak_fraction"]) if t else ""))
    return merged


def check_params(pelab, torch):
    """the two models must have the same parameter count in every configuration"""
    ok = True
    seen = {}
    for p in pelab["results"]:
        if "skipped" not in p:
            seen.setdefault(p["config"], [p["params"], None])
    for t in torch["results"] if torch else []:
        if t["config"] in seen:
            seen[t["config"]][1] = t["params"]
    for c, (np_, nt) in sorted(seen.items()):
        same = nt is None or np_ == nt
        ok &= same
        print("parameters %s: pelab %d, PyTorch %s%s" % (c, np_, nt if nt is not None else "-",
                                                         "" if same else "  MISMATCH"))
    return ok


def print_targets(pelab, torch):
    prow = {key(r): r for r in pelab["results"] if "skipped" not in r}
    trow = {key(r): r for r in torch["results"]} if torch else {}
    print("\ntargets (issue 6):")
    for config, workload, length, what, test in TARGETS:
        match = [k for k in prow if k[0] == config and k[1] == workload and (length is None or k[2] == length)]
        if not match:
            print("  %-34s not measured" % what)
            continue
        value, met = test(prow[match[0]], trow.get(match[0]))
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
