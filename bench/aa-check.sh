#!/usr/bin/env bash
# A/A check of what the reports claim: the same plan run twice on the same machine, then every
# claim of the two runs set against the other's. A claim is an order a report states as
# established: in a discipline, one configuration placed in a better group than another (their
# difference is significant: the groups of the verdict and the points); overall, one ahead of
# another beyond the rank intervals (`standings.ahead` of `fsbench export --json`). Two runs of
# one plan must never contradict each other (A ahead of B in one, B ahead of A in the other);
# a claim one run makes and the other does not repeat is counted, and its rate is what the
# reports' 95 % intervals let through on this machine (docs/reports.md, "A/A").
#
# Usage (root: a campaign makes filesystems on loop devices):
#   bench/aa-check.sh [PLAN=quick] [SCALE=0.05]
#   bench/aa-check.sh --compare RUN1.json RUN2.json     (two exports of runs made already)
# PLAN is a built-in profile's name or a plan file; FSBENCH=path runs that binary instead of
# building a release one. Both runs and their exports go to bench/out/aa-<time>/; the counts
# are printed and written to counts.tsv there. Exit 1 when the runs contradict each other.
set -euo pipefail
# The CPU first: a ratio measured on one says little of another (bench/README.md "Which CPU").
lscpu 2>/dev/null | grep -E "^Model name" || true
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/sbin"
OUT=bench/out/aa-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT"
if [ "${1:-}" = "--compare" ]; then
  cp "$2" "$OUT/run1.json"
  cp "$3" "$OUT/run2.json"
else
PLAN=${1:-quick}
SCALE=${2:-0.05}
if [ -z "${FSBENCH:-}" ]; then
  . scripts/rust-env.sh
  cargo build --release --locked -q
  FSBENCH=$PWD/target/release/fsbench
fi
if [ -f "$PLAN" ]; then SOURCE=(--plan "$PLAN"); else SOURCE=(--profile "$PLAN"); fi
WORK=$(mktemp -d /var/tmp/fsbench-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

for run in 1 2; do
  echo "run $run of 2: fsbench run ${SOURCE[*]} --scale $SCALE" >&2
  status=0
  "$FSBENCH" run "${SOURCE[@]}" --scale "$SCALE" --db "$OUT/results.db" --work-dir "$WORK" \
    --quiet || status=$?
  # 1: some samples failed (they are reported as such); anything else is no run to compare.
  if [ "$status" -gt 1 ]; then
    echo "run $run ended with exit code $status: nothing to compare" >&2
    exit 2
  fi
  "$FSBENCH" export "$run" --json "$OUT/run$run.json" --db "$OUT/results.db"
done
fi

python3 - "$OUT" <<'PY'
import itertools, json, sys

out = sys.argv[1]
runs = [json.load(open(f"{out}/run{n}.json")) for n in (1, 2)]

def claims(doc):
    """(kind, a, b) for every order the report claims, and the pairs it could have ordered."""
    said, pairs = set(), set()
    standings = doc["standings"]
    for d in standings["disciplines"]:
        kind = f'{d["workload"]} {d["row"]} ({d["metric"]})'
        placed = [(e["label"], e["placement"]["place"]) for e in d["entries"] if e["placement"]]
        for (a, pa), (b, pb) in itertools.combinations(placed, 2):
            pairs.add((kind, min(a, b), max(a, b)))
            if pa < pb:
                said.add((kind, a, b))
            elif pb < pa:
                said.add((kind, b, a))
    labels = [s["label"] for s in standings["scores"]]
    for a, b in itertools.combinations(labels, 2):
        pairs.add(("overall", min(a, b), max(a, b)))
    for a, b in standings["ahead"]:
        said.add(("overall", a, b))
    return said, pairs

(c1, p1), (c2, p2) = claims(runs[0]), claims(runs[1])
both = p1 & p2  # pairs both runs could order
rows = []
for scope in ("discipline", "overall"):
    mine = lambda k: (k == "overall") == (scope == "overall")
    pairs = {p for p in both if mine(p[0])}
    one = {c for c in c1 if mine(c[0]) and (c[0], min(c[1:]), max(c[1:])) in pairs}
    two = {c for c in c2 if mine(c[0]) and (c[0], min(c[1:]), max(c[1:])) in pairs}
    repeated = one & two
    contradicted = {c for c in one if (c[0], c[2], c[1]) in two}
    not_repeated = (one - two) | (two - one)
    not_repeated -= contradicted | {(k, b, a) for (k, a, b) in contradicted}
    claims_made = len(one) + len(two)
    rate = len(not_repeated) / claims_made if claims_made else 0.0
    rows.append((scope, len(pairs), len(one), len(two), len(repeated), len(not_repeated),
                 len(contradicted), rate))

header = ("claims", "pairs", "run1", "run2", "repeated", "not_repeated", "contradicted",
          "not_repeated_rate")
with open(f"{out}/counts.tsv", "w") as f:
    f.write("\t".join(header) + "\n")
    for r in rows:
        f.write("\t".join(str(v) if not isinstance(v, float) else f"{v:.3f}" for v in r) + "\n")
print(f"{'claims':<11} {'pairs':>6} {'run 1':>6} {'run 2':>6} {'repeated':>9} "
      f"{'one-sided':>10} {'contradicted':>13}  not repeated / claims")
for scope, pairs, one, two, repeated, not_repeated, contradicted, rate in rows:
    print(f"{scope:<11} {pairs:>6} {one:>6} {two:>6} {repeated:>9} {not_repeated:>10} "
          f"{contradicted:>13}  {rate:.1%}")
print(f"(pairs: those both runs could order; runs and exports in {out})")
sys.exit(1 if any(r[6] for r in rows) else 0)
PY
