# Sourced (not run) by the evaluation scripts, from the repository root: the cargo target dir,
# ONNX Runtime, the `braid` binary as $B (built with BRAID_PROFILE, release by default), the
# shared datasets as $shared (BRAID_SHARED, or ../shared) and the cached MiniLM indexes as $idx.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/braid-target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
profile="${BRAID_PROFILE:-release}"
if [ "$profile" = release ]; then cargo build -q --release --locked -p braid-cli; else cargo build -q --locked -p braid-cli; fi
B="$CARGO_TARGET_DIR/$profile/braid"
shared="${BRAID_SHARED:-$(cd .. && pwd)/shared}/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
# Builds the MiniLM index (default passages) of each named shared set that has none yet.
ensure_indexes() {
  for d in "$@"; do
    [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$shared/$d" --index "$idx/$d-minilm" --model default
  done
}
