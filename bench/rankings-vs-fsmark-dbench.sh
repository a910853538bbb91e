#!/usr/bin/env bash
# Whether fsbench ranks filesystems as fs_mark and dbench do, on ext4, xfs and btrfs on loop
# devices in one run (issue 36 item 8: with its old sequential names fsbench ranked btrfs first
# on empty creates where fs_mark ranked it second). Three disciplines, each against the tool it
# stands for:
#
#   create   fsbench metadata --ops create (empty files, fs_mark's names: the default)
#            vs fs_mark -S 0 -s 0 (no sync, empty files, its default 40-byte names, 24 random)
#   fsync    fsbench metadata --ops create --create-size 4k --fsync-file
#            vs fs_mark -S 1 -s 4096 (each 4 KiB file fsync'd before its close)
#   clients  fsbench clients --loadfile client.txt vs dbench -c client.txt (MB/s)
#
# and, judged against nothing, `create` with `--names sequential` (what fsbench did before).
# ROUNDS rounds, each running every tool on every filesystem once in a fresh directory, the
# filesystems' order rotated and the tools' order swapped from round to round. Per discipline
# and tool, the ratio of two filesystems is taken per round (paired), and its geometric mean and
# 95 % interval (Student's t on the logs) over the rounds: a tool separates the two when the
# interval excludes 1. Printed: each tool's median per filesystem and the order it gives, then
# every pair with both tools' intervals and a verdict — `agree`, `OPPOSITE` (both separate
# them, in opposite orders) or `not separated` (one tool or neither tells them apart). The
# script exits 1 when any pair is OPPOSITE. Raw figures go to bench/out/.
#
# Usage (root, for the loop devices and mounts; needs fsmark and dbench:
# apt-get install -y fsmark dbench xfsprogs btrfs-progs):
#   bench/rankings-vs-fsmark-dbench.sh [ROUNDS=5] [FILES=50000] [FSYNC_FILES=2000] [SECONDS=6] [CLIENTS=4]
# FSBENCH=path/to/fsbench uses that binary instead of building the release one.
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/sbin:/sbin
ROUNDS=${1:-5}
FILES=${2:-50000}
FSYNC_FILES=${3:-2000}
SECONDS_PER_RUN=${4:-6}
CLIENTS=${5:-4}
LOADFILE=/usr/share/dbench/client.txt
FILESYSTEMS=(ext4 xfs btrfs)
[ "$(id -u)" -eq 0 ] || { echo "run as root: it makes loop devices and mounts" >&2; exit 2; }
command -v fs_mark >/dev/null || { echo "fs_mark is missing: apt-get install -y fsmark" >&2; exit 2; }
if ! command -v dbench >/dev/null || [ ! -f "$LOADFILE" ]; then
  echo "dbench and $LOADFILE are missing: apt-get install -y dbench" >&2
  exit 2
fi
for fs in "${FILESYSTEMS[@]}"; do
  command -v "mkfs.$fs" >/dev/null || { echo "mkfs.$fs is missing" >&2; exit 2; }
done
if [ -z "${FSBENCH:-}" ]; then
  cargo build --release --quiet
  FSBENCH=$PWD/target/release/fsbench
fi
OUT=bench/out
mkdir -p "$OUT"
RESULTS="$PWD/$OUT/rankings-$(date -u +%Y%m%dT%H%M%SZ).tsv"
# fs_mark aborts when its -d path is long (39 bytes did it, 29 did not): a short work
# directory, and mount points named by the filesystem.
WORK=$(mktemp -d /tmp/fsb.XXXX)
declare -A LOOPS=()
# shellcheck disable=SC2317 # run by the trap
cleanup() {
  for fs in "${FILESYSTEMS[@]}"; do
    umount "$WORK/$fs" 2>/dev/null || true
    if [ -n "${LOOPS[$fs]:-}" ]; then
      losetup -d "${LOOPS[$fs]}" 2>/dev/null || true
    fi
    rm -f "/var/tmp/fsbench-bench-$$-$fs.img"
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
for fs in "${FILESYSTEMS[@]}"; do
  image=/var/tmp/fsbench-bench-$$-$fs.img
  truncate -s 4g "$image"
  LOOPS[$fs]=$(losetup --find --show --direct-io=on "$image")
  case $fs in
    ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "${LOOPS[$fs]}" ;;
    *) "mkfs.$fs" -q -f "${LOOPS[$fs]}" >/dev/null ;;
  esac
  mkdir "$WORK/$fs"
  mount "${LOOPS[$fs]}" "$WORK/$fs"
done
printf 'fs\tdiscipline\tround\ttool\tvalue\tunit\n' > "$RESULTS"

# A fresh, empty directory `m` on the filesystem, everything before it written back.
fresh() { rm -rf "$WORK/$1/m"; mkdir "$WORK/$1/m"; sync; }
# The value of `metric` in the first result of an fsbench --json document on stdin.
metric() {
  python3 -c 'import json,sys; d=json.load(sys.stdin); r=d["runs"][0]["cases"][0]["samples"][0]["results"][0]; print(next(m["value"] for m in r["measurements"] if m["metric"]==sys.argv[1]))' "$1"
}
# fs_mark's files/s (the 4th column of its one result line), run in the work directory,
# where it writes its log.
fsmark() { (cd "$WORK" && fs_mark -t 1 -L 1 -l "$WORK/fs_log.txt" "$@" | awk '$1 ~ /^[0-9]+$/ && NF >= 5 { print $4 }' | tail -1); }
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$RESULTS"; }

run_fsbench() { # fs discipline round
  local fs=$1 d="$WORK/$1/m" v
  fresh "$fs"
  case $2 in
    create) v=$("$FSBENCH" metadata --dir "$d" --ops create --count "$FILES" --no-store --quiet --json - | metric ops_rate) ;;
    sequential) v=$("$FSBENCH" metadata --dir "$d" --ops create --count "$FILES" --names sequential --no-store --quiet --json - | metric ops_rate) ;;
    fsync) v=$("$FSBENCH" metadata --dir "$d" --ops create --create-size 4k --fsync-file --count "$FSYNC_FILES" --no-store --quiet --json - | metric ops_rate) ;;
    clients) v=$("$FSBENCH" clients --dir "$d" --clients "$CLIENTS" --loadfile "$LOADFILE" --warmup 1s --duration "$((SECONDS_PER_RUN - 1))s" --no-store --quiet --json - | metric throughput)
             v=$(python3 -c "print($v / 1e6)") ;;
  esac
  record "$fs" "$2" "$3" fsbench "$v" "$([ "$2" = clients ] && echo MB/s || echo files/s)"
}

run_other() { # fs discipline round
  local fs=$1 d="$WORK/$1/m" v tool
  fresh "$fs"
  case $2 in
    create) tool=fs_mark; v=$(fsmark -S 0 -s 0 -n "$FILES" -d "$d/f") ;;
    fsync) tool=fs_mark; v=$(fsmark -S 1 -s 4096 -n "$FSYNC_FILES" -d "$d/f") ;;
    clients) tool=dbench
             v=$(dbench -c "$LOADFILE" -t "$SECONDS_PER_RUN" -D "$d" "$CLIENTS" 2>/dev/null | awk '/^Throughput/ { print $2 }') ;;
  esac
  [ -n "$v" ] || { echo "$tool gave no figure on $fs ($2, round $3)" >&2; exit 1; }
  record "$fs" "$2" "$3" "$tool" "$v" "$([ "$2" = clients ] && echo MB/s || echo files/s)"
}

for round in $(seq 1 "$ROUNDS"); do
  # The filesystems' order rotates, the tools' order swaps: no filesystem or tool always runs
  # first (or right after another's writeback).
  order=("${FILESYSTEMS[@]:$(( (round - 1) % 3 ))}" "${FILESYSTEMS[@]:0:$(( (round - 1) % 3 ))}")
  for fs in "${order[@]}"; do
    echo "round $round of $ROUNDS: $fs" >&2
    for discipline in create fsync clients; do
      if [ $((round % 2)) -eq 1 ]; then
        run_fsbench "$fs" "$discipline" "$round"; run_other "$fs" "$discipline" "$round"
      else
        run_other "$fs" "$discipline" "$round"; run_fsbench "$fs" "$discipline" "$round"
      fi
    done
    run_fsbench "$fs" sequential "$round"
  done
done
for fs in "${FILESYSTEMS[@]}"; do rm -rf "$WORK/$fs/m"; done

status=0
python3 - "$RESULTS" <<'PY' || status=$?
import csv, math, statistics, sys
from itertools import combinations

rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
value = {}
for r in rows:
    value[(r["discipline"], r["tool"], r["fs"], int(r["round"]))] = float(r["value"])
units = {r["discipline"]: r["unit"] for r in rows}
filesystems = ["ext4", "xfs", "btrfs"]
rounds = sorted({int(r["round"]) for r in rows})
# Student's t, 97.5 % quantile, by degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]

def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96

def pair(discipline, tool, a, b):
    """Geometric mean of a/b paired by round and its 95 % interval; None with < 2 rounds."""
    logs = [math.log(value[(discipline, tool, a, r)] / value[(discipline, tool, b, r)])
            for r in rounds]
    if len(logs) < 2:
        return None
    mean, sd = statistics.mean(logs), statistics.stdev(logs)
    half = t975(len(logs) - 1) * sd / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)

def side(ci):
    """+1: a above b, -1: below, 0: not separated."""
    if ci is None:
        return 0
    return 1 if ci[1] > 1 else -1 if ci[2] < 1 else 0

against = {"create": "fs_mark", "fsync": "fs_mark", "clients": "dbench"}
print(f"{len(rounds)} rounds; medians per filesystem, and the order each tool gives\n")
print("| discipline | tool | unit | " + " | ".join(filesystems) + " | order |")
print("|---|---|---|" + "---:|" * len(filesystems) + "---|")
for discipline in ["create", "sequential", "fsync", "clients"]:
    tools = ["fsbench"] if discipline == "sequential" else ["fsbench", against[discipline]]
    for tool in tools:
        med = {fs: statistics.median(value[(discipline, tool, fs, r)] for r in rounds)
               for fs in filesystems}
        order = " > ".join(sorted(filesystems, key=lambda fs: -med[fs]))
        name = "create, sequential names (not judged)" if discipline == "sequential" else discipline
        print(f"| {name} | {tool} | {units[discipline]} | "
              + " | ".join(f"{med[fs]:,.1f}" for fs in filesystems) + f" | {order} |")

print("\nPairs: A/B, geometric mean [95 % interval] over the rounds\n")
print("| discipline | pair | fsbench | other | verdict |")
print("|---|---|---|---|---|")
opposite = 0
for discipline in ["create", "fsync", "clients"]:
    other = against[discipline]
    for a, b in combinations(filesystems, 2):
        mine, theirs = pair(discipline, "fsbench", a, b), pair(discipline, other, a, b)
        show = lambda ci: "n/a" if ci is None else f"{ci[0]:.3f} [{ci[1]:.3f}..{ci[2]:.3f}]"
        s, t = side(mine), side(theirs)
        if s and t and s != t:
            verdict, opposite = "**OPPOSITE**", opposite + 1
        elif s and t:
            verdict = "agree"
        else:
            verdict = "not separated by " + ("either" if not s and not t else
                                             "fsbench" if not s else other)
        print(f"| {discipline} | {a}/{b} | {show(mine)} | {other} {show(theirs)} | {verdict} |")
print()
if opposite:
    print(f"fsbench orders {opposite} pair(s) opposite to the tool it stands for")
else:
    print("fsbench orders no pair opposite to fs_mark or dbench where both separate it")
sys.exit(1 if opposite else 0)
PY
echo "raw: $RESULTS"
exit $status
