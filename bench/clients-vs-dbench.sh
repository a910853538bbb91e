#!/usr/bin/env bash
# The client load of Debian's client.txt replayed by `fsbench clients` against dbench itself,
# in the same run, on tmpfs and on ext4 on a loop device, at 1, 5 and 20 clients. Each
# comparison runs as PAIRS alternating pairs (fsbench, dbench), each for SECONDS (fsbench: 1 s
# warm-up + SECONDS-1 measured; dbench: -t SECONDS with its own minimum 1 s warm-up). Printed:
# the median fsbench/dbench throughput ratio (both count the bytes ReadX and WriteX ask for)
# and its range. Raw figures go to bench/out/.
#
# Usage (root, for the mounts; needs dbench: apt-get install -y dbench):
#   bench/clients-vs-dbench.sh [PAIRS=3] [SECONDS=6] [CLIENTS="1 5 20"]
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
PAIRS=${1:-3}
SECONDS_PER_RUN=${2:-6}
CLIENTS=${3:-"1 5 20"}
LOADFILE=/usr/share/dbench/client.txt
command -v dbench >/dev/null && [ -f "$LOADFILE" ] \
  || { echo "dbench and $LOADFILE are missing: apt-get install -y dbench" >&2; exit 2; }
cargo build --release --quiet
FSBENCH=$PWD/target/release/fsbench
OUT=bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
cleanup() {
  umount "$WORK/tmpfs" 2>/dev/null || true
  umount "$WORK/ext4" 2>/dev/null || true
  [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=6g fsbench-bench "$WORK/tmpfs"
truncate -s 8g "$WORK/ext4.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/ext4.img")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mount "$LOOP" "$WORK/ext4"
RESULTS="$OUT/clients-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\tclients\tpair\tfsbench_mb_s\tdbench_mb_s\n' > "$RESULTS"

for fs in tmpfs ext4; do
  dir="$WORK/$fs"
  for n in $CLIENTS; do
    for pair in $(seq 1 "$PAIRS"); do
      rm -rf "$dir/run"; mkdir "$dir/run"; sync
      a=$("$FSBENCH" clients --dir "$dir/run" --clients "$n" --loadfile "$LOADFILE" \
          --warmup 1s --duration "$((SECONDS_PER_RUN - 1))s" --no-store --quiet --json - \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["runs"][0]["cases"][0]["samples"][0]["results"][0]; print(next(m["value"] for m in r["measurements"] if m["metric"]=="throughput")/1e6)')
      rm -rf "$dir/run"; mkdir "$dir/run"; sync
      d=$(dbench -c "$LOADFILE" -t "$SECONDS_PER_RUN" -D "$dir/run" "$n" 2>/dev/null \
        | awk '/^Throughput/ { print $2 }')
      printf '%s\t%s\t%s\t%s\t%s\n' "$fs" "$n" "$pair" "$a" "$d" >> "$RESULTS"
    done
  done
  rm -rf "$dir/run"
done

python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
groups = {}
for r in rows:
    a, d = float(r["fsbench_mb_s"]), float(r["dbench_mb_s"])
    groups.setdefault((r["fs"], r["clients"]), []).append((a / d, a, d))
print("| filesystem | clients | fsbench MB/s (median) | dbench MB/s (median) | ratio median | ratio min..max | pairs |")
print("|---|---:|---:|---:|---:|---|---:|")
for (fs, n), v in groups.items():
    ratios = [x[0] for x in v]
    print(f"| {fs} | {n} | {statistics.median(x[1] for x in v):,.0f} | {statistics.median(x[2] for x in v):,.0f} | "
          f"**{statistics.median(ratios):.3f}** | {min(ratios):.3f}..{max(ratios):.3f} | {len(v)} |")
PY
echo "raw: $RESULTS"
