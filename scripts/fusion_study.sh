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
python="$(study_python numpy)"
samples="$idx/fusion-study-samples.jsonl"
fitting_samples "$samples"
mkdir -p results
{
  echo "# bash scripts/fusion_study.sh: today's code rule"
  "$python" scripts/fusion_study.py "$samples"
  echo
  echo "# the code rule before 2026-12-03 (--old-codes): only the code lean differs"
  "$python" scripts/fusion_study.py "$samples" --old-codes | sed -n '/^-- code/,$p'
} | tee results/fusion-study.txt
