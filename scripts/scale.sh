#!/usr/bin/env bash
# The scale bench: build, size, memory, open time and latency of Braid at growing sizes.
#
#   scripts/scale.sh [SIZES...]        (default: 10000 100000)
#   SCALE_DIM=0 scripts/scale.sh 1000000   (no vectors: lexical, fuzzy and facets only)
#   SCALE_QUANTIZE=int8 scripts/scale.sh 1000000   (vectors held as int8 codes)
#   SCALE_PROMOTE_AT=N scripts/scale.sh 1000000   (tenants promoted at N records, not 10,000;
#                                                   results named -promote-N)
#
# For each size N: scripts/scale_corpus.py writes a deterministic corpus of N records drawn
# from the shared datasets' sentences (ACLs over 10 tenants and 100 groups) with 384-d
# random-projection vectors in a .npy sidecar; `braid index --vectors` builds the index (no
# model: vectors are supplied) under /usr/bin/time for wall time and peak RSS; then
# `crates/braid-cli/examples/scale_bench.rs` opens it and measures open time, serving RSS and p50/p95 per mode
# and visibility at k = 10, and `crates/braid-vector/examples/ann_recall.rs` measures the vector
# store alone: open time, memory, and recall@10 of the filtered graph against the exact scan
# (and, through the .npy sidecar, against the exact f32 top 10) at 1 %, 10 %, 50 % and 100 % of
# records allowed — for f32 vectors only: an int8 store keeps no graph below a million records
# (its large searches are screened; their recall: crates/braid-cli/examples/semantic_hits.rs).
# Results: results/scale-N[-d$dim][-$quantize].json.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
datasets=${BRAID_DATASETS:-../shared/datasets}
[ -d "$datasets" ] || datasets=/work/shared/datasets
work=${SCALE_WORK:-/tmp/braid-scale}
mkdir -p "$work" results
cargo build --release -p braid-cli --bin braid --example scale_bench
cargo build --release -p braid-vector --example ann_recall
target=${CARGO_TARGET_DIR:-target}
braid=$target/release/braid
bench=$target/release/examples/scale_bench
ann=$target/release/examples/ann_recall
dim=${SCALE_DIM:-384}
quantize=${SCALE_QUANTIZE:-f32}
# numpy makes the corpus's vector sums about 50x faster (same bytes); pure Python without it.
python=python3
if [ "$dim" != 0 ]; then
  venv=${SCALE_VENV:-$HOME/.cache/braid/scale-venv}
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -c 'import numpy' 2>/dev/null || "$venv/bin/pip" install -q numpy || true
  "$venv/bin/python" -c 'import numpy' 2>/dev/null && python=$venv/bin/python
fi
for n in "${sizes[@]}"; do
  # The 384-d runs keep their old names; others say their dimension.
  name=$n
  [ "$dim" = 384 ] || name=$n-d$dim
  corpus=$work/corpus-$name
  if [ ! -f "$corpus/stats.json" ]; then
    "$python" scripts/scale_corpus.py "$datasets" "$corpus" "$n" "$dim"
  fi
  [ "$quantize" = f32 ] || name=$name-$quantize
  promote=()
  if [ -n "${SCALE_PROMOTE_AT:-}" ]; then
    promote=(--promote-tenants-at "$SCALE_PROMOTE_AT")
    name=$name-promote-$SCALE_PROMOTE_AT
  fi
  index=$work/index-$name
  rm -rf "$index"
  vectors=()
  [ "$dim" = 0 ] || vectors=(--vectors "$corpus/vectors.npy" --vector-ids "$corpus/ids.txt")
  /usr/bin/time -v -o "$work/time-$name.txt" "$braid" index "$corpus/corpus.jsonl" --index "$index" \
    --quantize "$quantize" "${vectors[@]}" "${promote[@]}" 2> "$work/index-$name.log"
  build_s=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time-$name.txt")
  build_rss=$(awk -F': ' '/Maximum resident set size/ {print int($2/1024)}' "$work/time-$name.txt")
  index_bytes=$(du -sb "$index" | cut -f1)
  lexical_bytes=$(du -sb "$index/lexical" | cut -f1)
  vector_bytes=0
  [ ! -d "$index/vectors" ] || vector_bytes=$(du -sb "$index/vectors" | cut -f1)
  raw=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['raw_text_bytes'])" "$corpus/stats.json")
  "$bench" "$index" "$corpus/queries.jsonl" > "$work/bench-$name.json"
  echo '{}' > "$work/ann-$name.json"
  if [ "$dim" != 0 ] && [ "$quantize" = f32 ]; then
    "$ann" "$index/vectors" "$corpus/queries.jsonl" "$corpus/vectors.npy" > "$work/ann-$name.json"
  fi
  python3 - "$n" "$build_s" "$build_rss" "$index_bytes" "$lexical_bytes" "$vector_bytes" "$raw" "$work/bench-$name.json" "$dim" "$quantize" "$work/ann-$name.json" > "results/scale-$name.json" <<'PY'
import json, sys
n, build_s, build_rss, index_b, lex_b, vec_b, raw = sys.argv[1:8]
bench = json.load(open(sys.argv[8]))
dim, quantize = int(sys.argv[9]), sys.argv[10]
ann = json.load(open(sys.argv[11]))
out = {
    "records": int(n),
    "vectors": "%d-d random projections, supplied (.npy sidecar), held as %s; no model" % (dim, quantize) if dim else "none",
    "build_seconds": float(build_s), "build_peak_rss_mib": int(build_rss),
    "raw_text_bytes": int(raw), "index_bytes": int(index_b), "lexical_bytes": int(lex_b),
    "vector_bytes": int(vec_b), "index_over_raw_text": round(int(index_b) / int(raw), 2),
    "lexical_over_raw_text": round(int(lex_b) / int(raw), 2),
}
out.update(bench)
if ann:
    out["vector_store"] = ann
print(json.dumps(out, indent=2))
PY
  echo "size $n: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('build', d['build_seconds'], 's, rss', d['build_peak_rss_mib'], 'MiB, index/raw', d['index_over_raw_text'], ', open', d['open_ms'], 'ms (lexical alone', d['open_lexical_ms'], 'ms)')" "results/scale-$name.json")"
done
