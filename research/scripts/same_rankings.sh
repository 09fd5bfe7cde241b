#!/usr/bin/env bash
# Whether today's build ranks exactly as the README's numbers say: builds each named shared
# set's MiniLM index afresh with today's `braid index`, runs scripts/defaults.sh's evaluation
# (every mode, blend and RRF, clean and with one real misspelling) and compares it query by
# query with results/defaults/ (research/scripts/same_per_query.py). Exits 1 on any difference.
# Used for changes that must not alter ranking (issue 47's reshaping).
#   bash research/scripts/same_rankings.sh [DATASETS="cranfield scifact"]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
typos="$(bash scripts/misspellings.sh)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for d in ${1:-cranfield scifact}; do
  "$B" index "$shared/$d" --index "$work/$d" --model default >/dev/null
  "$B" eval --dataset "$shared/$d" --index "$work/$d" --mode lexical,fuzzy,semantic,hybrid \
    --fusion blend,rrf --baseline hybrid/rrf --out "$work/$d.json" >/dev/null
  "$B" eval --dataset "$shared/$d" --index "$work/$d" --mode hybrid --fusion blend,rrf \
    --misspellings "$typos" --baseline hybrid/rrf+misspelt --out "$work/$d-misspelt.json" >/dev/null
  for f in "$d" "$d-misspelt"; do
    echo "== $f"
    python3 research/scripts/same_per_query.py "results/defaults/$f.json" "$work/$f.json" || status=1
  done
done
exit $status
