#!/usr/bin/env bash
# Scale-out against independent processes: at 1, 2 and 4 ranks, the aggregate figure of
# `mpirun -np N fsbench WORKLOAD` (total over the slowest rank's time, as rank 0 merges it)
# against N independent `fsbench WORKLOAD` processes started together, their totals over the
# slowest one's time (the same rule), in the same run, on tmpfs and on ext4 on a loop device.
# Workloads: metadata creates (COUNT files per rank) and the matrix's write of a 64 MiB file in
# 1 MiB records. Each comparison runs PAIRS alternating (job, independent) pairs; printed: the
# median job/independent ratio and its range (1.0 = MPI costs the measurement nothing). Also the
# wall time of `mpirun -np N fsbench sleep --duration 1ms` against one `fsbench sleep`: the launch,
# the start agreement and the gather; and the cost per phase of the barriers, the gathers and
# rank 0's store (a matrix of 100 tiny phases). Raw figures go to bench/out/.
#
# Usage (root; needs the MPI build's packages: scripts/install-deps.sh --mpi):
#   bench/mpi-scaling.sh [PAIRS=5] [COUNT=20000]
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
PAIRS=${1:-5}
COUNT=${2:-20000}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release --quiet -p fsbench --features mpi
FSBENCH=$PWD/target/release/fsbench
OUT=bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/fsb-mpi.XXXX)
cleanup() {
  umount "$WORK/tmpfs" 2>/dev/null || true
  umount "$WORK/ext4" 2>/dev/null || true
  [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
  rm -f "${IMAGE:-}"
}
trap cleanup EXIT
mkdir -p "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=4g fsbench-bench "$WORK/tmpfs"
IMAGE=$(mktemp /var/tmp/fsbench-bench.XXXXXX.img)
truncate -s 8g "$IMAGE"
LOOP=$(losetup --find --show --direct-io=on "$IMAGE")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mount "$LOOP" "$WORK/ext4"
RESULTS="$OUT/mpi-scaling-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\tworkload\tranks\tpair\tjob\tindependent\n' > "$RESULTS"

# The aggregate of one or more exports: total (ops or bytes) over the slowest elapsed.
aggregate() {
  python3 - "$@" <<'PY'
import json, sys
metric = sys.argv[1]
amount = "ops" if metric == "ops_rate" else "bytes"
total, slowest = 0.0, 0.0
for path in sys.argv[2:]:
    d = json.load(open(path))
    r = d["runs"][0]["cases"][0]["samples"][0]["results"][0]
    m = {x["metric"]: x["value"] for x in r["measurements"]}
    total += m[amount]
    slowest = max(slowest, m["elapsed"])
print(total / (slowest / 1e9))
PY
}

declare -A ARGS=(
  [create]="metadata --ops create --count $COUNT"
  [write]="matrix --tests write --file-sizes 64m --record-sizes 1m --min-time 0"
)
declare -A METRIC=([create]=ops_rate [write]=throughput)
for fs in tmpfs ext4; do
  for workload in create write; do
    for ranks in 1 2 4; do
      for pair in $(seq 1 "$PAIRS"); do
        dir="$WORK/$fs/run"
        rm -rf "$dir"; mkdir -p "$dir"; sync
        # shellcheck disable=SC2086
        mpirun --oversubscribe -np "$ranks" "$FSBENCH" ${ARGS[$workload]} --dir "$dir" \
          --no-store --quiet --json "$WORK/job.json"
        job=$(aggregate "${METRIC[$workload]}" "$WORK/job.json")
        rm -rf "$dir"; mkdir -p "$dir"; sync
        files=()
        for i in $(seq 0 $((ranks - 1))); do
          mkdir -p "$dir/solo-$i"
          # shellcheck disable=SC2086
          "$FSBENCH" ${ARGS[$workload]} --dir "$dir/solo-$i" --no-store --quiet \
            --json "$WORK/solo-$i.json" &
          files+=("$WORK/solo-$i.json")
        done
        wait
        solo=$(aggregate "${METRIC[$workload]}" "${files[@]}")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$workload" "$ranks" "$pair" "$job" "$solo" >> "$RESULTS"
      done
    done
  done
done

# Launch, start agreement and gather: wall time of an empty job against one empty process.
LAUNCH="$OUT/mpi-launch-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'ranks\tpair\tjob_s\tsolo_s\n' > "$LAUNCH"
for ranks in 1 2 4; do
  for pair in $(seq 1 "$PAIRS"); do
    s=$(date +%s.%N)
    mpirun --oversubscribe -np "$ranks" "$FSBENCH" sleep --duration 1ms --no-store --quiet --dir "$WORK/tmpfs"
    m=$(date +%s.%N)
    "$FSBENCH" sleep --duration 1ms --no-store --quiet --dir "$WORK/tmpfs"
    e=$(date +%s.%N)
    python3 -c "print('$ranks\t$pair\t%.6f\t%.6f' % ($m - $s, $e - $m))" >> "$LAUNCH"
  done
done

# The cost of a phase's barriers and reductions: a matrix of 100 tiny phases (4 KiB-256 KiB
# files, write and read, no minimum time), the sample's elapsed time (from the workload's start
# to its end, inside the process: no launch) of a job of N ranks against one process's, per
# phase. It holds the two barriers, the gather of each rank's results, rank 0's merge and
# store, and the wait for the slowest rank.
PHASES="$OUT/mpi-phases-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'ranks\tpair\tphases\tjob_ns\tsolo_ns\n' > "$PHASES"
elapsed() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["runs"][0]["cases"][0]["samples"][0]
print(s["elapsed_ns"], len(s["results"]))
PY
}
TINY="matrix --tests write,read --file-sizes 4k..256k --record-sizes 4k..64k --min-time 0"
for ranks in 1 2 4; do
  for pair in $(seq 1 "$PAIRS"); do
    dir="$WORK/tmpfs/run"
    rm -rf "$dir"; mkdir -p "$dir"
    # shellcheck disable=SC2086
    mpirun --oversubscribe -np "$ranks" "$FSBENCH" $TINY --dir "$dir" --no-store --quiet --json "$WORK/job.json"
    read -r job phases < <(elapsed "$WORK/job.json")
    rm -rf "$dir"; mkdir -p "$dir"
    # shellcheck disable=SC2086
    "$FSBENCH" $TINY --dir "$dir" --no-store --quiet --json "$WORK/solo.json"
    read -r solo _ < <(elapsed "$WORK/solo.json")
    printf '%s\t%s\t%s\t%s\t%s\n' "$ranks" "$pair" "$phases" "$job" "$solo" >> "$PHASES"
  done
done

python3 - "$RESULTS" "$LAUNCH" "$PHASES" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print(f"{'fs':6} {'workload':8} {'ranks':>5} {'job (median)':>16} {'independent':>16} {'ratio':>6}  range")
keys = sorted({(r["fs"], r["workload"], int(r["ranks"])) for r in rows}, key=lambda k: (k[0] != "tmpfs", k[1], k[2]))
for fs, wl, n in keys:
    sel = [r for r in rows if (r["fs"], r["workload"], int(r["ranks"])) == (fs, wl, n)]
    ratios = [float(r["job"]) / float(r["independent"]) for r in sel]
    unit = "ops/s" if wl == "create" else "MiB/s"
    scale = 1 if wl == "create" else 1 / 1048576
    job = statistics.median(float(r["job"]) for r in sel) * scale
    solo = statistics.median(float(r["independent"]) for r in sel) * scale
    print(f"{fs:6} {wl:8} {n:>5} {job:>10.0f} {unit:5} {solo:>10.0f} {unit:5} {statistics.median(ratios):6.3f}  {min(ratios):.3f}..{max(ratios):.3f}")
launch = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
for n in (1, 2, 4):
    sel = [r for r in launch if int(r["ranks"]) == n]
    j = statistics.median(float(r["job_s"]) for r in sel)
    s = statistics.median(float(r["solo_s"]) for r in sel)
    print(f"empty job, {n} ranks: {j:.3f} s wall (median) against {s:.3f} s for one process")
phases = list(csv.DictReader(open(sys.argv[3]), delimiter="\t"))
for n in (1, 2, 4):
    sel = [r for r in phases if int(r["ranks"]) == n]
    per = [(int(r["job_ns"]) - int(r["solo_ns"])) / int(r["phases"]) / 1e3 for r in sel]
    print(f"per phase, {n} ranks: {statistics.median(per):.0f} us (median; range {min(per):.0f}..{max(per):.0f}) over {sel[0]['phases']} phases")
PY
