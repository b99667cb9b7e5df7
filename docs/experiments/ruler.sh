#!/bin/sh
# RULER's needle task at toy scale (EXPERIMENTS.md section 15): rope, alibi and nope trained on
# niah_single at L = 64, 3 seeds, scored to 4L with RULER's score and effective length; then the
# depth x length grid of each model that passed the gate, and RULER's multi-key needles with alibi.
# Usage: docs/experiments/ruler.sh OUTDIR   (about 6 minutes of CPU on one thread)
set -e
OUT=${1:?usage: ruler.sh OUTDIR}
P=${PELAB:-./pelab}
nice -n 10 $P compare --task niah_single:len=32-64 --schemes rope,alibi,nope --seeds 3 --seq-len 64 --steps 2000 \
    --dim 64 --layers 2 --heads 4 --batch 16 --lr 3e-3 --synth-bytes 2000000 --task-lens 32,64,128,256 --task-n 100 \
    --threads 1 --out "$OUT/niah"
for r in rope_s1 alibi_s1 alibi_s2 alibi_s3 nope_s1; do
    nice -n 10 $P task eval "$OUT/niah/runs/$r.safetensors" --task niah_single --lens 32,64,128,256 \
        --depths 0,0.25,0.5,0.75,1 --n 50 --seed 7 --threads 1 --plots "$OUT/grid_$r" --csv "$OUT/grid_$r.csv"
done
nice -n 10 $P train --data task:niah_multikey:keys=2,len=48-64 --align-examples --pos alibi --seq-len 64 --dim 64 \
    --layers 2 --heads 4 --steps 3000 --batch 16 --lr 3e-3 --synth-bytes 3000000 --seed 1 --eval-every 1000 --threads 1 \
    --quiet --out "$OUT/multikey_alibi.safetensors"
nice -n 10 $P task eval "$OUT/multikey_alibi.safetensors" --task niah_multikey:keys=2 --lens 48,64,128,256 \
    --depths 0,0.5,1 --n 100 --seed 7 --threads 1
