# Sourced (not run) by the evaluation scripts, from the repository root: the cargo target dir,
# ONNX Runtime, the `braid` binary as $B and `braid-report` as $R (built with BRAID_PROFILE,
# release by default), the
# shared datasets as $shared (BRAID_SHARED, or ../shared) and the cached MiniLM indexes as $idx.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"; export ORT_DYLIB_PATH
profile="${BRAID_PROFILE:-release}"
if [ "$profile" = release ]; then cargo build -q --release --locked -p braid-cli -p braid-report; else cargo build -q --locked -p braid-cli -p braid-report; fi
B="$CARGO_TARGET_DIR/$profile/braid"
R="$CARGO_TARGET_DIR/$profile/braid-report"
shared="${BRAID_SHARED:-$(cd .. && pwd)/shared}/datasets"
idx="${BRAID_EVAL_DIR:-$HOME/.cache/braid/eval}"
# Builds the MiniLM index (default passages) of each named shared set that has none yet.
ensure_indexes() {
  for d in "$@"; do
    [ -f "$idx/$d-minilm/braid.json" ] || "$B" index "$shared/$d" --index "$idx/$d-minilm" --model default
  done
}
# The studies' Python: a virtual environment ($STUDY_VENV, default ~/.cache/braid/study-venv)
# holding the packages named (pinned as in benches/peers/requirements.txt); prints its python.
study_python() {
  local venv="${STUDY_VENV:-$HOME/.cache/braid/study-venv}" pins
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
  if ! "$venv/bin/python" -c "import $(IFS=,; echo "$*")" 2>/dev/null; then
    pins=$(grep -E "^($(IFS='|'; echo "$*"))==" benches/peers/requirements.txt)
    # shellcheck disable=SC2086 # one argument a pin
    "$venv/bin/pip" install -q $pins >&2
  fi
  echo "$venv/bin/python"
}
# `braid-report fit --samples` on every fitting split (SciFact `train`, NFCorpus `train` and `dev`),
# clean and with one real misspelling each: every leg's list of today's hybrid per query, to $1
# (the fit's own report beside it, as $1's name with .fit.json).
fitting_samples() {
  ensure_indexes scifact nfcorpus
  "$R" fit --misspellings "$(bash scripts/misspellings.sh)" \
    --set "$shared/scifact,$idx/scifact-minilm,train" \
    --set "$shared/nfcorpus,$idx/nfcorpus-minilm,train" \
    --set "$shared/nfcorpus,$idx/nfcorpus-minilm,dev" \
    --samples "$1" --out "${1%.jsonl}.fit.json" > /dev/null
}
