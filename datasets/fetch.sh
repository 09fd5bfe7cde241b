#!/usr/bin/env bash
# Fetch the BEIR datasets the tests and benches use into ../shared/datasets (needs internet).
# In the Braid workplace they are already there; this is for everyone else.
set -euo pipefail
dest="${1:-$(cd "$(dirname "$0")/../.." && pwd)/shared/datasets}"
mkdir -p "$dest"
for name in scifact nfcorpus; do
  if [ -f "$dest/$name/corpus.jsonl" ]; then echo "$name: present"; continue; fi
  tmp=$(mktemp -d)
  curl -fsSL "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/$name.zip" -o "$tmp/$name.zip"
  (cd "$tmp" && unzip -q "$name.zip")
  mv "$tmp/$name" "$dest/$name"
  rm -rf "$tmp"
  echo "$name: fetched into $dest/$name"
done
