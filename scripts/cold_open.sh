#!/usr/bin/env bash
# Open from a cold page cache: evicts every file of an index from the page cache, then times
# `braid search` opening it and answering one hybrid query (the first line of QUERIES_JSONL,
# its supplied vector), as a service restarted on a machine that has not read the index lately.
#
#   scripts/cold_open.sh INDEX_DIR QUERIES_JSONL [RUNS] [PRINCIPAL]     (default 3 runs)
#
# The query runs as PRINCIPAL (comma-separated ACL tokens); without one as the public caller,
# who sees none of the scale corpus's records, so that the time is the open's alone. With one,
# it is the open and a first answer whose postings, vectors and stored text come from disk.
#
# Eviction is per file (posix_fadvise DONTNEED after a sync), so it needs no privileges and
# leaves the rest of the machine's cache alone; `fincore` (util-linux), where present, shows
# how much of the index was still resident before each run. Prints one line per run: the
# process's wall time (start, open, one search, exit) and its peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
index=$1
queries=$2
runs=${3:-3}
principal=${4:-}
braid=${BRAID:-${CARGO_TARGET_DIR:-target}/release/braid}
text=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["text"])' "$queries")
vector=$(python3 -c 'import json, sys; print(json.dumps(json.loads(open(sys.argv[1]).readline())["vector"]))' "$queries")
for run in $(seq "$runs"); do
  sync
  python3 - "$index" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        fd = os.open(os.path.join(root, name), os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
PY
  resident=""
  if command -v fincore > /dev/null; then
    resident=$(find "$index" -type f -print0 | xargs -0 fincore -b -n -o RES | awk '{s+=$1} END {printf "%.1f MB resident before", s/1e6}')
  fi
  /usr/bin/time -f "run $run: %e s wall, %M KiB peak RSS${resident:+ ($resident)}" \
    "$braid" search --index "$index" --mode hybrid ${principal:+--principal "$principal"} --vector "$vector" -- "$text" > /dev/null
done
