# Sourced by the scripts: puts a rustup toolchain on PATH and checks its version.
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found: install Rust 1.85 or newer with rustup (https://rustup.rs)" >&2
  exit 1
fi
rust_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [ "${rust_minor:-0}" -lt 85 ]; then
  echo "error: $(rustc --version) is too old: fsbench needs Rust 1.85 or newer (rustup update)" >&2
  exit 1
fi
