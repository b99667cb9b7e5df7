#!/usr/bin/env bash
# bf16 against fp32 (EXPERIMENTS.md section 7): the demo's model (dim 96, 3 layers, 4 heads, L = 64, batch 16) on
# synth:stories, every scheme, 1,000 steps, trained and evaluated once with fp32 and once with bf16
# weight products from the same seed; a second fp32 seed gives the seed-to-seed noise the
# precision difference is read against. Usage: docs/experiments/bf16_accuracy.sh OUTDIR
set -euo pipefail
out=${1:?usage: bf16_accuracy.sh OUTDIR}
pelab=${PELAB:-./pelab}
common=(--threads ${THREADS:-1} --seq-len 64 --dim 96 --layers 3 --heads 4 --batch 16 --steps 1000 --rules none --finetune-steps 0
        --gen-tokens 0 --keyppl-tokens 0 --eval-tokens 8192 --synth-bytes 1048576)
"$pelab" compare --out "$out/fp32" --seeds 1,2 --precision fp32 "${common[@]}"
"$pelab" compare --out "$out/bf16" --seeds 1 --precision bf16 "${common[@]}"
