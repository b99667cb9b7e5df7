#!/usr/bin/env python3
"""bench_torch.py: the PyTorch side of `pelab bench`: the same workloads on the same
configurations with the reference model (model_ref.py), the same statistics, the same JSON.

    python3 tools/bench/bench_torch.py [--configs S,M] [--precision fp32,bf16] [--threads 1,2] [--json FILE] ...

Workloads (as tools/bench.c):
  train   fwd + bwd + gradient clipping + AdamW on [batch, T] of random tokens, `--steps` steps
          per repetition; forward / backward / optimizer split per step. For M also one row per
          `--train-lens` length L at batch 1 (one step per repetition, at most 3 repetitions): the
          naive attention keeps every layer's [heads, L, L] softmax for the backward, so these rows
          show what quadratic attention memory costs next to pelab's
  sample  batch 1, greedy, KV cache, `--sample-tokens` new tokens after a 1-token prompt
  eval    forward only, batch 1, non-overlapping windows of L tokens (L = `--eval-mult` x T, plus
          `--eval-extra` for S), log-softmax of every row, at least `--eval-tokens` predictions
          per repetition

Every (workload, thread setting) runs in a fresh worker process (this script with --worker), so
its peak RSS is its own (VmHWM, torch and the interpreter included) and thread settings cannot
leak into each other. Each workload
runs at every setting of `--threads` (torch.set_num_threads; "T:B" also sets
OPENBLAS_NUM_THREADS=B for the BLAS torch calls) and the best median is reported, with the
setting. One untimed repetition precedes the timed ones; the median, min and max of the timed
ones are reported, as pelab does.

Every workload runs at each `--precision`: fp32, and bf16 as a PyTorch user gets it, CPU autocast
(`torch.autocast("cpu", dtype=torch.bfloat16)`) around the forward and the loss, fp32 master
weights and an unchanged optimizer. Where autocast bf16 does not work (torch < 1.10, a build that
refuses it) the bf16 rows are skipped with the reason, as pelab skips its own.
"""
import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)

from configs import CONFIGS, add_workload_args  # noqa: E402  (torch-free: this driver stays small, its workers import torch)


# environment variables that change thread behaviour: recorded with the figures, as pelab does
THREAD_ENV = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_PROC_BIND", "OMP_PLACES",
              "OPENBLAS_NUM_THREADS")


def stats(values):
    v = sorted(values)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    return {"median": median, "min": v[0], "max": v[-1]}


def forward_flops_per_token(cfg, length):
    """as tools/bench.c: 2 per matrix weight (norm gains excluded) + causal attention, averaged"""
    D, L, F, V = cfg["dim"], cfg["n_layers"], cfg["hidden_dim"], cfg["vocab_size"]
    matmul_params = V * D + L * (4 * D * D + 3 * D * F)
    return 2.0 * matmul_params + 2.0 * L * D * (length + 1.0)


def proc_field_mb(path, field):
    """a "Field:   N kB" line of a /proc file, in MB, or None where the file or the field is missing"""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def rss_mb():
    """peak RSS of this process so far: VmHWM of its own address space (ru_maxrss would include the
    launching process's peak, which Linux carries across exec), else ru_maxrss"""
    hwm = proc_field_mb("/proc/self/status", "VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---- workers: one workload at one thread setting, in a process of its own ----

def autocast(torch, precision):
    """the context a PyTorch user wraps the forward in: CPU autocast for bf16 (weights stay fp32,
    products run in bf16), nothing for fp32"""
    if precision == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def bf16_unavailable(torch):
    """why autocast bf16 cannot run with this torch, or None: CPU autocast came with torch 1.10, and
    a build may refuse bf16 or leave the products in fp32 (then bf16 rows would time fp32)"""
    if not hasattr(torch, "autocast"):
        return "torch %s has no torch.autocast (CPU autocast needs torch >= 1.10)" % torch.__version__
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.nn.functional.linear(torch.ones(4, 8), torch.ones(16, 8))
    except (RuntimeError, TypeError, ValueError) as e:
        return "torch.autocast('cpu', dtype=torch.bfloat16) failed: %s" % (str(e).splitlines() or ["?"])[0]
    if y.dtype != torch.bfloat16:
        return "torch.autocast('cpu', dtype=torch.bfloat16) left linear in %s" % y.dtype
    return None


def work_sgemm(torch, spec):
    n = 1024
    a, b = torch.rand(n, n), torch.rand(n, n)
    g = []
    for _ in range(5):
        t0 = time.perf_counter()
        torch.mm(a, b)
        g.append(2.0 * n ** 3 / (time.perf_counter() - t0) / 1e9)
    return {"rate": stats(g), "bf16_unavailable": bf16_unavailable(torch)}


def work_train(torch, spec, model, cfg):
    from model_ref import make_optimizer
    gen = torch.Generator().manual_seed(5)
    B, T, V = spec["batch"], spec["len"], cfg["vocab_size"]  # the config's, or a long row's batch 1
    x = torch.randint(0, V, (B, T), generator=gen)
    y = torch.randint(0, V, (B, T), generator=gen)
    opt = make_optimizer(model, foreach=spec.get("foreach"))
    model.train()
    steps = spec["steps"]
    tps, fwd, bwd, upd = [], [], [], []
    for k in range(-1, spec["repeats"]):
        tf = tb = to = 0.0
        for _ in range(steps):
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            with autocast(torch, spec["precision"]):
                loss = model(x, y)
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            t3 = time.perf_counter()
            tf, tb, to = tf + t1 - t0, tb + t2 - t1, to + t3 - t2
        if k < 0:
            continue
        tps.append(steps * B * T / (tf + tb + to))
        fwd.append(tf / steps * 1e3)
        bwd.append(tb / steps * 1e3)
        upd.append(to / steps * 1e3)
    return {"rate": stats(tps), "fwd_ms": stats(fwd), "bwd_ms": stats(bwd), "opt_ms": stats(upd),
            "tokens": steps * B * T, "flops_per_token": 3.0 * forward_flops_per_token(cfg, T)}


def work_sample(torch, spec, model, cfg):
    from model_ref import KVCache
    n_tok = spec["len"]
    model.eval()
    cache = KVCache(cfg, n_tok)
    tps = []
    with torch.inference_mode():
        for k in range(-1, spec["repeats"]):
            cache.len = 0
            tok = torch.tensor([[1]])
            t0 = time.perf_counter()
            for _ in range(n_tok):
                with autocast(torch, spec["precision"]):
                    logits = model(tok, cache=cache)
                tok = logits[:, -1].argmax(-1, keepdim=True)
            if k >= 0:
                tps.append(n_tok / (time.perf_counter() - t0))
    return {"rate": stats(tps), "tokens": n_tok, "flops_per_token": forward_flops_per_token(cfg, n_tok)}


def work_eval(torch, spec, model, cfg):
    length = spec["len"]
    windows = max(1, -(-spec["eval_tokens"] // length))
    gen = torch.Generator().manual_seed(7)
    tokens = torch.randint(0, cfg["vocab_size"], (windows * length + 1,), generator=gen)
    model.eval()
    tps = []
    with torch.inference_mode():
        for k in range(-1, spec["repeats"]):
            nll = 0.0
            t0 = time.perf_counter()
            for w in range(windows):
                s = w * length
                inp, tgt = tokens[s:s + length][None], tokens[s + 1:s + length + 1]
                with autocast(torch, spec["precision"]):
                    logits = model(inp)[0]
                logp = torch.log_softmax(logits.float(), dim=-1)  # in fp32, as pelab scores
                nll -= logp.gather(1, tgt[:, None]).sum().item()
            if k >= 0:
                tps.append(windows * length / (time.perf_counter() - t0))
    return {"rate": stats(tps), "tokens": windows * length, "windows": windows,
            "flops_per_token": forward_flops_per_token(cfg, length)}


def worker(spec):
    import torch
    from model_ref import Transformer
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(1)
    if spec["workload"] == "sgemm":
        out = work_sgemm(torch, spec)
    else:
        cfg = CONFIGS[spec["config"]]
        model = Transformer(cfg, attention=spec["attention"])
        out = {"params": model.n_params(), "baseline_rss_mb": rss_mb()}
        run = {"train": work_train, "sample": work_sample, "eval": work_eval}[spec["workload"]]
        out.update(run(torch, spec, model, cfg))
    out["torch_version"] = torch.__version__
    out["peak_rss_mb"] = rss_mb()
    print(json.dumps(out))
    return 0


class WorkerFailed(Exception):
    """a worker exited with an error or was killed: fatal, except for a long training row, where
    running out of memory is a result"""


def run_worker(spec, setting):
    """runs one worker; (its result, its peak RSS in MB)"""
    env = dict(os.environ)
    if setting["blas"]:
        env["OPENBLAS_NUM_THREADS"] = str(setting["blas"])
    spec = dict(spec, threads=setting["torch"])
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
    out = p.stdout.read()
    p.stdout.close()
    _, status, _ = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        how = ("killed by signal %d%s" % (-p.returncode, " (out of memory?)" if p.returncode == -9 else "")
               if p.returncode < 0 else "failed with status %d" % p.returncode)
        raise WorkerFailed("worker %s at threads %s %s" % (json.dumps(spec), setting_name(setting), how))
    res = json.loads(out.decode().strip().splitlines()[-1])
    return res, res["peak_rss_mb"]


# ---- the driver ----

def parse_settings(text):
    """"1,2,1:2" -> [{"torch": 1, "blas": None}, ...]"""
    out = []
    for item in text.split(","):
        t, _, b = item.partition(":")
        try:
            s = {"torch": int(t), "blas": int(b) if b else None}
        except ValueError:
            sys.exit("bench_torch: --threads %s: expected T or T:B items (torch, OpenBLAS threads)" % text)
        if s["torch"] < 1 or (s["blas"] is not None and s["blas"] < 1):
            sys.exit("bench_torch: --threads %s: thread counts must be >= 1" % text)
        out.append(s)
    return out


def setting_name(s):
    return str(s["torch"]) if s["blas"] is None else "%d:%d" % (s["torch"], s["blas"])


def parse_list(flag, text, conv):
    if text == "none":
        return []
    try:
        vals = [conv(x) for x in text.split(",")]
    except ValueError:
        vals = []
    if not vals or any(v <= 0 for v in vals):
        sys.exit("bench_torch: %s %s: expected a comma-separated list of positive numbers, or none" % (flag, text))
    return vals


def parse_precisions(text):
    """"fp32,bf16" -> ["fp32", "bf16"], in pelab bench's order whatever the order given"""
    given = text.split(",")
    for x in given:
        if x not in ("fp32", "bf16"):
            sys.exit("bench_torch: --precision %s: unknown '%s' (fp32, bf16)" % (text, x))
    return [x for x in ("fp32", "bf16") if x in given]


def plan(args):
    """the workloads, in pelab bench's order: per configuration, per precision, train (then M's long
    training rows), sample, eval"""
    configs = args.configs.split(",")
    workloads = args.workloads.split(",")
    for c in configs:
        if c not in CONFIGS:
            sys.exit("bench_torch: --configs %s: unknown '%s'" % (args.configs, c))
    for w in workloads:
        if w not in ("train", "sample", "eval"):
            sys.exit("bench_torch: --workloads %s: unknown '%s'" % (args.workloads, w))
    mults = parse_list("--eval-mult", args.eval_mult, float)
    extra = parse_list("--eval-extra", args.eval_extra, int)
    train_lens = parse_list("--train-lens", args.train_lens, int)
    base = {"repeats": args.repeats, "steps": args.steps, "eval_tokens": args.eval_tokens,
            "attention": args.attention, "foreach": args.foreach}
    out = []
    for name in CONFIGS:
        if name not in configs:
            continue
        cfg = CONFIGS[name]
        for prec in parse_precisions(args.precision):
            b = dict(base, config=name, precision=prec)
            if "train" in workloads:
                out.append(dict(b, workload="train", len=cfg["seq_len"], batch=cfg["batch"]))
                if name == "M":  # as pelab: one step per repetition, at most 3 (a long step takes seconds)
                    out += [dict(b, workload="train", len=n, batch=1, steps=1, repeats=min(args.repeats, 3))
                            for n in train_lens]
            if "sample" in workloads:
                out.append(dict(b, workload="sample", len=args.sample_tokens, batch=1))
            if "eval" in workloads:
                lengths = [max(2, int(m * cfg["seq_len"] + 0.5)) for m in mults] + (extra if name == "S" else [])
                out += [dict(b, workload="eval", len=n, batch=1) for n in lengths]
    return out


def is_long_train(w):
    return w["workload"] == "train" and w["len"] != CONFIGS[w["config"]]["seq_len"]


def label(w):
    """"eval 512 fp32", "train T1024 bf16", as pelab bench prints them"""
    if w["workload"] == "eval":
        what = "eval %d" % w["len"]
    elif is_long_train(w):
        what = "train T%d" % w["len"]
    else:
        what = w["workload"]
    return "%s %s" % (what, w.get("precision", "fp32"))


def attention_floor_mb(cfg, length):
    """a floor of what a naive-attention training step at batch 1 holds: every layer's softmax
    [heads, L, L] kept for the backward plus about 3 more such matrices live at once (scores, their
    gradients), in fp32; the weights and activations linear in L come on top"""
    return (cfg["n_layers"] + 3) * cfg["n_heads"] * float(length) ** 2 * 4 / 2 ** 20


def mem_available_mb():
    """MemAvailable of /proc/meminfo, or None where there is none"""
    return proc_field_mb("/proc/meminfo", "MemAvailable")


def too_big(w):
    """why a long training row is not run, or None: one that would obviously exhaust the memory is
    skipped rather than left to the OOM killer, which might take another process on a shared machine"""
    if not is_long_train(w):
        return None
    need, avail = attention_floor_mb(CONFIGS[w["config"]], w["len"]), mem_available_mb()
    if avail is not None and need > avail:
        return "naive attention needs at least %.0f MB at length %d, %.0f MB available" % (need, w["len"], avail)
    return None


def skipped_row(spec, why):
    """the row of a workload that did not run, in pelab's form for a skipped length"""
    return {"config": spec["config"], "workload": spec["workload"], "precision": spec["precision"],
            "len": spec["len"], "batch": spec["batch"], "skipped": why}


def best_of(spec, settings, peak):
    """runs the workload at every setting; the row of the best median, with every setting's median.
    A long training row whose workers all fail (out of memory) becomes a skipped row with the reason;
    any other failure ends the run"""
    rows, failed = [], []
    for s in settings:
        try:
            res, rss = run_worker(spec, s)
        except WorkerFailed as e:
            if not is_long_train(spec):
                sys.exit("bench_torch: %s" % e)
            failed.append(str(e))
            continue
        rows.append((res["rate"]["median"], s, res, rss))
    if not rows:
        return skipped_row(spec, failed[0])
    _, s, res, rss = max(rows, key=lambda r: r[0])
    gflops = res["rate"]["median"] * res["flops_per_token"] / 1e9
    row = {"config": spec["config"], "workload": spec["workload"], "precision": spec["precision"],
           "len": spec["len"], "batch": spec["batch"],
           "tokens_per_repeat": res["tokens"], "repeats": spec["repeats"], "params": res["params"],
           "tokens_per_s": res["rate"], "flops_per_token": res["flops_per_token"], "gflops": gflops,
           "peak_fraction": gflops / peak, "threads": setting_name(s),
           "median_by_threads": {setting_name(x): m for m, x, _, _ in rows},
           "peak_rss_mb": round(rss, 1), "baseline_rss_mb": round(res["baseline_rss_mb"], 1)}
    for k in ("fwd_ms", "bwd_ms", "opt_ms"):
        if k in res:
            row[k] = res[k]
    return row


def print_row(row):
    if "skipped" in row:
        print("%s %-16s      n/a (%s)" % (row["config"], label(row), row["skipped"]), flush=True)
        return
    r = row["tokens_per_s"]
    line = "%s %-16s %8.0f tokens/s (min %.0f, max %.0f)" % (row["config"], label(row), r["median"], r["min"],
                                                             r["max"])
    if row["workload"] != "sample":
        line += "  %5.1f GFLOP/s = %3.0f%% of sgemm peak" % (row["gflops"], 100 * row["peak_fraction"])
    if row["workload"] == "train":
        line += "  batch %d  fwd %.1f / bwd %.1f / opt %.1f ms per step" % (
            row["batch"], row["fwd_ms"]["median"], row["bwd_ms"]["median"], row["opt_ms"]["median"])
    others = ", ".join("%s: %.0f" % kv for kv in row["median_by_threads"].items())
    line += "  threads %s (%s)  peak RSS %.1f MB" % (row["threads"], others, row["peak_rss_mb"])
    print(line, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workload_args(ap)
    ap.add_argument("--threads", default="1,2", help="settings to try: T (torch threads) or T:B (+ OpenBLAS)")
    ap.add_argument("--attention", default="naive", choices=("naive", "sdpa"))
    ap.add_argument("--foreach", default=None, choices=(None, "on", "off"), help="AdamW foreach (default: torch's)")
    ap.add_argument("--json", help="also write every figure as JSON to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(json.loads(args.worker))
    if args.repeats < 1 or args.steps < 1 or args.sample_tokens < 1 or args.eval_tokens < 1:
        sys.exit("bench_torch: --repeats, --steps, --sample-tokens and --eval-tokens must be >= 1")
    args.foreach = None if args.foreach is None else args.foreach == "on"
    settings = parse_settings(args.threads)
    works = plan(args)

    try:
        sg = [(run_worker({"workload": "sgemm"}, s)[0], s) for s in settings]
    except WorkerFailed as e:
        sys.exit("bench_torch: %s" % e)
    sgemm, s_best = max(sg, key=lambda x: x[0]["rate"]["max"])
    peak = sgemm["rate"]["max"]
    print("torch %s, attention %s; sgemm 1024^3 (torch.mm): %.1f GFLOP/s (best of 5, threads %s)" %
          (sgemm["torch_version"], args.attention, peak, setting_name(s_best)), flush=True)
    bf16_why = sgemm["bf16_unavailable"] if "bf16" in parse_precisions(args.precision) else None
    if bf16_why:
        print("bf16 skipped: %s" % bf16_why, flush=True)
        works = [w for w in works if w["precision"] != "bf16"]
    elif "bf16" in parse_precisions(args.precision):
        print("bf16: torch.autocast('cpu', dtype=torch.bfloat16) around the forward and the loss; fp32 weights "
              "and AdamW", flush=True)
    rows = []
    for w in works:
        why = too_big(w)
        rows.append(skipped_row(w, why) if why else best_of(w, settings, peak))
        print_row(rows[-1])
    if args.json:
        doc = {"tool": "torch", "torch_version": sgemm["torch_version"], "attention": args.attention,
               "threads_tried": [setting_name(s) for s in settings], "isolated": True,
               "sgemm_gflops": sgemm["rate"], "env": {k: os.environ[k] for k in THREAD_ENV if k in os.environ},
               "results": rows}
        if bf16_why:
            doc["bf16_skipped"] = bf16_why
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
