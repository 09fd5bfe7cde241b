#!/usr/bin/env bash
# Embedding throughput, Braid vs Python onnxruntime, same model / passages / batch / threads,
# in one run: three alternating rounds (braid, python, braid, …) so drift on a shared machine
# hits both; the medians are compared.
# usage: bash benches/peers/embed_vs_python.sh [N=256] [THREADS=2] [BATCH=32] [ROUNDS=3]
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-256}; threads=${2:-2}; batch=${3:-32}; rounds=${4:-3}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
venv="$HOME/.cache/braid/peers-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q onnxruntime==1.31.1 tokenizers==0.22.1 numpy
model=$(cd "${BRAID_SHARED:-../shared}/models/all-MiniLM-L6-v2" && pwd)
corpus=$(cd "${BRAID_SHARED:-../shared}/datasets/scifact" && pwd)/corpus.jsonl
cargo build -q --release --example embed_throughput
runs=()
for _ in $(seq "$rounds"); do
  runs+=("$("$CARGO_TARGET_DIR/release/examples/embed_throughput" "$n" "$threads" "$batch")")
  runs+=("$("$venv/bin/python" benches/peers/embed_python.py "$model" "$corpus" "$n" "$threads" "$batch")")
done
printf '%s\n' "${runs[@]}"
printf '%s\n' "${runs[@]}" | python3 -c '
import json, statistics, sys
runs = [json.loads(l) for l in sys.stdin if l.strip()]
rust = statistics.median(r["docs_per_s"] for r in runs if r["engine"] == "braid")
py = statistics.median(r["docs_per_s"] for r in runs if r["engine"] == "python-onnxruntime")
print("median docs/s: braid %.2f, python onnxruntime %.2f; ratio %.3f" % (rust, py, rust / py))
'
