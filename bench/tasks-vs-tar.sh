#!/usr/bin/env bash
# The task workload against the tools, in three parts, each in one run:
#
# 1. Harness: fsbench's native extraction and native read-all against GNU tar doing the same
#    work from the same uncompressed tarball, on tmpfs and on ext4, xfs and btrfs loop
#    devices, in alternating pairs (the order swapped every pair). The tarball: Debian's
#    kernel source (/usr/src/linux-source-6.1.tar.xz, decompressed once, untimed) where
#    linux-source-6.1 is installed, else the generated linux-6.1 tree at SCALE. Extraction:
#    `tar -xf TARBALL` + `sync -f`, against `fsbench task untar --method native --source
#    TARBALL` (the archive read into memory untimed; its real time includes its syncfs):
#    neither decompresses. Read-all (not on tmpfs, whose files no cache drop evicts): the tree
#    extracted, caches dropped, then `tar -cf /dev/zero` against `fsbench task read-all
#    --method native` (which drops the caches itself). Printed per filesystem and task: tar's
#    time / fsbench's time (>= 1.0: fsbench is not the slower), of the real times and of the
#    CPU times (user + sys, which the host's other load moves less), and tar's time / the whole
#    fsbench command's wall time (start-up, counting the archive's entries, mapping it, the
#    buffer calibration and removing the extracted tree included).
# 2. The real Debian kernel tarball untarred, read cold and removed by the real tools on ext4,
#    xfs and btrfs: a campaign (`untar,read-all,remove`, --source the tarball).
# 3. Study 000's trio at the study's sizes on ext4: copy of a 1.9 GB file, untar of the full
#    generated linux-6.1 tree (bzip2), rm -rf; a campaign of 3 repetitions.
#
# Usage (root; apt-get install -y linux-source-6.1, or scripts/install-deps.sh --studies, for
# the real kernel in part 1 and for part 2):
#   bench/tasks-vs-tar.sh [PAIRS=5] [SCALE=0.25] [PARTS="1 2 3"] [FILESYSTEMS="tmpfs ext4 xfs btrfs"]
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin"
PAIRS=${1:-5}
SCALE=${2:-0.25}
PARTS=${3:-"1 2 3"}
FILESYSTEMS=${4:-"tmpfs ext4 xfs btrfs"}
KERNEL=/usr/src/linux-source-6.1.tar.xz
cargo build --release --quiet
FSBENCH=$PWD/target/release/fsbench
OUT=bench/out
mkdir -p "$OUT"
WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
DATA=/var/cache/fsbench
MOUNTED=
LOOP=
cleanup() {
  [ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null || true
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

times_of() { # "real cpu" (s) of step $1 in a one-case JSON export on stdin (cpu = user + sys)
  python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d["runs"][0]["cases"][0]["samples"][0]["results"]:
    if r.get("step") == sys.argv[1]:
        m = {x["metric"]: x["value"] for x in r["measurements"]}
        print(m["real"] / 1e9, (m["user"] + m["sys"]) / 1e9)' "$1"
}

mount_fs() { # a fresh $1 (tmpfs, or an 8 GiB loop image with direct I/O on its backing file) at $WORK/$1
  local fs=$1 m=$WORK/$1
  mkdir -p "$m"
  if [ "$fs" = tmpfs ]; then
    mount -t tmpfs -o size=4g fsbench-bench "$m"
  else
    truncate -s 8g "$WORK/$fs.img"
    LOOP=$(losetup --find --show --direct-io=on "$WORK/$fs.img")
    case $fs in
      ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP" ;;
      xfs) mkfs.xfs -q -f "$LOOP" ;;
      btrfs) mkfs.btrfs -q -f "$LOOP" >/dev/null ;;
    esac
    mount "$LOOP" "$m"
  fi
  MOUNTED=$m
}

unmount_fs() {
  umount "$MOUNTED"; MOUNTED=
  if [ -n "$LOOP" ]; then losetup -d "$LOOP"; LOOP=; fi
  rm -f "$WORK"/*.img
}

fresh_cache() { # dirty pages written, caches dropped, the tarball read back into the page cache
  sync; echo 3 > /proc/sys/vm/drop_caches; cat "$TARBALL" > /dev/null
}

if [[ " $PARTS " == *" 1 "* ]]; then
  if [ -f "$KERNEL" ]; then
    TARBALL=$WORK/linux-source-6.1.tar
    xz -dc "$KERNEL" > "$TARBALL"
    echo "tarball: Debian's linux-source-6.1, uncompressed ($(stat -c %s "$TARBALL") bytes)"
  else
    # The uncompressed tarball of the generated tree at this scale (made once, kept in the data
    # directory).
    mkdir -p "$WORK/gen"
    "$FSBENCH" task untar --method native --compression none --scale "$SCALE" --dir "$WORK/gen" \
      --data-dir "$DATA" --no-store --quiet
    TARBALL=$(ls -t "$DATA"/fsbench-tree-linux-6.1-*f-*u-seed1.tar | head -1)
    echo "tarball: $TARBALL (linux-source-6.1 is not installed: the generated tree at scale $SCALE)"
  fi
  RESULTS="$OUT/tasks-harness-$STAMP.tsv"
  printf 'fs\ttask\tpair\ttar_s\ttar_cpu_s\tfsbench_s\tfsbench_cpu_s\tfsbench_wall_s\n' > "$RESULTS"
  tar_untar() { # prints "real cpu" of tar -xf + sync -f into a fresh $M/t
    rm -rf "$M/t"; mkdir "$M/t"; fresh_cache
    local s e
    s=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$WORK/time" tar -xf "$TARBALL" -C "$M/t"
    sync -f "$M/t"
    e=$(date +%s.%N)
    echo "$(echo "$e - $s" | bc) $(awk '{print $1 + $2}' "$WORK/time")"
    rm -rf "$M/t"
  }
  fsbench_untar() { # prints "real cpu wall": the timed part's, and the whole command's wall
    fresh_cache
    local s e
    s=$(date +%s.%N)
    "$FSBENCH" task untar --method native --source "$TARBALL" --dir "$M" --data-dir "$DATA" \
      --no-store --quiet --json "$WORK/f.json"
    e=$(date +%s.%N)
    echo "$(times_of untar < "$WORK/f.json") $(echo "$e - $s" | bc)"
  }
  tar_read() { # the tree extracted, caches dropped, every file read by tar
    rm -rf "$M/t"; mkdir "$M/t"; tar -xf "$TARBALL" -C "$M/t"; sync; echo 3 > /proc/sys/vm/drop_caches
    local s e
    s=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$WORK/time" tar -cf /dev/zero -C "$M/t" .
    e=$(date +%s.%N)
    echo "$(echo "$e - $s" | bc) $(awk '{print $1 + $2}' "$WORK/time")"
    rm -rf "$M/t"; sync
  }
  fsbench_read() {
    local s e
    s=$(date +%s.%N)
    "$FSBENCH" task read-all --method native --source "$TARBALL" --sync false --dir "$M" \
      --data-dir "$DATA" --no-store --quiet --json "$WORK/f.json"
    e=$(date +%s.%N)
    echo "$(times_of read-all < "$WORK/f.json") $(echo "$e - $s" | bc)"
  }
  for fs in $FILESYSTEMS; do
    mount_fs "$fs"
    M=$MOUNTED
    tasks="untar read-all"
    [ "$fs" = tmpfs ] && tasks=untar
    for pair in $(seq 1 "$PAIRS"); do
      for task in $tasks; do
        t_fn=tar_${task/-all/}; f_fn=fsbench_${task/-all/}
        # Alternate which goes first, so neither always meets the other's leftovers.
        if (( pair % 2 )); then t=$($t_fn); f=$($f_fn); else f=$($f_fn); t=$($t_fn); fi
        read -r ts tc <<< "$t"; read -r fsec fc fwall <<< "$f"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$task" "$pair" "$ts" "$tc" "$fsec" "$fc" "$fwall" >> "$RESULTS"
      done
    done
    unmount_fs
  done
  python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("| filesystem | task | GNU tar s (median) | fsbench native s (median) | tar / fsbench real, median | min..max | tar / fsbench CPU, median | min..max | whole fsbench command s (median) | tar / whole command, median | min..max | pairs |")
print("|---|---|---:|---:|---:|---|---:|---|---:|---:|---|---:|")
seen = []
for r in rows:
    if (r["fs"], r["task"]) not in seen:
        seen.append((r["fs"], r["task"]))
for fs, task in seen:
    v = [r for r in rows if (r["fs"], r["task"]) == (fs, task)]
    real = [float(r["tar_s"]) / float(r["fsbench_s"]) for r in v]
    cpu = [float(r["tar_cpu_s"]) / float(r["fsbench_cpu_s"]) for r in v]
    whole = [float(r["tar_s"]) / float(r["fsbench_wall_s"]) for r in v]
    med = lambda k: statistics.median(float(r[k]) for r in v)
    print(f"| {fs} | {task} | {med('tar_s'):.3f} | {med('fsbench_s'):.3f} | **{statistics.median(real):.3f}** | "
          f"{min(real):.3f}..{max(real):.3f} | {statistics.median(cpu):.3f} | {min(cpu):.3f}..{max(cpu):.3f} | "
          f"{med('fsbench_wall_s'):.3f} | {statistics.median(whole):.3f} | {min(whole):.3f}..{max(whole):.3f} | {len(v)} |")
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
