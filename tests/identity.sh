#!/bin/sh
# identity.sh: the byte-identity check of a refactor. Runs a fixed matrix of commands (tiny models
# trained a few steps under several schemes, rules and modifiers; eval, score, sample, passkey,
# probe, task eval, inspect, show, export/import, longrope-search, compare, demo, suite --jobs; the
# --help of every command; refusals of bad specs and rules) at --threads 1 with one binary, and
# stores every stdout, stderr and written file under OUT. Run it with the old binary and the new one
# and diff the two trees:
#
#   tests/identity.sh /path/to/old/pelab /tmp/id-old
#   tests/identity.sh ./pelab /tmp/id-new
#   diff -r /tmp/id-old /tmp/id-new
#
# Timings (seconds, tokens/s, peak RSS) are masked as '#' in stderr and in the reports that print
# them, so only what the run computed is compared. About 2 minutes on 2 cores. Not part of make test.
set -u
if [ $# -ne 2 ]; then
    echo "identity.sh: expected two arguments: the pelab binary and an output directory" >&2
    exit 2
fi
# OUT is removed and recreated: anything but a directory (a device such as /dev/null, a file) is
# refused, since as root rm -rf would delete it
if [ -e "$2" ] && [ ! -d "$2" ] || [ -L "$2" ]; then
    echo "identity.sh: OUT '$2' exists and is not a directory: expected a directory to replace or a new path" >&2
    exit 2
fi
[ -x "$1" ] || { echo "identity.sh: '$1': expected an executable pelab binary" >&2; exit 2; }
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT/w"
cd "$OUT/w" || exit 1
export OMP_NUM_THREADS=1 PELAB_NO_GNUPLOT=1
N=0

# mask what depends on the clock (numbers before s, tok/s, tokens/s, MB) and on where it runs (the
# binary's path, OUT)
mask() {
    sed -E -e "s#$BIN#PELAB#g" -e "s#$OUT#OUT#g" -e 's/[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)? ?(s|ms|tok\/s|tokens\/s|scored tok\/s|MB|min)\b/# \3/g' \
        -e 's/tokens\/s [0-9.]+/tokens\/s #/g' -e 's/[0-9]+(\.[0-9]+)? tokens\/s/# tokens\/s/g' \
        -e 's/[0-9]+ runs\/min/# runs\/min/g' -e 's/seed [0-9]{9,}/seed #/g' -e 's/(took|elapsed|wall|minutes?) [0-9.]+/\1 #/g'
}

# run NAME ARGS...: stdout to NAME.out, stderr to NAME.err (both masked), exit status to NAME.rc
run() {
    name=$1
    shift
    N=$((N + 1))
    "$BIN" "$@" >"$OUT/$name.out.raw" 2>"$OUT/$name.err.raw"
    echo $? >"$OUT/$name.rc"
    mask <"$OUT/$name.out.raw" >"$OUT/$name.out"
    mask <"$OUT/$name.err.raw" >"$OUT/$name.err"
    rm -f "$OUT/$name.out.raw" "$OUT/$name.err.raw"
}

# keep FILE as NAME (masked when it holds timings)
keep() { mask <"$2" >"$OUT/$1"; }

"$BIN" synth stories --bytes 20000 --seed 3 >text.txt
head -c 3000 text.txt >short.txt
printf 'Once upon a time\nThe little dog\n\nA cat sat\n' >prompts.txt
# 4 rotary pairs (dim 16, 2 heads: head_dim 8)
printf '{"short_factor": [1, 1, 1, 1], "long_factor": [1, 1.5, 2, 4], "original_max_position_embeddings": 16, "max_position_embeddings": 64}\n' >lr.json

TR="--data synth:stories --synth-bytes 20000 --dim 16 --layers 2 --heads 2 --seq-len 16 --batch 4 --steps 3 --eval-every 0 --threads 1 --quiet --seed 7"
for s in rope "rope:scale=yarn:2" "rope:layout=half" "rope:scale=pi:2" "rope:scale=llama3:2" "rope:scale=ntk:2" \
    "rope:scale=dynamic-ntk" "rope:scale=longrope:lr.json" "rope:scale=dynatan" alibi learned sinusoidal t5 kerple \
    fire cope xpos "xpos:scale=pi:2" fope nope "rope+logn" "rope+nope@1" "rope+ssmax" "alibi+temp:layers=nope+nope@0" \
    "rope:fraction=0.5,keep=0.75"; do
    f=$(echo "$s" | tr ':=+,@.' '______')
    run "train_$f" train $TR --pos "$s" --out "$f.safetensors"
    run "info_$f" info "$f.safetensors"
done
run train_kvheads train $TR --pos rope --kv-heads 1 --out kv1.safetensors
run train_task train --data task:copy:len=2-6 --align-examples --dim 16 --layers 2 --heads 2 --seq-len 32 --batch 4 \
    --steps 3 --eval-every 0 --threads 1 --quiet --pos alibi --out task.safetensors
run train_finetune train $TR --init rope.safetensors --scale pi:2 --seq-len 32 --out ft.safetensors
run train_pose train $TR --pos rope --pose 64 --out pose.safetensors

R=rope.safetensors
ALL="none,pi:2,ntk:2,yarn:2,dynamic-ntk,llama3:2,dynatan,dynatan-a:32,longrope:lr.json,selfextend:2:4,rerope:4,leaky-rerope:4:2,stream:2:4"
run eval_rope eval $R --data text.txt --lengths 8,16,32 --scale "$ALL" --max-tokens 2000 --csv eval_rope.csv \
    --json eval_rope.json --gen-tokens 40 --gen-prompts 2 --keyppl-tokens 600 --threads 1
keep eval_rope.csv eval_rope.csv
keep eval_rope.json eval_rope.json
run eval_alibi eval alibi.safetensors --data text.txt --mult 0.5,1,2 --scale none,stream:2:6 --max-tokens 1500 \
    --attn-scale logn --threads 1
run eval_xpos eval xpos.safetensors --data text.txt --mult 1,2 --scale none,pi:2,rerope:4 --max-tokens 1500 --dynamic prefix --threads 1
run eval_dyn eval rope_scale_dynamic-ntk.safetensors --data text.txt --lengths 16,40 --max-tokens 1500 --dynamic prefix --threads 1
run eval_learned eval learned.safetensors --data text.txt --lengths 8,16,32 --max-tokens 1000 --threads 1
run eval_ssmax eval rope_ssmax.safetensors --data text.txt --lengths 8,32 --max-tokens 1000 --bos 1 --threads 1
run eval_bf16 eval $R --data text.txt --lengths 16 --max-tokens 1000 --precision bf16 --threads 1

run score_rope score $R short.txt --per-token score_rope.csv --threads 1
keep score_rope.csv score_rope.csv
run score_lines score $R prompts.txt --lines --batch 2 --per-token score_lines.csv --threads 1
keep score_lines.csv score_lines.csv
run score_yarn score $R short.txt --scale yarn:2 --len 32 --threads 1
run score_logn score $R short.txt --attn-scale logn:len=8 --len 32 --threads 1
run score_stream score alibi.safetensors short.txt --scale stream:2:6 --len 40 --threads 1
run score_dyn score rope_scale_dynamic-ntk.safetensors short.txt --len 40 --dynamic prefix --threads 1
run score_cope score cope.safetensors short.txt --threads 1

run sample_greedy sample $R --prompt "Once" -n 40 --temp 0 --seed 1 --threads 1
run sample_seed sample $R --prompt "The" -n 40 --seed 5 --threads 1
run sample_nocache sample $R --prompt "The" -n 30 --seed 5 --no-cache --threads 1
run sample_bf16 sample $R -n 30 --seed 5 --kv-cache bf16 --threads 1
run sample_se sample $R -n 50 --seed 5 --scale selfextend:2:4 --threads 1
run sample_leaky sample $R -n 50 --seed 5 --scale leaky-rerope:4:2 --threads 1
run sample_stream sample alibi.safetensors -n 50 --seed 5 --scale stream:2:6 --threads 1
run sample_batch sample $R --prompts prompts.txt --batch 2 -n 20 --seed 5 --threads 1
run sample_steps sample $R --prompt "A" --steps 12 --seed 5 --threads 1
run sample_dyn sample rope_scale_dynamic-ntk.safetensors -n 40 --seed 5 --threads 1
run sample_logn sample $R -n 30 --seed 5 --attn-scale logn --precision bf16 --threads 1

run passkey_rope passkey $R --lengths 64,128 --trials 2 --depths 0,50 --csv passkey.csv --threads 1
keep passkey.csv passkey.csv
run passkey_yarn passkey rope_scale_yarn_2.safetensors --mult 4 --trials 2 --depths 50 --threads 1
run passkey_scale passkey $R --lengths 64 --trials 2 --depths 0 --scale pi:2 --threads 1
run passkey_method passkey $R --lengths 64 --trials 2 --depths 0 --scale selfextend:2:4 --threads 1
run passkey_learned passkey learned.safetensors --lengths 16,64 --trials 2 --depths 0 --threads 1

run probe_distance probe $R distance --trials 2 --distances 4,16 --threads 1
run probe_perm probe $R permutation --len 16 --threads 1
run probe_attn probe $R attention --len 12 --csv attn.csv --png attn.png --threads 1
keep attn.csv attn.csv
cp attn.png "$OUT/attn.png"
run probe_sinks probe $R sinks --len 16 --windows 3 --threads 1
run probe_cache probe $R cache --len 16 --threads 1
run probe_cache_alibi probe alibi.safetensors cache --len 16 --threads 1
run probe_scale probe $R distance --trials 2 --distances 4 --scale yarn:2 --threads 1

run task_list task list
run task_show task show copy:len=2-5 --n 3 --seed 2
run task_eval task eval task.safetensors --task copy:len=2-6 --lens 4,8 --n 4 --csv task.csv --json task.json --threads 1
keep task.csv task.csv
keep task.json task.json
run task_eval_scale task eval rope.safetensors --task copy:len=2-4 --lens 4 --n 2 --scale pi:2 --threads 1

# HF configs for inspect
printf '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 131072, "rope_theta": 500000, "rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}}\n' >llama3.json
printf '{"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 32768, "rope_theta": 1000000, "rope_scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 8192}}\n' >yarn.json
printf '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2}}\n' >linear.json
printf '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2}}\n' >dynamic.json
printf '{"model_type": "phi3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", "short_factor": [1,1,1,1,1,1,1,1], "long_factor": [1,1,2,2,4,4,8,8]}}\n' >phi3.json
printf '{"model_type": "bloom", "hidden_size": 64, "n_head": 4, "n_layer": 2}\n' >bloom.json
for c in llama3 yarn linear dynamic phi3 bloom; do run "inspect_$c" inspect "$c.json"; done

mkdir -p show
run show_sim show similarity --pos sinusoidal --n 16 --dim 16 --heads 2 --len 16 --out show
run show_decay show decay --scales none,pi:2,yarn:2,dynamic-ntk --at 32,64 --dim 16 --heads 2 --len 16 --out show
run show_wave show wavelength --scales none,ntk:2,llama3:2,longrope:lr.json --also "rope:keep=0.75;xpos" --dim 16 --heads 2 --len 16 --out show
run show_bias show bias --pos alibi --n 8 --dim 16 --heads 2 --out show
run show_bias_ckpt show bias --ckpt t5.safetensors --n 8 --out show
run show_attn show attention --ckpt $R --n 12 --out show
run show_method show decay --scales none,selfextend:2:4,rerope:4 --dim 16 --heads 2 --len 16 --out show
for f in show/*.csv show/*.gp; do keep "show_$(basename "$f")" "$f"; done

for s in rope rope_scale_yarn_2 rope_scale_pi_2 rope_scale_llama3_2 rope_scale_ntk_2 rope_scale_dynamic-ntk \
    rope_scale_longrope_lr_json rope_layout_half rope_scale_dynatan alibi rope_logn rope_nope_1; do
    run "export_$s" export "$s.safetensors" --hf "hf_$s"
    [ -f "hf_$s/config.json" ] && keep "export_$s.config.json" "hf_$s/config.json"
done
run import_yarn import --hf hf_rope_scale_yarn_2 --out yarn_back.safetensors
run info_yarn_back info yarn_back.safetensors
run export_llama2c export $R --llama2c rope.bin
run longrope longrope-search $R text.txt --len 32 --out lr_found.json --windows 2 --generations 2 --population 4 --threads 1
[ -f lr_found.json ] && keep lr_found.json lr_found.json

CMP="--seeds 1 --steps 3 --dim 16 --layers 1 --heads 2 --synth-bytes 20000 --batch 4 --eval-tokens 600 --threads 1"
# --train-len: the spelling the old binary takes too (the new one prints a notice for it)
run compare compare --schemes rope,alibi --train-len 16 --mult 1,2 --rules pi:2,yarn:2,selfextend:2:4,stream:2:6 \
    --finetune-steps 2 --gen-tokens 32 --gen-prompts 1 --keyppl-tokens 400 --out cmp $CMP
for f in cmp/report.md cmp/*.csv; do [ -f "$f" ] && keep "cmp_$(basename "$f")" "$f"; done
run compare_jobs compare --schemes rope,nope --train-len 16 --mult 1 --rules none --out cmpj --jobs cmpj.jobs $CMP
keep compare_jobs.txt cmpj.jobs
run compare_task compare --task copy:len=2-4 --task-lens 2,4,8 --task-n 4 --schemes rope,alibi --train-len 32 \
    --out cmpt $CMP
for f in cmpt/report.md cmpt/*.csv; do [ -f "$f" ] && keep "cmpt_$(basename "$f")" "$f"; done
run demo demo --steps 3 --seeds 1 --seq-len 8 --dim 16 --layers 1 --synth-bytes 20000 --schemes rope,alibi \
    --gen-tokens 24 --gen-prompts 1 --out demo --threads 1
[ -f demo/report.md ] && keep demo_report.md demo/report.md
run suite_jobs suite --dir suite --jobs suite.jobs --steps 3 --data synth:stories
[ -f suite.jobs ] && keep suite.jobs suite.jobs

for c in train sample score eval passkey info synth demo probe show longrope-search compare suite bench inspect \
    import export tokenizer; do
    run "help_$c" "$c" --help
done
run help_task task --help
run help_task_eval task eval --help
run help_task_show task show --help
run help_top

# refusals: the one-line messages must not change
run bad_rule train $TR --pos rope:scale=bogus:2 --out x.safetensors
run bad_rule_arg train $TR --pos rope:scale=pi --out x.safetensors
run bad_none train $TR --pos rope:scale=none:2 --out x.safetensors
run bad_longrope train $TR --pos rope:scale=longrope:missing.json --out x.safetensors
run bad_opt train $TR --pos rope:colour=red --out x.safetensors
run bad_scheme train $TR --pos ropey --out x.safetensors
run bad_parts train $TR --pos rope+ --out x.safetensors
run bad_nope train $TR --pos rope+nope@5 --out x.safetensors
run bad_mod train $TR --pos rope+logn+temp --out x.safetensors
run bad_ssmax train $TR --pos alibi+ssmax --out x.safetensors
run bad_scale_alibi score alibi.safetensors short.txt --scale pi:2
run bad_method_args score $R short.txt --scale selfextend:3:4
run bad_method_more score $R short.txt --scale rerope:4:5
run bad_method_none score $R short.txt --scale rerope
run bad_leaky score $R short.txt --scale leaky-rerope:3:1.5
run bad_stream_learned score learned.safetensors short.txt --scale stream:2:4
run bad_se_alibi score alibi.safetensors short.txt --scale selfextend:2:4
run bad_leaky_rule score rope_scale_pi_2.safetensors short.txt --scale leaky-rerope:4:2
run bad_se_dyn score rope_scale_dynamic-ntk.safetensors short.txt --scale rerope:4
run bad_stream_full probe alibi.safetensors permutation --scale stream:2:4 --len 16
run bad_attn_scale score $R short.txt --attn-scale ssmax
run bad_train_method train $TR --pos rope --scale rerope:4 --out x.safetensors
run bad_eval_rules eval $R --data short.txt --scale ,
run bad_kv sample $R --kv-cache fp16
# every checkpoint and exported model, bit for bit
sha256sum *.safetensors *.bin hf_*/*.safetensors cmp/runs/*.safetensors cmpt/runs/*.safetensors \
    demo/runs/*.safetensors 2>/dev/null >"$OUT/checksums.txt"
cd "$OUT" && rm -rf w
echo "$N commands; outputs in $OUT"
