#!/usr/bin/env bash
# Dense pseudo-relevance feedback for the semantic leg, on the fitting splits only (SciFact
# `train`, NFCorpus `train` and `dev`, clean and with one real misspelling each):
# `braid-report fit --samples` keeps every leg's list of today's hybrid once, and
# research/scripts/dense_feedback_study.py replays the fusion with the query vector moved toward its
# first records. Writes research/results/dense-feedback-study.txt.
#   bash research/scripts/dense_feedback_study.sh      # ~15 min here once the MiniLM indexes exist
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
python="$(study_python numpy onnxruntime tokenizers)"
samples="$idx/dense-feedback-samples.jsonl"
fitting_samples "$samples"
mkdir -p research/results
(cd research/scripts && "$python" dense_feedback_study.py "$samples" "$shared" "$idx") | tee research/results/dense-feedback-study.txt
