#!/usr/bin/env bash
# Aging speed and the cost of paying for it once: for each filesystem, an image of SIZE aged to
# FILL % with CHURN rounds (fsbench's aging, docs/targets.md "Aged filesystems"), timed as
# fsbench stores it (the aging itself: files and bytes per second; and the whole making of the
# cached image: mkfs, aging, the read-only check, the fingerprint); then COPIES runs that start
# from the cached image, each timing its copy — against aging again, which is what each sample
# would pay without the cache. The copies are measured twice: with the work directory on the
# host's own filesystem (here ext4: a sparse copy of the data) and, with REFLINK=1, on an xfs
# made for it (a reflink, FICLONE). Raw figures go to bench/out/.
#
# Usage (root, for the loop devices and mounts):
#   bench/aging.sh [SIZE=4g] [FILL=70] [CHURN=3] [FILESYSTEMS="ext4 xfs btrfs"] [COPIES=3] [REFLINK=1]
# FSBENCH=path/to/fsbench uses that binary instead of building the release one.
# The work directories are made in /var/tmp; the host needs about 2 x SIZE x FILL % free (one
# filesystem's cached image and a copy at a time), and SIZE x FILL % more with REFLINK=1 (its
# xfs, a sparse image of 2 x SIZE + 1 GiB, takes what is written to it).
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
SIZE=${1:-4g}
FILL=${2:-70}
CHURN=${3:-3}
FILESYSTEMS=${4:-"ext4 xfs btrfs"}
COPIES=${5:-3}
REFLINK=${6:-1}
if [ -z "${FSBENCH:-}" ]; then
  cargo build --release --quiet
  FSBENCH=$PWD/target/release/fsbench
fi
export PATH="$PATH:/usr/sbin:/sbin"
OUT=bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
cleanup() {
  for w in "$WORK"/work-*; do
    [ -d "$w" ] && "$FSBENCH" cleanup --aged-images --work-dir "$w" >/dev/null 2>&1 || true
  done
  umount "$WORK/xfs" 2>/dev/null || true
  [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
RESULTS="$OUT/aging-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'fs\twork_dir_fs\trun\twall_s\taging_s\tfill_percent\tfiles_written\tbytes_written\trounds\textents_per_file\tfree_extents\tcopy_method\tcopy_s\tcopied_bytes\n' > "$RESULTS"

# One run on FS aged as asked, in work directory $2 (on $3), the $4-th; appends its figures.
run() {
  local fs=$1 work=$2 where=$3 n=$4 start end
  start=$(date +%s.%N)
  "$FSBENCH" sleep --duration 1ms --fs "$fs" --device "image:$SIZE" \
    --age "fill=$FILL,churn=$CHURN" --work-dir "$work" --no-store --quiet --json "$WORK/last.json"
  end=$(date +%s.%N)
  python3 - "$WORK/last.json" "$fs" "$where" "$n" "$start" "$end" "$RESULTS" <<'PY'
import json, sys
path, fs, where, n, start, end, out = sys.argv[1:8]
sample = json.load(open(path))["runs"][0]["cases"][0]["samples"][0]
if sample["status"] != "ok":
    sys.exit(f"{fs}: {sample['status']}: {sample.get('reason')}")
a = sample["target"]["aging"]
aged = a["made"]["aged"]
after = aged["after"]
free = (after.get("free_space") or {}).get("free_extents")
row = [fs, where, n, f"{float(end) - float(start):.2f}", f"{aged['elapsed_ns'] / 1e9:.2f}",
       f"{after['fill_percent']:.2f}", aged["files_written"], aged["bytes_written"],
       len(aged["rounds"]), f"{(after.get('extents') or {}).get('mean', 0):.3f}",
       "" if free is None else free, a["copy"]["method"], f"{a['copy']['elapsed_ns'] / 1e9:.3f}",
       a["copy"]["data_bytes"]]
open(out, "a").write("\t".join(map(str, row)) + "\n")
PY
}

WHERE="host:$(df --output=fstype /var/tmp | tail -1)"
for fs in $FILESYSTEMS; do
  work="$WORK/work-$fs"
  # The first run ages and caches the image; the next ones only copy it.
  for n in $(seq 0 "$COPIES"); do run "$fs" "$work" "$WHERE" "$n"; done
  if [ "$REFLINK" = 1 ]; then
    if [ -z "${LOOP:-}" ]; then
      # An xfs of its own for the work directories, where copies are reflinks.
      truncate -s "$(( $(numfmt --from=iec "${SIZE^^}") * 2 + (1 << 30) ))" "$WORK/xfs.img"
      LOOP=$(losetup --find --show "$WORK/xfs.img")
      mkfs.xfs -q -f "$LOOP"
      mkdir -p "$WORK/xfs"
      mount "$LOOP" "$WORK/xfs"
    fi
    work="$WORK/xfs/work-$fs"
    # Its image is aged there again (a reflink needs the image on the same filesystem).
    for n in $(seq 0 "$COPIES"); do run "$fs" "$work" "xfs (reflink)" "$n"; done
    "$FSBENCH" cleanup --aged-images --work-dir "$work" >/dev/null
  fi
  "$FSBENCH" cleanup --aged-images --work-dir "$WORK/work-$fs" >/dev/null
done

python3 - "$RESULTS" "$SIZE" "$FILL" "$CHURN" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
size, fill, churn = sys.argv[2:5]
print(f"Aging an image of {size} to {fill} % with {churn} churn rounds, then copying it per sample:\n")
print("| filesystem | work dir on | aged to | files written | bytes written | aging | files/s | MB/s | making the image (wall) | copy | copy time (median) | a run from the cache (wall, median) | copy / making |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
for key in dict.fromkeys((r["fs"], r["work_dir_fs"]) for r in rows):
    group = [r for r in rows if (r["fs"], r["work_dir_fs"]) == key]
    made = next(r for r in group if r["run"] == "0")
    copies = [r for r in group if r["run"] != "0"]
    aging = float(made["aging_s"])
    files, written = int(made["files_written"]), int(made["bytes_written"])
    copy = statistics.median(float(r["copy_s"]) for r in copies) if copies else float("nan")
    wall = statistics.median(float(r["wall_s"]) for r in copies) if copies else float("nan")
    making = float(made["wall_s"]) - (wall if copies else 0)
    print(f"| {key[0]} | {key[1]} | {float(made['fill_percent']):.1f} % | {files:,} | {written / 1e9:.2f} GB | "
          f"{aging:.1f} s | {files / aging:,.0f} | {written / aging / 1e6:,.0f} | {making:.1f} s | "
          f"{copies[0]['copy_method'] if copies else '-'} | {copy:.2f} s | {wall:.1f} s | {copy / making:.3f} |")
PY
echo "raw: $RESULTS"
