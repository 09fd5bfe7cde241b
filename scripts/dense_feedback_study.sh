#!/usr/bin/env bash
# Dense pseudo-relevance feedback for the semantic leg, on the fitting splits only (SciFact
# `train`, NFCorpus `train` and `dev`, clean and with one real misspelling each):
# `braid fit --samples` keeps every leg's list of today's hybrid once, and
# scripts/dense_feedback_study.py replays the fusion with the query vector moved toward its
# first records. Writes results/dense-feedback-study.txt.
#   bash scripts/dense_feedback_study.sh      # ~15 min here once the MiniLM indexes exist
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
ensure_indexes scifact nfcorpus
venv="${STUDY_VENV:-$HOME/.cache/braid/study-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import numpy, onnxruntime, tokenizers' 2>/dev/null ||
  "$venv/bin/pip" install -q $(grep -E '^(numpy|onnxruntime|tokenizers)==' benches/peers/requirements.txt)
typos="$(bash scripts/misspellings.sh)"
samples="$idx/dense-feedback-samples.jsonl"
"$B" fit --misspellings "$typos" \
  --set "$shared/scifact,$idx/scifact-minilm,train" \
  --set "$shared/nfcorpus,$idx/nfcorpus-minilm,train" \
  --set "$shared/nfcorpus,$idx/nfcorpus-minilm,dev" \
  --samples "$samples" --out "$idx/dense-feedback-fit.json" > /dev/null
mkdir -p results
(cd scripts && "$venv/bin/python" dense_feedback_study.py "$samples" "$shared" "$idx") | tee results/dense-feedback-study.txt
