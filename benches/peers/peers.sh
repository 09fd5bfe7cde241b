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
# A dataset named `NAME:SPLIT` runs the queries of that split (a bundled help center, from
# datasets/NAME: `cargo-book:test`, `helpcenter:test`, `helpcenter:holdout`) with Braid's
# fuzzy leg as well, and writes results/peers-NAME-SPLIT.json; a help center's sections are
# collapsed to articles and its queries asked as their principals (peers.py, `braid-report run`).
# usage: bash benches/peers/peers.sh [DATASETS="scifact nfcorpus"] [ROUNDS=3] [K=10]
set -euo pipefail
cd "$(dirname "$0")/../.."
datasets=${1:-scifact nfcorpus}; rounds=${2:-3}; k=${3:-10}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
venv="$HOME/.cache/braid/peers-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q -r benches/peers/requirements.txt
# BRAID_PEERS_BIN: a folder holding braid and braid-report built already (a target folder
# that other builds share may be rewritten mid-run); the build is skipped.
if [ -n "${BRAID_PEERS_BIN:-}" ]; then
  B="$BRAID_PEERS_BIN/braid"; R="$BRAID_PEERS_BIN/braid-report"
else
  cargo build -q --release --locked -p braid-cli -p braid-report
  B="$CARGO_TARGET_DIR/release/braid"; R="$CARGO_TARGET_DIR/release/braid-report"
fi
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
for spec in $datasets; do
  d=${spec%%:*} split=test name=$d modes=lexical,semantic,hybrid src="$shared/$d"
  if [ "$spec" != "$d" ]; then
    split=${spec#*:} name=$d-$split modes=lexical,fuzzy,semantic,hybrid
  fi
  [ -d "datasets/$d/articles" ] && src="datasets/$d"
  v="$work/$name/vectors" w="$work/$name"
  [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$src" --index "$idx/$d-minilm" --model default
  [ -f "$v/passages.json" ] || "$R" export --dataset "$src" --index "$idx/$d-minilm" --split "$split" --out "$v"
  # numpy's exact search reads one vector a record; Braid's index of the same rows (the
  # exported document vectors, no passages) times that same mat-vec beside it. It is the
  # dataset's, whichever split runs on it.
  one="$work/$d/one-vector"
  if [ ! -f "$one/braid.json" ]; then
    "$venv/bin/python" -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["ids"]))' \
      "$v/docs.json" > "$v/docs.ids"
    dim=$("$venv/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["dim"])' "$v/docs.json")
    "$B" index "$src" --index "$one" --passages off --vectors "$v/docs.f32" --vector-ids "$v/docs.ids" --vector-dim "$dim"
  fi
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  files=()
  for r in $(seq "$rounds"); do
    "${pin[@]}" "$R" run --dataset "$src" --split "$split" --index "$idx/$d-minilm" --vectors "$v" -k "$k" \
      --mode "$modes" --out "$w/braid-$r.json"
    "${pin[@]}" "$R" run --dataset "$src" --split "$split" --index "$one" --vectors "$v" -k "$k" \
      --mode semantic --engine braid-one-vector --no-hits --out "$w/braid-one-vector-$r.json"
    "${pin[@]}" "$venv/bin/python" benches/peers/peers.py "$src" "$v" "$w/engines" "$k" "$w/peers-$r.json"
    files+=("$w/braid-$r.json" "$w/braid-one-vector-$r.json" "$w/peers-$r.json")
  done
  failures=""
  [ -f "$w/peers-1.json.failures.json" ] && failures=" Failed: $(tr -d '\n' < "$w/peers-1.json.failures.json")."
  embed_ms=$("$venv/bin/python" -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["embed_ms_per_query"])' \
    "$v/queries.json")
  passages=$("$venv/bin/python" -c 'import json,sys; m=json.load(open(sys.argv[1])); ids=m["ids"]
print("{:,} passages of {:,} records (windows {})".format(len(ids), len(set(ids)), m["passages"]))' \
    "$v/passages.json")
  note="$name: $(getconf _NPROCESSORS_ONLN) CPUs shared with other jobs (load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after);"
  note+=" every engine on one pinned core (the last), one query at a time, timed passes of at least 1 s, k = $k, median of $rounds alternating rounds;"
  note+=" query vectors precomputed for all (embedding one costs ~$embed_ms ms here, on top of every engine's time)."
  note+=" The *-passages rows read Braid's $passages, one row each.$failures"
  if [ "$name" != "$d" ]; then
    note+=" The records are the help center's sections ($("$venv/bin/python" -c 'import json,sys; print(len(set(json.load(open(sys.argv[1]))["parents"])))' "$v/docs.json") articles), every engine's results collapsed to articles."
  fi
  scoped=$("$venv/bin/python" -c 'import json,sys; q=json.load(open(sys.argv[1])); v=q.get("visible", {})
print("{} of {}".format(sum(p in v for p in q.get("principals", [])), len(q["ids"])))' "$v/queries.json")
  if [ "${scoped%% *}" != 0 ]; then
    note+=" $scoped queries are asked as a caller who may see part of the records (anonymous, or as their metadata.principal),"
    note+=" and every engine searches only that part (numpy, LanceDB and Milvus Lite filter before ranking;"
    note+=" bm25s, which has no filter, drops the rest from its ranking)."
  fi
  "$R" score --dataset "$src" --split "$split" --out "results/peers-$name.json" --note "$note" "${files[@]}"
done
