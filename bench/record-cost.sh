#!/usr/bin/env bash
# What recording costs the recorded application: its wall time under `fsbench record` against
# its wall time alone, in PAIRS alternating pairs (the order swapped every pair), and, for the
# system-call-dense loop, under `strace -f` too (the issue's reference: 15.8x here).
#
#   loop:   a Python loop of 20,000 x (open, write 100 bytes, close) = 60,000 calls, on tmpfs.
#   sqlite, git, git-loose, make: the applications of bench/replay-fidelity.sh, on ext4 (a
#           fresh 4 GiB loop image, direct I/O on the backing file, made once; the application's
#           output removed between runs, caches dropped before each). git-loose (the clone
#           reading ~9,000 loose objects through mmap, each a page fault) is made only when
#           APPS names it.
#
# Printed: per application the median wall times and the ratio recorded / alone (goal <= 1.10),
# with a bootstrap 95 % interval of that median and min..max over the pairs, and the events each
# recording kept.
#
# Usage (root): sudo bench/record-cost.sh [PAIRS=5]     APPS="loop sqlite git make" (or git-loose)
#
# With PROGRAMS=1, instead of pairs: each application recorded PAIRS times with the kernel's
# BPF statistics on (kernel.bpf_stats_enabled, restored after), and per program of the
# recorder (bpftool, installed when missing) its runs, its run time per run and in all, and that
# time as a share of the application's own wall time (taken inside the recorded shell). The
# statistics add two clock reads to every run, so the times are a little high; the counts are
# exact. The programs run on every system call, context switch, wakeup, interrupt and fault of
# the whole machine while recording, so this is what the recorder costs in the kernel.
set -euo pipefail
lscpu 2>/dev/null | grep -E "^Model name" || true
PAIRS=${1:-5}
APPS=${APPS:-loop sqlite git make}
TXNS=${TXNS:-300}
cd "$(dirname "$0")/.."
REPO=$PWD
scripts/install-deps.sh --studies
command -v strace >/dev/null || { apt-get update -qq && apt-get install -y -qq strace >/dev/null; }
. scripts/rust-env.sh
cargo build --release --locked -q
FSBENCH=${FSBENCH:-$PWD/target/release/fsbench}
OUT=$PWD/bench/out
mkdir -p "$OUT"
RESULTS="$OUT/record-cost-$(date -u +%Y%m%dT%H%M%SZ).tsv"
printf 'app\tpair\thow\tseconds\tevents\trecorded_s\n' > "$RESULTS"

WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
M=$WORK/mnt
T=$WORK/tmpfs
LOOP=
cleanup() {
  set +e
  for m in "$M" "$T"; do mountpoint -q "$m" && umount "$m"; done
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
mkdir -p "$M" "$T"
mount -t tmpfs -o size=1g fsbench-bench "$T"
truncate -s 4g "$WORK/fs.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/fs.img")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mount "$LOOP" "$M"

INPUTS=$WORK/inputs
mkdir -p "$INPUTS/loop" "$INPUTS/sqlite" "$INPUTS/make"
cat > "$INPUTS/loop/loop.py" <<'PY'
import os
for i in range(20000):
    fd = os.open(f"f{i % 100}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"x" * 100)
    os.close(fd)
PY
python3 - "$INPUTS/sqlite/load.sql" "$TXNS" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("PRAGMA journal_mode=DELETE;\nPRAGMA synchronous=FULL;\n")
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v BLOB);\nCREATE INDEX tk ON t(k);\n")
    for i in range(int(sys.argv[2])):
        f.write(f"BEGIN; INSERT INTO t(k, v) VALUES('key{i * 7919 % 100003}', randomblob(2000)); COMMIT;\n")
PY
git clone -q --bare --no-local "$REPO" "$INPUTS/git-src.git"  # one pack, however the checkout keeps its objects
mkdir -p "$INPUTS/git" && mv "$INPUTS/git-src.git" "$INPUTS/git/src.git"
if [[ " $APPS " == *" git-loose "* ]]; then
  # Every object of the copy a loose file, as bench/replay-fidelity.sh makes it.
  mkdir -p "$INPUTS/git-loose" && cp -a "$INPUTS/git/src.git" "$INPUTS/git-loose/src.git"
  for pack in "$INPUTS"/git-loose/src.git/objects/pack/*.pack; do
    mv "$pack" "$INPUTS/unpack.pack" && rm -f "${pack%.pack}".*
    git -C "$INPUTS/git-loose/src.git" unpack-objects -q < "$INPUTS/unpack.pack" && rm "$INPUTS/unpack.pack"
  done
fi
tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$INPUTS/make" --wildcards \
  'linux-source-6.1/Makefile' 'linux-source-6.1/scripts/*' 'linux-source-6.1/arch/x86/*' \
  '*Kconfig*' 'linux-source-6.1/include/*' 'linux-source-6.1/tools/include/*' \
  'linux-source-6.1/security/selinux/include/*'
# (a second pass: in one list with the patterns above, GNU tar 1.34 reports these not found)
tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$INPUTS/make" --wildcards 'linux-source-6.1/tools/arch/x86/*' \
  'linux-source-6.1/tools/lib/*' 'linux-source-6.1/tools/build/*' 'linux-source-6.1/tools/scripts/*'

root_of() { [ "$1" = loop ] && echo "$T/root" || echo "$M/root"; }
command_of() {
  case $1 in
    loop) echo 'python3 loop.py' ;;
    sqlite) echo 'sqlite3 app.db ".read load.sql" >/dev/null' ;;
    git|git-loose) echo "git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)" ;;
    make) echo 'cd linux-source-6.1 && make -s -j2 defconfig >/dev/null && make -s -j2 scripts >/dev/null' ;;
  esac
}
once() { # app how: the application from its input tree; prints "seconds events recorded_s"
  # (recorded_s: the recording's own span, from the command's fork to its exit as the
  # recorder saw it — the application's wall time under the recorder, without loading the
  # BPF program before it or resolving and writing the trace after it)
  local root s e events=0 span=0
  root=$(root_of "$1")
  rm -rf "$root" && mkdir "$root" && cp -a "$INPUTS/$1/." "$root/"
  sync; echo 3 > /proc/sys/vm/drop_caches
  s=$(date +%s.%N)
  case $2 in
    alone) (cd "$root" && sh -c "$(command_of "$1")") ;;
    record) (cd "$root" && "$FSBENCH" record --root "$root" -o "$WORK/t.trace" -- sh -c "$(command_of "$1")") 2>/dev/null ;;
    strace) (cd "$root" && strace -f -qq -o /dev/null sh -c "$(command_of "$1")") ;;
  esac
  e=$(date +%s.%N)
  if [ "$2" = record ]; then
    read -r events span <<< "$("$FSBENCH" trace stats --json "$WORK/t.trace" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["events"], d["duration_ns"] / 1e9)')"
  fi
  echo "$(echo "$e - $s" | bc) $events $span"
}

if [ "${PROGRAMS:-0}" = 1 ]; then
  command -v bpftool >/dev/null || { apt-get update -qq && apt-get install -y -qq bpftool >/dev/null; }
  stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
  trap 'echo "$stats_before" > /proc/sys/kernel/bpf_stats_enabled; cleanup' EXIT INT TERM
  echo 1 > /proc/sys/kernel/bpf_stats_enabled
  PROGS="$OUT/record-programs-$(date -u +%Y%m%dT%H%M%SZ).tsv"
  printf 'app\trun\tapp_s\tcalls\tprogram\truns\trun_ns\n' > "$PROGS"
  for app in $APPS; do
    for run in $(seq 1 "$PAIRS"); do
      root=$(root_of "$app")
      rm -rf "$root" && mkdir "$root" && cp -a "$INPUTS/$app/." "$root/"
      sync; echo 3 > /proc/sys/vm/drop_caches
      rm -f "$WORK/t0" "$WORK/t1"
      # The application's wall time inside the shell; then a pause in which the programs'
      # statistics are read, the recorder still loaded.
      (cd "$root" && "$FSBENCH" record --root "$root" -o "$WORK/t.trace" -- sh -c \
        "date +%s.%N > $WORK/t0; $(command_of "$app"); date +%s.%N > $WORK/t1.part && mv $WORK/t1.part $WORK/t1; sleep 3") 2>/dev/null &
      rec=$!
      until [ -e "$WORK/t1" ] || ! kill -0 "$rec" 2>/dev/null; do sleep 0.05; done
      bpftool prog show --json > "$WORK/progs.json"
      wait "$rec"
      [ -e "$WORK/t1" ] || { echo "$app: the recording ended early" >&2; exit 1; }
      app_s=$(echo "$(cat "$WORK/t1") - $(cat "$WORK/t0")" | bc)
      calls=$("$FSBENCH" trace stats --json "$WORK/t.trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
      # The recorder's programs, by name (the functions of crates/record/bpf/record.bpf.c); Debian's
      # bpftool does not say which process holds a program.
      python3 - "$WORK/progs.json" "$app" "$run" "$app_s" "$calls" >> "$PROGS" <<'PY'
import collections, json, sys
progs, app, run, app_s, calls = sys.argv[1:]
names = {"sys_enter", "sys_exit", "process_fork", "process_exec", "process_exit",
         "sched_switch", "sched_switch_raw", "sched_waking", "sched_waking_raw",
         "page_fault_user", "page_fault_user_raw", "irq_enter", "irq_leave"}
mine = [p for p in json.load(open(progs)) if p.get("name") in names and "run_cnt" in p]
twice = [n for n, k in collections.Counter(p["name"] for p in mine).items() if k > 1]
if twice:
    sys.exit(f"another program with a name of the recorder's is loaded ({', '.join(twice)}): stop it first")
for p in mine:
    print(f"{app}\t{run}\t{app_s}\t{calls}\t{p['name']}\t{p['run_cnt']}\t{p['run_time_ns']}")
PY
      echo "$app: run $run of $PAIRS done" >&2
    done
  done
  python3 - "$PROGS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = statistics.median
print("| application | program | runs | runs per recorded call | ns per run | ms in all | share of the application's time |")
print("|---|---|---:|---:|---:|---:|---:|")
for app in dict.fromkeys(r["app"] for r in rows):
    mine = [r for r in rows if r["app"] == app]
    runs = sorted({r["run"] for r in mine})
    app_s = med(float(next(r for r in mine if r["run"] == n)["app_s"]) for n in runs)
    calls = med(int(next(r for r in mine if r["run"] == n)["calls"]) for n in runs)
    total = []
    for n in runs:
        total.append(sum(int(r["run_ns"]) for r in mine if r["run"] == n) / 1e9 / float(next(r for r in mine if r["run"] == n)["app_s"]))
    for prog in dict.fromkeys(r["program"] for r in mine):
        rs = [r for r in mine if r["program"] == prog]
        cnt = med(int(r["runs"]) for r in rs)
        ns = med(int(r["run_ns"]) for r in rs)
        share = med(int(r["run_ns"]) / 1e9 / float(r["app_s"]) for r in rs)
        print(f"| {app} | {prog} | {cnt:,.0f} | {cnt / calls:.2f} | {ns / cnt if cnt else 0:.0f} | {ns / 1e6:.1f} | {share:.1%} |")
    print(f"| {app} | **all** (application {app_s:.3f} s, {calls:,.0f} recorded calls, {len(runs)} runs) | | | | | **{med(total):.1%}** |")
print(f"\nraw: {sys.argv[1]}")
PY
  exit 0
fi

for app in $APPS; do
  for pair in $(seq 1 "$PAIRS"); do
    hows="alone record"
    [ "$app" = loop ] && hows="alone record strace"
    ((pair % 2)) || hows=$(echo "$hows" | tr ' ' '\n' | tac | tr '\n' ' ')
    for how in $hows; do
      read -r seconds events span <<< "$(once "$app" "$how")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$app" "$pair" "$how" "$seconds" "$events" "$span" >> "$RESULTS"
    done
    echo "$app: pair $pair of $PAIRS done" >&2
  done
done

python3 - "$RESULTS" <<'PY'
import csv, random, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault((r["app"], r["pair"]), {})[r["how"]] = r
med = statistics.median
def interval(values, n=10000):
    """A bootstrap 95 % interval of the median (percentiles of n resamples' medians; seeded)."""
    rng = random.Random(1)
    meds = sorted(med(rng.choices(values, k=len(values))) for _ in range(n))
    return f"{meds[int(0.025 * n)]:.3f}..{meds[int(0.975 * n) - 1]:.3f}"
print("| application | alone s | under the recorder s (its span) | span / alone | 95 % interval of the median | min..max | whole `fsbench record` s | whole / alone | strace -f / alone | events | pairs |")
print("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
for app in dict.fromkeys(r["app"] for r in rows):
    pairs = [v for (a, _), v in by.items() if a == app]
    alone = [float(p["alone"]["seconds"]) for p in pairs]
    span = [float(p["record"]["recorded_s"]) for p in pairs]
    whole = [float(p["record"]["seconds"]) for p in pairs]
    ratios = [s / a for s, a in zip(span, alone)]
    wratios = [w / a for w, a in zip(whole, alone)]
    st = [float(p["strace"]["seconds"]) / float(p["alone"]["seconds"]) for p in pairs if "strace" in p]
    strace = f"{med(st):.1f}x" if st else "—"
    events = med(int(p["record"]["events"]) for p in pairs)
    print(f"| {app} | {med(alone):.3f} | {med(span):.3f} | **{med(ratios):.3f}** | {interval(ratios)} | {min(ratios):.3f}..{max(ratios):.3f} | {med(whole):.3f} | {med(wratios):.3f} | {strace} | {events:,.0f} | {len(pairs)} |")
print(f"\nraw: {sys.argv[1]}")
PY
