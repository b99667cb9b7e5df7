#!/usr/bin/env python3
"""suite_times.py DIR/times/times.log: what a suite's runs cost, from suite_lanes.sh's GNU time lines
(rc wall_s user_s sys_s peak_kB protocol run). A table a protocol and series: runs, user CPU (sum,
median and range a run), wall, peak RSS; then the totals and the machines named in the log's
headers. A run that did not exit 0 is counted apart (a stop kills the lanes; its rerun is a new line)."""
import statistics
import sys
from collections import defaultdict


def series_of(run):
    # runs are named SCHEME_sSEED (the scheme may hold '_'): the series is what comes before the seed
    head, sep, seed = run.rpartition("_s")
    return head if sep and seed.isdigit() else run


def main(path):
    rows = defaultdict(list)
    failed = defaultdict(int)
    machines, starts = set(), []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("# "):
                starts.append(line[2:])
                continue
            fields = line.split(" ")
            if len(fields) != 7 or not fields[0].lstrip("-").isdigit():
                machines.add(line)  # the header's CPU line
                continue
            rc, wall, user, sys_s, peak_kb, protocol, run = fields
            key = (protocol, series_of(run))
            if rc != "0":
                failed[key] += 1
                continue
            rows[key].append((float(wall), float(user) + float(sys_s), int(peak_kb)))
    print("| protocol | series | runs | CPU s (sum) | CPU s a run: median [min, max] | wall s (sum) | peak RSS MB |")
    print("|---|---|---:|---:|---|---:|---:|")
    total_cpu = total_wall = 0.0
    total_runs = 0
    peak = 0
    for (protocol, series), runs in sorted(rows.items()):
        cpu = [r[1] for r in runs]
        wall = sum(r[0] for r in runs)
        top = max(r[2] for r in runs) / 1024
        note = f" ({failed[(protocol, series)]} stopped)" if failed.get((protocol, series)) else ""
        print(f"| {protocol} | {series} | {len(runs)}{note} | {sum(cpu):,.0f} | "
              f"{statistics.median(cpu):,.0f} [{min(cpu):,.0f}, {max(cpu):,.0f}] | {wall:,.0f} | {top:.0f} |")
        total_cpu += sum(cpu)
        total_wall += wall
        total_runs += len(runs)
        peak = max(peak, top)
    print(f"\n{total_runs} runs, {total_cpu:,.0f} s of CPU ({total_cpu / 3600:.2f} h), "
          f"{total_wall:,.0f} s of run wall time (lanes side by side overlap), peak RSS {peak:.0f} MB; "
          f"{sum(failed.values())} runs stopped before the end and rerun")
    if starts:
        print(f"lanes started {len(starts)} times, {starts[0]} to {starts[-1]}; machines: {', '.join(sorted(machines))}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: suite_times.py DIR/times/times.log")
    main(sys.argv[1])
