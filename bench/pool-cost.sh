#!/usr/bin/env bash
# What the size of fsbench's data pool costs a bare 4 KiB pwrite loop on tmpfs: the same loop
# from one buffer and from rotating stamped pools of 128 KiB, 256 KiB and 1 MiB, in alternating
# rounds (bench/pool-cost.c). Usage: bench/pool-cost.sh [ROUNDS] [SECONDS]. Needs root (mount).
set -euo pipefail
ROUNDS=${1:-5}
SECONDS_PER_JOB=${2:-2}
cd "$(dirname "$0")/.."
lscpu | grep -E '^Model name' || true
OUT=$PWD/bench/out
mkdir -p "$OUT"
cc -O2 -o "$OUT/pool-cost" bench/pool-cost.c
WORK=$(mktemp -d /var/tmp/fsbench-pool.XXXXXX)
cleanup() { set +e; mountpoint -q "$WORK" && umount "$WORK"; rmdir "$WORK"; }
trap cleanup EXIT INT TERM
mount -t tmpfs -o size=2g fsbench-bench "$WORK"
dd if=/dev/zero of="$WORK/f" bs=1M count=1024 status=none
RESULTS="$OUT/pool-cost-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'round\tpool_bytes\tmib_s\n' > "$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
  for pool in 0 131072 262144 1048576; do
    printf '%s\t%s\t%s\n' "$round" "$pool" "$("$OUT/pool-cost" "$WORK/f" "$pool" "$SECONDS_PER_JOB")" >> "$RESULTS"
  done
done
python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(int(r["pool_bytes"]), []).append(float(r["mib_s"]))
base = statistics.median(by[0])
print("| pool | MiB/s (median) | min..max | vs one buffer |")
print("|---|---:|---|---:|")
for pool, v in sorted(by.items()):
    name = "one buffer" if pool == 0 else f"{pool >> 10} KiB"
    print(f"| {name} | {statistics.median(v):,.0f} | {min(v):,.0f}..{max(v):,.0f} | {statistics.median(v) / base:.3f} |")
print(f"\nraw: {sys.argv[1]}")
PY
