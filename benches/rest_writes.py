#!/usr/bin/env python3
"""What a one-record write over REST costs, commit included: `braid serve` over an index of N
synthetic records (10 tenants, as the scale corpus draws them), one writer token, W sequential
`POST /v1/records` of one record each, timed end to end by the client; after every write a
search checks that the record is found (read your writes; not timed).

    python3 benches/rest_writes.py --records 10000 [--writes 200] [--model default]
        [--braid target/release/braid] [--out results/rest-writes-10000.json]

With --model the index is built with that embedding model and the server embeds each written
record (the text is ~60 words: one passage). Standard library only.

`--index DIR` measures on a copy of an existing index instead (the scale corpus's, whose
tenants are t0-t9 too: `scripts/scale.sh`). Embedding its million records takes this machine
most of a day, so with `--model` and an index of supplied vectors of the model's dimension, the
copy's manifest names the model as the vectors' (as `braid index --vector-model` would have,
its checksum resealed): the server then embeds each written record with the model, beside the
supplied vectors of the rest.
"""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

TENANTS = 10


def words(rng, vocabulary, n):
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def corpus(path, n, rng, vocabulary):
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"_id": f"r{i}", "title": words(rng, vocabulary, 4),
                                "text": words(rng, vocabulary, 60), "tenant": f"t{i % TENANTS}"}) + "\n")


def name_model(index, model_id):
    """Names `model_id` as the model of the supplied vectors in `index`'s manifest (resealed)."""
    path = os.path.join(index, "braid.json")
    with open(path) as f:
        manifest = json.load(f)
    seal = lambda m: "sha256:" + hashlib.sha256(
        json.dumps(m, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
    recorded = manifest.pop("checksum")
    if seal(manifest) != recorded:
        sys.exit(f"{path}: cannot reproduce its checksum; not renaming its model")
    if manifest["embedding"]["model_id"] != "supplied":
        sys.exit(f"{path}: its vectors are {manifest['embedding']['model_id']}'s, not supplied")
    manifest["embedding"]["model_id"] = model_id
    manifest["checksum"] = seal(manifest)
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)


def post(url, token, path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--model", default=None)
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    parser.add_argument("--braid", default=os.path.join(target, "release", "braid"))
    parser.add_argument("--out", default=None)
    parser.add_argument("--index", default=None, help="measure on a copy of this index")
    parser.add_argument("--model-id", default="all-MiniLM-L6-v2/model.onnx",
                        help="with --index and --model: the id the copy's manifest names")
    args = parser.parse_args()
    rng = random.Random(42)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
                  for _ in range(5000)]
    with tempfile.TemporaryDirectory() as work:
        source, index = os.path.join(work, "corpus.jsonl"), os.path.join(work, "index")
        started = time.perf_counter()
        if args.index:
            shutil.copytree(args.index, index)
            if args.model:
                name_model(index, args.model_id)
        else:
            corpus(source, args.records, rng, vocabulary)
            build = [args.braid, "index", source, "--index", index] + (["--model", args.model] if args.model else [])
            subprocess.run(build, check=True, stdout=subprocess.DEVNULL)
        build_s = time.perf_counter() - started
        entry = subprocess.run([args.braid, "token", "new", "--name", "bench", "--tenant", "t0", "--write"],
                               check=True, capture_output=True, text=True)
        token = re.search(r"^token: (\S+)", entry.stderr, re.M).group(1)
        config = os.path.join(work, "braid.toml")
        with open(config, "w") as f:
            f.write("reload_seconds = 0\n\n[limits]\nrate_per_second = 100000.0\nburst = 100000\n\n" + entry.stdout)
        serve = [args.braid, "serve", "--index", index, "--config", config, "--bind", "127.0.0.1:0"]
        server = subprocess.Popen(serve + (["--model", args.model] if args.model else []),
                                  stderr=subprocess.PIPE, text=True)
        try:
            url = None
            for line in server.stderr:
                found = re.search(r"listening on (http://\S+)", line)
                if found:
                    url = found.group(1)
                    break
            if url is None:
                sys.exit("the server did not start")
            # Keep reading the server's log: a full pipe would block the server (its request log
            # outgrows the 64 KiB pipe buffer after a few hundred requests).
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            latencies, seen = [], 0
            for i in range(args.writes + 5):
                marker = f"zq{i}marker"
                record = {"_id": f"w{i}", "title": words(rng, vocabulary, 4),
                          "text": words(rng, vocabulary, 58) + f" {marker}"}
                started = time.perf_counter()
                written = post(url, token, "/v1/records", {"records": [record]})
                elapsed = (time.perf_counter() - started) * 1000
                assert written["ids"] == [f"tenant:t0/w{i}"], written
                hits = post(url, token, "/v1/search", {"query": marker, "mode": "lexical", "k": 1})["hits"]
                if i >= 5:  # the first five warm up
                    latencies.append(elapsed)
                    seen += bool(hits) and hits[0]["id"] == f"tenant:t0/w{i}"
        finally:
            server.terminate()
            server.wait()
    result = {
        "records": args.records, "writes": args.writes, "model": args.model, "index": args.index,
        "build_s": round(build_s, 1),
        "p50_ms": round(percentile(latencies, 0.5), 2), "p95_ms": round(percentile(latencies, 0.95), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2), "max_ms": round(max(latencies), 2),
        "mean_ms": round(statistics.mean(latencies), 2), "read_your_writes": f"{seen}/{args.writes}",
        # The p50 of each tenth of the writes in order: a write dearer than the ones before it
        # shows as a rising row.
        "p50_ms_by_tenth": [round(percentile(latencies[i:i + max(1, len(latencies) // 10)], 0.5), 2)
                            for i in range(0, len(latencies), max(1, len(latencies) // 10))],
    }
    print(json.dumps(result))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
