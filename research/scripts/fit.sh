#!/usr/bin/env bash
# Fits the fusion's parameters on training splits only — SciFact `train`, NFCorpus `dev` —
# each clean and with one real misspelling per query (scripts/misspellings.sh), and writes the
# whole fit to research/results/fit.json. The printed best blend is the candidate for `BlendParams::DEFAULT`
# (crates/braid-fusion/src/blend.rs); the typo blend is reported beside it.
#   bash research/scripts/fit.sh      # needs the MiniLM indexes scripts/report.sh builds
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
ensure_indexes scifact nfcorpus
typos="$(bash scripts/misspellings.sh)"
mkdir -p research/results
"$R" fit --misspellings "$typos" \
  --set "$shared/scifact,$idx/scifact-minilm,train" \
  --set "$shared/nfcorpus,$idx/nfcorpus-minilm,dev" \
  --out research/results/fit.json
