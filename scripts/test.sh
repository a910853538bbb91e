#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests. Root-only tests (tmpfs
# and loop-device mounts) run when root, and must run on CI (CI is root).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/rust-env.sh
. scripts/rust-env.sh
# mkfs, fsck and losetup live in sbin, which a non-login root shell may lack.
export PATH="$PATH:/usr/sbin:/sbin"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace --locked 2>&1 | tee "$log" || status=$?

# Nothing the suite made may stay mounted or attached (the tests' mounts and work directories
# are all named fsbench-test*).
leftovers=$( (grep -E 'fsbench-test' /proc/self/mountinfo; losetup -a | grep -E 'fsbench-test') || true)
if [ -n "$leftovers" ]; then
  echo "error: the tests left mounts or loop devices behind:" >&2
  echo "$leftovers" >&2
  exit 1
fi

# One closing line with the totals of every test binary.
awk '/^test result:/ { p += $4; f += $6; i += $8 } END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, i }' "$log"
exit "$status"
