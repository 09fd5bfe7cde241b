#!/usr/bin/env python3
"""nDCG@10 per query type from `braid eval --out` results (stdlib only).

Usage: python3 datasets/by_type.py DATASET SPLIT RESULTS.json [RESULTS.json ...]

Reads the queries of DATASET/queries.jsonl judged in DATASET/qrels/SPLIT.tsv and each run's
`per_query` nDCG@10 from the results files (the JSON array `braid eval --out` writes), and prints
a Markdown table: one row per run, the mean over all the split's queries, then per
`metadata.type` (question, fragment, code, phrase), per `metadata.kind` (the Chinese set's
natural, keyword, mixed, pinyin, homophone) and for the misspelt and clean queries
(`metadata.misspelt`), with the number of queries in each column's header. A run that lacks a
judged query counts it as 0, as `braid eval` does.
"""

import json
import sys
from pathlib import Path

TYPES = ["question", "fragment", "code", "phrase"]
KINDS = ["natural", "keyword", "mixed", "pinyin", "homophone"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().split("\n\n")[1])
    root, split = Path(sys.argv[1]), sys.argv[2]
    queries = {}
    for line in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            queries[q["_id"]] = q.get("metadata") or {}
    lines = (root / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]
    judged = sorted({line.split("\t")[0] for line in lines if line.strip()})
    groups = [("all", judged)]
    groups += [(t, [q for q in judged if queries[q].get("type") == t]) for t in TYPES]
    groups += [(k, [q for q in judged if queries[q].get("kind") == k]) for k in KINDS]
    groups += [("misspelt", [q for q in judged if queries[q].get("misspelt") is True]),
               ("clean", [q for q in judged if queries[q].get("misspelt") is False])]
    groups = [(name, ids) for name, ids in groups if ids]

    print("| run | " + " | ".join(f"{name} ({len(ids)})" for name, ids in groups) + " |")
    print("|---|" + "---:|" * len(groups))
    for path in sys.argv[3:]:
        for run in json.loads(Path(path).read_text(encoding="utf-8")):
            per = run.get("per_query") or {}
            cells = [sum(per.get(q, 0.0) for q in ids) / len(ids) for _, ids in groups]
            print(f"| {run['mode']} | " + " | ".join(f"{c:.4f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
