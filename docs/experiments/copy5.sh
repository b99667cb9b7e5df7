#!/bin/sh
# copy5.sh: section 6.1's copy with 5 seeds, through the verdict machinery
# (run from the repository root after make; about 45 s per model on a quiet 2-core machine, 2 at a time)
P=${PELAB:-./pelab}
ARGS="--task copy:len=2-8 --task-lens 2,4,6,8,10,12,16 --task-n 100 --seq-len 64 --synth-bytes 2000000 --schemes rope,alibi,kerple,nope --seeds 5 --steps 3000 --dim 64 --layers 2 --heads 4 --batch 16 --lr 3e-3 --threads 1"
mkdir -p runs
$P compare $ARGS --out runs/copy5 --jobs runs/copy5.jobs
xargs -P 2 -I{} sh -c "{}" < runs/copy5.jobs
$P compare $ARGS --out runs/copy5 --collect
