#!/usr/bin/env bash
# Rank-based fusion beside blend, and the two leans `auto` had (gone since 2026-12-04) refitted, on training splits only:
# SciFact `train`, NFCorpus `train` and `dev`, each clean and with one real misspelling per
# query. `braid fit --samples` keeps every leg's list once; scripts/fusion_study.py scores the
# candidates on them (numpy, in a virtual environment of its own) and writes
# results/fusion-study.txt (today's code rule, then the rule before 2026-12-03).
#   bash scripts/fusion_study.sh      # ~5 min here once the MiniLM indexes exist
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
ensure_indexes scifact nfcorpus
venv="${STUDY_VENV:-$HOME/.cache/braid/study-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import numpy' 2>/dev/null || "$venv/bin/pip" install -q 'numpy==2.4.6'
typos="$(bash scripts/misspellings.sh)"
samples="$idx/fusion-study-samples.jsonl"
"$B" fit --misspellings "$typos" \
  --set "$shared/scifact,$idx/scifact-minilm,train" \
  --set "$shared/nfcorpus,$idx/nfcorpus-minilm,train" \
  --set "$shared/nfcorpus,$idx/nfcorpus-minilm,dev" \
  --samples "$samples" --out "$idx/fusion-study-fit.json" > /dev/null
mkdir -p results
{
  echo "# bash scripts/fusion_study.sh: today's code rule"
  "$venv/bin/python" scripts/fusion_study.py "$samples"
  echo
  echo "# the code rule before 2026-12-03 (--old-codes): only the code lean differs"
  "$venv/bin/python" scripts/fusion_study.py "$samples" --old-codes | sed -n '/^-- code/,$p'
} | tee results/fusion-study.txt
