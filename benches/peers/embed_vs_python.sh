#!/usr/bin/env bash
# Embedding throughput, Braid vs Python onnxruntime, same model / passages / batch / threads,
# in one run. usage: bash benches/peers/embed_vs_python.sh [N=256] [THREADS=1] [BATCH=32]
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-256}; threads=${2:-1}; batch=${3:-32}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/braid-target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
venv="$HOME/.cache/braid/peers-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q onnxruntime==1.31.1 tokenizers==0.22.1 numpy
model=$(cd ../shared/models/all-MiniLM-L6-v2 && pwd)
corpus=$(cd ../shared/datasets/scifact && pwd)/corpus.jsonl
cargo build -q --release --example embed_throughput
rust=$("$CARGO_TARGET_DIR/release/examples/embed_throughput" "$n" "$threads" "$batch")
py=$("$venv/bin/python" benches/peers/embed_python.py "$model" "$corpus" "$n" "$threads" "$batch")
echo "$rust"; echo "$py"
python3 -c "import json,sys; r=json.loads(sys.argv[1]); p=json.loads(sys.argv[2]); print(f'braid/python docs/s ratio: {r[\"docs_per_s\"]/p[\"docs_per_s\"]:.3f}')" "$rust" "$py"
