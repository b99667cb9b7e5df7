#!/usr/bin/env bash
# recipes_v8.sh: the recipe search behind suite version 8 (EXPERIMENTS.md section 18), on seeds the
# suite never uses (1001 and up; the suite's are 1-30). Each config is one `pelab compare` of the
# suite's shape (dim 64, 4 heads, L 64, batch 16 unless said, one thread a run); its runs go through
# GNU parallel, GNU-time'd, then --collect. Usage: recipes_v8.sh OUTDIR [CONFIG...] (default: all)
set -euo pipefail
OUT=${1:?usage: recipes_v8.sh OUTDIR [CONFIG...]}; shift
PELAB=${PELAB:-$PWD/pelab}
LANES=${LANES:-2}
SEEDS=${SEEDS:-1001-1004}
HYB_SWAN='rope+attn(3*window=16:global,nope)'
HYB_IROPE='rope+attn(3*chunk=16:global,nope)'
# the lm protocol's evaluation as the suite runs it (full), at a fixed budget instead of --converge
LM_EXTRA="--rules pi:4,ntk:4,yarn:4,selfextend:4:32,rerope:32 --finetune-scale 4 --finetune-steps 60 --keyppl-tokens 16384 --key-gain 0.5 --gen-tokens 0"
mkdir -p "$OUT"
# name | schemes | steps | layers | task | task lens | extra compare flags (after the defaults: the last of a flag given twice wins)
CONFIGS=$(cat <<CFG
niah8k|rope,$HYB_SWAN,$HYB_IROPE|8000|4|niah_single:len=32-64|32,64,128,256|
mvalue8k|rope,$HYB_SWAN|8000|4|niah_multivalue:values=2,len=48-64|48,64,128,256|
flipflop6k|rope|6000|2|flipflop:len=8-24|8,16,24,48,96|
copy10k|nope,learned,rope,rope+randpos:256|10000|2|copy:len=2-8|2,5,8,12,16|
selcopy5k|cope,rope|5000|2|selective_copy:len=4-16|4,8,16,24,32|
lm2k|rope,alibi,kerple,t5|2000|2|-|1,2,4,8,16|$LM_EXTRA
lm3k|rope|3000|2|-|1,2,4,8,16|$LM_EXTRA
irope8k-lr1e-3|$HYB_IROPE|8000|4|niah_single:len=32-64|32,64,128,256|--lr 1e-3 --synth-bytes 4096000
irope16k|$HYB_IROPE|16000|4|niah_single:len=32-64|32,64,128,256|--synth-bytes 8192000
CFG
)
want() { [ ${#SELECT[@]} -eq 0 ] && return 0; local n=$1; for w in "${SELECT[@]}"; do [ "$w" = "$n" ] && return 0; done; return 1; }
SELECT=("$@")
: > "$OUT/all.jobs"
while IFS='|' read -r name schemes steps layers task lens extra; do
    [ -z "$name" ] && continue
    want "$name" || continue
    args=(compare --out "$OUT/$name" --schemes "$schemes" --seeds "$SEEDS" --seq-len 64 --steps "$steps"
          --batch 16 --dim 64 --layers "$layers" --heads 4 --lr 3e-3 --threads 1)
    if [ "$task" = - ]; then
        args+=(--data data/corpora/tinyshakespeare.txt --mult "$lens" --eval-tokens 32768)
    else
        args+=(--task "$task" --task-lens "$lens" --synth-bytes 1536000)
    fi
    # shellcheck disable=SC2206
    [ -n "$extra" ] && args+=($extra)
    printf '%q ' "$PELAB" "${args[@]}" > "$OUT/$name.cmd"; echo >> "$OUT/$name.cmd"
    "$PELAB" "${args[@]}" --jobs "$OUT/$name.jobs" > "$OUT/$name.jobs.log" 2>&1
    # each line GNU-time'd: rc wall user sys peak_kB config run
    while IFS= read -r line; do
        run=${line##*--only }
        pre=${line%%&& *}; rest=${line#*&& }
        printf '%s&& /usr/bin/time -f %q -a -o %q %s > /dev/null 2>&1\n' "$pre" "%x %e %U %S %M $name $run" "$OUT/times.log" "$rest"
    done < "$OUT/$name.jobs" >> "$OUT/all.jobs"
done <<< "$CONFIGS"
echo "recipes_v8: $(wc -l < "$OUT/all.jobs") runs in $OUT/all.jobs, $LANES lanes"
[ -n "${DRY:-}" ] && exit 0
parallel -j"$LANES" < "$OUT/all.jobs" || true
for c in "$OUT"/*.cmd; do eval "$(cat "$c") --collect" > "${c%.cmd}.collect.log" 2>&1 || true; done
