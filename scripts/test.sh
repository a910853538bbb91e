#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests. Root-only tests (tmpfs
# and loop-device mounts) run when root, and must run on CI (CI is root).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/rust-env.sh
. scripts/rust-env.sh
# mkfs, fsck and losetup live in sbin, which a non-login root shell may lack.
export PATH="$PATH:/usr/sbin:/sbin"

# Mounts and loop devices the tests make are all named fsbench-test*. Those present before the
# suite starts are not its doing (a run killed before it could clean up): they are named as a
# warning and do not fail this run. (Two runs of the suite at once still see each other's.)
ours() { (grep -E 'fsbench-test' /proc/self/mountinfo | cut -d' ' -f5; losetup -a | grep -E 'fsbench-test') | sort || true; }
before=$(mktemp)
log=$(mktemp)
trap 'rm -f "$log" "$before"' EXIT
ours >"$before"
if [ -s "$before" ]; then
  echo "warning: mounts or loop devices named fsbench-test* were there before the tests (not counted against this run):" >&2
  cat "$before" >&2
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
status=0
cargo test --workspace --locked 2>&1 | tee "$log" || status=$?

# Nothing the suite made may stay mounted or attached.
leftovers=$(ours | comm -13 "$before" -)
if [ -n "$leftovers" ]; then
  echo "error: the tests left mounts or loop devices behind:" >&2
  echo "$leftovers" >&2
  exit 1
fi

# One closing line with the totals of every test binary.
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, i }' "$log"
exit "$status"
