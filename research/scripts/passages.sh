#!/usr/bin/env bash
# Passage-level vectors (issue 20, research/ranking-log.md "Passages"): each set's all-MiniLM-L6-v2
# index is built twice, one vector a record (`--passages off`) and with the default passage
# windows, timed (`/usr/bin/time -v`: wall time, peak RSS), and the two are compared query by
# query (95 % bootstrap intervals, paired randomization test) on the fitting splits — SciFact
# `train`, NFCorpus `dev`, clean and with one real misspelling a query. The choice of the
# default was made on these runs only. STAGE=test runs the same comparison on test, once.
#   bash research/scripts/passages.sh [DATASETS="scifact nfcorpus"]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
typos="$(bash scripts/misspellings.sh)"
out=research/results/passages
mkdir -p "$out"
stage="${STAGE:-fit}"
for d in ${1:-scifact nfcorpus}; do
  for v in single passages; do
    dir="$idx/$d-minilm"; flag=()
    [ "$v" = single ] && { dir="$idx/$d-minilm-single"; flag=(--passages off); }
    if [ ! -f "$dir/braid.json" ]; then
      /usr/bin/time -v "$B" index "$shared/$d" --index "$dir" --model default "${flag[@]}" 2> "$out/$d-$v-index.log"
      du -sb "$dir" "$dir/vectors" >> "$out/$d-$v-index.log"
    fi
  done
  split=test
  if [ "$stage" = fit ]; then split=dev; [ -f "$shared/$d/qrels/train.tsv" ] && [ "$d" = scifact ] && split=train; fi
  [ -f "$shared/$d/qrels/$split.tsv" ] || { echo "no $split split for $d" >&2; continue; }
  for variant in clean misspelt; do
    extra=(); [ "$variant" = misspelt ] && extra=(--misspellings "$typos")
    suffix=""; [ "$variant" = misspelt ] && suffix="+misspelt"
    name="$d-$split-$variant"
    "$B" eval --dataset "$shared/$d" --split "$split" --index "$idx/$d-minilm-single" --mode semantic,hybrid \
      "${extra[@]}" --out "$out/$name-single.json"
    for mode in semantic hybrid; do
      "$B" eval --dataset "$shared/$d" --split "$split" --index "$idx/$d-minilm" --mode "$mode" "${extra[@]}" \
        --baseline "$out/$name-single.json#$mode$suffix" --out "$out/$name-passages-$mode.json"
    done
  done
done
