#!/usr/bin/env bash
# The report in one command: builds the embedding indexes once (reused on later runs, under
# $BRAID_EVAL_DIR), runs `braid eval` on every dataset (../shared/datasets and the help center),
# writes JSON to results/, regenerates the README's tables from it and draws one
# quality-vs-latency plot per dataset (docs/plots/<dataset>.svg).
#   bash scripts/report.sh            # ~25 min on 2 cores the first time (embedding SciFact,
#                                     # NFCorpus, the help center), ~6 min afterwards
#   bash scripts/report.sh --peers    # also reruns the peers comparison first
#                                     # (benches/peers/peers.sh, ~30 min more)
# Without --peers the README's peers table is regenerated from results/peers-*.json.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
cargo build --release --locked -p braid-cli -p braid-report
B="$CARGO_TARGET_DIR/release/braid"; R="$CARGO_TARGET_DIR/release/braid-report"
shared="${BRAID_SHARED:-$(cd .. && pwd)/shared}/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
out=results
mkdir -p "$idx" "$out"
[ "${1:-}" = --peers ] && bash benches/peers/peers.sh
src() { if [ "$1" = helpcenter ]; then echo datasets/helpcenter; else echo "$shared/$1"; fi; }
for d in scifact nfcorpus helpcenter; do
  [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$(src $d)" --index "$idx/$d-minilm" --model default
done
modes=lexical,fuzzy,semantic,hybrid
for d in scifact nfcorpus helpcenter; do
  "$B" eval --dataset "$(src $d)" --index "$idx/$d-minilm" --mode $modes --out $out/$d.json
done
"$B" eval --dataset "$shared/scifact" --index "$idx/scifact-minilm" --mode $modes --typos --out $out/scifact-typos.json
for d in scifact nfcorpus helpcenter; do
  "$B" eval --dataset "$(src $d)" --index "$idx/$d-minilm" --mode hybrid --fusion rrf,minmax,zscore \
    --out $out/fusion-$d.json
  "$B" eval --dataset "$(src $d)" --index "$idx/$d-minilm" --mode hybrid --weights fuzzy=0.5 --out $out/weights-$d.json
done
# The classic collections: lexical legs only (no embeddings built for them).
# Optional: scripts/fetch-shared.sh does not fetch them (see datasets/README.md).
for d in cranfield cacm npl; do
  if [ ! -d "$shared/$d" ]; then echo "report.sh: no $shared/$d; skipped" >&2; continue; fi
  "$B" eval --dataset "$shared/$d" --mode lexical,fuzzy,hybrid --out $out/$d.json
done
"$R" readme --results $out --readme docs/results.md
"$R" readme --results $out --readme README.md
"$R" plot --results $out --out docs/plots
echo "results in $out/, tables in README.md and docs/results.md, plots in docs/plots/"
