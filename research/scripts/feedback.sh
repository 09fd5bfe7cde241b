#!/usr/bin/env bash
# Lexical feedback (RM3, on by default) against the same build without it (`--no-feedback`),
# query by query: first on the fitting splits (SciFact `train`, NFCorpus `dev` and `train`),
# then once on every shared set's test queries, clean and with one real misspelling each. Writes
# research/results/feedback/<set>[-<split>][-misspelt].json; research/ranking-log.md has the tables.
#   bash research/scripts/feedback.sh [STAGE=fit|test|all]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
typos="$(bash scripts/misspellings.sh)"
out=research/results/feedback
mkdir -p "$out"
stage=${1:-all}
run() {  # DATASET SPLIT MODES NAME [--misspellings L]
  local d=$1 split=$2 modes=$3 name=$4; shift 4
  ensure_indexes "$d"
  local label; label="${modes%%,*}/no-feedback"; [ $# -gt 0 ] && label="$label+misspelt"
  "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --split "$split" --mode "$modes" "$@" --no-feedback \
    --out "$out/$name.without.json" > /dev/null
  "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --split "$split" --mode "$modes" "$@" \
    --baseline "$out/$name.without.json#$label" --out "$out/$name.json"
}
if [ "$stage" != test ]; then
  for spec in scifact:train nfcorpus:dev nfcorpus:train; do
    d=${spec%%:*} split=${spec##*:}
    run "$d" "$split" hybrid "$d-$split"
    run "$d" "$split" hybrid "$d-$split-misspelt" --misspellings "$typos"
  done
fi
if [ "$stage" != fit ]; then
  for d in scifact nfcorpus cranfield cacm npl; do
    run "$d" test hybrid "$d"
    run "$d" test hybrid "$d-misspelt" --misspellings "$typos"
  done
  # The bundled help center: short sections of articles, the drift feedback had to be guarded
  # against (its queries are the project's own, so this is a check, not evidence).
  hc="$idx/helpcenter-minilm"
  [ -f "$hc/braid.json" ] || "$B" index datasets/helpcenter --index "$hc" --model default
  "$B" eval --dataset datasets/helpcenter --index "$hc" --mode hybrid --no-feedback --out "$out/helpcenter.without.json" > /dev/null
  "$B" eval --dataset datasets/helpcenter --index "$hc" --mode hybrid --baseline "$out/helpcenter.without.json#hybrid/no-feedback" \
    --out "$out/helpcenter.json"
fi
