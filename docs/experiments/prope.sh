#!/usr/bin/env bash
# p-RoPE (EXPERIMENTS.md section 8) at toy scale: RoPE with the slowest pairs dropped (keep = 0.75, 0.5,
# 0.25) against RoPE and NoPE, the demo's model (dim 96, 3 layers, 4 heads, L = 64) on
# synth:stories, 1,000 steps, seeds 1-3, evaluated to 16L. Usage: docs/experiments/prope.sh OUTDIR
set -euo pipefail
out=${1:?usage: prope.sh OUTDIR}
pelab=${PELAB:-./pelab}
"$pelab" compare --out "$out" --schemes rope,rope:keep=0.75,rope:keep=0.5,rope:keep=0.25,nope --seeds 1,2,3 \
    --threads "${THREADS:-1}" --seq-len 64 --dim 96 --layers 3 --heads 4 --batch 16 --steps 1000 --rules none \
    --finetune-steps 0 --gen-tokens 0 --keyppl-tokens 0 --eval-tokens 8192 --synth-bytes 1048576
