#!/usr/bin/env bash
# Installs the ONNX Runtime shared library that braid-models loads at run time (`ort` with
# `load-dynamic`). Idempotent: does nothing when the library is already present with the
# right hash. Everything comes from PyPI through pip; see shared/models/README.md §1.
#
#   bash scripts/setup-onnxruntime.sh            # installs to ~/.cache/braid/onnxruntime-1.31.1
#   BRAID_ORT_DIR=/opt/ort bash scripts/setup-onnxruntime.sh
#
# Prints the library path on stdout (last line). braid-models finds the default location by
# itself; for any other location export ORT_DYLIB_PATH=<printed path>.
set -euo pipefail

ORT_VERSION=1.31.1
WHEEL_SHA256=5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f
LIB_SHA256=fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3
LIB_NAME=libonnxruntime.so.${ORT_VERSION}
DEST_DIR=${BRAID_ORT_DIR:-$HOME/.cache/braid/onnxruntime-${ORT_VERSION}}
DEST=$DEST_DIR/$LIB_NAME
PYTHON=${PYTHON:-python3}

log() { echo "setup-onnxruntime: $*" >&2; }

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f $DEST ]] && [[ $(sha_of "$DEST") == "$LIB_SHA256" ]]; then
    log "already installed ($LIB_NAME, sha256 ok)"
    echo "$DEST"
    exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log "downloading onnxruntime==$ORT_VERSION wheel from PyPI"
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
    "onnxruntime==$ORT_VERSION" -d "$tmp" >&2

wheel=$(ls "$tmp"/onnxruntime-"$ORT_VERSION"-cp311-cp311-manylinux_2_28_x86_64.whl 2>/dev/null || true)
if [[ -z $wheel ]]; then
    log "error: pip did not produce the expected wheel in $tmp"
    exit 1
fi
got=$(sha_of "$wheel")
if [[ $got != "$WHEEL_SHA256" ]]; then
    log "error: wheel sha256 mismatch: expected $WHEEL_SHA256, got $got"
    exit 1
fi

mkdir -p "$DEST_DIR"
# Extract to a temporary name first so a failed run never leaves a half-written library.
"$PYTHON" -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
open(sys.argv[2], "wb").write(z.read("onnxruntime/capi/" + sys.argv[3]))' \
    "$wheel" "$tmp/$LIB_NAME" "$LIB_NAME"
got=$(sha_of "$tmp/$LIB_NAME")
if [[ $got != "$LIB_SHA256" ]]; then
    log "error: $LIB_NAME sha256 mismatch: expected $LIB_SHA256, got $got"
    exit 1
fi
mv -f "$tmp/$LIB_NAME" "$DEST"
log "installed $DEST"
echo "$DEST"
