#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every test.
# Safe to re-run: the installers are idempotent and the cargo target dir lives outside the
# clone ($CARGO_TARGET_DIR, by default ~/.cache/braid-target), so rebuilds are incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/braid-target}"
if [ -f scripts/setup-onnxruntime.sh ]; then
  ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"
  export ORT_DYLIB_PATH
fi
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
