#!/bin/sh
# docs/EXPERIMENTS.md section 5: the sinusoidal recipes at the demo configuration (L = 64, 600
# steps, dim 96, 3 layers), seeds 1-2, evaluated on a held-out synthetic text (another seed).
# Run from the repository root: sh docs/experiments/sinusoidal_recipe.sh  (about 2 min on 2 cores)
set -e
P=${PELAB:-./pelab}
OUT=${OUT:-runs/sinusoidal_recipe}
mkdir -p "$OUT"
train_text=$OUT/stories.txt
held=$OUT/heldout.txt
$P synth stories --seed 1 --bytes 1048576 > "$train_text"
$P synth stories --seed 99 --bytes 200000 > "$held"
for seed in 1 2; do
    for spec in "sinusoidal" "sinusoidal:scale=1,tokens=sqrt_dim" "sinusoidal:scale=1"; do
        tag=$(echo "$spec" | tr ':,=' '___')
        $P train --data "$train_text" --pos "$spec" --steps 600 --seq-len 64 --dim 96 --layers 3 --heads 4 \
            --batch 16 --seed $seed --eval-every 0 --quiet --out "$OUT/$tag-s$seed.safetensors"
        $P eval "$OUT/$tag-s$seed.safetensors" --data "$held" --mult 0.5,1,2,4,8 --max-tokens 32768 \
            --csv "$OUT/$tag-s$seed.csv" > "$OUT/$tag-s$seed.txt"
    done
done
