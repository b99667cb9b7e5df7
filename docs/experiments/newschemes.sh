#!/usr/bin/env bash
# The newer schemes (CoPE, FIRE, SSMax, HoPE, ...) against RoPE, ALiBi, NoPE and KERPLE (EXPERIMENTS.md section 10):
# the tinyshakespeare setup of section 1 (dim 96, 3 layers, 4 heads, L = 128, 600 steps, seeds 1-3,
# evaluated to 16L with both protocols), then copy (as section 6.1), selective copy and counting,
# trained short and tested longer (dim 64, 2 layers, L = 64, 3000 steps). Two workers, one thread
# each.
# Usage: docs/experiments/newschemes.sh OUTDIR [lm|tasks|copy|selcount|passkey]
set -euo pipefail
out=${1:?usage: newschemes.sh OUTDIR [lm|tasks|copy|selcount|passkey]}
what=${2:-all}
pelab=${PELAB:-./pelab}
mkdir -p "$out"
run() { # DIR, then the compare flags
    dir=$1; shift
    "$pelab" compare "$@" --out "$out/$dir" --jobs "$out/$dir.jobs"
    xargs -P 2 -I{} sh -c "{}" < "$out/$dir.jobs"
    "$pelab" compare "$@" --out "$out/$dir" --collect
}
if [ "$what" = all ] || [ "$what" = lm ]; then
    run lm --data data/corpora/tinyshakespeare.txt --seq-len 128 --steps 600 --seeds 1,2,3 \
        --dim 96 --layers 3 --heads 4 --batch 16 --eval-tokens 16384 --mult 0.5,1,2,4,8,16 --rules none \
        --finetune-steps 0 --gen-tokens 0 --keyppl-tokens 0 --threads 1 \
        --schemes rope,alibi,nope,kerple,cope,fire,rope+nope@2,rope+ssmax,rope:keep=0.75,rope:max_period=128
fi
common="--seeds 1,2,3 --steps 3000 --dim 64 --layers 2 --heads 4 --batch 16 --lr 3e-3 --threads 1"
if [ "$what" = all ] || [ "$what" = tasks ] || [ "$what" = copy ]; then
    # copy as in section 6.1, every scheme
    run copy --task copy:len=2-8 --task-lens 2,4,6,8,10,12,16,24,32 --task-n 100 --seq-len 64 \
        --synth-bytes 2000000 $common \
        --schemes rope,alibi,nope,kerple,cope,fire,rope+nope@1,rope+ssmax,rope:max_period=64
fi
if [ "$what" = all ] || [ "$what" = tasks ] || [ "$what" = selcount ]; then
    # selective copy and counting, the toy tasks CoPE's paper reports: CoPE and FIRE against the
    # baselines (the machine's time did not stretch to every scheme)
    run selective_copy --task selective_copy:len=4-16 --task-lens 4,8,12,16,20,24,32,48,64 --task-n 100 \
        --seq-len 64 --synth-bytes 2000000 $common --schemes rope,alibi,nope,kerple,cope,fire
    # counting over 26 symbols is dominated by the answer 1 (every scheme scored the base rate,
    # EXPERIMENTS.md 10): three symbols, so that counts vary
    run count3 --task count:len=2-8,vocab=3 --task-lens 2,4,6,8,10,12,16,24,32 --task-n 100 --seq-len 64 \
        --synth-bytes 2000000 $common --schemes rope,alibi,nope,kerple,cope,fire
fi
if [ "$what" = all ] || [ "$what" = passkey ]; then
    # retrieval past L (the RNoPE paper's claim for NoPE layers): section 6.2's passkey recipe
    run passkey --task passkey:len=64-128 --task-lens 64,128,256,512,1024 --task-n 50 --seq-len 128 \
        --synth-bytes 4000000 $common --schemes rope,rope+nope@1,cope
fi
