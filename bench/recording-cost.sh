#!/usr/bin/env bash
# What the recording device costs the filesystem on it (issue 40): the same writes on a
# filesystem fsbench makes on the plain loop device and on the recording device (recording, as
# a power cut's sequence runs: every write's bytes go to the log), PAIRS alternating pairs on
# fresh 1 GiB targets — FILES small files (4 KiB each, fsync'd) and a STREAM_MIB MiB stream
# (1 MiB records, then fsync). Printed: per filesystem, the median recorded/plain ratio of each
# and its range. The recording device is never used for speed figures; this is what a user
# waits for in a power-cut run besides the crash states.
# Usage: [FILESYSTEMS="ext4 xfs btrfs"] bench/recording-cost.sh [PAIRS=5] [FILES=2000] [STREAM_MIB=256]
# Needs root (loop devices, mount, FUSE).
set -euo pipefail
PAIRS=${1:-5}
FILES=${2:-2000}
STREAM=${3:-256}
FILESYSTEMS=${FILESYSTEMS:-"ext4 xfs btrfs"}
cd "$(dirname "$0")/.."
lscpu | grep -E '^Model name' || true
cargo build --release --quiet -p fsbench-testbed --example recording_cost
BIN=$PWD/target/release/examples/recording_cost
OUT=$PWD/bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/fsbench-recording-cost.XXXXXX)
chmod 700 "$WORK"
trap 'rm -rf "$WORK"' EXIT INT TERM
RESULTS="$OUT/recording-cost-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\tpair\tdevice\tsmall_files_per_s\tstream_mib_s\n' > "$RESULTS"
for fs in $FILESYSTEMS; do
  "$BIN" "$fs" "$PAIRS" "$FILES" "$STREAM" "$WORK" | tail -n +2 | sed "s/^/$fs\t/" >> "$RESULTS"
done
python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print(f"raw: {sys.argv[1]}")
print("filesystem  measure                       plain (median)  recorded (median)  ratio median  min..max  pairs")
for fs in dict.fromkeys(r["fs"] for r in rows):
    for key, label in [("small_files_per_s", "4 KiB files fsync'd, /s"), ("stream_mib_s", "stream + fsync, MiB/s")]:
        pairs = {}
        for r in rows:
            if r["fs"] == fs:
                pairs.setdefault(r["pair"], {})[r["device"]] = float(r[key])
        ratios = [p["recorded"] / p["plain"] for p in pairs.values() if "recorded" in p and "plain" in p]
        plain = statistics.median(p["plain"] for p in pairs.values())
        rec = statistics.median(p["recorded"] for p in pairs.values())
        print(f"{fs:<11} {label:<29} {plain:>14.1f}  {rec:>17.1f}  {statistics.median(ratios):>12.3f}  "
              f"{min(ratios):.3f}..{max(ratios):.3f}  {len(ratios)}")
PY
