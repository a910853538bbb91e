#!/usr/bin/env bash
# Does a replay rank filesystems as the application itself does? Three real applications
# from Debian packages, each recorded once with `fsbench record`, then on ext4, xfs and btrfs
# (fresh 4 GiB loop images, direct I/O on the backing file) in ROUNDS alternating rounds (the
# order swapped every round): the application itself on its input tree, and the replay of its
# trace — as fast as possible (`timing = afap`), with the recorded think time (`recorded`),
# and as fast as possible without the dependency rule (`dependencies = false`). Every run on
# a freshly made filesystem, the caches dropped before it; neither includes a final sync.
# The filesystems' order turns every round.
#
#   sqlite: sqlite3 running TXNS transactions (an insert each; rollback journal, synchronous
#           = FULL: fsyncs at every commit) on a new database.
#   git:    `git clone --no-local` of this project's own history (a bare copy inside the
#           root, its objects in one pack however the checkout keeps them), then a checkout
#           of an older commit.
#   git-loose: the same with every object of the copy a loose file (`git unpack-objects`),
#           as a repository of many fresh commits has them: the clone reads each through mmap.
#   make:   `make -j2 defconfig && make -j2 scripts` of the Linux 6.1 tree's Makefile,
#           scripts/, arch/x86/, include/ and Kconfig files (from Debian's linux-source-6.1):
#           real C compiled by gcc, flex and bison.
#
# Each application is recorded anew in every round (on a fresh ext4) and that round's trace
# replayed: the host's pace drifted by 10-30 % over minutes, and one recording made first
# carried its moment's pace into every round. The recorded-time replay is compared with the
# application in the same round (the median of the rounds' ratios, with a bootstrap 95 %
# interval of that median).
#
# Printed per application and filesystem: the medians (s) of the application and of each
# replay, the replay / application ratios, whether the application's differences between
# filesystems are significant (two-sided exact Mann-Whitney, p < 0.05), and Kendall's tau
# between the application's order of the filesystems and each replay's; the think-time
# replay's wall time against the application's (goal: within 10 % on every filesystem);
# divergences (calls whose result differed from the recording) with and without the rule.
#
# Usage (root; scripts/install-deps.sh --studies for linux-source-6.1, flex, bison, bc):
#   sudo bench/replay-fidelity.sh [ROUNDS=5]     APPS="sqlite git git-loose make"
#                                                FILESYSTEMS="ext4 xfs btrfs"
set -euo pipefail
lscpu 2>/dev/null | grep -E "^Model name" || true
ROUNDS=${1:-5}
APPS=${APPS:-sqlite git git-loose make}
FILESYSTEMS=${FILESYSTEMS:-ext4 xfs btrfs}
TXNS=${TXNS:-300}
cd "$(dirname "$0")/.."
REPO=$PWD
scripts/install-deps.sh --studies
. scripts/rust-env.sh
cargo build --release --locked -q
FSBENCH=${FSBENCH:-$PWD/target/release/fsbench}
OUT=$PWD/bench/out
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS="$OUT/replay-fidelity-$STAMP.tsv"
printf 'app\tfs\tround\trun\tseconds\tdiverged\n' > "$RESULTS"

WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
M=$WORK/mnt
LOOP=
cleanup() {
  set +e
  mountpoint -q "$M" && umount "$M"
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
mkdir -p "$M"

fresh() { # a freshly made $1 at $M
  mountpoint -q "$M" && umount "$M"
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -f "$WORK/fs.img"
  truncate -s 4g "$WORK/fs.img"
  LOOP=$(losetup --find --show --direct-io=on "$WORK/fs.img")
  case $1 in
    ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP" ;;
    xfs) mkfs.xfs -q -f "$LOOP" ;;
    btrfs) mkfs.btrfs -q -f "$LOOP" >/dev/null ;;
  esac
  mount "$LOOP" "$M"
}
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# The applications' input trees (made once) and commands (run in the root).
INPUTS=$WORK/inputs
mkdir -p "$INPUTS"
make_input() {
  local app=$1 dir=$INPUTS/$1
  mkdir -p "$dir"
  case $app in
    sqlite)
      python3 - "$dir/load.sql" "$TXNS" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("PRAGMA journal_mode=DELETE;\nPRAGMA synchronous=FULL;\n")
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v BLOB);\nCREATE INDEX tk ON t(k);\n")
    for i in range(int(sys.argv[2])):
        f.write(f"BEGIN; INSERT INTO t(k, v) VALUES('key{i * 7919 % 100003}', randomblob(2000)); COMMIT;\n")
PY
      ;;
    git) git clone -q --bare --no-local "$REPO" "$dir/src.git" ;;
    git-loose)
      git clone -q --bare --no-local "$REPO" "$dir/src.git"
      local pack
      for pack in "$dir"/src.git/objects/pack/*.pack; do
        mv "$pack" "$dir/unpack.pack" && rm -f "${pack%.pack}".*
        git -C "$dir/src.git" unpack-objects -q < "$dir/unpack.pack" && rm "$dir/unpack.pack"
      done
      ;;
    make)
      tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dir" --wildcards \
        'linux-source-6.1/Makefile' 'linux-source-6.1/scripts/*' 'linux-source-6.1/arch/x86/*' \
        '*Kconfig*' 'linux-source-6.1/include/*' 'linux-source-6.1/tools/include/*' \
        'linux-source-6.1/security/selinux/include/*'
      # (a second pass: in one list with the patterns above, GNU tar 1.34 reports these not found)
      tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dir" --wildcards 'linux-source-6.1/tools/arch/x86/*' \
        'linux-source-6.1/tools/lib/*' 'linux-source-6.1/tools/build/*' 'linux-source-6.1/tools/scripts/*'
      ;;
  esac
}
command_of() {
  case $1 in
    sqlite) echo 'sqlite3 app.db ".read load.sql" >/dev/null' ;;
    git|git-loose) echo "git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)" ;;
    make) echo 'cd linux-source-6.1 && make -s -j2 defconfig >/dev/null && make -s -j2 scripts >/dev/null' ;;
  esac
}

run_app() { # app fs: the application on a fresh filesystem; prints its seconds
  fresh "$2"
  mkdir "$M/root" && cp -a "$INPUTS/$1/." "$M/root/"
  cold
  local s e
  s=$(date +%s.%N)
  (cd "$M/root" && sh -c "$(command_of "$1")")
  e=$(date +%s.%N)
  echo "$e - $s" | bc
}
run_replay() { # app fs timing deps: the replay on a fresh filesystem; prints "seconds diverged"
  fresh "$2"
  mkdir "$M/root"
  "$FSBENCH" replay --dir "$M/root" --trace "$WORK/$1.trace" --timing "$3" --dependencies "$4" \
    --cache cold --no-store --quiet --json "$WORK/r.json"
  python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
# The whole replay's figures: the result with no operation (the per-operation ones come first
# and have their own `diverged`).
whole = next(r for r in d["runs"][0]["cases"][0]["samples"][0]["results"] if "operation" not in r)
m = {x["metric"]: x["value"] for x in whole["measurements"]}
print(m["replay_time"] / 1e9, int(m.get("diverged", 0)))
PY
}

for app in $APPS; do
  make_input "$app"
  # One run of the application first, discarded: the first run after the inputs were written
  # ran 7-14 % slower than the rest, and recorded think times keep such a pace.
  run_app "$app" ext4 >/dev/null
  for round in $(seq 1 "$ROUNDS"); do
    # Recorded anew in every round, on a fresh ext4, and that trace replayed in the round: the
    # host's pace drifts by 10-30 % over minutes here, and a recording made at the start would
    # carry the pace of then into every later round.
    fresh ext4
    mkdir "$M/root" && cp -a "$INPUTS/$app/." "$M/root/"
    cold
    (cd "$M/root" && "$FSBENCH" record --root "$M/root" -o "$WORK/$app.trace" -- sh -c "$(command_of "$app")")
    recorded_s=$("$FSBENCH" trace stats --json "$WORK/$app.trace" | python3 -c 'import json, sys; print(json.load(sys.stdin)["duration_ns"] / 1e9)')
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$app" ext4 "$round" recording "$recorded_s" 0 >> "$RESULTS"
    if [ "$round" = 1 ]; then
      "$FSBENCH" trace stats "$WORK/$app.trace" | sed "s/^/  $app: /" >&2
      cp "$WORK/$app.trace" "$OUT/replay-fidelity-$STAMP-$app.trace"
    fi
    # The filesystems' order turns every round (ext4 xfs btrfs, then xfs btrfs ext4, ...): in
    # a fixed order the first came right after the recording every time, and whatever the
    # host's pace did in the minutes of a round fell on the same filesystem in every round.
    # shellcheck disable=SC2206
    order=($FILESYSTEMS)
    turn=$(( (round - 1) % ${#order[@]} ))
    for fs in "${order[@]:turn}" "${order[@]:0:turn}"; do
      runs="app afap recorded nodeps"
      ((round % 2)) || runs="nodeps recorded afap app"
      for run in $runs; do
        case $run in
          app) line="$(run_app "$app" "$fs") 0" ;;
          afap) line=$(run_replay "$app" "$fs" afap true) ;;
          recorded) line=$(run_replay "$app" "$fs" recorded true) ;;
          nodeps) line=$(run_replay "$app" "$fs" afap false) ;;
        esac
        read -r seconds diverged <<< "$line"
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$app" "$fs" "$round" "$run" "$seconds" "$diverged" >> "$RESULTS"
      done
    done
    echo "$app: round $round of $ROUNDS done" >&2
  done
done

python3 - "$RESULTS" <<'PY'
import csv, itertools, math, random, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
data = {}
by_round = {}
for r in rows:
    by_round[(r["app"], r["run"], r["fs"], r["round"])] = float(r["seconds"])
    if r["run"] == "recording":
        continue
    data.setdefault((r["app"], r["run"], r["fs"]), []).append((float(r["seconds"]), int(r["diverged"])))

def mann_whitney_p(a, b):
    """Two-sided exact p of the Mann-Whitney U test: U's distribution over every split of the
    pooled values counted by the Gaussian binomial recurrence (no enumeration, so 15 rounds
    against 15 take no time; ties, rare in timings, count half in the observed U)."""
    n, m = len(a), len(b)
    observed = sum(1.0 if i < j else 0.5 if i == j else 0.0 for i in a for j in b)
    # counts[k][u]: splits of k + j values (j the row's second size) with U = u.
    row = [[1]] * (m + 1)  # n = 0: one split, U = 0
    for k in range(1, n + 1):
        new = [[1]]  # m = 0
        for j in range(1, m + 1):
            # The largest value is in the first sample (adding j to U) or in the second.
            first, second = row[j], new[j - 1]
            size = max(len(first) + j, len(second))
            c = [0] * size
            for u, v in enumerate(first):
                c[u + j] += v
            for u, v in enumerate(second):
                c[u] += v
            new.append(c)
        row = new
    dist = row[m]
    total = sum(dist)
    centre = n * m / 2
    extreme = sum(v for u, v in enumerate(dist) if abs(u - centre) >= abs(observed - centre) - 1e-9)
    return extreme / total

def interval(values, n=10000):
    """A bootstrap 95 % interval of the median (percentiles of n resamples' medians; seeded)."""
    rng = random.Random(1)
    meds = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(n))
    return f"{meds[int(0.025 * n)]:.3f}..{meds[int(0.975 * n) - 1]:.3f}"

def kendall_tau(x, y):
    pairs = list(itertools.combinations(range(len(x)), 2))
    s = sum((1 if (x[i] - x[j]) * (y[i] - y[j]) > 0 else -1 if (x[i] - x[j]) * (y[i] - y[j]) < 0 else 0) for i, j in pairs)
    return s / len(pairs)

apps = sorted({r["app"] for r in rows}, key=[r["app"] for r in rows].index)
fss = sorted({r["fs"] for r in rows}, key=[r["fs"] for r in rows].index)
for app in apps:
    print(f"\n### {app}\n")
    print("| filesystem | application s | replay afap s | afap / app | replay recorded s | recorded / app | replay afap, no dependencies s | diverged (rule / no rule) | rounds |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    med = {}
    for fs in fss:
        def col(run):
            vals = data.get((app, run, fs), [])
            return [v[0] for v in vals], [v[1] for v in vals]
        a, _ = col("app"); f, fd = col("afap"); rec, rd = col("recorded"); nd, ndd = col("nodeps")
        if not a:
            continue
        med[fs] = {k: statistics.median(v) for k, v in (("app", a), ("afap", f), ("recorded", rec), ("nodeps", nd)) if v}
        mm = med[fs]
        print(f"| {fs} | {mm['app']:.3f} | {mm['afap']:.3f} | {mm['afap'] / mm['app']:.3f} | {mm['recorded']:.3f} | "
              f"{mm['recorded'] / mm['app']:.3f} | {mm['nodeps']:.3f} | {statistics.median(fd + rd)} / {statistics.median(ndd)} | {len(a)} |")
    names = list(med)
    print()
    for x, y in itertools.combinations(names, 2):
        p = mann_whitney_p([v[0] for v in data[(app, "app", x)]], [v[0] for v in data[(app, "app", y)]])
        faster = x if med[x]["app"] < med[y]["app"] else y
        replay_faster = {run: (x if med[x][run] < med[y][run] else y) for run in ("afap", "recorded", "nodeps")}
        print(f"- {x} vs {y}: the application is faster on {faster} (p = {p:.3f}, {'significant' if p < 0.05 else 'not significant'}); "
              f"the replay on {replay_faster['afap']} (afap), {replay_faster['recorded']} (recorded), {replay_faster['nodeps']} (no dependencies)")
    app_order = [med[fs]["app"] for fs in names]
    for run in ("afap", "recorded", "nodeps"):
        print(f"- Kendall tau, application vs replay {run}: {kendall_tau(app_order, [med[fs][run] for fs in names]):+.2f}")
    rounds = sorted({k[3] for k in by_round if k[0] == app and k[1] == "recording"}, key=int)
    def paired(run, fs, against="app"):
        return [by_round[(app, run, fs, r)] / by_round[(app, against, fs, r)] for r in rounds
                if (app, run, fs, r) in by_round and (app, against, fs, r) in by_round]
    if "ext4" in med:
        ratios = paired("recording", "ext4")
        print(f"- the recording (trace duration) against the application on ext4 in its round: median {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}..{max(ratios):.3f})")
    worst = 0.0
    for fs in names:
        ratios = paired("recorded", fs)
        worst = max(worst, abs(statistics.median(ratios) - 1))
        print(f"- recorded-time replay / application, same round, {fs}: median {statistics.median(ratios):.3f} "
              f"(95 % interval of the median {interval(ratios)}; rounds {min(ratios):.3f}..{max(ratios):.3f}, {len(ratios)} rounds)")
    print(f"- the recorded-time replay's wall time within {worst * 100:.1f} % of the application's on every filesystem (median of the rounds' ratios)")
print(f"\nraw: {sys.argv[1]}")
PY
