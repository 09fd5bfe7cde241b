#!/usr/bin/env bash
# Regenerates every quality table of the README: builds the embedding indexes once (reused on
# later runs), runs `braid eval` on each dataset, and writes JSON and Markdown to results/.
# Takes ~25 min on 2 cores the first time (embedding SciFact, NFCorpus, the help center),
# ~5 min afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/braid-target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
cargo build --release --locked -p braid-cli
B="$CARGO_TARGET_DIR/release/braid"
shared="$(cd .. && pwd)/shared/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
out=results
mkdir -p "$idx" "$out"
for d in scifact nfcorpus; do
  [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$shared/$d" --index "$idx/$d-minilm" --model default
done
[ -f "$idx/helpcenter-minilm/braid.json" ] || "$B" index datasets/helpcenter --index "$idx/helpcenter-minilm" --model default
modes=lexical,fuzzy,semantic,hybrid,auto
"$B" eval --dataset "$shared/scifact" --index "$idx/scifact-minilm" --mode $modes --out $out/scifact.json | tee $out/scifact.md
"$B" eval --dataset "$shared/nfcorpus" --index "$idx/nfcorpus-minilm" --mode $modes --out $out/nfcorpus.json | tee $out/nfcorpus.md
"$B" eval --dataset datasets/helpcenter --index "$idx/helpcenter-minilm" --mode $modes --out $out/helpcenter.json | tee $out/helpcenter.md
"$B" eval --dataset "$shared/scifact" --index "$idx/scifact-minilm" --mode $modes --typos --out $out/scifact-typos.json | tee $out/scifact-typos.md
for d in scifact nfcorpus helpcenter; do
  src="$shared/$d"; [ "$d" = helpcenter ] && src=datasets/helpcenter
  "$B" eval --dataset "$src" --index "$idx/$d-minilm" --mode hybrid --fusion rrf,minmax,zscore | tee $out/fusion-$d.md
  "$B" eval --dataset "$src" --index "$idx/$d-minilm" --mode hybrid --weights fuzzy=0.5 | tee -a $out/fusion-$d.md
done
for d in cranfield cacm npl; do
  "$B" eval --dataset "$shared/$d" --mode lexical,fuzzy,hybrid --out $out/$d.json | tee $out/$d.md
done
echo "results in $out/"
