#!/usr/bin/env bash
# What recording a phase's series costs: the same fsbench run with series and monitors (the
# default, `--interval auto`: 100 ms) against it without (`--interval off`), side by side.
#
# 4 KiB buffered I/O on tmpfs (where the harness's share of an operation is largest: nothing
# waits for a device), one thread and four: sequential writes and random reads with the sync
# engine (pread/pwrite) over a file of SIZE, time-based for SECONDS each. Each comparison runs
# as PAIRS alternating pairs, the order flipped every pair (with, without; without, with; ...) so
# a drift of the machine favours neither. Printed per comparison: the median with/without ratio
# of fsbench's own IOPS figure over the pairs, with min..max (goal: within 1 %, a ratio of at
# least 0.99). Every pair's figures go to bench/results/series-overhead-<time>.tsv.
#
# Usage (root, for the tmpfs mount): bench/series-overhead.sh [PAIRS=7] [SECONDS=5]
# A subset: PATTERNS="write", THREADS="1", SIZE=512m, INTERVAL=10ms (the shortest: its cost).
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
PAIRS=${1:-7}
SECONDS_PER_JOB=${2:-5}
SIZE=${SIZE:-1g}
PATTERNS=${PATTERNS:-write randread}
THREADS=${THREADS:-1 4}
INTERVAL=${INTERVAL:-auto}
cd "$(dirname "$0")/.."
scripts/install-deps.sh
. scripts/rust-env.sh
cargo build --release --locked -q
FSBENCH=$PWD/target/release/fsbench
mkdir -p bench/results

WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
cleanup() {
  set +e
  mountpoint -q "$WORK/tmpfs" && umount "$WORK/tmpfs"
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
mkdir -p "$WORK/tmpfs"
mount -t tmpfs -o size=6g fsbench-bench "$WORK/tmpfs"

RESULTS="$PWD/bench/results/series-overhead-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'pattern\tthreads\tpair\twith_iops\twithout_iops\tratio\tseries_points\n' > "$RESULTS"

# One run -> "IOPS series-points" (fsbench.run v2 JSON: the first result's ops_rate, and how many
# points its sample's series hold: 0 without series).
run() {
  local pattern=$1 threads=$2 interval=$3 json=$WORK/out.json
  "$FSBENCH" io --dir "$WORK/tmpfs" --rw "$pattern" --bs 4k --size "$SIZE" --engine sync \
    --threads "$threads" --runtime "${SECONDS_PER_JOB}s" --time-based --overwrite \
    --interval "$interval" --json "$json" --no-store >/dev/null 2>"$WORK/err" ||
    { cat "$WORK/err" >&2; exit 1; }
  python3 -c '
import json, sys
sample = json.load(open(sys.argv[1]))["runs"][0]["cases"][0]["samples"][0]
r = sample["results"][0]
m = {x["metric"]: x["value"] for x in r["measurements"]}
points = sum(len(s.get("points", [])) for s in sample.get("series") or [])
print(m["ops_rate"], points)
' "$json"
}

for pattern in $PATTERNS; do
  for threads in $THREADS; do
    for pair in $(seq 1 "$PAIRS"); do
      if [ $((pair % 2)) -eq 1 ]; then
        read -r with points < <(run "$pattern" "$threads" "$INTERVAL")
        read -r without _ < <(run "$pattern" "$threads" off)
      else
        read -r without _ < <(run "$pattern" "$threads" off)
        read -r with points < <(run "$pattern" "$threads" "$INTERVAL")
      fi
      ratio=$(python3 -c "print($with / $without)")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pattern" "$threads" "$pair" "$with" "$without" "$ratio" "$points" >> "$RESULTS"
    done
  done
done

python3 - "$RESULTS" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print(f"{'pattern':<10} {'threads':>7} {'with IOPS':>12} {'without IOPS':>13} {'ratio median':>13} {'min..max':>14} {'pairs':>5} {'points':>7}")
for key in dict.fromkeys((r["pattern"], r["threads"]) for r in rows):
    sel = [r for r in rows if (r["pattern"], r["threads"]) == key]
    ratios = [float(r["ratio"]) for r in sel]
    w = statistics.median(float(r["with_iops"]) for r in sel)
    wo = statistics.median(float(r["without_iops"]) for r in sel)
    print(f"{key[0]:<10} {key[1]:>7} {w:>12.0f} {wo:>13.0f} {statistics.median(ratios):>13.4f} "
          f"{min(ratios):>6.4f}..{max(ratios):.4f} {len(sel):>5} {sel[0]['series_points']:>7}")
print(f"every pair: {sys.argv[1]}")
EOF
