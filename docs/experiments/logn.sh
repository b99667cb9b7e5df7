#!/usr/bin/env bash
# Qwen's logn at inference (EXPERIMENTS.md section 9) on the RoPE runs of prope.sh (L = 64, seeds 1-3):
# eval with and without --attn-scale logn, plain and under dynamic NTK, on a fresh synth:stories
# text (seed 99, never trained on). Usage: docs/experiments/logn.sh PROPE_OUTDIR
set -euo pipefail
dir=${1:?usage: logn.sh PROPE_OUTDIR}
pelab=${PELAB:-./pelab}
"$pelab" synth stories --bytes 262144 --seed 99 > "$dir/heldout99.txt"
for s in 1 2 3; do
    for rule in none dynamic-ntk; do
        for a in none logn; do
            "$pelab" eval "$dir/runs/rope_s$s.safetensors" --data "$dir/heldout99.txt" --mult 1,2,4,8,16 \
                --max-tokens 16384 --scale "$rule" --attn-scale "$a" --csv "$dir/logn_${rule}_s${s}_$a.csv" > /dev/null
        done
    done
done
