# sweep_common.sh: what tests/sweep_parallel.sh and tests/sweep_slurm.sh share, sourced by both (bash):
# the micro sweeps, the hostile directory name and the checks against the in-process sweep. The
# caller defines fail() (its message on stderr: it may run inside $(...)) and sets PELAB and tmp.
# shellcheck shell=bash disable=SC2016,SC2054,SC2034,SC2154  # the name quoted on purpose; commas inside flag values

# spaces, both quotes, $(...), backticks, parallel's {} and Slurm's %s, shell operators: none may run
hostile='dir with spaces '\''single'\'' "double" $(touch pwned1) `touch pwned2` {} %s ;&|'
# compare: 2 schemes x 2 seeds and rope's PI fine-tunes, about a second a run
M=(--schemes rope,alibi --seeds 1,2 --dim 32 --layers 2 --heads 2 --seq-len 32 --steps 300 --synth-bytes 30000
   --batch 8 --mult 0.5,1,2 --rules pi:2 --finetune-steps 10 --eval-tokens 1000 --threads 1)
M_STEPS=300
# suite: two protocols, two looks (2 then 3 seeds)
S=(quick --schemes rope,alibi --protocols lm,copy --looks 2,3 --steps 4 --task-n 3 --eval-tokens 1100 --threads 1
   --data synth:stories)

# the step a log says a run resumed from, checked to be inside the run (0 < step < M_STEPS)
resumed_at() {
    local step
    step=$(sed -n 's/.*resumed from its checkpoint at step \([0-9]*\).*/\1/p' "$1" | head -n 1)
    if [ -z "$step" ] || [ "$step" -le 0 ] || [ "$step" -ge "$M_STEPS" ]; then
        fail "no run resumed mid-training: $(cat "$1")"
    fi
    echo "$step"
}

# the in-process compare in ref/ and the collected one in $1: verdicts.csv and every run's CSVs
# (results and loss curves) byte for byte; prints how many files matched
same_compare() {
    "$PELAB" compare "${M[@]}" --out "$1" --collect >"$tmp/collect.log" 2>&1 || fail "--collect: $(cat "$tmp/collect.log")"
    local f n=0
    for f in ref/verdicts.csv ref/runs/*.csv; do
        cmp -s "$f" "$1/${f#ref/}" || fail "compare: ${f#ref/} differs from the in-process sweep's"
        n=$((n + 1))
    done
    echo "$n"
}

# the in-process suite in sref/ and the collected one in $1: claims.csv and each protocol's verdicts
same_suite() {
    "$PELAB" suite "${S[@]}" --dir "$1" --collect >"$tmp/scollect.log" 2>&1 ||
        fail "suite --collect: $(tail -n 5 "$tmp/scollect.log")"
    local f
    for f in claims.csv lm/verdicts.csv copy/verdicts.csv; do
        cmp -s "sref/$f" "$1/$f" || fail "suite: $f differs from the in-process suite's"
    done
}

no_injection() {
    local found
    found=$(find "$tmp" -name 'pwned*')
    [ -z "$found" ] || fail "a directory name ran as shell code: $found"
}
