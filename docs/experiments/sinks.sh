#!/bin/sh
# sinks.sh OUTDIR [SEEDS]: StreamingLLM's claim 2 on a model trained with a sink token
# (docs/EXPERIMENTS.md section 12.4). For each seed, two RoPE models on tinyshakespeare (L = 128,
# dim 96, 3 layers, 4 heads, 2000 steps): "sink", every training window opened by byte 0 (train
# --sink-token 0), and "plain", windows cut anywhere. Then
#   - probe sinks: the first token's attention per layer from the queries in the second half of
#     64 held-out windows of L (the sink model's windows opened by byte 0, as in training);
#   - eval: 4 held-out streams of 64L (8192 bytes, from offsets 0, 25000, 50000, 75000 of the
#     held-out text), each decoded as one window: dense, stream:4:123 and stream:0:127 (a query sees
#     L keys either way); the sink model's streams start with byte 0 (eval --bos 0), as
#     StreamingLLM's start with BOS.
# Needs ../shared/data. Two jobs at a time, one thread each.
set -eu
out=$1
seeds=${2:-1}
data=${PELAB_SHARED_DATA:-../shared/data}
pelab=${PELAB:-./pelab}
mkdir -p "$out"
python3 -c "
import sys
t = open(sys.argv[1], 'rb').read()
held = t[int(len(t) * 0.9):]
open(sys.argv[2] + '/heldout.txt', 'wb').write(held)
for k, off in enumerate((0, 25000, 50000, 75000)):
    open(sys.argv[2] + '/stream%d.txt' % k, 'wb').write(held[off:off + 8192])" "$data/tinyshakespeare/input.txt" "$out"
for seed in $seeds; do
    for kind in sink plain; do
        flag=""
        [ "$kind" = sink ] && flag="--sink-token 0"
        [ -f "$out/${kind}_s$seed.safetensors" ] || $pelab train --data "$data/tinyshakespeare/input.txt" --pos rope \
            --seq-len 128 --dim 96 --layers 3 --heads 4 --batch 16 --steps 2000 --seed "$seed" --threads 1 \
            --eval-every 500 --ckpt-every 0 --out "$out/${kind}_s$seed.safetensors" $flag > "$out/${kind}_s$seed.log" 2>&1 &
    done
    wait
    for kind in sink plain; do
        flag=""
        bos=""
        [ "$kind" = sink ] && flag="--sink-token 0" && bos="--bos 0"
        $pelab probe "$out/${kind}_s$seed.safetensors" sinks --text "$out/heldout.txt" --windows 64 --threads 1 $flag \
            > "$out/probe_${kind}_s$seed.txt"
        for k in 0 1 2 3; do
            $pelab eval "$out/${kind}_s$seed.safetensors" --data "$out/stream$k.txt" --lengths 8192 --max-tokens 0 \
                --scale none,stream:4:123,stream:0:127 --buckets 16 --threads 1 $bos \
                --csv "$out/eval_${kind}_s${seed}_$k.csv" > "$out/eval_${kind}_s${seed}_$k.txt"
        done
    done
done
