#!/usr/bin/env bash
# fsbench io against fio's io_uring engine, in the same run, on the same files.
#
# 4 KiB random reads and random writes at queue depths 1, 8, 32 and 128, one thread: O_DIRECT on
# ext4 on a loop device (a sparse image in /var/tmp, on ext4, with direct I/O on the backing
# file), and buffered on tmpfs. Each comparison runs as PAIRS pairs whose order alternates
# (fsbench first in odd pairs, fio first in even ones, so whatever the first run of a pair leaves
# behind — the host's cache of the image, io-wq workers, memory handed back to the hypervisor —
# favours neither), every job running SECONDS (time-based); both use their defaults otherwise
# (one submission per operation, waiting for one completion at a time when the queue is full),
# so they issue the same system calls. Printed per filesystem and comparison: the median
# fsbench/fio IOPS ratio over the pairs (with min..max) and the median ratio of CPU time per
# operation (user + system of the process over the run, per operation; below 1: fsbench spends
# less). Also, in the same pairs, fsbench's sync engine (pread/pwrite) against its io_uring
# engine at depth 1, also in alternating order: they should agree within noise.
#
# Each run lays out a file of its own, untimed, and removes it: fsbench as it always does, fio
# in a job of its own before the timed one (create_only=1 with overwrite=1: the file written
# whole, as fsbench's layout and its --overwrite). fio runs with invalidate=0 (with O_DIRECT the cache does
# not matter; buffered on tmpfs there is no other copy).
#
# CPU time: fsbench's cpu_per_op is its process's user + system time over the timed phase, which
# includes io_uring's io-wq workers (threads of the process that serve buffered reads and
# writes). fio's own usr_cpu/sys_cpu count its job thread only (about half of it here for
# buffered tmpfs I/O), so fio's side is its whole process as time(1) reports it (its start-up
# included: tens of milliseconds against SECONDS of I/O, in fio's disfavour); the TSV keeps fio's
# own figure too.
#
# Scheduling policy: fsbench runs its threads (and their io-wq workers) under SCHED_BATCH by
# default, fio under SCHED_OTHER. FSBENCH_SCHED=normal runs fsbench with --cpu-sched normal, and
# FIO_SCHED=batch runs fio under `chrt -b 0`: with both the same, the comparison is of the engines
# alone. The TSV records what each ran under: fsbench's as its results say, fio's as chrt set it.
#
# Usage (root, for the tmpfs and loop mounts): bench/io-vs-fio.sh [PAIRS=5] [SECONDS=5]
# A subset: FILESYSTEMS="ext4", DEPTHS="1 32", PATTERNS="randread", SIZE=1g (each file).
# Every pair's figures go to bench/results/io-vs-fio-<time>.tsv.
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
PAIRS=${1:-5}
SECONDS_PER_JOB=${2:-5}
SIZE=${SIZE:-1g}
FSBENCH_SCHED=${FSBENCH_SCHED:-batch}
FIO_SCHED=${FIO_SCHED:-normal}
case "$FIO_SCHED" in
  normal) FIO_PREFIX=() ;;
  batch) FIO_PREFIX=(chrt -b 0) ;;
  *) echo "error: FIO_SCHED is normal or batch, not '$FIO_SCHED'" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/rust-env.sh
cargo build --release --locked -q
FSBENCH=$PWD/target/release/fsbench
OUT=$PWD/bench/out
mkdir -p "$OUT" bench/results
command -v fio >/dev/null || { echo "error: fio is not installed (apt-get install -y fio)" >&2; exit 1; }

WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
LOOP=""
cleanup() {
  set +e
  for m in "$WORK/ext4" "$WORK/tmpfs"; do mountpoint -q "$m" && umount "$m"; done
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir -p "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=3g fsbench-bench "$WORK/tmpfs"
truncate -s 4G "$WORK/ext4.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/ext4.img")
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mount "$LOOP" "$WORK/ext4"

RESULTS="$PWD/bench/results/io-vs-fio-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\tcomparison\tpair\tfsbench_iops\tother_iops\tfsbench_cpu_ns_per_op\tother_cpu_ns_per_op\tfio_job_thread_cpu_ns_per_op\tfsbench_sched\tother_sched\n' > "$RESULTS"

# fsbench JSON (fsbench.run v2) -> "IOPS CPU-ns-per-operation policy" of the result of a
# direction (the policy its threads ran under, as its results say).
fsbench_figures() {
  python3 -c '
import json, sys
results = json.load(open(sys.argv[1]))["runs"][0]["cases"][0]["samples"][0]["results"]
r = next(r for r in results if r.get("operation") == sys.argv[2])
m = {x["metric"]: x["value"] for x in r["measurements"]}
print(m["ops_rate"], m["cpu_per_op"], r["attributes"]["cpu_sched"])
' "$1" "$2"
}
# fio JSON and time(1)'s "user system" -> "IOPS process-CPU-ns-per-operation
# job-thread-CPU-ns-per-operation" of the job's direction (usr_cpu and sys_cpu are % of the job's
# runtime).
fio_figures() {
  python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j[sys.argv[2]]
ios = max(d["total_ios"], 1)
user, system = map(float, open(sys.argv[3]).read().split()[-2:])
job_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1e6
print(d["iops"], (user + system) * 1e9 / ios, job_ns / ios)
' "$1" "$2" "$3"
}
# dir rw depth engine direct: runs fsbench io on a file it lays out and removes.
run_fsbench() {
  local extra=()
  [ "$5" = 1 ] && extra+=(--direct)
  [ "$2" = randwrite ] && extra+=(--overwrite)
  FSBENCH_DB="$OUT/bench.db" "$FSBENCH" io --dir "$1" --rw "$2" --bs 4k --size "$SIZE" \
    --iodepth "$3" --engine "$4" --cpu-sched "$FSBENCH_SCHED" --runtime "${SECONDS_PER_JOB}s" --time-based \
    "${extra[@]}" --quiet --json "$OUT/fsbench.json" 2>"$OUT/fsbench.err" >/dev/null \
    || { cat "$OUT/fsbench.err" >&2; exit 1; }
}
# dir rw depth direct: runs fio on a file it lays out first, and removes it.
run_fio() {
  local file="$1/fio.file"
  # The layout as a job of its own (create_only), so time(1) below counts the timed run only.
  fio --name=layout --filename="$file" --size="$SIZE" --bs=4k --rw="$2" --ioengine=psync \
    --direct="$4" --overwrite=1 --create_only=1 --output=/dev/null >/dev/null
  /usr/bin/time -f '%U %S' -o "$OUT/fio.time" "${FIO_PREFIX[@]}" fio --name=job --filename="$file" --size="$SIZE" --bs=4k --rw="$2" --ioengine=io_uring \
    --iodepth="$3" --direct="$4" --invalidate=0 --overwrite=1 --numjobs=1 --thread --time_based \
    --runtime="$SECONDS_PER_JOB" --randrepeat=0 --output-format=json --output="$OUT/fio.json" >/dev/null
  rm -f "$file"
}
# fs comparison pair "a_iops a_cpu a_policy" "b_iops b_cpu b_job_cpu|b_policy" other:
# other is fio (b's third figure its job thread's CPU, its policy the one chrt set) or fsbench
# (b's third figure its policy).
record() {
  local ai ac as bi bc bx bj="" os
  read -r ai ac as <<< "$4"
  read -r bi bc bx <<< "$5"
  if [ "$6" = fio ]; then bj=$bx; os=$FIO_SCHED; else os=$bx; fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$ai" "$bi" "$ac" "$bc" "$bj" \
    "$as" "$os" >> "$RESULTS"
}

for fs in ${FILESYSTEMS:-ext4 tmpfs}; do
  dir="$WORK/$fs"
  direct=0
  [ "$fs" = ext4 ] && direct=1
  for pair in $(seq 1 "$PAIRS"); do
    for rw in ${PATTERNS:-randread randwrite}; do
      dirn=read
      [ "$rw" = randwrite ] && dirn=write
      for depth in ${DEPTHS:-1 8 32 128}; do
        # Odd pairs: fsbench io_uring, fio (, fsbench sync); even pairs the other way round.
        if [ $((pair % 2)) = 1 ]; then
          run_fsbench "$dir" "$rw" "$depth" io_uring "$direct"
          a=$(fsbench_figures "$OUT/fsbench.json" "$dirn")
          run_fio "$dir" "$rw" "$depth" "$direct"
          b=$(fio_figures "$OUT/fio.json" "$dirn" "$OUT/fio.time")
          if [ "$depth" = 1 ]; then
            run_fsbench "$dir" "$rw" 1 sync "$direct"
            s=$(fsbench_figures "$OUT/fsbench.json" "$dirn")
          fi
        else
          if [ "$depth" = 1 ]; then
            run_fsbench "$dir" "$rw" 1 sync "$direct"
            s=$(fsbench_figures "$OUT/fsbench.json" "$dirn")
          fi
          run_fio "$dir" "$rw" "$depth" "$direct"
          b=$(fio_figures "$OUT/fio.json" "$dirn" "$OUT/fio.time")
          run_fsbench "$dir" "$rw" "$depth" io_uring "$direct"
          a=$(fsbench_figures "$OUT/fsbench.json" "$dirn")
        fi
        record "$fs" "$rw 4k depth $depth" "$pair" "$a" "$b" fio
        [ "$depth" = 1 ] && record "$fs" "$rw 4k depth 1: sync vs io_uring" "$pair" "$s" "$a" fsbench
      done
    done
    echo "$fs: pair $pair of $PAIRS done" >&2
  done
done

python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
groups = {}
for r in rows:
    a, b = float(r["fsbench_iops"]), float(r["other_iops"])
    ca, cb = float(r["fsbench_cpu_ns_per_op"]), float(r["other_cpu_ns_per_op"])
    groups.setdefault((r["fs"], r["comparison"]), []).append((a / b, a, b, ca / cb if cb else float("nan")))
vs_fio = [r for r in rows if "sync vs" not in r["comparison"]]
print("policies: fsbench " + "/".join(sorted({r["fsbench_sched"] for r in rows}))
      + ", fio " + "/".join(sorted({r["other_sched"] for r in vs_fio})) + "\n")
print("| filesystem | comparison | fsbench IOPS (median) | other IOPS (median) | IOPS ratio median | min..max | CPU/op ratio median | pairs |")
print("|---|---|---:|---:|---:|---|---:|---:|")
for (fs, comp), vals in groups.items():
    ratios = [v[0] for v in vals]
    other = "fsbench io_uring" if "sync vs" in comp else "fio io_uring"
    print(f"| {fs} | {comp} (vs {other}) | {statistics.median(v[1] for v in vals):,.0f} | "
          f"{statistics.median(v[2] for v in vals):,.0f} | {statistics.median(ratios):.3f} | "
          f"{min(ratios):.3f}..{max(ratios):.3f} | {statistics.median(v[3] for v in vals):.3f} | {len(vals)} |")
print(f"\nraw pairs: {sys.argv[1]}")
PY
