#!/usr/bin/env bash
# Twelfth round, the test look (research/ranking-log.md): run once, at commit 5589c4d (branch
# rank-46-confident-cosine, blend's share 0.5 above a top cosine of 0.55), after the rule was
# chosen on the fitting splits. Every shared set clean and with one real misspelling, each leg
# and the default, paired with the README's default (results/defaults/); the Cargo Book's
# `test` half and Ferrybox's `test` (98) and `holdout` (48), paired with results/query-types/.
# Then: python3 research/scripts/legs_vs_default.py research/results/confident-cosine/*.json
# (the default against each leg) and datasets/by_type.py (per query type). ~15 minutes.
#
# The fitting samples (before the choice): braid-report fit --misspellings "$(bash
# scripts/misspellings.sh)" --set $shared/scifact,$idx/scifact-minilm,train --set
# $shared/nfcorpus,$idx/nfcorpus-minilm,dev --set datasets/cargo-book,$idx/cargo-book-minilm,fit
# --set datasets/helpcenter,$idx/helpcenter-minilm,fit --samples S.jsonl (2,401 samples; the same
# with --set ...nfcorpus,train for the NFCorpus train check), then
# python3 research/scripts/fit_agreement.py S.jsonl "cos1 > c: share a=0.55,0.5".
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
out=research/results/confident-cosine
mkdir -p "$out"
typos="$(bash scripts/misspellings.sh)"
for d in scifact nfcorpus cranfield cacm npl; do
  "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode lexical,fuzzy,semantic,hybrid \
    --baseline "results/defaults/$d.json#hybrid" --out "$out/$d.json" > "$out/$d.txt"
  "$B" eval --dataset "$shared/$d" --index "$idx/$d-minilm" --mode lexical,fuzzy,semantic,hybrid \
    --misspellings "$typos" --baseline "results/defaults/$d-misspelt.json#hybrid+misspelt" \
    --out "$out/$d-misspelt.json" > "$out/$d-misspelt.txt"
done
"$B" eval --dataset datasets/cargo-book --index "$idx/cargo-book-minilm" --split test --mode lexical,fuzzy,semantic,hybrid \
  --baseline "results/query-types/cargo-book-test.json#hybrid" --out "$out/cargo-book-test.json" > "$out/cargo-book-test.txt"
"$B" eval --dataset datasets/helpcenter --index "$idx/helpcenter-minilm" --split test --mode lexical,fuzzy,semantic,hybrid \
  --baseline "results/query-types/helpcenter-test.json#hybrid" --out "$out/helpcenter-test.json" > "$out/helpcenter-test.txt"
"$B" eval --dataset datasets/helpcenter --index "$idx/helpcenter-minilm" --split holdout --mode lexical,fuzzy,semantic,hybrid \
  --out "$out/helpcenter-holdout.json" > "$out/helpcenter-holdout.txt"
