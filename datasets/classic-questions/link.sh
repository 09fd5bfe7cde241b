#!/usr/bin/env bash
# Links each collection's corpus from the shared datasets beside its questions, so that
# `braid eval --dataset datasets/classic-questions/<name> --split fit` and `braid-report fit`
# read it as a BEIR folder. The links are not committed (.gitignore).
#   bash datasets/classic-questions/link.sh [SHARED_DATASETS]   (default ../shared/datasets)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shared="$(cd "${1:-$here/../../../shared/datasets}" && pwd)"
for name in cranfield cacm npl; do
  [ -f "$shared/$name/corpus.jsonl" ] || { echo "no $shared/$name/corpus.jsonl" >&2; exit 1; }
  ln -sfn "$shared/$name/corpus.jsonl" "$here/$name/corpus.jsonl"
done
python3 "$here/draw.py" "$shared" --check
