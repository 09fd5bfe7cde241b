#!/usr/bin/env bash
# The scale bench: build, size, memory, open time and latency of Braid at growing sizes.
#
#   scripts/scale.sh [SIZES...]        (default: 10000 100000)
#   SCALE_DIM=0 scripts/scale.sh 1000000   (no vectors: lexical, fuzzy and facets only)
#
# For each size N: scripts/scale_corpus.py writes a deterministic corpus of N records drawn
# from the shared datasets' sentences (ACLs over 10 tenants and 100 groups) with 384-d
# random-projection vectors in a .npy sidecar; `braid index --vectors` builds the index (no
# model: vectors are supplied) under /usr/bin/time for wall time and peak RSS; then
# `crates/braid-cli/examples/scale_bench.rs` opens it and measures open time, serving RSS and p50/p95 per mode
# and visibility at k = 10. Results: results/scale-N.json, one object per size.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
datasets=${BRAID_DATASETS:-../shared/datasets}
[ -d "$datasets" ] || datasets=/work/shared/datasets
work=${SCALE_WORK:-/tmp/braid-scale}
mkdir -p "$work" results
cargo build --release -p braid-cli --bin braid --example scale_bench
target=${CARGO_TARGET_DIR:-target}
braid=$target/release/braid
bench=$target/release/examples/scale_bench
dim=${SCALE_DIM:-384}
for n in "${sizes[@]}"; do
  # The 384-d runs keep their old names; others say their dimension.
  name=$n
  [ "$dim" = 384 ] || name=$n-d$dim
  corpus=$work/corpus-$name
  if [ ! -f "$corpus/stats.json" ]; then
    python3 scripts/scale_corpus.py "$datasets" "$corpus" "$n" "$dim"
  fi
  index=$work/index-$name
  rm -rf "$index"
  vectors=()
  [ "$dim" = 0 ] || vectors=(--vectors "$corpus/vectors.npy" --vector-ids "$corpus/ids.txt")
  /usr/bin/time -v -o "$work/time-$name.txt" "$braid" index "$corpus/corpus.jsonl" --index "$index" \
    "${vectors[@]}" 2> "$work/index-$name.log"
  build_s=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time-$name.txt")
  build_rss=$(awk -F': ' '/Maximum resident set size/ {print int($2/1024)}' "$work/time-$name.txt")
  index_bytes=$(du -sb "$index" | cut -f1)
  lexical_bytes=$(du -sb "$index/lexical" | cut -f1)
  vector_bytes=0
  [ ! -d "$index/vectors" ] || vector_bytes=$(du -sb "$index/vectors" | cut -f1)
  raw=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['raw_text_bytes'])" "$corpus/stats.json")
  "$bench" "$index" "$corpus/queries.jsonl" > "$work/bench-$name.json"
  python3 - "$n" "$build_s" "$build_rss" "$index_bytes" "$lexical_bytes" "$vector_bytes" "$raw" "$work/bench-$name.json" "$dim" > "results/scale-$name.json" <<'PY'
import json, sys
n, build_s, build_rss, index_b, lex_b, vec_b, raw = sys.argv[1:8]
bench = json.load(open(sys.argv[8]))
dim = int(sys.argv[9])
out = {
    "records": int(n),
    "vectors": "%d-d random projections, supplied (.npy sidecar); no model" % dim if dim else "none",
    "build_seconds": float(build_s), "build_peak_rss_mib": int(build_rss),
    "raw_text_bytes": int(raw), "index_bytes": int(index_b), "lexical_bytes": int(lex_b),
    "vector_bytes": int(vec_b), "index_over_raw_text": round(int(index_b) / int(raw), 2),
    "lexical_over_raw_text": round(int(lex_b) / int(raw), 2),
}
out.update(bench)
print(json.dumps(out, indent=2))
PY
  echo "size $n: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('build', d['build_seconds'], 's, rss', d['build_peak_rss_mib'], 'MiB, index/raw', d['index_over_raw_text'], ', open', d['open_lexical_ms'], '+', d['open_vectors_ms'], 'ms')" "results/scale-$name.json")"
done
