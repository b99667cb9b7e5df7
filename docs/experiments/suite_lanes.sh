#!/usr/bin/env bash
# suite_lanes.sh DIR [LANES]: one look of `pelab suite full` run as jobs: the suite writes the runs
# still missing (DIR/next.jobs), each runs on one thread, GNU-time'd into DIR/times/times.log
# (rc wall_s user_s sys_s peak_kB protocol run), LANES (default 2) side by side at nice 5. Rerun it
# until the suite writes no command; then `pelab suite full --dir DIR --collect`.
set -euo pipefail
D=${1:?usage: suite_lanes.sh DIR [LANES]}
LANES=${2:-2}
PELAB=${PELAB:-$PWD/pelab}
mkdir -p "$D/times"
"$PELAB" suite full --threads 1 --dir "$D" --jobs "$D/next.jobs" | tail -n 1
{ date -u '+# %F %T UTC'; lscpu | sed -n 's/^Model name: *//p; s/^CPU family: *\(.*\)/family \1/p' | paste -sd' '; } \
    >> "$D/times/times.log"
while IFS= read -r line; do
    run=${line##*--only }
    out=${line#*--out }; out=${out%% *}; protocol=${out##*/}
    pre=${line%%&& *}; rest=${line#*&& }
    printf '%s&& OMP_NUM_THREADS=1 /usr/bin/time -f %q -a -o %q nice -n 5 %s > /dev/null 2>&1\n' "$pre" \
        "%x %e %U %S %M $protocol $run" "$D/times/times.log" "$rest"
done < "$D/next.jobs" > "$D/next.timed.jobs"
parallel -j"$LANES" < "$D/next.timed.jobs" || true
