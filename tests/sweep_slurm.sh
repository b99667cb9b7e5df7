#!/usr/bin/env bash
# sweep_slurm.sh (make check-slurm): a one-node Slurm cluster on this machine, started here as root
# (munged, slurmctld, slurmd on private sockets and free ports; no systemd, no cgroups:
# proctrack/linuxproc, task/none) and torn down at the end. A compare's and a suite's job files,
# written with --jobs-format slurm, run as job arrays (sbatch --wait), then --collect: the very
# verdicts of the same sweep run in one process (verdicts.csv, claims.csv and every run's CSV byte
# for byte), from a working directory and output directories with hostile names. One array task is
# requeued mid-training (scontrol requeue: preemption's path): Slurm stops it (SIGTERM), runs it
# again, and its run resumes from its checkpoint.
# Usage: bash tests/sweep_slurm.sh ./pelab
set -euo pipefail
for tool in sbatch scontrol sinfo squeue slurmctld slurmd munged; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "sweep slurm: SKIP: $tool is not installed (apt-get install slurm-wlm munge)"
        exit 0
    fi
done
if [ "$(id -u)" -ne 0 ]; then
    echo "sweep slurm: SKIP: needs root (slurmd starts the jobs; CI runs as root)"
    exit 0
fi
PELAB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
# shellcheck source=tests/sweep_common.sh
. "$(dirname "$0")/sweep_common.sh"
tmp=$(mktemp -d /tmp/pelab-slurm-XXXXXX)
daemons=()
teardown() {
    local i
    for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do kill "${daemons[i]}" 2>/dev/null || true; done
    for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do wait "${daemons[i]}" 2>/dev/null || true; done
    [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap teardown EXIT
fail() {
    echo "sweep slurm: FAIL: $*" >&2
    for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done >&2
    exit 1
}
t0=$(date +%s)

# --- the cluster: one node, this host, its CPUs
free_port() { # the first port from $1 up that nothing listens on
    local p=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
    echo "$p"
}
host=$(hostname -s 2>/dev/null || hostname)
ctld_port=$(free_port $((20000 + $$ % 20000)))
slurmd_port=$(free_port $((ctld_port + 1)))
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/logs"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=pelabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock,cred_expire=10
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=10
# sbatch --wait polls every 2 s while MinJobAge is under 5 s (else up to every 32 s); a requeued task waits
# cred_expire seconds (default 120) before it runs again
MinJobAge=4
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=sweep Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
head -c 1024 /dev/urandom >"$tmp/munge.key"
chmod 600 "$tmp/munge.key"
munged -F -f --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --log-file="$tmp/munged.log" \
    --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" >"$tmp/munged.out" 2>&1 &
daemons+=($!)
for _ in $(seq 1 100); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge.sock" ] || fail "munged did not start: $(cat "$tmp/munged.out")"
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.log" 2>&1 &
daemons+=($!)
slurmd -D -N "$host" -f "$SLURM_CONF" >"$tmp/slurmd.log" 2>&1 &
daemons+=($!)
state=
for _ in $(seq 1 120); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || fail "the node is not idle after 60 s (state '$state')"
echo "sweep slurm: node $host idle ($(nproc) CPUs, slurmctld port $ctld_port) after $(($(date +%s) - t0)) s"

export PELAB_NO_GNUPLOT=1
work="$tmp/work $hostile"
mkdir -p "$work"
cd "$work"

# --- compare: an array of 4; task 1 requeued once its run has a checkpoint
OMP_NUM_THREADS=1 "$PELAB" compare "${M[@]}" --out ref >"$tmp/ref.log" 2>&1 ||
    fail "in-process compare: $(tail -n 5 "$tmp/ref.log")"
out="out $hostile"
"$PELAB" compare "${M[@]}" --out "$out" --jobs "$out.sbatch" --jobs-format slurm >"$tmp/jobs.log" 2>&1 ||
    fail "compare --jobs: $(cat "$tmp/jobs.log")"
grep -q '^#SBATCH --array=1-4$' "$out.sbatch" || fail "the array script asks for no 4 tasks: $(cat "$out.sbatch")"
sbatch --parsable --wait -o "$tmp/logs/compare_%a.out" "$out.sbatch" >"$tmp/sbatch.out" 2>"$tmp/sbatch.err" &
sb=$!
ckpt=$(sed -n 's/^1) .* --only \([^ ]*\) ;;$/\1/p' "$out.sbatch")
[ -n "$ckpt" ] || fail "no task 1 in the script"
for _ in $(seq 1 3000); do
    [ -e "$out/runs/$ckpt.safetensors" ] && break
    kill -0 "$sb" 2>/dev/null || break
    sleep 0.02
done
[ -e "$out/runs/$ckpt.safetensors" ] || fail "task 1 ($ckpt) wrote no checkpoint: $(cat "$tmp/sbatch.err" "$tmp"/logs/*)"
job=$(head -n 1 "$tmp/sbatch.out")
scontrol requeue "${job}_1" || fail "scontrol requeue ${job}_1"
wait "$sb" || fail "sbatch --wait: $(cat "$tmp/sbatch.err") $(cat "$tmp"/logs/compare_*.out)"
log1="$tmp/logs/compare_1.out"
grep -q 'attempt 1' "$log1" || fail "task 1 did not run again after its requeue: $(cat "$log1")"
resumed=$(resumed_at "$log1")
grep -q 'stopped at step' "$log1" || echo "sweep slurm: note: task 1's first attempt did not report its stop"
echo "sweep slurm: compare: array of 4, task 1 requeued in training, resumed at step $resumed of 300 ($(($(date +%s) - t0)) s)"
n=$(same_compare "$out")
"$PELAB" compare "${M[@]}" --out "$out" --jobs "$out.sbatch" --jobs-format slurm >"$tmp/jobs2.log" 2>&1 ||
    fail "--jobs: $(cat "$tmp/jobs2.log")"
[ ! -s "$out.sbatch" ] || fail "--jobs after the sweep: not empty: $(cat "$out.sbatch")"
echo "sweep slurm: compare: verdicts.csv and $((n - 1)) CSVs of runs and loss curves equal the in-process sweep's"

# --- suite: one array per look until the file is empty
"$PELAB" suite "${S[@]}" --dir sref >"$tmp/sref.log" 2>&1 || fail "in-process suite: $(tail -n 5 "$tmp/sref.log")"
t_sref=$(($(date +%s) - t0))
t_looks=()
sdir="suite $hostile"
looks=0
while "$PELAB" suite "${S[@]}" --dir "$sdir" --jobs "$sdir.sbatch" --jobs-format slurm >"$tmp/sjobs.log" 2>&1 &&
    [ -s "$sdir.sbatch" ]; do
    looks=$((looks + 1))
    [ $looks -le 2 ] || fail "suite --jobs: a third look's script"
    sbatch --wait -o "$tmp/logs/suite${looks}_%a.out" "$sdir.sbatch" >"$tmp/ssbatch.out" 2>&1 ||
        fail "sbatch --wait, suite look $looks: $(cat "$tmp/ssbatch.out") $(tail -n 5 "$tmp"/logs/suite${looks}_*.out)"
    t_looks+=($(($(date +%s) - t0)))
done
grep -q "every look's runs are finished" "$tmp/sjobs.log" || fail "suite --jobs: $(tail -n 3 "$tmp/sjobs.log")"
[ $looks -eq 2 ] || fail "suite --jobs: $looks looks ran, expected 2"
same_suite "$sdir"
echo "sweep slurm: suite: in-process at $t_sref s, looks at ${t_looks[*]} s"
echo "sweep slurm: suite: 2 looks as 2 arrays; claims.csv and both verdicts.csv equal the in-process suite's"

no_injection
echo "sweep slurm: ok ($(($(date +%s) - t0)) s)"
