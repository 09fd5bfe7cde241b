#!/usr/bin/env python3
"""Braid on Ray, measured on a local cluster of this machine (`braid.ray`):

- ingest: a BEIR corpus written into P partitions by `braid.ray.build_partitions` (Ray Data:
  route, then one write task per partition, spread over the nodes, whose writer embeds every
  passage with the ONNX model and commits), in records/s;
- serving: the corpus's test queries through a `braid.ray.Router` over the P partitions (one
  actor each, spread over two nodes) against the same queries on one index built in this
  process from the same records with the same model: identical answers (ids, order, scores),
  and the latency of each, p50 and p95.

    python benches/ray_fanout.py ../shared/datasets/nfcorpus --model ../shared/models/all-MiniLM-L6-v2
        [--partitions 4] [--queries 200] [--out results/ray-fanout-nfcorpus.json]

Needs the `braid` package (`pip install ./python`) and `ray[data]` (python/requirements-test.txt).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import braid
import braid.ray as braid_ray
import ray
from ray.cluster_utils import Cluster


def corpus(dataset):
    records = []
    with open(os.path.join(dataset, "corpus.jsonl")) as f:
        for line in f:
            doc = json.loads(line)
            records.append({"id": doc["_id"], "title": doc.get("title") or "", "body": doc.get("text") or "", "acl": ["public"]})
    return sorted(records, key=lambda r: r["id"])


def queries(dataset, limit):
    judged = set()
    with open(os.path.join(dataset, "qrels", "test.tsv")) as f:
        next(f)
        for line in f:
            judged.add(line.split("\t")[0])
    out = []
    with open(os.path.join(dataset, "queries.jsonl")) as f:
        for line in f:
            q = json.loads(line)
            if q["_id"] in judged:
                out.append(q["text"])
    return out[:limit]


def percentiles(seconds):
    ms = sorted(s * 1000 for s in seconds)
    return {"p50": round(statistics.median(ms), 2), "p95": round(ms[int(0.95 * (len(ms) - 1))], 2)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("--model", required=True)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out")
    args = parser.parse_args()
    records = corpus(args.dataset)
    texts = queries(args.dataset, args.queries)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    cluster.add_node(num_cpus=2)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    result = {"dataset": os.path.basename(args.dataset.rstrip("/")), "records": len(records),
              "partitions": args.partitions, "machine": f"{os.cpu_count()} cores, one machine, two Ray nodes"}
    try:
        with tempfile.TemporaryDirectory() as root:
            t = time.perf_counter()
            target = os.path.join(root, "parts")
            paths = braid_ray.build_partitions(records, target, args.partitions, model=args.model)
            seconds = time.perf_counter() - t
            result["ingest"] = {"seconds": round(seconds, 1), "records_per_s": round(len(records) / seconds, 1),
                                "load_average_1m": round(os.getloadavg()[0], 1)}
            print(f"ingest: {result['ingest']}", file=sys.stderr)
            # One index in this process: the same records in id order, embedded (every passage)
            # by its own writer with the same model.
            t = time.perf_counter()
            one = braid.Index.create_in_ram(model=args.model)
            one.upsert(records)
            one.commit()
            seconds = time.perf_counter() - t
            result["one_index_build"] = {"seconds": round(seconds, 1), "records_per_s": round(len(records) / seconds, 1)}
            print(f"one index: {result['one_index_build']}", file=sys.stderr)
            router = braid_ray.Router(paths, model=args.model)
            principal = braid.Principal.public()
            identical, one_s, fan_s = 0, [], []
            for text in texts:
                t = time.perf_counter()
                a = one.search(text, principal=principal, k=10)
                one_s.append(time.perf_counter() - t)
                t = time.perf_counter()
                b = router.search(text, principal=principal, k=10)
                fan_s.append(time.perf_counter() - t)
                identical += [(h.id, h.score) for h in a] == [(h.id, h.score) for h in b]
            result["serving"] = {"queries": len(texts), "identical": identical, "one_index_ms": percentiles(one_s),
                                 "router_ms": percentiles(fan_s), "nodes": len(set(router.nodes()))}
    finally:
        ray.shutdown()
        cluster.shutdown()
    print(json.dumps(result))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
