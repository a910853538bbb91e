#!/usr/bin/env bash
# Installs what fsbench needs on a fresh Debian machine, and nothing that is already there:
# a C toolchain (and make: the task workload's build), clang (compiles the BPF program of
# `fsbench record`), tar, gzip, bzip2, xz-utils (the task
# workload's tools), time (its test against /usr/bin/time), chromium (the HTML report is
# rendered headless in the tests), the filesystem tools (zfs through zfs-fuse), fio and fsmark
# (benchmarks), dbench (its client.txt loadfile, for the tests and benchmarks of `fsbench
# clients`). Rust itself must be present (rustup); this script says so when it is not.
#
# With --studies, also what the profiles of studies 000 and 001 untar and build where it is
# installed (docs/studies.md): Debian's kernel source, linux-source-6.1 (138 MB, in /usr/src;
# bench/tasks-vs-tar.sh untars it too), and what the kernel's `make defconfig && make` needs
# beyond the C toolchain: flex, bison, bc, libelf-dev, libssl-dev.
#
# With --mpi, also what the `mpi` feature (scale-out under mpirun) builds and runs with: Open
# MPI's headers, libraries and mpirun, and libclang (rsmpi generates its bindings with bindgen).
set -euo pipefail

packages=(build-essential make clang tar gzip bzip2 xz-utils time chromium util-linux e2fsprogs xfsprogs btrfs-progs zfs-fuse fio dbench fsmark)
for arg in "$@"; do
  case "$arg" in
    --mpi) packages+=(libopenmpi-dev openmpi-bin libclang-dev) ;;
    --studies) packages+=(linux-source-6.1 flex bison bc libelf-dev libssl-dev) ;;
    *) echo "usage: $0 [--mpi] [--studies]" >&2; exit 2 ;;
  esac
done
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# shellcheck source=scripts/rust-env.sh
. "$(dirname "$0")/rust-env.sh"
