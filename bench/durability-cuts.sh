#!/usr/bin/env bash
# Cuts per minute per filesystem (issue 39): `fsbench durability` on a loop device of each
# filesystem, every cut whole — the sequence, the shutdown ioctl, umount, the timed mount that
# recovers the log, the read-only fsck, mount again and the oracle's check of every file — over
# the run's wall time; with the recovery time's median and maximum and the violations found.
# With CUT=power (issue 40) every cut is a power cut of the recording device: its crash states
# counted too, and states per minute. Violations of the default cut are reduced after the cuts
# (untimed in the figures, but in the wall time here).
# SEQUENCES=seq-1 runs one family only (CrashMonkey's seq-1 suite: one operation and its
# persistence call per cut).
# Usage: [CUT=shutdown|power] [SEQUENCES=seq-1,seq-2,mixed] [FILESYSTEMS="ext4 xfs"] bench/durability-cuts.sh [CUTS] [RUNS].
# Needs root (loop devices, mount).
set -euo pipefail
CUTS=${1:-200}
RUNS=${2:-3}
FILESYSTEMS=${FILESYSTEMS:-"ext4 xfs"}
CUT=${CUT:-shutdown}
SEQUENCES=${SEQUENCES:-seq-1,seq-2,mixed}
cd "$(dirname "$0")/.."
lscpu | grep -E '^Model name' || true
cargo build --release --quiet
FSBENCH=$PWD/target/release/fsbench
OUT=$PWD/bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/fsbench-cuts.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
RESULTS="$OUT/durability-cuts-$CUT-${SEQUENCES//,/+}-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\trun\tcuts\twall_s\tcuts_per_min\trecovery_p50_ms\trecovery_max_ms\tviolations\tstates\tstates_per_min\n' > "$RESULTS"
for run in $(seq 1 "$RUNS"); do
  for fs in $FILESYSTEMS; do
    start=$(date +%s.%N)
    "$FSBENCH" durability --fs "$fs" --cut "$CUT" --sequences "$SEQUENCES" --cuts "$CUTS" --seed "$run" --work-dir "$WORK/work" \
      --no-store --quiet --json "$WORK/d.json" >/dev/null
    end=$(date +%s.%N)
    python3 - "$WORK/d.json" "$fs" "$run" "$start" "$end" >> "$RESULTS" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]["cases"][0]["samples"][0]["results"][0]
m = {x["metric"]: x["value"] for x in r["measurements"]}
wall = float(sys.argv[5]) - float(sys.argv[4])
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{m["cuts"]:.0f}\t{wall:.2f}\t{m["cuts"] / wall * 60:.1f}\t'
      f'{m["recovery_p50"] / 1e6:.1f}\t{m["recovery_max"] / 1e6:.1f}\t{m["violations"]:.0f}\t'
      f'{m.get("crash_states", 0):.0f}\t{m.get("crash_states", 0) / wall * 60:.1f}')
PY
    echo "run $run $fs done" >&2
  done
done
python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("| filesystem | cuts/min (median) | min..max | crash states/min (median) | recovery p50 ms (median) | recovery max ms (max) | violations | runs |")
print("|---|---:|---|---:|---:|---:|---:|---:|")
for fs in dict.fromkeys(r["fs"] for r in rows):
    r = [x for x in rows if x["fs"] == fs]
    c = [float(x["cuts_per_min"]) for x in r]
    states = statistics.median(float(x["states_per_min"]) for x in r)
    print(f'| {fs} | **{statistics.median(c):,.0f}** | {min(c):,.0f}..{max(c):,.0f} | {states:,.0f} | '
          f'{statistics.median(float(x["recovery_p50_ms"]) for x in r):.1f} | '
          f'{max(float(x["recovery_max_ms"]) for x in r):.1f} | '
          f'{sum(int(x["violations"]) for x in r)} | {len(r)} |')
print(f"\nraw runs: {sys.argv[1]}")
PY
