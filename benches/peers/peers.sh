#!/usr/bin/env bash
# Braid beside the engines users would pick instead, in one run on one machine: bm25s
# (lexical), exact dense search in numpy (semantic), LanceDB and Milvus Lite (lexical, semantic,
# hybrid with their RRF rerankers). Every engine gets the same documents, the same document
# vectors and the same query vectors (`braid-report export`; query embedding is excluded from
# every engine's q/s), runs one query at a time on one pinned core, and is scored by the same
# metric code. numpy, LanceDB and Milvus Lite run twice: over one vector a record, and over
# Braid's own passages, one row each (texts and vectors as its index holds them), results
# deduplicated to records (engines `*-passages`). Rounds alternate Braid and the peers so load
# drift hits both; q/s is the median over rounds. Writes results/peers-<dataset>.json;
# `bash scripts/report.sh` puts the tables in docs/results.md.
# usage: bash benches/peers/peers.sh [DATASETS="scifact nfcorpus"] [ROUNDS=3] [K=10]
set -euo pipefail
cd "$(dirname "$0")/../.."
datasets=${1:-scifact nfcorpus}; rounds=${2:-3}; k=${3:-10}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
venv="$HOME/.cache/braid/peers-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r benches/peers/requirements.txt
cargo build -q --release --locked -p braid-cli -p braid-report
B="$CARGO_TARGET_DIR/release/braid"; R="$CARGO_TARGET_DIR/release/braid-report"
shared="${BRAID_SHARED:-$(cd .. && pwd)/shared}/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
work="${BRAID_PEERS_DIR:-$HOME/.cache/braid/peers}"
mkdir -p "$idx" "$work" results
# One thread everywhere, and one core: every engine's process (and Milvus Lite's server) is
# pinned to the last CPU. CPU 0 takes the machine's interrupts: on the 2-core VM of
# 2026-12-02 the same Braid build answered SciFact hybrid at 696-704 q/s there and at 862-944
# on CPU 1, alternating.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 RAYON_NUM_THREADS=1
export LANCEDB_LOG=error TOKENIZERS_PARALLELISM=false
pin=(); command -v taskset >/dev/null && pin=(taskset -c "$(($(getconf _NPROCESSORS_ONLN) - 1))")
for d in $datasets; do
  [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$shared/$d" --index "$idx/$d-minilm" --model default
  [ -f "$work/$d/vectors/passages.json" ] ||
    "$R" export --dataset "$shared/$d" --index "$idx/$d-minilm" --out "$work/$d/vectors"
  # numpy's exact search reads one vector a record; Braid's index of the same rows (the
  # exported document vectors, no passages) times that same mat-vec beside it.
  one="$work/$d/one-vector"
  if [ ! -f "$one/braid.json" ]; then
    "$venv/bin/python" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["ids"]))' \
      "$work/$d/vectors/docs.json" > "$work/$d/vectors/docs.ids"
    dim=$("$venv/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["dim"])' "$work/$d/vectors/docs.json")
    "$B" index "$shared/$d" --index "$one" --passages off --vectors "$work/$d/vectors/docs.f32" \
      --vector-ids "$work/$d/vectors/docs.ids" --vector-dim "$dim"
  fi
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  files=()
  for r in $(seq "$rounds"); do
    "${pin[@]}" "$R" run --dataset "$shared/$d" --index "$idx/$d-minilm" --vectors "$work/$d/vectors" -k "$k" \
      --out "$work/$d/braid-$r.json"
    "${pin[@]}" "$R" run --dataset "$shared/$d" --index "$one" --vectors "$work/$d/vectors" -k "$k" \
      --mode semantic --engine braid-one-vector --no-hits --out "$work/$d/braid-one-vector-$r.json"
    "${pin[@]}" "$venv/bin/python" benches/peers/peers.py "$shared/$d" "$work/$d/vectors" "$work/$d/engines" "$k" \
      "$work/$d/peers-$r.json"
    files+=("$work/$d/braid-$r.json" "$work/$d/braid-one-vector-$r.json" "$work/$d/peers-$r.json")
  done
  failures=""
  [ -f "$work/$d/peers-1.json.failures.json" ] && failures=" Failed: $(tr -d '\n' < "$work/$d/peers-1.json.failures.json")."
  embed_ms=$("$venv/bin/python" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["embed_ms_per_query"])' \
    "$work/$d/vectors/queries.json")
  passages=$("$venv/bin/python" -c 'import json,sys; m=json.load(open(sys.argv[1])); ids=m["ids"]
print("{:,} passages of {:,} records (windows {})".format(len(ids), len(set(ids)), m["passages"]))' \
    "$work/$d/vectors/passages.json")
  note="$d: $(getconf _NPROCESSORS_ONLN) CPUs shared with other jobs (load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after);"
  note+=" every engine on one pinned core (the last), one query at a time, timed passes of at least 1 s, k = $k, median of $rounds alternating rounds;"
  note+=" query vectors precomputed for all (embedding one costs ~$embed_ms ms here, on top of every engine's time)."
  note+=" The *-passages rows read Braid's $passages, one row each.$failures"
  "$R" score --dataset "$shared/$d" --out "results/peers-$d.json" --note "$note" "${files[@]}"
done
