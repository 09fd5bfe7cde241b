#!/usr/bin/env bash
# Embedding throughput, Braid against Python onnxruntime at each one's best configuration:
# intra-op threads x batch size x passages sorted by length, the same N SciFact passages, the
# same model file, alternating engines per configuration (so drift on a shared machine hits
# both), then `braid index --model` on the same passages (the writer's own batching).
# usage: bash benches/peers/embed_sweep.sh [N=128] [ONNX_FILE=model.onnx]
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-128}; file=${2:-model.onnx}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
venv="$HOME/.cache/braid/peers-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q onnxruntime==1.31.1 tokenizers==0.22.1 numpy
model=$(cd "${BRAID_SHARED:-../shared}/models/all-MiniLM-L6-v2" && pwd)
corpus=$(cd "${BRAID_SHARED:-../shared}/datasets/scifact" && pwd)/corpus.jsonl
cargo build -q --release --example embed_throughput -p braid
cargo build -q --release --bin braid -p braid-cli
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ "$file" != model.onnx ]; then
  # Both engines read the same file: a copy of the model folder with it as model.onnx.
  cp -r "$model" "$tmp/model"; cp "$model/$file" "$tmp/model/model.onnx"; model=$tmp/model
fi
runs=()
for threads in 1 2; do
  for batch in 8 32 64; do
    for sorted in 0 1; do
      flag=(); [ "$sorted" = 1 ] && flag=(sorted)
      runs+=("$(BRAID_MODEL_DIR="$model" "$CARGO_TARGET_DIR/release/examples/embed_throughput" "$n" "$threads" "$batch" "${flag[@]}")")
      runs+=("$("$venv/bin/python" benches/peers/embed_python.py "$model" "$corpus" "$n" "$threads" "$batch" "$sorted")")
    done
  done
done
head -n "$n" "$corpus" > "$tmp/corpus.jsonl"
start=$(python3 -c 'import time; print(time.time())')
"$CARGO_TARGET_DIR/release/braid" index "$tmp/corpus.jsonl" --index "$tmp/index" --model "$model" > /dev/null 2>&1
index_s=$(python3 -c 'import sys, time; print(time.time() - float(sys.argv[1]))' "$start")
printf '%s\n' "${runs[@]}"
printf '%s\n' "${runs[@]}" | python3 -c '
import json, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
n, index_s = int(sys.argv[1]), float(sys.argv[2])
for engine in ("braid", "python-onnxruntime"):
    best = max((r for r in runs if r["engine"] == engine), key=lambda r: r["docs_per_s"])
    print("best %s: %.2f docs/s (threads %d, batch %d, sorted %s)" % (engine, best["docs_per_s"], best["threads"], best["batch"], best["sorted"]))
print("braid index --model: %d records in %.1f s = %.2f records/s (index build included)" % (n, index_s, n / index_s))
' "$n" "$index_s"
