#!/usr/bin/env bash
# Rank-based fusion beside blend, and the two leans `auto` had (gone since 2026-12-04) refitted, on training splits only:
# SciFact `train`, NFCorpus `train` and `dev`, each clean and with one real misspelling per
# query. `braid-report fit --samples` keeps every leg's list once; research/scripts/fusion_study.py scores the
# candidates on them (numpy, in a virtual environment of its own) and writes
# research/results/fusion-study.txt (today's code rule, then the rule before 2026-12-03).
#   bash research/scripts/fusion_study.sh      # ~5 min here once the MiniLM indexes exist
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/eval-env.sh
source scripts/eval-env.sh
python="$(study_python numpy)"
samples="$idx/fusion-study-samples.jsonl"
fitting_samples "$samples"
mkdir -p research/results
{
  echo "# bash research/scripts/fusion_study.sh: today's code rule"
  "$python" research/scripts/fusion_study.py "$samples"
  echo
  echo "# the code rule before 2026-12-03 (--old-codes): only the code lean differs"
  "$python" research/scripts/fusion_study.py "$samples" --old-codes | sed -n '/^-- code/,$p'
} | tee research/results/fusion-study.txt
