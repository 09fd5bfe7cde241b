#!/usr/bin/env bash
# The ranking report (docs/ranking.md): every set's test queries, clean and with one real
# misspelling each (scripts/misspellings.sh), every mode with the default fusion (RRF), then
# hybrid and auto with the fitted blend; each run compared query by query with hybrid (95 %
# bootstrap intervals, paired randomization test). ABLATION=1 adds the score averages.
# Test judgements are only read here, never by the fit (scripts/fit.sh).
#   bash scripts/ranking.sh [DATASETS="scifact nfcorpus"]   # needs the MiniLM indexes
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/braid-target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
profile="${BRAID_PROFILE:-release}"
if [ "$profile" = release ]; then cargo build -q --release --locked -p braid-cli; else cargo build -q --locked -p braid-cli; fi
B="$CARGO_TARGET_DIR/$profile/braid"
shared="$(cd .. && pwd)/shared/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
typos="$(bash scripts/misspellings.sh)"
out=results/ranking
mkdir -p "$out"
for d in ${1:-scifact nfcorpus}; do
  for variant in clean misspelt; do
    extra=(); [ "$variant" = misspelt ] && extra=(--misspellings "$typos")
    base="hybrid"; [ "$variant" = misspelt ] && base="hybrid+misspelt"
    # The default (RRF) for every mode, then blend on hybrid and auto, compared with hybrid.
    "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode lexical,fuzzy,semantic,hybrid,auto \
      "${extra[@]}" --baseline "$base" --out "$out/$d-$variant.json"
    "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode hybrid,auto --fusion blend "${extra[@]}" \
      --baseline "$out/$d-$variant.json#$base" --out "$out/$d-$variant-blend.json"
    if [ "${ABLATION:-0}" = 1 ]; then
      "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode hybrid --fusion minmax,zscore,dbsf \
        "${extra[@]}" --baseline "$out/$d-$variant.json#$base" --out "$out/$d-$variant-fusions.json"
    fi
  done
done
