#!/usr/bin/env bash
# Creates per second of `fsbench metadata --ops create` against fs_mark (-S 0: no sync, one
# thread; empty files and 4 KiB files; both name files as fs_mark does, 40 bytes, 24 random)
# and, with numbered names as its own, a bare C loop of open(O_CREAT)+close (createloop.c), in
# the same run,
# on tmpfs and on ext4 on a loop device. Each comparison runs as PAIRS alternating triples
# (fsbench, fs_mark, C loop) of FILES files each, in a fresh directory; printed: the median
# fsbench/other ratio over the pairs and its range. Raw figures go to bench/out/.
#
# Usage (root, for the mounts; needs fsmark: apt-get install -y fsmark):
#   bench/metadata-vs-fsmark.sh [PAIRS=7] [FILES=100000]
# FSBENCH=path/to/fsbench uses that binary instead of building the release one.
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
PAIRS=${1:-7}
FILES=${2:-100000}
command -v fs_mark >/dev/null || { echo "fs_mark is missing: apt-get install -y fsmark" >&2; exit 2; }
if [ -z "${FSBENCH:-}" ]; then
  cargo build --release --quiet
  FSBENCH=$PWD/target/release/fsbench
fi
OUT=bench/out
mkdir -p "$OUT"
cc -O2 -o "$OUT/createloop" bench/createloop.c
# fs_mark wants its directory's path under 40 bytes: a short work directory.
WORK=$(mktemp -d /tmp/fsb.XXXX)
cleanup() {
  umount "$WORK/tmpfs" 2>/dev/null || true
  umount "$WORK/ext4" 2>/dev/null || true
  if [ -n "${LOOP:-}" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  rm -rf "$WORK"
  rm -f "${IMAGE:-}"
}
trap cleanup EXIT
mkdir -p "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=2g fsbench-bench "$WORK/tmpfs"
IMAGE=$(mktemp /var/tmp/fsbench-bench.XXXXXX.img)
truncate -s 4g "$IMAGE"
LOOP=$(losetup --find --show --direct-io=on "$IMAGE")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mount "$LOOP" "$WORK/ext4"
RESULTS="$OUT/metadata-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\tcomparison\tpair\tfsbench_files_s\tother_files_s\n' > "$RESULTS"

fresh() { rm -rf "$1/run"; mkdir "$1/run"; sync; }
for fs in tmpfs ext4; do
  dir="$WORK/$fs"
  for pair in $(seq 1 "$PAIRS"); do
    fresh "$dir"
    a=$("$FSBENCH" metadata --dir "$dir/run" --ops create --count "$FILES" --no-store --quiet --json - \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["runs"][0]["cases"][0]["samples"][0]["results"][0]; print(next(m["value"] for m in r["measurements"] if m["metric"]=="ops_rate"))')
    fresh "$dir"
    f=$(fs_mark -S 0 -s 0 -n "$FILES" -t 1 -L 1 -l "$WORK/fs_log.txt" -d "$dir/run/fsm" \
      | awk '$1 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' | tail -1)
    # The C loop numbers its files (c-0, c-1, ...): fsbench with numbered names against it.
    fresh "$dir"
    s=$("$FSBENCH" metadata --dir "$dir/run" --ops create --count "$FILES" --names sequential --no-store --quiet --json - \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["runs"][0]["cases"][0]["samples"][0]["results"][0]; print(next(m["value"] for m in r["measurements"] if m["metric"]=="ops_rate"))')
    fresh "$dir"
    c=$("$OUT/createloop" "$dir/run" "$FILES")
    printf '%s\tcreate vs fs_mark -S 0\t%s\t%s\t%s\n' "$fs" "$pair" "$a" "$f" >> "$RESULTS"
    printf '%s\tcreate (sequential names) vs C loop\t%s\t%s\t%s\n' "$fs" "$pair" "$s" "$c" >> "$RESULTS"
    # 4 KiB files: one 4 KiB write before the close, as fs_mark -s 4096 writes them.
    fresh "$dir"
    a4=$("$FSBENCH" metadata --dir "$dir/run" --ops create --create-size 4k --count "$FILES" --no-store --quiet --json - \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["runs"][0]["cases"][0]["samples"][0]["results"][0]; print(next(m["value"] for m in r["measurements"] if m["metric"]=="ops_rate"))')
    fresh "$dir"
    f4=$(fs_mark -S 0 -s 4096 -n "$FILES" -t 1 -L 1 -l "$WORK/fs_log.txt" -d "$dir/run/fsm" \
      | awk '$1 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' | tail -1)
    printf '%s\tcreate 4k vs fs_mark -S 0 -s 4096\t%s\t%s\t%s\n' "$fs" "$pair" "$a4" "$f4" >> "$RESULTS"
  done
  rm -rf "$dir/run"
done

python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
groups = {}
for r in rows:
    ratio = float(r["fsbench_files_s"]) / float(r["other_files_s"])
    groups.setdefault((r["fs"], r["comparison"]), []).append((ratio, float(r["fsbench_files_s"]), float(r["other_files_s"])))
print("| filesystem | comparison | fsbench files/s (median) | other files/s (median) | ratio median | ratio min..max | pairs |")
print("|---|---|---:|---:|---:|---|---:|")
for (fs, comparison), v in groups.items():
    ratios = [x[0] for x in v]
    print(f"| {fs} | {comparison} | {statistics.median(x[1] for x in v):,.0f} | {statistics.median(x[2] for x in v):,.0f} | "
          f"**{statistics.median(ratios):.3f}** | {min(ratios):.3f}..{max(ratios):.3f} | {len(v)} |")
PY
echo "raw: $RESULTS"
