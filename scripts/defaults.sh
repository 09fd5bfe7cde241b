#!/usr/bin/env bash
# The README's headline table: every shared set's test queries, clean and with one real
# misspelling each (scripts/misspellings.sh), every mode with the default blend and with RRF,
# compared query by query with hybrid/rrf (95 % bootstrap intervals, paired randomization test).
# Writes results/defaults/<set>.json and <set>-misspelt.json, then the README's table from them; builds a missing MiniLM index
# first (the default passages). Test judgements are only read here, never by the fit.
#   bash scripts/defaults.sh [DATASETS="scifact nfcorpus cranfield cacm npl"]
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
typos="$(bash scripts/misspellings.sh)"
out=results/defaults
mkdir -p "$out"
for d in ${1:-scifact nfcorpus cranfield cacm npl}; do
  [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$shared/$d" --index "$idx/$d-minilm" --model default
  "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode lexical,fuzzy,semantic,hybrid \
    --fusion blend,rrf --baseline hybrid/rrf --out "$out/$d.json"
  "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode hybrid --fusion blend,rrf \
    --misspellings "$typos" --baseline hybrid/rrf+misspelt --out "$out/$d-misspelt.json"
done
"$R" readme --results results --readme README.md
python3 scripts/defaults_tables.py
