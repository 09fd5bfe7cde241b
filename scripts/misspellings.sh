#!/usr/bin/env bash
# Installs a list of real misspellings outside the repository and prints its path: codespell's
# dictionary (PyPI `codespell`, CC BY-SA 3.0), ~65,000 `misspelling->correction` lines that
# people made, starting from Wikipedia's "Lists of common misspellings" and grown from typos
# found in real text and code. `braid eval --misspellings FILE` and `braid-report fit
# --misspellings FILE` read it. Never committed: it is data with its own licence.
#   bash scripts/misspellings.sh        # → ~/.cache/braid/misspellings/codespell-2.4.3.txt
set -euo pipefail
version=2.4.3
dest_dir="${BRAID_MISSPELLINGS_DIR:-$HOME/.cache/braid/misspellings}"
dest="$dest_dir/codespell-$version.txt"
if [ ! -s "$dest" ]; then
  mkdir -p "$dest_dir"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download -q --no-deps --only-binary=:all: "codespell==$version" -d "$tmp" >&2
  python3 - "$tmp"/codespell-"$version"-py3-none-any.whl "$dest" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract("codespell_lib/data/dictionary.txt", sys.argv[1] + ".d")
import shutil; shutil.copy(sys.argv[1] + ".d/codespell_lib/data/dictionary.txt", sys.argv[2])
PY
fi
echo "$dest"
