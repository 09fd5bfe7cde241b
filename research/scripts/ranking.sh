#!/usr/bin/env bash
# The ranking report (research/ranking-log.md, its first rounds): every set's test queries, clean and with one real
# misspelling each (scripts/misspellings.sh), every mode with RRF (the fusion before blend),
# then hybrid with the default fitted blend; each run compared query by query with
# hybrid/rrf (95 % bootstrap intervals, paired randomization test). ABLATION=1 adds the score averages.
# Test judgements are only read here, never by the fit (research/scripts/fit.sh).
#   bash research/scripts/ranking.sh [DATASETS="scifact nfcorpus"]   # needs the MiniLM indexes
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
typos="$(bash scripts/misspellings.sh)"
out=research/results/ranking
mkdir -p "$out"
for d in ${1:-scifact nfcorpus}; do
  for variant in clean misspelt; do
    extra=(); [ "$variant" = misspelt ] && extra=(--misspellings "$typos")
    base="hybrid/rrf"; [ "$variant" = misspelt ] && base="hybrid/rrf+misspelt"
    # RRF for every mode, then the default blend on hybrid, compared with hybrid/rrf.
    "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode lexical,fuzzy,semantic,hybrid \
      --fusion rrf "${extra[@]}" --baseline "$base" --out "$out/$d-$variant.json"
    "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode hybrid "${extra[@]}" \
      --baseline "$out/$d-$variant.json#$base" --out "$out/$d-$variant-blend.json"
    if [ "${ABLATION:-0}" = 1 ]; then
      "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode hybrid --fusion minmax,zscore,dbsf \
        "${extra[@]}" --baseline "$out/$d-$variant.json#$base" --out "$out/$d-$variant-fusions.json"
    fi
  done
done
