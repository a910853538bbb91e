#!/usr/bin/env bash
# The scale-out tests: builds fsbench with the `mpi` feature (Open MPI; run
# `scripts/install-deps.sh --mpi` first) and runs its tests, which start jobs of 1, 2 and 4 ranks
# with mpirun on this host. As root, Open MPI needs the two OMPI_ALLOW_RUN_AS_ROOT variables.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/rust-env.sh
. scripts/rust-env.sh
export PATH="$PATH:/usr/sbin:/sbin"
if ! command -v mpirun >/dev/null; then
  echo "error: no mpirun: run scripts/install-deps.sh --mpi" >&2
  exit 1
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo clippy -p fsbench-scale -p fsbench --features mpi --all-targets --locked -- -D warnings
cargo test -p fsbench-scale --features mpi --locked
cargo test -p fsbench --features mpi --locked --test mpi
# A rank waiting for another at the end of a phase takes no CPU from it (design/mpi.md §3).
cargo build -p fsbench-scale --features mpi --example idle_wait --locked
OMPI_MCA_btl=self,vader mpirun --oversubscribe --allow-run-as-root -np 2 \
  "${CARGO_TARGET_DIR:-target}/debug/examples/idle_wait"
