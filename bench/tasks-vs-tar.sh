#!/usr/bin/env bash
# The task workload against the tools, in three parts, each in one run:
#
# 1. Harness: fsbench's native extraction and native read-all against GNU tar doing the same
#    on the same ext4 loop device, in alternating pairs. Extraction: `tar -xf` of the
#    uncompressed generated tarball + sync, against `fsbench task untar --method native` (its
#    real time includes its sync too). Read-all: the tree extracted, caches dropped, then
#    `tar -cf /dev/zero` against `fsbench task read-all --method native` (which drops the caches
#    itself). Printed: tar's time / fsbench's time (>= 1.0: fsbench is not the bottleneck).
# 2. The real Debian kernel tarball (/usr/src/linux-source-6.1.tar.xz, package
#    linux-source-6.1) untarred, read cold and removed by the real tools on ext4, xfs and btrfs:
#    a campaign (`untar,read-all,remove`, --source the tarball).
# 3. Study 000's trio at the study's sizes on ext4: copy of a 1.9 GB file, untar of the full
#    generated linux-6.1 tree (bzip2), rm -rf; a campaign of 3 repetitions.
#
# Usage (root; apt-get install -y linux-source-6.1 for part 2):
#   bench/tasks-vs-tar.sh [PAIRS=5] [SCALE=0.25] [PARTS="1 2 3"]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin"
PAIRS=${1:-5}
SCALE=${2:-0.25}
PARTS=${3:-"1 2 3"}
KERNEL=/usr/src/linux-source-6.1.tar.xz
cargo build --release --quiet
FSBENCH=$PWD/target/release/fsbench
OUT=bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
DATA=/var/cache/fsbench
cleanup() {
  umount "$WORK/ext4" 2>/dev/null || true
  [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

real_of() { # the real time (s) of step $1 in a one-case JSON export on stdin
  python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d["runs"][0]["cases"][0]["samples"][0]["results"]:
    if r.get("step") == sys.argv[1]:
        print(next(m["value"] for m in r["measurements"] if m["metric"] == "real") / 1e9)' "$1"
}

if [[ " $PARTS " == *" 1 "* ]]; then
  mkdir -p "$WORK/ext4"
  truncate -s 8g "$WORK/ext4.img"
  LOOP=$(losetup --find --show --direct-io=on "$WORK/ext4.img")
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
  mount "$LOOP" "$WORK/ext4"
  M="$WORK/ext4"
  # The uncompressed tarball of the tree at this scale (made once, kept in the data directory).
  "$FSBENCH" task untar --method native --compression none --scale "$SCALE" --dir "$M" \
    --data-dir "$DATA" --no-store --quiet
  TARBALL=$(ls -t "$DATA"/fsbench-tree-linux-6.1-*f-*u-seed1.tar | head -1)
  RESULTS="$OUT/tasks-harness-$STAMP.tsv"
  printf 'task\tpair\ttar_s\tfsbench_s\n' > "$RESULTS"
  for pair in $(seq 1 "$PAIRS"); do
    # Extraction: GNU tar, then fsbench; each into an empty directory, each with its sync.
    rm -rf "$M/t"; mkdir "$M/t"; sync; echo 3 > /proc/sys/vm/drop_caches; cat "$TARBALL" > /dev/null
    s=$(date +%s.%N); tar -xf "$TARBALL" -C "$M/t"; sync -f "$M/t"; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    rm -rf "$M/t"; sync; echo 3 > /proc/sys/vm/drop_caches; cat "$TARBALL" > /dev/null
    f=$("$FSBENCH" task untar --method native --compression none --scale "$SCALE" --dir "$M" \
        --data-dir "$DATA" --no-store --quiet --json - | real_of untar)
    printf 'untar\t%s\t%s\t%s\n' "$pair" "$t" "$f" >> "$RESULTS"
    # Read-all: the tree extracted, caches dropped, every file read.
    rm -rf "$M/t"; mkdir "$M/t"; tar -xf "$TARBALL" -C "$M/t"; sync; echo 3 > /proc/sys/vm/drop_caches
    s=$(date +%s.%N); tar -cf /dev/zero -C "$M/t" .; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    rm -rf "$M/t"; sync
    f=$("$FSBENCH" task read-all --method native --compression none --sync false --scale "$SCALE" \
        --dir "$M" --data-dir "$DATA" --no-store --quiet --json - | real_of read-all)
    printf 'read-all\t%s\t%s\t%s\n' "$pair" "$t" "$f" >> "$RESULTS"
  done
  umount "$M"; losetup -d "$LOOP"; LOOP=
  python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("| task (ext4 loop) | GNU tar s (median) | fsbench native s (median) | tar / fsbench median | min..max | pairs |")
print("|---|---:|---:|---:|---|---:|")
for task in ("untar", "read-all"):
    v = [(float(r["tar_s"]), float(r["fsbench_s"])) for r in rows if r["task"] == task]
    ratios = [t / f for t, f in v]
    print(f"| {task} | {statistics.median(t for t, _ in v):.3f} | {statistics.median(f for _, f in v):.3f} | "
          f"**{statistics.median(ratios):.3f}** | {min(ratios):.3f}..{max(ratios):.3f} | {len(v)} |")
PY
  echo "raw: $RESULTS"
fi

summarise_run() { # a campaign's stored run as a table of real/user/sys/sync per step
  "$FSBENCH" export 1 --db "$1" --json "$1.json"
  python3 - "$1.json" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
rows = {}
for case in d["runs"][0]["cases"]:
    c = case["config"]
    fs = c["filesystem"] + ("" if c["mount_set"] == "default" else "/" + c["mount_set"])
    for s in case["samples"]:
        for r in s.get("results", []):
            key = (r.get("step"), r.get("phase") or "")
            m = {x["metric"]: x["value"] for x in r["measurements"]}
            rows.setdefault((fs, key), []).append(m)
print("| filesystem | step | n | real s (median) | real min..max | user s | sys s | sync s |")
print("|---|---|---:|---:|---|---:|---:|---:|")
for (fs, (step, phase)), ms in rows.items():
    med = lambda k: statistics.median(m.get(k, 0) for m in ms) / 1e9
    reals = [m["real"] / 1e9 for m in ms]
    name = step + (":" + phase if phase else "")
    print(f"| {fs} | {name} | {len(ms)} | {med('real'):.2f} | {min(reals):.2f}..{max(reals):.2f} | "
          f"{med('user'):.2f} | {med('sys'):.2f} | {med('sync'):.2f} |")
PY
}

if [[ " $PARTS " == *" 2 "* ]]; then
  [ -f "$KERNEL" ] || { echo "$KERNEL is missing: apt-get install -y linux-source-6.1" >&2; exit 2; }
  cat > "$WORK/kernel.toml" <<EOF
name = "kernel-tarball"
repetitions = 2
timeout = "30m"
[device]
image = "8g"
[[filesystems]]
name = "ext4"
[[filesystems]]
name = "xfs"
[[filesystems]]
name = "btrfs"
[[workloads]]
kind = "task"
name = "linux-source"
tasks = "untar,read-all,remove"
source = "$KERNEL"
EOF
  "$FSBENCH" run --plan "$WORK/kernel.toml" --db "$WORK/kernel.db" --work-dir "$WORK/w" --quiet
  summarise_run "$WORK/kernel.db" | tee "$OUT/tasks-kernel-$STAMP.md"
fi

if [[ " $PARTS " == *" 3 "* ]]; then
  cat > "$WORK/trio.toml" <<EOF
name = "study-000-trio"
repetitions = 3
timeout = "30m"
[device]
image = "8g"
[[filesystems]]
name = "ext4"
mount_options = { noatime = "noatime,nodiratime" }
[[workloads]]
kind = "task"
name = "copy-untar-remove"
tasks = "copy,untar,remove"
big_file = "1900000000"
compression = "bzip2"
EOF
  "$FSBENCH" run --plan "$WORK/trio.toml" --db "$WORK/trio.db" --work-dir "$WORK/w" --quiet
  summarise_run "$WORK/trio.db" | tee "$OUT/tasks-trio-$STAMP.md"
fi
