#!/usr/bin/env bash
# sweep_parallel.sh (make check-parallel): a compare's and a suite's --jobs file run through GNU
# parallel, then --collect, give the very verdicts of the same sweep run in one process
# (verdicts.csv, claims.csv and every run's CSV byte for byte). The working directory and the output
# directories have hostile names (spaces, quotes, $(...), backticks, parallel's {}); none of it may
# reach a shell as code. The compare sweep is interrupted (Ctrl-C to parallel) once a run has a
# checkpoint; `parallel --resume-failed` reruns the killed jobs, which resume from their checkpoints.
# Usage: bash tests/sweep_parallel.sh ./pelab
set -euo pipefail
if ! command -v parallel >/dev/null 2>&1; then
    echo "sweep parallel: SKIP: GNU parallel is not installed (apt-get install parallel)"
    exit 0
fi
PELAB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d /tmp/pelab-sweep-XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() {
    echo "sweep parallel: FAIL: $*" >&2
    exit 1
}
# shellcheck source=tests/sweep_common.sh
. "$(dirname "$0")/sweep_common.sh"
export PELAB_NO_GNUPLOT=1 OMP_NUM_THREADS=1
work="$tmp/work $hostile"
mkdir -p "$work"
cd "$work"
t0=$(date +%s)

# --- compare
"$PELAB" compare "${M[@]}" --out ref >"$tmp/ref.log" 2>&1 || fail "in-process compare: $(tail -n 5 "$tmp/ref.log")"
out="out $hostile"
"$PELAB" compare "${M[@]}" --out "$out" --jobs "$out.jobs" >"$tmp/jobs.log" 2>&1 ||
    fail "compare --jobs: $(cat "$tmp/jobs.log")"
[ "$(wc -l <"$out.jobs")" -eq 4 ] || fail "compare --jobs: expected 4 commands: $(cat "$out.jobs")"

# Ctrl-C to parallel once a run has written a checkpoint: its jobs are stopped (TERM, then KILL)
parallel -j2 --line-buffer --joblog "$tmp/joblog" <"$out.jobs" >"$tmp/par1.log" 2>&1 &
par=$!
for _ in $(seq 1 3000); do
    compgen -G "$out/runs/*.safetensors" >/dev/null && break
    kill -0 "$par" 2>/dev/null || break
    sleep 0.02
done
compgen -G "$out/runs/*.safetensors" >/dev/null || fail "no checkpoint appeared: $(cat "$tmp/par1.log")"
kill -INT "$par"
if wait "$par"; then fail "parallel was interrupted but every job succeeded: $(cat "$tmp/par1.log")"; fi
grep -q 'stopped at step' "$tmp/par1.log" || echo "sweep parallel: note: the interrupted jobs' output has no 'stopped at step' line"
parallel -j2 --joblog "$tmp/joblog" --resume-failed <"$out.jobs" >"$tmp/par2.log" 2>&1 ||
    fail "parallel --resume-failed: $(cat "$tmp/par2.log")"
resumed=$(resumed_at "$tmp/par2.log")
echo "sweep parallel: compare: interrupted, rerun by parallel --resume-failed, a run resumed at step $resumed of 300"

n=$(same_compare "$out")
"$PELAB" compare "${M[@]}" --out "$out" --jobs "$out.jobs" >"$tmp/jobs2.log" 2>&1 || fail "--jobs: $(cat "$tmp/jobs2.log")"
[ ! -s "$out.jobs" ] || fail "--jobs after the sweep: not empty: $(cat "$out.jobs")"
echo "sweep parallel: compare: verdicts.csv and $((n - 1)) CSVs of runs and loss curves equal the in-process sweep's"

# --- suite: jobs look by look until the file is empty
"$PELAB" suite "${S[@]}" --dir sref >"$tmp/sref.log" 2>&1 || fail "in-process suite: $(tail -n 5 "$tmp/sref.log")"
sdir="suite $hostile"
looks=0
while "$PELAB" suite "${S[@]}" --dir "$sdir" --jobs "$sdir.jobs" >"$tmp/sjobs.log" 2>&1 && [ -s "$sdir.jobs" ]; do
    looks=$((looks + 1))
    [ $looks -le 2 ] || fail "suite --jobs: a third look's commands: $(cat "$sdir.jobs")"
    parallel -j2 <"$sdir.jobs" >"$tmp/spar.log" 2>&1 || fail "parallel, suite look $looks: $(tail -n 20 "$tmp/spar.log")"
done
grep -q "every look's runs are finished" "$tmp/sjobs.log" || fail "suite --jobs: $(tail -n 3 "$tmp/sjobs.log")"
[ $looks -eq 2 ] || fail "suite --jobs: $looks looks ran, expected 2"
same_suite "$sdir"
echo "sweep parallel: suite: 2 looks through parallel; claims.csv and both verdicts.csv equal the in-process suite's"

no_injection
echo "sweep parallel: ok ($(($(date +%s) - t0)) s)"
