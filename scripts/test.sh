#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests. Root-only tests (tmpfs
# and loop-device mounts) run when root, and must run on CI (CI is root).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/rust-env.sh
. scripts/rust-env.sh

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked

# Nothing the suite made may stay mounted or attached.
leftovers=$(grep -E 'fsbench' /proc/self/mountinfo || true)
if [ -n "$leftovers" ]; then
  echo "error: the tests left mounts behind:" >&2
  echo "$leftovers" >&2
  exit 1
fi
