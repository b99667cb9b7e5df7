#!/usr/bin/env bash
# decode_sidebyside.sh: single-stream greedy decoding of one model by pelab, llama2.c and llama.cpp,
# alternating in one run, as ratios.
#   tools/bench/decode_sidebyside.sh [ROUNDS]        (default 5 rounds per thread count)
# Environment:
#   PELAB=./pelab             the binary under test
#   PELAB_BASE=path           another pelab (the code before a change), alternated with PELAB on
#                             the same model: its median and PELAB's ratio to it
#   THREADS="1 2"             thread counts (OMP_NUM_THREADS for llama2.c, --threads for pelab,
#                             threads for llama.cpp)
#   LLAMA2C_DIR=DIR           a checkout of karpathy/llama2.c: its run.c built as its README builds
#                             the OpenMP runner (gcc -Ofast -fopenmp -march=native; LLAMA2C_MARCH)
#   PELAB_LLAMACPP_DIR=DIR    where `npm install node-llama-cpp@3.21.1` ran: llama.cpp's prebuilt
#                             CPU libraries, twice: from C (tools/bench/llamacpp_decode.c, built
#                             here against the llama.h of the source node-llama-cpp ships) and
#                             through node (tools/bench/llamacpp_decode.mjs, as a script uses it)
#   PRECISION=fp32|bf16       fp32: pelab fp32 weights, llama.cpp an F32 GGUF, llama2.c (fp32 only);
#                             bf16: pelab --precision bf16, llama.cpp a BF16 GGUF, llama2.c left out
#   KV=F32|F16                llama.cpp's cache type (default F32, as pelab's default cache)
# The model is M's shape (dim 288, 6 layers, 6 heads, hidden 768, vocab 256, T 256; trained 5
# steps: the values do not change the speed), exported by `pelab export` to llama2.c's format and
# to GGUF. Each side decodes 256 positions greedily; tokens/s are timed from the first generated
# token (pelab sample's "after the first", llama2.c's "achieved tok/s", the drivers' own timing
# for llama.cpp). Through node, llama.cpp's threads share the 2 cores with node's: at 2 threads
# the node row measures that contention, the C row llama.cpp itself. Prints each side's tokens/s per round, the medians, pelab's ratios and each
# side's peak RSS. A reference that is not there is skipped with a message.
# Decoding reads every weight once a token, so its speed is bounded by how fast the cores read
# memory, and that moves with the shared host's load (2x between days on this project's VM). Each
# round also times a plain read of the weights' size (tools/bench/read_bandwidth.c), and the
# memory line sets each side's bytes per second (tokens/s x bytes a token reads: the weights, the
# KV cache at the mean position) against it: a ratio between two decoders that both read near
# that rate cannot be large, whatever either does.
set -euo pipefail
pelab=${PELAB:-./pelab}
rounds=${1:-5}
threads=${THREADS:-1 2}
precision=${PRECISION:-fp32}
kv=${KV:-F32}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$pelab" train --dim 288 --layers 6 --heads 6 --hidden 768 --seq-len 256 --batch 1 --steps 5 --eval-every 0 \
    --out "$work/m.safetensors" --quiet > /dev/null
have_l2c=0 have_lcpp=0 have_lcpp_c=0
if [[ "$precision" == fp32 && -n "${LLAMA2C_DIR:-}" && -f "$LLAMA2C_DIR/run.c" ]]; then
    gcc -Ofast -fopenmp -march="${LLAMA2C_MARCH:-native}" "$LLAMA2C_DIR/run.c" -lm -o "$work/runomp"
    "$pelab" export "$work/m.safetensors" --llama2c "$work/m.bin" --tokenizer-out "$work/tok.bin" > /dev/null
    have_l2c=1
else
    echo "decode_sidebyside: llama2.c skipped (set LLAMA2C_DIR to a checkout of karpathy/llama2.c; fp32 only)"
fi
if [[ -n "${PELAB_LLAMACPP_DIR:-}" && -d "$PELAB_LLAMACPP_DIR/node_modules/node-llama-cpp" ]] && command -v node > /dev/null; then
    gguf_type=f32
    [[ "$precision" == bf16 ]] && gguf_type=bf16
    "$pelab" export "$work/m.safetensors" --gguf "$work/m.gguf" --gguf-type "$gguf_type" > /dev/null
    have_lcpp=1
    # the C driver: llama.h from the llama.cpp source node-llama-cpp ships, its prebuilt libraries
    nlc="$PELAB_LLAMACPP_DIR/node_modules/node-llama-cpp" bins="$PELAB_LLAMACPP_DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
    if [[ -f "$nlc/llama/gitRelease.bundle" && -d "$bins" ]] &&
        git clone -q --no-checkout "$nlc/llama/gitRelease.bundle" "$work/llama.cpp" 2> /dev/null &&
        git -C "$work/llama.cpp" checkout -q HEAD -- include ggml/include 2> /dev/null &&
        gcc -O2 -I"$work/llama.cpp/include" -I"$work/llama.cpp/ggml/include" "$here/llamacpp_decode.c" -o "$work/lcd" \
            "$bins"/libllama.v*.so "$bins"/libggml.v*.so "$bins/libggml-base.so" -Wl,-rpath,"$bins"; then
        have_lcpp_c=1
    else
        echo "decode_sidebyside: llama.cpp from C skipped (no llama/gitRelease.bundle or linux-x64 libraries in $PELAB_LLAMACPP_DIR, or the driver did not build); through node only"
    fi
else
    echo "decode_sidebyside: llama.cpp skipped (set PELAB_LLAMACPP_DIR to a folder where npm install node-llama-cpp@3.21.1 ran)"
fi
flags=""
[[ "$precision" == bf16 ]] && flags="--precision bf16"
# bytes one decoded token reads: every parameter once (the tied head reads the whole embedding
# table), each layer's cached keys and values at the mean of the 256 positions (fp32 cache)
elem=4
[[ "$precision" == bf16 ]] && elem=2
token_bytes=$("$pelab" info "$work/m.safetensors" | awk -v elem="$elem" '
    /^config/ {for (k = 1; k <= NF; k++) {if ($k == "layers") L = $(k + 1) + 0; if ($k == "kv_heads") KV = $(k + 1) + 0;
                                          if ($k == "head_dim") HD = $(k + 1) + 0}}
    /^parameters/ {P = $2}
    END {printf "%.0f", P * elem + 2 * L * KV * HD * 4 * 128.5}')
have_rb=0
if [[ ! "$token_bytes" =~ ^[1-9][0-9]*$ ]]; then
    echo "decode_sidebyside: the memory line skipped (pelab info gave no parameter count or shape)"
    token_bytes=0
elif gcc -O3 -march=native -fopenmp "$here/read_bandwidth.c" -o "$work/rb" 2> /dev/null; then
    have_rb=1
else
    echo "decode_sidebyside: the memory line skipped (tools/bench/read_bandwidth.c did not build)"
fi
rb_mb=$(( (token_bytes + 524288) / 1048576 ))
((rb_mb >= 1)) || rb_mb=1

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# runs "$@" under GNU time when there is one; its peak RSS (KB) into $work/rss
timed() {
    if [[ -x /usr/bin/time ]]; then /usr/bin/time -f "%M" -o "$work/rss" "$@"; else "$@"; echo 0 > "$work/rss"; fi
}
for t in $threads; do
    l2c=() lcpp=() lcppc=() ours=() base=() reads=() rss_l2c=0 rss_lcpp=0 rss_lcppc=0 rss_ours=0 rss_base=0
    for ((i = 0; i < rounds; i++)); do
        if ((have_l2c)); then
            l2c+=("$(OMP_NUM_THREADS=$t timed "$work/runomp" "$work/m.bin" -z "$work/tok.bin" -t 0 -n 256 2>&1 >/dev/null |
                      awk '/achieved tok\/s/ {print $3}')")
            rss_l2c=$(cat "$work/rss")
        fi
        if ((have_lcpp_c)); then
            lcppc+=("$(timed "$work/lcd" "$bins" "$work/m.gguf" 256 "$t" "$kv" | awk '{print $3}')")
            rss_lcppc=$(cat "$work/rss")
        fi
        if ((have_lcpp)); then
            lcpp+=("$(timed node "$here/llamacpp_decode.mjs" "$work/m.gguf" 256 "$t" "$kv" | awk '{print $3}')")
            rss_lcpp=$(cat "$work/rss")
        fi
        if [[ -n "${PELAB_BASE:-}" ]]; then
            # shellcheck disable=SC2086
            base+=("$(timed "$PELAB_BASE" sample "$work/m.safetensors" --temp 0 -n 255 --threads "$t" $flags ${PELAB_SAMPLE_FLAGS:-} 2>&1 >/dev/null |
                       awk '/tokens\/s/ {for (k = 1; k <= NF; k++) if ($(k + 1) == "tokens/s") print $k}')")
            rss_base=$(cat "$work/rss")
        fi
        if ((have_rb)); then
            reads+=("$(OMP_NUM_THREADS=$t "$work/rb" "$rb_mb" 11 | sed -n 's/.*median \([0-9.]*\) GB\/s.*/\1/p')")
        fi
        # shellcheck disable=SC2086
        ours+=("$(timed "$pelab" sample "$work/m.safetensors" --temp 0 -n 255 --threads "$t" $flags ${PELAB_SAMPLE_FLAGS:-} 2>&1 >/dev/null |
                   awk '/tokens\/s/ {for (k = 1; k <= NF; k++) if ($(k + 1) == "tokens/s") print $k}')")
        rss_ours=$(cat "$work/rss")
    done
    b=$(printf '%s\n' "${ours[@]}" | median)
    echo "== $t thread(s), $precision (M shape, greedy, 256 positions, $rounds rounds alternating; load $(cut -d' ' -f1-3 /proc/loadavg))"
    echo "pelab sample tokens/s:     ${ours[*]}  median $b  (peak RSS ${rss_ours} KB)"
    if [[ -n "${PELAB_BASE:-}" ]]; then
        d=$(printf '%s\n' "${base[@]}" | median)
        echo "PELAB_BASE tokens/s:       ${base[*]}  median $d  (peak RSS ${rss_base} KB)"
        awk -v d="$d" -v b="$b" 'BEGIN {printf "pelab / PELAB_BASE: x%.2f\n", b / d}'
    fi
    r=0
    ((have_rb)) && r=$(printf '%s\n' "${reads[@]}" | median)
    if awk -v r="$r" 'BEGIN {exit !(r > 0)}'; then
        rate() { awk -v v="$1" -v tb="$token_bytes" -v r="$r" 'BEGIN {printf "%.1f GB/s (%.0f%%)", v * tb / 1e9, 100 * v * tb / 1e9 / r}'; }
        echo "plain read GB/s:           ${reads[*]}  median $r  ($rb_mb MB, tools/bench/read_bandwidth.c)"
        line="memory: a token reads"
        line+=" $(awk -v tb="$token_bytes" 'BEGIN {printf "%.1f", tb / 1e6}') MB, so at the plain read's median about"
        line+=" $(awk -v tb="$token_bytes" -v r="$r" 'BEGIN {printf "%.0f", r * 1e9 / tb}') tokens/s; read rates: pelab $(rate "$b")"
        if ((have_l2c)); then line+=", llama2.c $(rate "$(printf '%s\n' "${l2c[@]}" | median)")"; fi
        if ((have_lcpp_c)); then line+=", llama.cpp (C) $(rate "$(printf '%s\n' "${lcppc[@]}" | median)")"; fi
        echo "$line (above 100%: part of the weights stayed in the L3 cache)"
        if ((have_l2c)); then
            # the round's plain read against the round's pelab / llama2.c, slowest read first: a decoder that
            # reads near the ceiling gains on one that does not only as far as the ceiling is high
            pairs=$(for ((i = 0; i < rounds; i++)); do
                        awk -v r="${reads[i]}" -v p="${ours[i]}" -v l="${l2c[i]}" 'BEGIN {printf "%s %.2f\n", r, p / l}'
                    done | sort -g | awk '{printf "%s%s GB/s x%s", (NR > 1 ? ", " : ""), $1, $2}')
            echo "per round, plain read -> pelab / llama2.c: $pairs"
        fi
    fi
    if ((have_l2c)); then
        a=$(printf '%s\n' "${l2c[@]}" | median)
        echo "llama2.c runomp tokens/s:  ${l2c[*]}  median $a  (peak RSS ${rss_l2c} KB)"
        awk -v a="$a" -v b="$b" 'BEGIN {printf "pelab / llama2.c: x%.2f\n", b / a}'
    fi
    if ((have_lcpp_c)); then
        c=$(printf '%s\n' "${lcppc[@]}" | median)
        echo "llama.cpp (C) tokens/s:    ${lcppc[*]}  median $c  (peak RSS ${rss_lcppc} KB; kv $kv)"
        awk -v c="$c" -v b="$b" 'BEGIN {printf "pelab / llama.cpp (C): x%.2f\n", b / c}'
    fi
    if ((have_lcpp)); then
        c=$(printf '%s\n' "${lcpp[@]}" | median)
        echo "llama.cpp (node) tokens/s: ${lcpp[*]}  median $c  (peak RSS ${rss_lcpp} KB, node included; kv $kv)"
        awk -v c="$c" -v b="$b" 'BEGIN {printf "pelab / llama.cpp (node): x%.2f\n", b / c}'
    fi
done
