#!/bin/sh
# tasks.sh: the task section of EXPERIMENTS.md (section 6): every scheme, 3 seeds, on copy, sort
# and passkey; the passkey depth x length grid of the seed-1 models; the language-model compare
# with the long-generation metrics and key-token perplexity. Run from the repository root after
# `make`. Each compare writes --jobs files that two workers run side by side (one thread each, as
# measured: about 45 s per copy/sort model, 90 s per passkey model on this 2-core machine), then
# --collect builds the report (DIR/report.md, DIR/plots/).
set -e
OUT=${OUT:-runs/tasks}
mkdir -p "$OUT"
COMMON="--seeds 1,2,3 --steps 3000 --dim 64 --layers 2 --heads 4 --batch 16 --lr 3e-3 --threads 1"
run() { # DIR, then the compare flags
    dir=$1; shift
    ./pelab compare "$@" --out "$OUT/$dir" --jobs "$OUT/$dir.jobs"
    xargs -P 2 -I{} sh -c "{}" < "$OUT/$dir.jobs"
    ./pelab compare "$@" --out "$OUT/$dir" --collect
}
run copy --task copy:len=2-8 --task-lens 2,4,6,8,10,12,16,24,32 --task-n 100 --seq-len 64 --synth-bytes 2000000 $COMMON
run sort --task sort:len=2-8 --task-lens 2,4,6,8,10,12,16,24,32 --task-n 100 --seq-len 64 --synth-bytes 2000000 $COMMON
run sort_rp --task sort:len=2-8 --task-lens 2,4,6,8,10,12,16,24,32 --task-n 100 --seq-len 64 --synth-bytes 2000000 \
    --rand-pos 256 --schemes rope,alibi,t5,sinusoidal $COMMON
run passkey --task passkey:len=64-128 --task-lens 64,128,256,512,1024 --task-n 50 --seq-len 128 --synth-bytes 4000000 \
    $COMMON
for s in nope learned sinusoidal rope alibi t5 kerple xpos fope; do
    lens=128,256,512,1024
    [ $s = learned ] && lens=64,128 # its table ends at L
    ./pelab task eval "$OUT/passkey/runs/${s}_s1.safetensors" --task passkey --depths 0,0.25,0.5,0.75,1 --lens $lens \
        --n 50 --seed 7 --threads 1 --json "$OUT/passkey/grid_$s.json" --plots "$OUT/passkey/grid_$s"
done
# language modelling: loss by length, long generation past L, loss jump, key-token perplexity
run lm --schemes nope,learned,sinusoidal,sinusoidal:scale=1,tokens=sqrt_dim,rope,alibi,t5,kerple,xpos,fope \
    --seeds 1,2,3 --seq-len 64 --steps 600 --dim 96 --layers 3 --heads 4 --batch 16 --synth-bytes 1048576 \
    --mult 0.5,1,2,4,8 --rules yarn:8 --finetune-steps 0 --eval-tokens 16384 --keyppl-tokens 16384 --threads 1
