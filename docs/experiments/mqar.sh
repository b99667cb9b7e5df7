#!/bin/sh
# mqar.sh OUTDIR [SCHEMES] [SEED]: dense associative recall (Zoology's MQAR, task mqar_dense;
# docs/EXPERIMENTS.md section 6.3). Each scheme: a 2-layer model (dim 64, 4 heads) trained at
# L = 64 on 2-8 key-value pairs, every key queried, every value supervised (4000 steps, batch 32,
# windows aligned to examples); then exact match on 200 held-out examples at 2-8 pairs (inside L)
# and beyond: more pairs (12: 62 bytes, still inside L; 16, 24, 32: 78-142) and gaps of dots before every query
# (8 pairs with gap 2, 4, 8, 16: 62-174 bytes; training saw no gap, so the dots are new too).
# One thread per job, two jobs at a time.
set -eu
out=$1
schemes=${2:-alibi rope nope}
seed=${3:-1}
pelab=${PELAB:-./pelab}
mkdir -p "$out"
for s in $schemes; do
    [ -f "$out/$s.safetensors" ] || /usr/bin/time -f "%e s wall, %U s user" $pelab train \
        --data task:mqar_dense:pairs=2-8 --align-examples --pos "$s" --seq-len 64 --dim 64 --layers 2 --heads 4 \
        --batch 32 --steps 4000 --lr 3e-3 --synth-bytes 4000000 --seed "$seed" --eval-every 0 --ckpt-every 0 \
        --threads 1 --log-every 500 --out "$out/$s.safetensors" > "$out/$s.log" 2>&1 &
    while [ "$(jobs -p | wc -l)" -ge 2 ]; do sleep 5; done
done
wait
for s in $schemes; do
    $pelab task eval "$out/$s.safetensors" --task mqar_dense --lens 2,4,8,12,16,24,32 --n 200 --seed 7 --threads 1 \
        --csv "$out/${s}_pairs.csv" > "$out/${s}_pairs.txt"
    for g in 2 4 8 16; do
        $pelab task eval "$out/$s.safetensors" --task "mqar_dense:gap=$g" --lens 8 --n 200 --seed 7 --threads 1 \
            --csv "$out/${s}_gap$g.csv" > "$out/${s}_gap$g.txt"
    done
done
