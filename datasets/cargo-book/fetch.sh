#!/usr/bin/env bash
# Reproduces datasets/cargo-book/articles/ from the package it was taken from: the `cargo` crate,
# version 0.100.0, on crates.io (license MIT OR Apache-2.0), whose doc/book/src/ is The Cargo Book.
#
#   bash datasets/cargo-book/fetch.sh [DEST]      # DEST defaults to datasets/cargo-book/articles
#
# Only cargo itself talks to the registry: `cargo info cargo@0.100.0`, run in an empty folder with
# an empty CARGO_HOME, downloads that one .crate (no dependencies) and checks it against the
# registry index. The .crate's own sha256 is then checked against the pinned one below, the 87
# articles are copied out of doc/book/src/ unchanged, and every file's sha256 is checked against
# articles.sha256 beside this script. A DEST that exists is verified, never overwritten.
set -euo pipefail

VERSION=0.100.0
CRATE_SHA256=f4d8037642eef9a2744e1bbc775522cb20867ecc7ea35373f1769609d7386e60

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:-$here/articles}
sums=$here/articles.sha256

if [ -d "$dest" ]; then
  (cd "$dest" && sha256sum --quiet -c "$sums") || {
    echo "fetch.sh: $dest exists but does not match articles.sha256; move it away" >&2
    exit 1
  }
  echo "fetch.sh: $dest already holds the $(wc -l <"$sums") articles"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/empty" "$work/home" "$work/unpacked" "$work/articles"
(cd "$work/empty" && CARGO_HOME="$work/home" cargo info "cargo@$VERSION" >/dev/null)
crate=$(find "$work/home/registry/cache" -name "cargo-$VERSION.crate" | head -n 1)
[ -n "$crate" ] || { echo "fetch.sh: cargo did not download cargo-$VERSION.crate" >&2; exit 1; }
echo "$CRATE_SHA256  $crate" | sha256sum --quiet -c -
tar xzf "$crate" -C "$work/unpacked"
book=$work/unpacked/cargo-$VERSION/doc/book/src
while read -r _ path; do
  mkdir -p "$work/articles/$(dirname "$path")"
  cp "$book/$path" "$work/articles/$path"
done <"$sums"
(cd "$work/articles" && sha256sum --quiet -c "$sums")
mkdir -p "$(dirname "$dest")"
mv "$work/articles" "$dest"
echo "fetch.sh: $(wc -l <"$sums") articles of cargo $VERSION's book in $dest"
