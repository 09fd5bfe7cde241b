#!/usr/bin/env bash
# The title boost (`SchemaConfig::title_boost`, the extra weight of a title match on top of the
# flat title+body BM25), fitted on training splits only: SciFact `train`, NFCorpus `train` and
# `dev`, each clean and with one real misspelling per query. Every value is one `braid eval
# --boosts '{"title":V}'` run of hybrid on the cached MiniLM indexes (a request's title weight
# replaces the index's, so no index is rebuilt); research/scripts/title_study.py pools NFCorpus's two
# splits, scores each value by the macro nDCG@10 of the four groups against the shipped value,
# and fits on each dataset alone to score on the other. Writes research/results/title-study.txt.
#   bash research/scripts/title_study.sh      # ~5 min here once the MiniLM indexes exist
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
ensure_indexes scifact nfcorpus
typos="$(bash scripts/misspellings.sh)"
runs="${TITLE_STUDY_DIR:-$idx/title-study}"
mkdir -p "$runs" results
for v in ${TITLE_VALUES:-0 0.1 0.2 0.25 0.3 0.4 0.5 0.75 1}; do
  for set in "scifact train" "nfcorpus train" "nfcorpus dev"; do
    read -r d split <<< "$set"
    "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --split "$split" --mode hybrid \
      --boosts "{\"title\":$v}" --out "$runs/$d-$split-$v.json" > /dev/null
    "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --split "$split" --mode hybrid \
      --boosts "{\"title\":$v}" --misspellings "$typos" --out "$runs/$d-$split-$v-misspelt.json" > /dev/null
  done
done
python3 research/scripts/title_study.py "$runs" | tee research/results/title-study.txt
