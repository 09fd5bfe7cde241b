#!/usr/bin/env bash
# Feedback's common-term floor, paired query by query: `braid eval` (hybrid, default blend) of
# each run with a build at the old floor (BASE) and one at the candidate (CANDIDATE), clean and
# with one real misspelling a query; the candidate's reports carry the paired difference
# (`--baseline FILE#hybrid`). research/ranking-log.md, fifteenth round.
#   bash research/scripts/feedback_floor.sh BASE_BRAID CANDIDATE_BRAID OUT_DIR RUN...
#   (RUN: dataset:split; cargo-book and helpcenter are read from datasets/, the rest from the
#   shared datasets; MiniLM indexes are built where missing, under $BRAID_EVAL_DIR)
set -euo pipefail
cd "$(dirname "$0")/../.."
base=$1 candidate=$2 out=$3
shift 3
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
typos="$(bash scripts/misspellings.sh)"
shared="${BRAID_SHARED:-$(cd .. && pwd)/shared}/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
mkdir -p "$out"
for run in "$@"; do
  d=${run%%:*} split=${run##*:}
  case $d in cargo-book | helpcenter) path=datasets/$d ;; *) path=$shared/$d ;; esac
  [ -f "$idx/$d-minilm/braid.json" ] || "$base" index "$path" --index "$idx/$d-minilm" --model default > /dev/null
  for typo in "" misspelt; do
    suffix=${typo:+-$typo} label=hybrid${typo:++misspelt}
    "$base" eval --dataset "$path" --index "$idx/$d-minilm" --split "$split" --mode hybrid \
      ${typo:+--misspellings "$typos"} --out "$out/base-$d-$split$suffix.json" > /dev/null
    "$candidate" eval --dataset "$path" --index "$idx/$d-minilm" --split "$split" --mode hybrid \
      ${typo:+--misspellings "$typos"} --baseline "$out/base-$d-$split$suffix.json#$label" \
      --out "$out/f1k-$d-$split$suffix.json" > /dev/null
  done
done
